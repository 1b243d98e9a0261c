package guise

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/guise-http/guise/internal/testpeer"
)

// caddyH3 starts Caddy (the Debian package, HTTP/3 built in) on addr
// with h1, h2 and h3 on the same port (TCP and UDP), serving files of
// the given sizes from its root as /size/<n> and passing POST /echo to
// a Go backend that answers with the length and SHA-256 of the body it
// read. Caddy's state (storage, autosave, the XDG directories) stays in
// dir; the admin endpoint is off. It returns the base URL.
func caddyH3(t *testing.T, dir, addr string, sizes []int) string {
	t.Helper()
	bin := testpeer.Need(t, "caddy", "caddy")
	for _, v := range []string{"HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"} {
		t.Setenv(v, dir)
	}
	cert := testpeer.Localhost(t)
	certFile, keyFile := cert.WriteFiles(t, dir)
	www := filepath.Join(dir, "www", "size")
	if err := os.MkdirAll(www, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range sizes {
		if err := os.WriteFile(filepath.Join(www, strconv.Itoa(n)), h3Pattern(n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	echo := newTestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := sha256.New()
		n, err := io.Copy(h, r.Body)
		if err != nil {
			http.Error(w, err.Error(), 400)
			return
		}
		fmt.Fprintf(w, "%d %x", n, h.Sum(nil))
	}))
	conf := fmt.Sprintf(`{
	admin off
	auto_https disable_redirects
	storage file_system %[1]s/caddy
	servers {
		protocols h1 h2 h3
	}
}
https://%[2]s {
	bind 127.0.0.1
	tls %[3]s %[4]s
	request_body {
		max_size 64MB
	}
	handle /echo {
		reverse_proxy %[5]s
	}
	handle {
		root * %[1]s/www
		file_server
	}
}
`, dir, addr, certFile, keyFile, strings.TrimPrefix(echo.URL, "http://"))
	cf := filepath.Join(dir, "Caddyfile")
	writeFile(t, cf, conf)
	testpeer.StartDaemon(t, addr, nil, bin, "run", "--config", cf, "--adapter", "caddyfile")
	return "https://" + addr
}

// TestInteropCaddyH3 is RELIABILITY Q-71: guise against Caddy's HTTP/3 (quic-go's server
// behind a real server's configuration, Alt-Svc and file serving), for
// both recorded browsers, over HTTP3 forced and over the Alt-Svc path
// (the first request over h2, Caddy's Alt-Svc h3 then taking later ones
// to QUIC): downloads of 0 B to 8 MiB checked by SHA-256, uploads of 0 B
// to 4 MiB echoed by a backend behind Caddy's reverse proxy, 20
// concurrent requests on the connection, HEAD and a 404.
func TestInteropCaddyH3(t *testing.T) {
	if testing.Short() {
		t.Skip("starts caddy")
	}
	sizes := []int{0, 1, 1 << 10, 64 << 10, 1 << 20, 8 << 20}
	dir := t.TempDir()
	base := caddyH3(t, dir, freeAddr(t), sizes)
	roots := testpeer.Localhost(t).Roots
	for _, prof := range []string{"chrome", "firefox"} {
		for _, forced := range []bool{true, false} {
			name := prof + "/altsvc"
			if forced {
				name = prof + "/forced"
			}
			t.Run(name, func(t *testing.T) {
				tr := &Transport{}
				defer tr.Close()
				s := &Session{Profile: prof, RootCAs: roots, Transport: tr}
				if forced {
					s.Protocol = HTTP3
				}
				defer s.Close()
				ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
				defer cancel()
				if !forced {
					upgradeToH3(t, ctx, s, base+"/size/1")
				}
				caddyExchanges(t, ctx, s, base, sizes)
			})
		}
	}
}

// upgradeToH3 sends requests to url until one goes over HTTP/3 (bounded
// in count), the first of them over HTTP/2 with no memory of Alt-Svc.
func upgradeToH3(t *testing.T, ctx context.Context, s *Session, url string) {
	t.Helper()
	for i := range 200 {
		resp, err := s.Get(ctx, url)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if _, err := resp.Bytes(); err != nil {
			t.Fatalf("request %d over %s: %v", i, resp.Proto, err)
		}
		if i == 0 {
			if resp.Proto != "HTTP/2.0" {
				t.Fatalf("first request over %s, want HTTP/2.0", resp.Proto)
			}
			if as := resp.Header.Get("Alt-Svc"); !strings.Contains(as, "h3=") {
				t.Fatalf("Alt-Svc %q names no h3", as)
			}
		}
		if resp.Proto == "HTTP/3.0" {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("never upgraded to HTTP/3")
}

// caddyExchanges runs the downloads, uploads, concurrent requests, HEAD
// and a 404 against caddyH3's server, each of which must go over HTTP/3.
func caddyExchanges(t *testing.T, ctx context.Context, s *Session, base string, sizes []int) {
	t.Helper()
	do := func(req *Request) (*Response, []byte, error) {
		resp, err := s.Do(ctx, req)
		if err != nil {
			return nil, nil, err
		}
		b, err := resp.Bytes()
		if err != nil {
			return nil, nil, fmt.Errorf("body over %s: %w", resp.Proto, err)
		}
		if resp.Proto != "HTTP/3.0" {
			return nil, nil, fmt.Errorf("over %s, want HTTP/3.0", resp.Proto)
		}
		return resp, b, nil
	}
	for _, n := range sizes {
		resp, b, err := do(&Request{URL: base + "/size/" + strconv.Itoa(n)})
		if err != nil {
			t.Fatalf("GET %d: %v", n, err)
		}
		if resp.StatusCode != 200 || sha256.Sum256(b) != sha256.Sum256(h3Pattern(n)) {
			t.Fatalf("GET %d: status %d, %d bytes (sha256 %.12s)", n, resp.StatusCode, len(b), sum(b))
		}
	}
	for _, n := range []int{0, 1, 100 << 10, 4 << 20} {
		body := h3Pattern(n)
		resp, b, err := do(&Request{Method: "POST", URL: base + "/echo", Body: bytes.NewReader(body)})
		if err != nil {
			t.Fatalf("POST %d: %v", n, err)
		}
		if want := fmt.Sprintf("%d %s", n, sum(body)); resp.StatusCode != 200 || string(b) != want {
			t.Fatalf("POST %d: status %d, %.80q, want %q", n, resp.StatusCode, b, want)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i := range 20 {
		wg.Go(func() {
			n := sizes[i%len(sizes)]
			if n > 1<<20 {
				n = 64 << 10
			}
			resp, b, err := do(&Request{URL: base + "/size/" + strconv.Itoa(n)})
			if err == nil && (resp.StatusCode != 200 || !bytes.Equal(b, h3Pattern(n))) {
				err = fmt.Errorf("status %d, %d bytes, want %d", resp.StatusCode, len(b), n)
			}
			if err != nil {
				errs <- fmt.Errorf("concurrent GET %d: %w", n, err)
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	resp, b, err := do(&Request{Method: "HEAD", URL: base + "/size/" + strconv.Itoa(1<<20)})
	if err != nil {
		t.Fatalf("HEAD: %v", err)
	}
	if resp.StatusCode != 200 || len(b) != 0 || resp.Header.Get("Content-Length") != strconv.Itoa(1<<20) {
		t.Fatalf("HEAD: status %d, %d body bytes, Content-Length %q", resp.StatusCode, len(b), resp.Header.Get("Content-Length"))
	}
	resp, _, err = do(&Request{URL: base + "/no/such/file"})
	if err != nil || resp.StatusCode != 404 {
		t.Fatalf("404: %v %v", err, resp)
	}
}
