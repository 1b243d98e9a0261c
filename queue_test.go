package guise

import (
	"context"
	"crypto/x509"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestH2RequestsQueueOnOneConnection: 1,000 concurrent GETs on one
// Session to an HTTP/2 origin that allows 100 streams at a time all
// complete, as a browser's would, over one connection: the requests past
// the stream limit wait on it for a stream instead of failing or dialing
// more connections.
func TestH2RequestsQueueOnOneConnection(t *testing.T) {
	var conns atomic.Int32
	origin := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		time.Sleep(time.Millisecond) // streams overlap
		w.Write([]byte("ok"))
	}))
	origin.EnableHTTP2 = true
	origin.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	origin.Config.HTTP2 = &http.HTTP2Config{MaxConcurrentStreams: 100}
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
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
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
	wg.Wait()
	if f := failed.Load(); f > 0 {
		t.Fatalf("%d of %d requests failed; the first: %v", f, n, firstErr.Load())
	}
	if c := conns.Load(); c != 1 {
		t.Errorf("%d connections for %d requests to one origin, want 1", c, n)
	}
}
