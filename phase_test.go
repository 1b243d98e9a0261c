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
)

// silentServer accepts connections on loopback and never writes; it holds
// them until the test ends.
func silentServer(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	serveConns(t, ln, func(net.Conn) { <-release })
	t.Cleanup(func() { close(release) }) // runs before serveConns' own
	return ln.Addr().String()
}

// TestPhaseTimeouts (RELIABILITY S-4): each phase's timeout, set to 200ms
// against a peer that stays silent in that phase, ends the request within
// [200ms, 3s] in a TimeoutError naming the phase.
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
