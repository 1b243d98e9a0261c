package testpeer

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestLocalhost: the shared certificate verifies for every loopback name
// against its Roots, with the intermediate it sends, and not against
// another CA's.
func TestLocalhost(t *testing.T) {
	c := Localhost(t)
	inter := x509.NewCertPool()
	for _, der := range c.Chain[1:] {
		cert, err := x509.ParseCertificate(der)
		if err != nil {
			t.Fatal(err)
		}
		inter.AddCert(cert)
	}
	for _, name := range []string{"localhost", "127.0.0.1", "::1"} {
		if _, err := c.Leaf.Verify(x509.VerifyOptions{DNSName: name, Roots: c.Roots, Intermediates: inter}); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	other, err := NewCA()
	if err != nil {
		t.Fatal(err)
	}
	var ua x509.UnknownAuthorityError
	if _, err := c.Leaf.Verify(x509.VerifyOptions{DNSName: "localhost", Roots: other.Roots, Intermediates: inter}); !errors.As(err, &ua) {
		t.Errorf("another CA: err = %v, want x509.UnknownAuthorityError", err)
	}
	if chain, key := c.PEM(); !strings.Contains(string(chain), "BEGIN CERTIFICATE") || !strings.Contains(string(key), "BEGIN EC PRIVATE KEY") {
		t.Errorf("PEM: %q, %q", chain, key)
	}
}

// TestH2Server: net/http's HTTP/2 client gets the body and the head, also
// on the second request, whose fields are HPACK references.
func TestH2Server(t *testing.T) {
	h := &H2Server{Head: [][2]string{{"server", "testpeer"}}, Body: []byte(strings.Repeat("x", 100<<10))}
	srv := h.ListenTLS(t)
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: Localhost(t).Roots}, ForceAttemptHTTP2: true}
	defer tr.CloseIdleConnections()
	c := &http.Client{Transport: tr}
	for i := range 2 {
		resp, err := c.Get("https://" + srv.Addr + "/")
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.Proto != "HTTP/2.0" || resp.Header.Get("Server") != "testpeer" || string(b) != string(h.Body) {
			t.Fatalf("request %d: %s %v, %d bytes: %v", i, resp.Proto, resp.Header, len(b), err)
		}
	}
	if n := srv.Conns.Load(); n != 1 {
		t.Errorf("%d connections for 2 requests", n)
	}
}

// TestListen: the script runs on the connection, which closes when the
// script returns.
func TestListen(t *testing.T) {
	srv := Listen(t, func(c net.Conn) error { _, err := io.WriteString(c, "hi"); return err })
	c, err := net.Dial("tcp", srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	b, err := io.ReadAll(c)
	if string(b) != "hi" || err != nil {
		t.Fatalf("read %q, %v", b, err)
	}
}
