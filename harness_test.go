package guise

import (
	"context"
	"crypto/x509"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/guise-http/guise/internal/testpeer"
)

// mode is a protocol configuration that a behaviour test runs under; see
// run. Where time matters, a test runs its modes inside a testing/synctest
// bubble with newPipeOrigin, whose server and connections are in memory. To add one (HTTP/3, WebSocket), add its constant, its cases in alpn,
// proto and newOrigin, and, once every behaviour test passes under it, put
// it in defaultModes; until then tests opt in by listing it.
type mode string

const (
	modeH1      mode = "h1"       // HTTP/1.1 over TLS, the server offering only http/1.1 in ALPN
	modeH2      mode = "h2"       // HTTP/2 over TLS, the server offering h2 in ALPN
	modeH1Plain mode = "h1-plain" // HTTP/1.1 over TCP, for http:// URLs
)

// defaultModes are the modes run uses when the test names none.
var defaultModes = []mode{modeH1, modeH2}

// run runs f as a subtest named after each mode, in modes or, when none
// are given, in defaultModes, as net/http's clientserver_test.go does.
func run(t *testing.T, f func(t *testing.T, m mode), modes ...mode) {
	t.Helper()
	if len(modes) == 0 {
		modes = defaultModes
	}
	for _, m := range modes {
		t.Run(string(m), func(t *testing.T) { f(t, m) })
	}
}

// proto is the Response.Proto of a response under m.
func (m mode) proto() string {
	if m == modeH2 {
		return "HTTP/2.0"
	}
	return "HTTP/1.1"
}

// alpn is the protocol the TLS handshake negotiates under m, "" without
// TLS.
func (m mode) alpn() string {
	switch m {
	case modeH1:
		return "http/1.1"
	case modeH2:
		return "h2"
	}
	return ""
}

// origin is an httptest.Server serving one mode, closed when the test
// ends.
type origin struct {
	*httptest.Server
	// roots trusts the server's certificate (testpeer.Localhost); nil
	// without TLS.
	roots *x509.CertPool
}

// newOrigin starts h on 127.0.0.1 in mode m.
func newOrigin(t testing.TB, m mode, h http.Handler) *origin {
	t.Helper()
	ts := httptest.NewUnstartedServer(h)
	o := &origin{Server: ts}
	switch m {
	case modeH1Plain:
		ts.Start()
	case modeH1, modeH2:
		cert := testpeer.Localhost(t)
		ts.TLS = cert.ServerConfig(m.alpn())
		ts.EnableHTTP2 = m == modeH2
		ts.StartTLS()
		o.roots = cert.Roots
	default:
		t.Fatalf("newOrigin: no server for mode %q", m)
	}
	t.Cleanup(ts.Close)
	return o
}

// session is a Session that trusts o, on tr (nil: a Transport of its own),
// closed when the test ends.
func (o *origin) session(t testing.TB, tr *Transport) *Session {
	s := &Session{RootCAs: o.roots, Transport: tr}
	t.Cleanup(func() { s.Close() })
	return s
}

// pipeListener is a net.Listener whose connections are net.Pipe pairs, so
// that a server and a Transport can run inside a testing/synctest bubble,
// where time is virtual and real sockets cannot go.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *pipeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 443} }

// dial is a Transport.DialContext reaching l whatever the address.
func (l *pipeListener) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	c, s := net.Pipe()
	select {
	case l.conns <- s:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// newPipeOrigin serves h in mode m (over TLS: modeH1 or modeH2, with cert)
// inside the calling synctest bubble and returns tr, dialing it, and its
// URL. Both close when the test ends. The bubble's clock starts in 2000:
// make cert outside it, and do not verify it inside.
func newPipeOrigin(t *testing.T, m mode, cert *testpeer.Cert, h http.Handler, tr *Transport) (*Transport, string) {
	srv := &http.Server{Handler: h, TLSConfig: cert.ServerConfig(), Protocols: new(http.Protocols)}
	srv.Protocols.SetHTTP1(true)
	srv.Protocols.SetHTTP2(m == modeH2)
	l := newPipeListener()
	done := make(chan struct{})
	go func() {
		defer close(done)
		srv.ServeTLS(l, "", "")
	}()
	tr.DialContext = l.dial
	t.Cleanup(func() {
		tr.Close()
		srv.Close()
		<-done
	})
	return tr, "https://localhost/"
}
