//go:build unix

package quic

import (
	"context"
	"crypto/tls"
	"io"
	"sync"
	"syscall"
	"testing"
	"time"

	quicgo "github.com/quic-go/quic-go"
)

// streamOpener is what the benchmarks need of a client connection:
// guise's or quic-go's.
type streamOpener func(ctx context.Context) (io.ReadWriteCloser, error)

func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchClient dials the named client to srv, closed at the end of b.
func benchClient(b *testing.B, name string, srv *echoServer) streamOpener {
	if name == "guise" {
		c, err := dial(b, "chrome156-linux", srv.addr(), srv.cert, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() {
			c.mu.Lock()
			b.Logf("guise: %d packets sent, %d declared lost, cwnd %d, srtt %v", c.spaces[spApp].nextPN, c.lostPackets, c.cc.cwnd, c.rtt.smoothed)
			c.mu.Unlock()
		})
		return func(ctx context.Context) (io.ReadWriteCloser, error) { return c.OpenStream(ctx) }
	}
	qc, err := quicgo.DialAddr(context.Background(), srv.addr().String(),
		&tls.Config{RootCAs: srv.cert.Roots, ServerName: "localhost", NextProtos: []string{"h3"}}, &quicgo.Config{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { qc.CloseWithError(0, "") })
	return func(ctx context.Context) (io.ReadWriteCloser, error) { return qc.OpenStreamSync(ctx) }
}

func echoOn(open streamOpener, data, back []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := open(ctx)
	if err != nil {
		return err
	}
	werr := make(chan error, 1)
	go func() {
		_, err := st.Write(data)
		st.Close()
		werr <- err
	}()
	_, err = io.ReadFull(st, back)
	if err == nil {
		// read the FIN too: the stream is over for both clients then
		if n, e := st.Read(back[:1]); n != 0 || e != io.EOF {
			err = io.ErrUnexpectedEOF
		}
	}
	if e := <-werr; e != nil {
		return e
	}
	return err
}

// BenchmarkStreams runs 16 concurrent 100-byte echoes per op on one
// connection, like 16 small requests, with guise's client and with
// quic-go's against the same quic-go server in the process: cpu-ns/stream
// is the process's CPU (client and server) per stream.
//
//	go test -run XXX -bench BenchmarkStreams -benchtime 2000x ./internal/quic
func BenchmarkStreams(b *testing.B) {
	srv := newEchoServer(b, nil)
	for _, name := range []string{"guise", "quic-go"} {
		b.Run(name, func(b *testing.B) {
			open := benchClient(b, name, srv)
			data := randomBytes(100, 1)
			data[0] = 'E'
			b.ReportAllocs()
			cpu := cpuTime()
			for b.Loop() {
				var wg sync.WaitGroup
				for range 16 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						back := make([]byte, 100)
						if err := echoOn(open, data, back); err != nil {
							b.Error(err)
						}
					}()
				}
				wg.Wait()
			}
			b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N*16), "cpu-ns/stream")
		})
	}
}

// BenchmarkDownload echoes 4 MiB per op with each client.
//
//	go test -run XXX -bench BenchmarkDownload -benchtime 20x ./internal/quic
func BenchmarkDownload(b *testing.B) {
	srv := newEchoServer(b, nil)
	for _, name := range []string{"guise", "quic-go"} {
		b.Run(name, func(b *testing.B) {
			open := benchClient(b, name, srv)
			data := randomBytes(4<<20, 2)
			data[0] = 'E'
			back := make([]byte, len(data))
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			cpu := cpuTime()
			for b.Loop() {
				if err := echoOn(open, data, back); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}
