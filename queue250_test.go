package guise

import (
	"context"
	"crypto/x509"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestH2ThousandStreamsOn250 (issue 16): 1,000 concurrent GETs on one
// Session to an origin allowing 250 streams per connection complete over at
// most 2 connections, as a browser's queue on its connection; the test logs
// the process's RSS and heap after.
func TestH2ThousandStreamsOn250(t *testing.T) {
	var conns atomic.Int32
	origin := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(2 * time.Millisecond) // streams overlap
		w.Write([]byte("ok"))
	}))
	origin.EnableHTTP2 = true
	origin.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	origin.Config.HTTP2 = &http.HTTP2Config{MaxConcurrentStreams: 250}
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
	close(start)
	wg.Wait()
	if f := failed.Load(); f > 0 {
		t.Fatalf("%d of %d requests failed; the first: %v", f, n, firstErr.Load())
	}
	c := conns.Load()
	if c > 2 {
		t.Errorf("%d connections for %d concurrent requests allowing 250 streams each, want at most 2", c, n)
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	t.Logf("%d requests over %d connection(s); process (client and in-process server) RSS %.1f MiB, heap in use %.1f MiB, stacks %.1f MiB",
		n, c, float64(rssBytes())/(1<<20), float64(m.HeapInuse)/(1<<20), float64(m.StackInuse)/(1<<20))
}
