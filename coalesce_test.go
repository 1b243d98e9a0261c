package guise

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/guise-http/guise/internal/testpeer"
)

// TestTwoNamesOneAddressTwoConnections (RELIABILITY L-11): two host names
// that resolve to one address, under one certificate that covers both, get
// a connection each; each name reuses its own. guise keys connections by
// host and port. Chromium pools HTTP/2 sessions by address as well
// (SpdySessionPool's IP pooling: a new name whose address matches a live
// session whose certificate covers the name takes that session), and
// Firefox coalesces likewise; guise does not, so a fingerprint of the
// connection count can tell it from a browser on such sites.
func TestTwoNamesOneAddressTwoConnections(t *testing.T) {
	run(t, func(t *testing.T, m mode) {
		cert := testpeer.NewCert(t, "a.test", "b.test")
		ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, r.Host)
		}))
		ts.TLS = cert.ServerConfig(m.alpn())
		ts.EnableHTTP2 = m == modeH2
		ts.StartTLS()
		t.Cleanup(ts.Close)
		_, port, _ := net.SplitHostPort(ts.Listener.Addr().String())
		var dials atomic.Int32
		tr := &Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, p, _ := net.SplitHostPort(addr)
			if (host != "a.test" && host != "b.test") || p != port {
				t.Errorf("dial to %s", addr)
			}
			dials.Add(1)
			var d net.Dialer
			return d.DialContext(ctx, network, ts.Listener.Addr().String())
		}}
		t.Cleanup(func() { tr.Close() })
		s := &Session{Transport: tr, RootCAs: cert.Roots}
		t.Cleanup(func() { s.Close() })
		for i, name := range []string{"a.test", "b.test", "a.test", "b.test"} {
			resp, err := s.Get(context.Background(), "https://"+name+":"+port+"/")
			if err != nil {
				t.Fatalf("request %d to %s: %v", i, name, err)
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil || string(b) != name+":"+port {
				t.Fatalf("request %d to %s: Host %q, %v", i, name, b, err)
			}
			if want := int32(min(i+1, 2)); dials.Load() != want {
				t.Fatalf("after request %d (%s): %d dials, want %d", i, name, dials.Load(), want)
			}
		}
	}, modeH1, modeH2)
}
