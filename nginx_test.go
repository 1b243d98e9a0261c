package guise

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guise-http/guise/internal/testpeer"
)

// nginxPeer is a real nginx on 127.0.0.1 serving files over plain HTTP/1.1
// and over TLS with HTTP/2, with the connection serial number in X-Conn.
type nginxPeer struct {
	plain, tls string // host:port
	roots      *x509.CertPool
	big        []byte // /big.bin
	text       []byte // /text.txt, served gzipped (chunked) when asked
}

func startNginx(t *testing.T) *nginxPeer {
	t.Helper()
	testpeer.Need(t, "nginx", "nginx-light")
	dir := testpeer.Dir(t)
	n := &nginxPeer{}
	cert := testpeer.Localhost(t)
	certPEM, keyPEM := cert.PEM()
	n.roots = cert.Roots
	n.big = bytes.Repeat([]byte("0123456789abcdef"), 8<<20/16)
	n.text = []byte(strings.Repeat("guise is a browser-shaped HTTP client. ", 2000))
	files := map[string][]byte{
		"cert.pem": certPEM, "key.pem": keyPEM,
		"www/small.txt": []byte("hello from nginx\n"),
		"www/big.bin":   n.big,
		"www/text.txt":  n.text,
	}
	for name, b := range files {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	n.plain, n.tls = freeAddr(t), freeAddr(t)
	testpeer.Nginx(t, dir, fmt.Sprintf(`keepalive_requests 10000;
  gzip on;
  gzip_types text/plain;
  gzip_min_length 1;
  default_type text/plain;
  add_header X-Conn $connection always;
  add_header X-Conn-Requests $connection_requests always;
  server {
    listen %[2]s;
    listen %[3]s ssl http2;
    server_name localhost;
    ssl_certificate %[1]s/cert.pem;
    ssl_certificate_key %[1]s/key.pem;
    root %[1]s/www;
    location = /small.txt { gzip off; }
    location = /big.bin { gzip off; }
  }`, dir, n.plain, n.tls), n.tls)
	return n
}

func freeAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func TestNginx(t *testing.T) {
	n := startNginx(t)
	run(t, func(t *testing.T, m mode) {
		base := "http://" + n.plain
		s := &Session{}
		if m == modeH2 {
			_, port, _ := net.SplitHostPort(n.tls)
			base = "https://localhost:" + port
			s.RootCAs = n.roots
		}
		defer s.Close()
		ctx := context.Background()
		get := func(path string) *Response {
			t.Helper()
			resp, err := s.Get(ctx, base+path)
			if err != nil {
				t.Fatal(err)
			}
			return resp
		}

		// Keep-alive: one connection for 50 sequential requests.
		conns := map[string]bool{}
		for i := 0; i < 50; i++ {
			resp := get("/small.txt")
			b, err := resp.Bytes()
			if err != nil || string(b) != "hello from nginx\n" {
				t.Fatalf("small: %d %q %v", resp.StatusCode, b, err)
			}
			conns[resp.Header.Get("x-conn")] = true
			if resp.Proto != m.proto() {
				t.Fatalf("proto %s, want %s", resp.Proto, m.proto())
			}
		}
		if len(conns) != 1 {
			t.Fatalf("50 requests used %d connections", len(conns))
		}

		// Large file, streamed.
		resp := get("/big.bin")
		if resp.ContentLength != int64(len(n.big)) {
			t.Fatalf("big: Content-Length %d", resp.ContentLength)
		}
		h := sha256.New()
		if _, err := io.Copy(h, resp.Body); err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if !bytes.Equal(h.Sum(nil), sha256Sum(n.big)) {
			t.Fatal("big: body differs")
		}

		// gzip: the profile asks for it; nginx compresses on the fly
		// (chunked over HTTP/1.1); guise decodes, and the connection
		// is reused after the decoded body (D-09).
		resp = get("/text.txt")
		conn := resp.Header.Get("x-conn")
		if !resp.Decoded || resp.Header.Has("content-encoding") || resp.ContentLength != -1 {
			t.Fatalf("text: decoded %v, content-encoding %q, length %d", resp.Decoded, resp.Header.Get("content-encoding"), resp.ContentLength)
		}
		plain, err := resp.Bytes()
		if err != nil || !bytes.Equal(plain, n.text) {
			t.Fatalf("text: decoded body differs (%v)", err)
		}
		if again := get("/small.txt"); again.Header.Get("x-conn") != conn {
			t.Fatalf("a new connection after a decoded body")
		} else {
			again.Body.Close()
		}

		// RawBody hands the gzip bytes over.
		raw := &Session{RawBody: true, RootCAs: s.RootCAs}
		defer raw.Close()
		resp, err = raw.Get(ctx, base+"/text.txt")
		if err != nil {
			t.Fatal(err)
		}
		if resp.Header.Get("content-encoding") != "gzip" || resp.Decoded {
			t.Fatalf("raw: content-encoding %q", resp.Header.Get("content-encoding"))
		}
		if m == modeH1Plain && resp.ContentLength != -1 {
			t.Fatalf("text: want a chunked body, Content-Length %d", resp.ContentLength)
		}
		gz, err := resp.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(bytes.NewReader(gz))
		if err != nil {
			t.Fatalf("raw: not gzip: %v", err)
		}
		plain, err = io.ReadAll(zr)
		if err != nil || !bytes.Equal(plain, n.text) {
			t.Fatalf("raw: gunzipped body differs (%v)", err)
		}

		// An abandoned large body is not drained; the next request
		// still works.
		resp = get("/big.bin")
		var one [1]byte
		io.ReadFull(resp.Body, one[:])
		resp.Body.Close()
		b, err := get("/small.txt").Bytes()
		if err != nil || len(b) == 0 {
			t.Fatalf("after abandoning a large body: %v", err)
		}
	}, modeH1Plain, modeH2)
}

func sha256Sum(b []byte) []byte {
	s := sha256.Sum256(b)
	return s[:]
}
