package guise

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/guise-http/guise/internal/testpeer"
)

// RELIABILITY S-8 through the whole client: a Transport with
// MaxConnsPerHost 4 under 200 concurrent requests, then again with short
// deadlines, against a real server. The pool's own unit tests
// (TestConcurrentNeverOverCap, TestWaiterHonoursContext) check the same
// rules on fake connections.

// peakConns counts connections open at once: Open on each new one, Close
// when it ends.
type peakConns struct {
	cur, peak, total atomic.Int64
}

func (p *peakConns) open() {
	p.total.Add(1)
	n := p.cur.Add(1)
	for {
		m := p.peak.Load()
		if n <= m || p.peak.CompareAndSwap(m, n) {
			return
		}
	}
}

// countedConn decrements its counter once, at the first Close.
type countedConn struct {
	net.Conn
	p    *peakConns
	once sync.Once
}

func (c *countedConn) Close() error {
	c.once.Do(func() { c.p.cur.Add(-1) })
	return c.Conn.Close()
}

// countingListener counts the server's connections.
type countingListener struct {
	net.Listener
	p *peakConns
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.p.open()
	return &countedConn{Conn: c, p: l.p}, nil
}

func TestPerHostCapUnderLoadS8(t *testing.T) {
	run(t, func(t *testing.T, m mode) {
		var server peakConns
		var inHandler, peakHandler atomic.Int64
		ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			n := inHandler.Add(1)
			defer inHandler.Add(-1)
			for {
				p := peakHandler.Load()
				if n <= p || peakHandler.CompareAndSwap(p, n) {
					break
				}
			}
			select {
			case <-time.After(5 * time.Millisecond):
			case <-r.Context().Done():
			}
			w.Write([]byte("ok"))
		}))
		ts.Listener = &countingListener{Listener: ts.Listener, p: &server}
		var roots *Session
		if m == modeH1Plain {
			ts.Start()
		} else {
			cert := testpeer.Localhost(t)
			ts.TLS = cert.ServerConfig(m.alpn())
			ts.EnableHTTP2 = m == modeH2
			// Over HTTP/2 the cap is the server's: 4 streams, so that
			// requests wait there for a stream instead.
			ts.Config.HTTP2 = &http.HTTP2Config{MaxConcurrentStreams: 4}
			ts.StartTLS()
			roots = &Session{RootCAs: cert.Roots}
		}
		defer ts.Close()
		want := int64(4)
		if m == modeH2 {
			want = 1 // one connection, its streams shared, as a browser's
		}

		// The client's own view: connections it holds open at once.
		var client peakConns
		tr := &Transport{MaxConnsPerHost: 4, DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			var d net.Dialer
			c, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			client.open()
			return &countedConn{Conn: c, p: &client}, nil
		}}
		defer tr.Close()
		s := &Session{Transport: tr}
		if roots != nil {
			s.RootCAs = roots.RootCAs
		}
		defer s.Close()
		url := ts.URL + "/"
		if m != modeH1Plain {
			url = "https://localhost:" + fmt.Sprint(ts.Listener.Addr().(*net.TCPAddr).Port) + "/"
		}

		// 200 at once, no deadline but the test's: every one completes.
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		var wg sync.WaitGroup
		errs := make(chan error, 200)
		for range 200 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp, err := s.Get(ctx, url)
				if err == nil {
					var b []byte
					if b, err = resp.Bytes(); err == nil && string(b) != "ok" {
						err = fmt.Errorf("body %q", b)
					}
				}
				if err != nil {
					errs <- err
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Errorf("request under the cap failed: %v", err)
		}
		if p := server.peak.Load(); p > want {
			t.Errorf("the server saw %d connections at once, cap %d", p, want)
		}
		if p := client.peak.Load(); p > want {
			t.Errorf("the client held %d connections at once, cap %d", p, want)
		}
		if n := server.total.Load(); n > want {
			t.Errorf("%d connections for 200 requests that all succeeded, want at most %d (reused)", n, want)
		}
		if p := peakHandler.Load(); p > 4 {
			t.Errorf("%d requests in the handler at once, cap 4 (connections, or streams over HTTP/2)", p)
		}
		t.Logf("%s: server peak %d, total %d connections; handler peak %d", m, server.peak.Load(), server.total.Load(), peakHandler.Load())

		// 200 at once with deadlines of 40 ms (half by Request.Timeout,
		// half by the context), with at most 4 exchanges of 5 ms at a time:
		// most wait for a connection (or a stream) and must give up on
		// time, with a typed error, and never push the count over the cap.
		const deadline = 40 * time.Millisecond
		const slack = 1 * time.Second // the race detector on 2 shared cores
		var ok, timedOut atomic.Int64
		late := make(chan string, 200)
		bad := make(chan error, 200)
		for i := range 200 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				start := time.Now()
				var resp *Response
				var err error
				if i%2 == 0 {
					resp, err = s.Do(context.Background(), &Request{URL: url, Timeout: deadline})
				} else {
					dctx, dcancel := context.WithTimeout(context.Background(), deadline)
					resp, err = s.Get(dctx, url)
					if err == nil {
						_, err = resp.Bytes()
					}
					dcancel()
				}
				if err == nil && i%2 == 0 {
					_, err = resp.Bytes()
				}
				if took := time.Since(start); took > deadline+slack {
					late <- fmt.Sprintf("request %d took %v", i, took)
				}
				var te *TimeoutError
				var ge *Error
				switch {
				case err == nil:
					ok.Add(1)
				case !errors.As(err, &ge):
					bad <- fmt.Errorf("not an *Error: %v (%T)", err, err)
				case i%2 == 0 && errors.As(err, &te), i%2 == 1 && errors.Is(err, context.DeadlineExceeded):
					timedOut.Add(1)
				default:
					bad <- err
				}
			}()
		}
		wg.Wait()
		close(late)
		close(bad)
		for s := range late {
			t.Error(s)
		}
		for err := range bad {
			t.Errorf("a request with a deadline ended with %v", err)
		}
		if ok.Load()+timedOut.Load() != 200 {
			t.Errorf("%d completed, %d timed out, of 200", ok.Load(), timedOut.Load())
		}
		// Over HTTP/2 the cap is the server's 4 streams, which its
		// PROTOCOL_ERROR for a fifth would show (a request ending in one
		// fails above); the connection count is not: a request whose deadline
		// passes on a connection silent since it was sent retires it
		// (H2-24), which a loaded machine can stall for 40 ms, and the
		// next requests dial while it drains.
		if p := client.peak.Load(); m != modeH2 && p > want {
			t.Errorf("with deadlines, the client held %d connections at once, cap %d", p, want)
		}

		// The server's count is not checked here: a request that gave up
		// closes its connection and the next dial may reach the server
		// before it has seen the close, so its count lags the client's.
		t.Logf("%s with %v deadlines: %d completed, %d timed out; client peak %d, %d dials in all; server peak %d", m, deadline, ok.Load(), timedOut.Load(), client.peak.Load(), client.total.Load(), server.peak.Load())

		// The pool is sound after: a request goes through.
		resp, err := s.Get(ctx, url)
		if err != nil {
			t.Fatalf("after the deadlines: %v", err)
		}
		resp.Bytes()
	}, modeH1, modeH1Plain, modeH2)
}
