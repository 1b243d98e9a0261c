//go:build unix

package guise

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/guise-http/guise/internal/h2"
	"github.com/guise-http/guise/internal/testpeer"
)

// silentServer accepts connections on loopback and never writes; it holds
// them until the test ends.
func silentServer(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	testpeer.Serve(t, ln, testpeer.Handle(func(net.Conn) { <-release }))
	t.Cleanup(func() { close(release) }) // runs before testpeer.Serve's own
	return ln.Addr().String()
}

// TestPhaseTimeouts (RELIABILITY S-4): each phase's timeout, set to 200ms
// against a peer that stays silent in that phase, ends the request within
// [200ms, 3s] in a TimeoutError naming the phase.
//
// RELIABILITY L-07.
func TestPhaseTimeouts(t *testing.T) {
	const to = 200 * time.Millisecond
	silent := silentServer(t)
	stall := newTestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/body" {
			w.Header().Set("Content-Length", "4096")
			w.Write(bytes.Repeat([]byte("b"), 1024))
			w.(http.Flusher).Flush()
		}
		<-r.Context().Done() // silent until the client gives up
	}))
	blockingDial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}
	for _, tc := range []struct {
		name  string
		tr    *Transport
		proxy string        // Session.Proxy
		total time.Duration // Session.Timeout
		url   string
		phase Phase
	}{
		{"dial", &Transport{DialTimeout: to, DialContext: blockingDial}, "", 0, "http://dial.test/", PhaseDial},
		{"tls", &Transport{TLSHandshakeTimeout: to}, "", 0, "https://" + silent + "/", PhaseTLS},
		{"proxy CONNECT", &Transport{DialTimeout: to}, "http://" + silent, 0, "https://origin.test/", PhaseProxy},
		{"SOCKS greeting", &Transport{DialTimeout: to}, "socks5h://" + silent, 0, "http://origin.test/", PhaseProxy},
		{"response head", &Transport{ResponseHeaderTimeout: to}, "", 0, stall.URL + "/head", PhaseHead},
		{"body idle", &Transport{BodyIdleTimeout: to}, "", 0, stall.URL + "/body", PhaseBodyIdle},
		{"total", &Transport{}, "", to, stall.URL + "/head", PhaseTotal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer tc.tr.Close()
			s := &Session{Transport: tc.tr, Proxy: tc.proxy, Timeout: tc.total}
			defer s.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			start := time.Now()
			resp, err := s.Get(ctx, tc.url)
			if err == nil {
				_, err = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			d := time.Since(start)
			var te *TimeoutError
			if !errors.As(err, &te) || te.Phase != tc.phase {
				t.Fatalf("err = %v, want a TimeoutError{%v}", err, tc.phase)
			}
			if d < to-10*time.Millisecond || d > 3*time.Second {
				t.Errorf("ended after %v, want [%v, 3s]", d, to)
			}
		})
	}
	// A refused connection is no timeout, directly or through a proxy.
	dead := deadAddr(t)
	for _, proxy := range []string{"", "http://" + dead, "socks5h://" + dead} {
		tr := &Transport{DialTimeout: to}
		s := &Session{Transport: tr, Proxy: proxy}
		_, err := s.Get(context.Background(), "http://"+dead+"/")
		var te *TimeoutError
		if err == nil || errors.As(err, &te) {
			t.Errorf("proxy %q: a refused connection gave %v, want an error that is no TimeoutError", proxy, err)
		}
		s.Close()
		tr.Close()
	}
}

// TestCancelPromptly (RELIABILITY L-09): cancelling a request's context
// during the dial, before the response head and during the body returns
// at once; cancelling one of two requests sharing an HTTP/2 connection
// leaves the other and the connection alone.
func TestCancelPromptly(t *testing.T) {
	within := func(t *testing.T, what string, f func(ctx context.Context) error) {
		t.Helper()
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		start := time.Now()
		err := f(ctx)
		if !errors.Is(err, context.Canceled) {
			t.Errorf("%s: err = %v, want context.Canceled", what, err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s: returned %v after the cancel", what, d)
		}
	}
	blocking := &Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}}
	defer blocking.Close()
	dialing := &Session{Transport: blocking}
	within(t, "dial", func(ctx context.Context) error {
		_, err := dialing.Get(ctx, "http://dial.test/")
		return err
	})
	stall := newTestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/body" {
			w.Write(bytes.Repeat([]byte("b"), 1024))
			w.(http.Flusher).Flush()
		}
		<-r.Context().Done()
	}))
	s := &Session{}
	defer s.Close()
	within(t, "before the head", func(ctx context.Context) error {
		_, err := s.Get(ctx, stall.URL+"/head")
		return err
	})
	within(t, "during the body", func(ctx context.Context) error {
		resp, err := s.Get(ctx, stall.URL+"/body")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	})

	// HTTP/2: one connection, two requests; the first is cancelled
	// mid-body, the second reads its body to the end.
	release := make(chan struct{})
	o := newOrigin(t, modeH2, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write(bytes.Repeat([]byte("h"), 1024))
		w.(http.Flusher).Flush()
		if r.URL.Path == "/slow" {
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
		w.Write(bytes.Repeat([]byte("h"), 1024))
	}))
	defer close(release)
	tr := &Transport{}
	defer tr.Close()
	h2s := &Session{Transport: tr, RootCAs: o.roots}
	defer h2s.Close()
	warm, err := h2s.Get(context.Background(), o.URL+"/")
	if err != nil || warm.Proto != "HTTP/2.0" {
		t.Fatalf("warm-up: %v, %v", warm, err)
	}
	warm.Bytes()
	within(t, "one of two h2 streams", func(ctx context.Context) error {
		resp, err := h2s.Get(ctx, o.URL+"/slow")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		other, err := h2s.Get(context.Background(), o.URL+"/")
		if err != nil {
			t.Errorf("the other stream: %v", err)
		} else if b, err := other.Bytes(); len(b) != 2048 || err != nil {
			t.Errorf("the other stream read %d bytes, %v", len(b), err)
		}
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	})
	after, err := h2s.Get(context.Background(), o.URL+"/")
	if err != nil {
		t.Fatal(err)
	}
	after.Bytes()
	st := tr.init()
	n := len(st.pool.Shares())
	if n != 1 {
		t.Errorf("%d HTTP/2 connections after a cancelled stream, want the one", n)
	}
}

// TestClassifyH2Timeouts: an HTTP/2 timeout before the response head is
// PhaseHead, the head's own wait or the connection's ping alike.
func TestClassifyH2Timeouts(t *testing.T) {
	for _, phase := range []h2.Phase{h2.PhaseHead, h2.PhasePing} {
		err := classify(context.Background(), &h2.TimeoutError{Phase: phase})
		var te *TimeoutError
		if !errors.As(err, &te) || te.Phase != PhaseHead {
			t.Errorf("h2 %s timeout before the head: %v, want TimeoutError{head}", phase, err)
		}
	}
}
