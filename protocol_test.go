package guise

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/guise-http/guise/internal/testpeer"
)

func TestProtocolString(t *testing.T) {
	for p, want := range map[Protocol]string{AnyProtocol: "any", HTTP1: "http/1.1", HTTP2: "h2", HTTP3: "h3", 9: "unknown protocol"} {
		if got := p.String(); got != want {
			t.Errorf("Protocol(%d).String() = %q, want %q", uint8(p), got, want)
		}
	}
}

// offers is an h2-capable origin that records, per TCP connection, the
// ALPN list its ClientHello offered.
type offers struct {
	*httptest.Server
	roots *x509.CertPool
	mu    sync.Mutex
	by    map[string][]string // remote address → offered protocols
}

func newOffersOrigin(t *testing.T, h http.Handler) *offers {
	t.Helper()
	cert := testpeer.Localhost(t)
	o := &offers{by: map[string][]string{}, roots: cert.Roots}
	ts := httptest.NewUnstartedServer(h)
	ts.TLS = cert.ServerConfig("h2", "http/1.1")
	ts.TLS.GetConfigForClient = func(chi *tls.ClientHelloInfo) (*tls.Config, error) {
		o.mu.Lock()
		o.by[chi.Conn.RemoteAddr().String()] = slices.Clone(chi.SupportedProtos)
		o.mu.Unlock()
		return nil, nil
	}
	ts.EnableHTTP2 = true
	ts.StartTLS()
	t.Cleanup(ts.Close)
	o.Server = ts
	return o
}

func (o *offers) offered(addr string) []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.by[addr]
}

// TestHTTP1OnlyConnectionsApart: an HTTP1 Session and a default Session on
// one Transport, to one h2-capable origin, use connections of their own:
// the default one's hello offers h2 and speaks HTTP/2, the HTTP1 one's
// offers http/1.1 alone and speaks HTTP/1.1. Each reuses its own on the
// next request, and a default Session's Request with Protocol HTTP1 takes
// the HTTP1 Session's idle connection.
func TestHTTP1OnlyConnectionsApart(t *testing.T) {
	o := newOffersOrigin(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Remote", r.RemoteAddr)
		w.Write([]byte("ok"))
	}))
	tr := &Transport{}
	t.Cleanup(func() { tr.Close() })
	def := &Session{RootCAs: o.roots, Transport: tr}
	h1 := &Session{RootCAs: o.roots, Transport: tr, Protocol: HTTP1}
	ctx := context.Background()
	get := func(s *Session, req *Request) (proto, remote string) {
		t.Helper()
		resp, err := s.Do(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := resp.Bytes(); err != nil {
			t.Fatal(err)
		}
		return resp.Proto, resp.Header.Get("x-remote")
	}
	type seen struct{ proto, remote string }
	var first [2]seen
	for round := range 2 {
		for i, s := range []*Session{def, h1} {
			p, r := get(s, &Request{URL: o.URL})
			if round == 0 {
				first[i] = seen{p, r}
			} else if r != first[i].remote {
				t.Errorf("session %d: second request on %s, first on %s: not reused", i, r, first[i].remote)
			}
		}
	}
	if first[0].proto != "HTTP/2.0" || first[1].proto != "HTTP/1.1" {
		t.Fatalf("protocols %s (default) and %s (HTTP1), want HTTP/2.0 and HTTP/1.1", first[0].proto, first[1].proto)
	}
	if first[0].remote == first[1].remote {
		t.Fatalf("both Sessions on connection %s", first[0].remote)
	}
	if got := o.offered(first[0].remote); !slices.Equal(got, []string{"h2", "http/1.1"}) {
		t.Errorf("default connection offered %q", got)
	}
	if got := o.offered(first[1].remote); !slices.Equal(got, []string{"http/1.1"}) {
		t.Errorf("HTTP1 connection offered %q", got)
	}
	// A Request's Protocol overrides its Session's: both ways.
	if p, r := get(def, &Request{URL: o.URL, Protocol: HTTP1}); p != "HTTP/1.1" || r != first[1].remote {
		t.Errorf("default Session, HTTP1 Request: %s on %s, want HTTP/1.1 on %s", p, r, first[1].remote)
	}
	if p, r := get(h1, &Request{URL: o.URL, Protocol: HTTP2}); p != "HTTP/2.0" || r != first[0].remote {
		t.Errorf("HTTP1 Session, HTTP2 Request: %s on %s, want HTTP/2.0 on %s", p, r, first[0].remote)
	}
	o.mu.Lock()
	n := len(o.by)
	o.mu.Unlock()
	if n != 2 {
		t.Errorf("%d connections, want 2", n)
	}
}

