package h2

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/guise-http/guise/internal/testpeer"
)

// Interop with real HTTP/2 servers started by the test on 127.0.0.1.

// selfSigned writes a certificate for peer.test and 127.0.0.1 and its key
// into dir and returns their paths.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	return testpeer.NewCert(t, "peer.test", "127.0.0.1").WriteFiles(t, dir)
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startPeer runs the program until the test ends and waits until port
// accepts connections.
func startPeer(t *testing.T, port int, name string, args ...string) {
	t.Helper()
	var out bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	for range 100 {
		select {
		case <-exited:
			t.Fatalf("%s exited: %s", name, out.String())
		default:
		}
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return
		}
		time.Sleep(50 * time.Millisecond) // polling another process's readiness
	}
	t.Fatalf("%s did not listen on %s: %s", name, addr, out.String())
}

// dialTLS connects to port with ALPN h2 and starts a ClientConn.
func dialTLS(t *testing.T, port int, cfg *Config) *ClientConn {
	t.Helper()
	tc, err := tls.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port),
		&tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2"}, ServerName: "peer.test"})
	if err != nil {
		t.Fatal(err)
	}
	if p := tc.ConnectionState().NegotiatedProtocol; p != "h2" {
		tc.Close()
		t.Fatalf("ALPN %q", p)
	}
	cc, err := NewClientConn(tc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}

// exercise runs concurrent GETs of path with each browser Config and checks
// status and body.
func exercise(t *testing.T, port int, path string, want func([]byte) bool) {
	for name, cfg := range map[string]*Config{"chrome": chromeConfig(), "firefox": firefoxConfig()} {
		t.Run(name, func(t *testing.T) {
			cc := dialTLS(t, port, cfg)
			hdr := chromeNav
			if name == "firefox" {
				hdr = firefoxNav
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			var wg sync.WaitGroup
			errs := make(chan error, 8)
			for range 8 {
				wg.Go(func() {
					req := &Request{Method: "GET", Scheme: "https", Authority: "peer.test", Path: path,
						Header: hdr, ContentLength: -1,
						Priority: Priority{Send: true, Exclusive: name == "chrome", Weight: 256, Dep: DepLatestOpen}}
					resp, err := cc.RoundTrip(ctx, req)
					if err != nil {
						errs <- err
						return
					}
					defer resp.Body.Close()
					b, err := io.ReadAll(resp.Body)
					if err != nil {
						errs <- err
						return
					}
					if resp.StatusCode != 200 || !want(b) {
						errs <- fmt.Errorf("status %d, %d body bytes", resp.StatusCode, len(b))
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatal(err)
			}
		})
	}
}

// docroot writes index.html and a 3 MiB big.bin into dir.
func docroot(t *testing.T, dir string) []byte {
	big := bytes.Repeat([]byte("0123456789abcdef"), 3<<16)
	os.WriteFile(filepath.Join(dir, "index.html"), []byte("<p>hello</p>\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "big.bin"), big, 0o644)
	return big
}

func TestInteropNghttpd(t *testing.T) {
	bin := testpeer.Need(t, "nghttpd", "nghttp2-server")
	dir := t.TempDir()
	big := docroot(t, dir)
	cert, key := selfSigned(t, dir)
	port := freePort(t)
	startPeer(t, port, bin, "-a", "127.0.0.1", "-d", dir, fmt.Sprint(port), key, cert)
	exercise(t, port, "/big.bin", func(b []byte) bool { return bytes.Equal(b, big) })
}

func TestInteropNginx(t *testing.T) {
	testpeer.Need(t, "nginx", "nginx-light")
	dir := testpeer.Dir(t)
	big := docroot(t, dir)
	cert, key := selfSigned(t, dir)
	port := freePort(t)
	testpeer.Nginx(t, dir, fmt.Sprintf(`server {
    listen 127.0.0.1:%[2]d ssl http2;
    ssl_certificate %[3]s;
    ssl_certificate_key %[4]s;
    root %[1]s;
  }`, dir, port, cert, key), fmt.Sprintf("127.0.0.1:%d", port))
	exercise(t, port, "/big.bin", func(b []byte) bool { return bytes.Equal(b, big) })
}

func TestInteropHAProxy(t *testing.T) {
	bin := testpeer.Need(t, "haproxy", "haproxy")
	dir := t.TempDir()
	cert, key := selfSigned(t, dir)
	c, _ := os.ReadFile(cert)
	k, _ := os.ReadFile(key)
	combined := filepath.Join(dir, "combined.pem")
	os.WriteFile(combined, append(c, k...), 0o600)
	port := freePort(t)
	conf := fmt.Sprintf(`global
  maxconn 100
defaults
  mode http
  timeout client 10s
  timeout connect 5s
  timeout server 10s
frontend f
  bind 127.0.0.1:%d ssl crt %s alpn h2
  http-request return status 200 content-type text/plain string "hello from haproxy"
`, port, combined)
	cf := filepath.Join(dir, "haproxy.cfg")
	os.WriteFile(cf, []byte(conf), 0o644)
	startPeer(t, port, bin, "-db", "-f", cf)
	exercise(t, port, "/", func(b []byte) bool { return string(b) == "hello from haproxy" })
}
