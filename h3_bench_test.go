//go:build unix

package guise

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/guise-http/guise/internal/testpeer/quicgo"
	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

func procCPUTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkH3SmallGETs16 is issue 15's first target, in one process: 16
// concurrent small GETs over one HTTP/3 connection to quic-go's HTTP/3
// server, by guise (its own QUIC, Chromium's profile) and by quic-go's
// http3 client. proc-cpu-ns/op counts the whole process (client and
// server), so it overstates both clients by the same server cost.
func BenchmarkH3SmallGETs16(b *testing.B) {
	mux := http.NewServeMux()
	mux.HandleFunc("/small", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "0123456789abcdef") })
	srv := quicgo.HTTP3Server(b, mux)
	url := "https://127.0.0.1:" + strconv.Itoa(srv.Addr.Port) + "/small"
	run := func(b *testing.B, get func() error) {
		if err := get(); err != nil { // the connection, before the clock
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.SetParallelism(8) // 16 goroutines on 2 CPUs
		cpu := procCPUTime()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if err := get(); err != nil {
					b.Error(err)
					return
				}
			}
		})
		b.ReportMetric(float64(procCPUTime()-cpu)/float64(b.N), "proc-cpu-ns/op")
	}
	b.Run("guise", func(b *testing.B) {
		tr := &Transport{quicDial: dialGuiseQUIC}
		defer tr.Close()
		s := &Session{RootCAs: srv.Cert.Roots, Transport: tr, Protocol: HTTP3}
		defer s.Close()
		run(b, func() error {
			resp, err := s.Get(context.Background(), url)
			if err != nil {
				return err
			}
			_, err = resp.Bytes()
			return err
		})
	})
	b.Run("quic-go-http3", func(b *testing.B) {
		tr := &http3.Transport{TLSClientConfig: &tls.Config{RootCAs: srv.Cert.Roots}, QUICConfig: &quic.Config{EnableDatagrams: true}}
		defer tr.Close()
		c := &http.Client{Transport: tr}
		run(b, func() error {
			resp, err := c.Get(url)
			if err != nil {
				return err
			}
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			return err
		})
	})
}
