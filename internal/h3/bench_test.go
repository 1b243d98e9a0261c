//go:build unix

package h3_test

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/guise-http/guise/internal/h3"
	"github.com/guise-http/guise/internal/testpeer/quicgo"
	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

// procCPU is the process's user+system CPU time.
func procCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkSmallGETs16 runs 16 concurrent small GETs over one HTTP/3
// connection to quic-go's HTTP/3 server in the same process: guise's
// engine over quic-go's QUIC against quic-go's own http3 client, so the
// QUIC stack and the server are the same and the difference is the
// HTTP/3 layer. proc-cpu-ns/op is the whole process's CPU (client and
// server) per request.
func BenchmarkSmallGETs16(b *testing.B) {
	srv := quicgo.HTTP3Server(b, testHandler())
	b.Run("guise", func(b *testing.B) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		qc, err := quicgo.Dial(ctx, nil, srv.Addr, srv.Cert.Roots, "localhost")
		cancel()
		if err != nil {
			b.Fatal(err)
		}
		cc, err := newBenchConn(qc)
		if err != nil {
			b.Fatal(err)
		}
		defer cc.Close()
		req := get("/size/64")
		b.ReportAllocs()
		b.SetParallelism(8)
		cpu := procCPU()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			buf := make([]byte, 512)
			for pb.Next() {
				resp, err := cc.RoundTrip(context.Background(), req)
				if err != nil {
					b.Error(err)
					return
				}
				for {
					if _, err := resp.Body.Read(buf); err != nil {
						break
					}
				}
				resp.Body.Close()
			}
		})
		b.ReportMetric(float64(procCPU()-cpu)/float64(b.N), "proc-cpu-ns/op")
	})
	b.Run("quic-go-http3", func(b *testing.B) {
		tr := &http3.Transport{TLSClientConfig: &tls.Config{RootCAs: srv.Cert.Roots, ServerName: "localhost"},
			QUICConfig: &quic.Config{EnableDatagrams: true}}
		defer tr.Close()
		c := &http.Client{Transport: tr}
		url := "https://" + srv.Addr.String() + "/size/64"
		// One connection, dialed before the clock starts.
		if resp, err := c.Get(url); err != nil {
			b.Fatal(err)
		} else {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		b.ReportAllocs()
		b.SetParallelism(8)
		cpu := procCPU()
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			buf := make([]byte, 512)
			for pb.Next() {
				resp, err := c.Get(url)
				if err != nil {
					b.Error(err)
					return
				}
				for {
					if _, err := resp.Body.Read(buf); err != nil {
						break
					}
				}
				resp.Body.Close()
			}
		})
		b.ReportMetric(float64(procCPU()-cpu)/float64(b.N), "proc-cpu-ns/op")
	})
}

func newBenchConn(qc quicgo.Conn) (*h3.ClientConn, error) {
	return h3.NewClientConn(qc, chromeConfig())
}