// TestHTTP1OnlyRedirectKeepsProtocol: every hop of a redirect chain runs
// with the first request's Protocol, the isolated Do too.
func TestHTTP1OnlyRedirectKeepsProtocol(t *testing.T) {
	var protos sync.Map // path → proto
	o := newOffersOrigin(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		protos.Store(r.URL.Path, r.Proto)
		if r.URL.Path == "/from" {
			http.Redirect(w, r, "/to", http.StatusFound)
			return
		}
		w.Write([]byte("ok"))
	}))
	for _, isolated := range []bool{false, true} {
		protos.Clear()
		req := &Request{URL: o.URL + "/from", Protocol: HTTP1, RootCAs: o.roots}
		var resp *Response
		var err error
		if isolated {
			resp, err = Do(context.Background(), req)
		} else {
			s := &Session{RootCAs: o.roots}
			resp, err = s.Do(context.Background(), req)
			defer s.Close()
		}
		if err != nil {
			t.Fatal(err)
		}
		resp.Bytes()
		for _, path := range []string{"/from", "/to"} {
			if p, _ := protos.Load(path); p != "HTTP/1.1" {
				t.Errorf("isolated %v: %s went over %v, want HTTP/1.1", isolated, path, p)
			}
		}
	}
}

// TestProtocolUnsupported: HTTP3 through a Transport whose DialContext
// opens the connections (UDP cannot follow it), HTTP3 over http://, and a
// Protocol without a name, fail with ErrProtocolUnsupported inside an
// *Error before anything is dialed.
func TestProtocolUnsupported(t *testing.T) {
	var dials atomic.Int32
	tr := &Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return nil, errors.New("no dial expected")
	}}
	defer tr.Close()
	for _, c := range []struct {
		session, req Protocol
	}{{HTTP3, AnyProtocol}, {AnyProtocol, HTTP3}, {HTTP1, HTTP3}, {Protocol(9), AnyProtocol}} {
		s := &Session{Transport: tr, Protocol: c.session}
		_, err := s.Do(context.Background(), &Request{URL: "https://127.0.0.1:1/", Protocol: c.req})
		var ge *Error
		if !errors.Is(err, ErrProtocolUnsupported) || !errors.As(err, &ge) {
			t.Errorf("session %v, request %v: %v, want ErrProtocolUnsupported in an *Error", c.session, c.req, err)
		}
	}
	_, err := Do(context.Background(), &Request{URL: "http://127.0.0.1:1/", Protocol: HTTP3})
	if !errors.Is(err, ErrProtocolUnsupported) {
		t.Errorf("Do: %v, want ErrProtocolUnsupported", err)
	}
	if n := dials.Load(); n != 0 {
		t.Errorf("%d dials", n)
	}
}

// TestHTTP1OnlyPlainHTTP: over http:// an HTTP1 request is the plain
// HTTP/1.1 request it always was, and shares the connection with a
// default one (the wire is the same).
func TestHTTP1OnlyPlainHTTP(t *testing.T) {
	var remotes sync.Map
	o := newOrigin(t, modeH1Plain, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		remotes.Store(r.RemoteAddr, true)
	}))
	s := o.session(t, nil)
	for _, p := range []Protocol{HTTP1, AnyProtocol, HTTP2} {
		resp, err := s.Do(context.Background(), &Request{URL: o.URL, Protocol: p})
		if err != nil {
			t.Fatal(err)
		}
		resp.Bytes()
		if resp.Proto != "HTTP/1.1" {
			t.Errorf("%v: %s", p, resp.Proto)
		}
	}
	n := 0
	remotes.Range(func(any, any) bool { n++; return true })
	if n != 1 {
		t.Errorf("%d connections for three plain requests, want 1", n)
	}
}
