package tlsfp

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/guise-http/guise/internal/testpeer"
)

// startNginx runs nginx on a free 127.0.0.1 port with TLS 1.3 only and the
// test certificate, and returns its address.
func startNginx(t *testing.T) string {
	testpeer.Need(t, "nginx", "nginx-light")
	dir := testpeer.Dir(t)
	testCerts(t).WriteFiles(t, dir)
	addr := "127.0.0.1:" + testpeer.FreePort(t)
	testpeer.Nginx(t, dir, fmt.Sprintf(`server {
    listen %[2]s ssl http2;
    server_name fp.test;
    ssl_certificate %[1]s/cert.pem;
    ssl_certificate_key %[1]s/key.pem;
    ssl_protocols TLSv1.3;
    location / { return 200 "ok"; }
  }`, dir, addr), addr)
	return addr
}

func TestNginx(t *testing.T) {
	addr := startNginx(t)
	pki := testCerts(t)
	for _, name := range []string{"chrome", "firefox"} {
		cache := NewSessionCache()
		cfg := &Config{Profile: lookup(t, name), RootCAs: pki.Roots, Sessions: cache, ALPN: []string{"http/1.1"}}
		for i, wantResumed := range []bool{false, true} {
			nc, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			c, st, err := Handshake(ctx, nc, "fp.test", cfg)
			cancel()
			if err != nil {
				t.Fatalf("%s #%d: %v", name, i, err)
			}
			if st.Version != tls.VersionTLS13 || st.ALPN != "http/1.1" || st.Resumed != wantResumed {
				t.Errorf("%s #%d: state %+v, want TLS 1.3, http/1.1, resumed=%v", name, i, st, wantResumed)
			}
			c.SetDeadline(time.Now().Add(10 * time.Second))
			io.WriteString(c, "GET / HTTP/1.1\r\nHost: fp.test\r\nConnection: close\r\n\r\n")
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatalf("%s #%d: %v", name, i, err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			c.Close()
			if resp.StatusCode != 200 || string(body) != "ok" {
				t.Errorf("%s #%d: %d %q", name, i, resp.StatusCode, body)
			}
		}
	}
	// h2 offer: nginx picks h2.
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c, st, err := Handshake(context.Background(), nc, "fp.test", &Config{Profile: lookup(t, "chrome"), RootCAs: pki.Roots})
	if err != nil || st.ALPN != "h2" || st.Group != X25519 && st.Group != X25519MLKEM768 {
		t.Errorf("h2 offer: %v %+v", err, st)
	}
	if c != nil {
		c.Close()
	}
}
