package guise

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/guise-http/guise/internal/testpeer"
	"golang.org/x/net/http2"
)

// TestH2RequestsQueueOnOneConnection (RELIABILITY L-20): 1,000 concurrent
// GETs on one Session to an HTTP/2 origin that allows 100 streams at a time
// all complete, as a browser's would, over one connection: the requests
// past the stream limit wait on it for a stream instead of failing or
// dialing more connections. The 250-stream case (issue 16) allows a second
// connection and logs the process's RSS and heap after
// (docs/BENCHMARKS.md: go test -run 'TestH2RequestsQueueOnOneConnection/250' -v .).
func TestH2RequestsQueueOnOneConnection(t *testing.T) {
	for _, c := range []struct {
		streams  uint32
		work     time.Duration // per request in the handler, so that streams overlap
		maxConns int32
		together bool // release the requests at once
	}{
		{100, time.Millisecond, 1, false},
		{250, 2 * time.Millisecond, 2, true},
	} {
		t.Run(fmt.Sprint(c.streams), func(t *testing.T) {
			var conns atomic.Int32
			origin := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				time.Sleep(c.work)
				w.Write([]byte("ok"))
			}))
			origin.EnableHTTP2 = true
			origin.Config.ConnState = func(_ net.Conn, s http.ConnState) {
				if s == http.StateNew {
					conns.Add(1)
				}
			}
			origin.Config.HTTP2 = &http.HTTP2Config{MaxConcurrentStreams: int(c.streams)}
			origin.StartTLS()
			defer origin.Close()
			roots := x509.NewCertPool()
			roots.AddCert(origin.Certificate())

			s := &Session{RootCAs: roots}
			defer s.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			const n = 1000
			var wg sync.WaitGroup
			var failed atomic.Int32
			var firstErr atomic.Value
			start := make(chan struct{})
			if !c.together {
				close(start)
			}
			for range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					<-start
					resp, err := s.Get(ctx, origin.URL+"/")
					if err == nil {
						var b []byte
						b, err = resp.Bytes()
						if err == nil && (string(b) != "ok" || resp.Proto != "HTTP/2.0") {
							t.Errorf("got %q over %s", b, resp.Proto)
						}
					}
					if err != nil {
						failed.Add(1)
						firstErr.CompareAndSwap(nil, err)
					}
				}()
			}
			if c.together {
				close(start)
			}
			wg.Wait()
			if f := failed.Load(); f > 0 {
				t.Fatalf("%d of %d requests failed; the first: %v", f, n, firstErr.Load())
			}
			got := conns.Load()
			if got > c.maxConns {
				t.Errorf("%d connections for %d requests to one origin allowing %d streams, want at most %d", got, n, c.streams, c.maxConns)
			}
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			t.Logf("%d requests over %d connection(s); process (client and in-process server) RSS %.1f MiB, heap in use %.1f MiB, stacks %.1f MiB",
				n, got, float64(rssBytes())/(1<<20), float64(m.HeapInuse)/(1<<20), float64(m.StackInuse)/(1<<20))
		})
	}
}

// TestGoAwayRetriesShareOneDial (RELIABILITY L-21): 20 requests on a connection that allows
// one stream at a time, 19 of them waiting for it, are all left unprocessed
// by a GOAWAY (last stream 0). Each is sent again, and the retries share one
// new connection instead of dialing one each.
func TestGoAwayRetriesShareOneDial(t *testing.T) {
	var conns atomic.Int32
	h2srv := &http2.Server{}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("ok")) })
	srv := testpeer.ListenTLS(t, testpeer.Handle(func(c net.Conn) {
		c.SetDeadline(time.Now().Add(10 * time.Second))
		if conns.Add(1) > 1 {
			// x/net's server wants the handshake done (it rejects TLS
			// below 1.2, and a conn not yet shaken reads as none).
			if c.(*tls.Conn).Handshake() == nil {
				h2srv.ServeConn(c, &http2.ServeConnOpts{Handler: handler})
			}
			return
		}
		if _, err := io.ReadFull(c, make([]byte, len(http2.ClientPreface))); err != nil {
			return
		}
		fr := http2.NewFramer(c, c)
		if fr.WriteSettings(http2.Setting{ID: http2.SettingMaxConcurrentStreams, Val: 1}) != nil {
			return
		}
		for {
			f, err := fr.ReadFrame()
			if err != nil {
				return
			}
			if _, ok := f.(*http2.HeadersFrame); ok {
				time.Sleep(50 * time.Millisecond) // the others queue meanwhile
				fr.WriteGoAway(0, http2.ErrCodeNo, nil)
				return
			}
		}
	}), "h2")
	s := &Session{RootCAs: testpeer.Localhost(t).Roots}
	defer s.Close()
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := s.Get(context.Background(), "https://"+srv.Addr+"/")
			if err != nil {
				t.Errorf("request %d: %v", i, err)
				return
			}
			if b, err := resp.Bytes(); err != nil || string(b) != "ok" {
				t.Errorf("request %d: %q, %v", i, b, err)
			}
		}()
		if i == 0 {
			time.Sleep(20 * time.Millisecond) // the first takes the one stream
		}
	}
	wg.Wait()
	if n := conns.Load(); n != 2 {
		t.Errorf("%d connections, want 2: the first and one for every retry", n)
	}
}
