package main

import (
	"bytes"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/guise-http/guise/bench/internal/peer"
)

// Sizes of the two files the server serves.
const (
	smallSize = 100
	bigSize   = 8 << 20
)

// Servers h2compare can run: nghttpd, the default, and nginx.
const (
	serverNghttpd = "nghttpd"
	serverNginx   = "nginx"
)

// errNoNghttpd and errNoNginx say a server is not installed.
var (
	errNoNghttpd = errors.New("h2compare: nghttpd not found (Debian package nghttp2-server)")
	errNoNginx   = errors.New("h2compare: nginx not found (Debian package nginx-light)")
)

// findServer returns the path of the server's program: on $PATH, or in
// /usr/sbin or /usr/bin, which a non-root $PATH may lack.
func findServer(kind string) (string, error) {
	notFound := errNoNghttpd
	if kind == serverNginx {
		notFound = errNoNginx
	}
	if p, err := exec.LookPath(kind); err == nil {
		return p, nil
	}
	for _, dir := range []string{"/usr/sbin/", "/usr/bin/"} {
		p := dir + kind
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", notFound
}

// server is a server process (nghttpd or nginx) serving a temporary
// directory over TLS on 127.0.0.1.
type server struct {
	Base    string         // https://127.0.0.1:PORT
	Roots   *x509.CertPool // trusts the server's self-signed certificate
	CertPEM []byte         // that certificate as PEM
	Kind    string         // serverNghttpd or serverNginx
	dir     string
	cmd     *exec.Cmd
	out     *capped
	done    chan error
}

// startServer writes a fresh ECDSA certificate and the two files into a new
// temporary directory and starts the server (kind, the program at bin) on
// a free loopback port. It returns once the port accepts connections.
//
// nghttpd accepts only the P-256 group (nghttp2 1.52 sets it so for
// OpenSSL 3), so it answers every hello whose key shares are X25519MLKEM768
// and X25519, as Chrome's and Firefox's are, with a HelloRetryRequest.
// nginx is set up as sites usually are: X25519 first, then P-256, so that
// a browser's hello completes without one; it runs as one process
// (master_process off), so its CPU is that process's, and it sends DATA
// frames of 16 KiB like nghttpd (its default is 8 KiB).
func startServer(kind, bin string) (*server, error) {
	if kind != serverNghttpd && kind != serverNginx {
		return nil, fmt.Errorf("h2compare: unknown server %q (want nghttpd or nginx)", kind)
	}
	dir, err := os.MkdirTemp("", "h2compare")
	if err != nil {
		return nil, err
	}
	s := &server{dir: dir, Kind: kind}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(dir)
		}
	}()
	docs := filepath.Join(dir, "htdocs")
	if err := os.Mkdir(docs, 0o755); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(docs, "small"), filler(smallSize), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(docs, "big"), filler(bigSize), 0o644); err != nil {
		return nil, err
	}
	keyPEM, certPEM, err := peer.SelfSignedPEM(time.Now())
	if err != nil {
		return nil, err
	}
	keyFile, certFile := filepath.Join(dir, "key.pem"), filepath.Join(dir, "cert.pem")
	if err := os.WriteFile(keyFile, keyPEM, 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(certFile, certPEM, 0o644); err != nil {
		return nil, err
	}
	s.CertPEM = certPEM
	s.Roots = x509.NewCertPool()
	if !s.Roots.AppendCertsFromPEM(certPEM) {
		return nil, errors.New("h2compare: generated certificate does not parse")
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	s.out = &capped{max: 8 << 10}
	if kind == serverNginx {
		conf := filepath.Join(dir, "nginx.conf")
		if err := os.WriteFile(conf, []byte(nginxConf(dir, docs, port, keyFile, certFile)), 0o644); err != nil {
			return nil, err
		}
		s.cmd = exec.Command(bin, "-p", dir, "-c", conf)
	} else {
		s.cmd = exec.Command(bin, "-a", "127.0.0.1", "-d", docs, strconv.Itoa(port), keyFile, certFile)
	}
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.out
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	s.done = make(chan error, 1)
	go func() { s.done <- s.cmd.Wait() }()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	if err := waitListening(addr, s.done, 5*time.Second); err != nil {
		s.cmd.Process.Kill()
		<-s.done
		if b, rerr := os.ReadFile(filepath.Join(dir, "error.log")); rerr == nil {
			s.out.Write(b)
		}
		return nil, fmt.Errorf("h2compare: %s: %w; output: %q", kind, err, s.out.String())
	}
	s.Base = "https://" + addr
	ok = true
	return s, nil
}

// nginxConf is the configuration startServer runs nginx with: one process
// in the foreground, everything it writes inside dir, no limit on the
// requests of a connection (nginx's default, 1000, would end the pooled
// clients' connections with a GOAWAY during a turn).
func nginxConf(dir, docs string, port int, keyFile, certFile string) string {
	return fmt.Sprintf(`daemon off;
master_process off;
worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path %[1]s/body;
  proxy_temp_path %[1]s/proxy;
  fastcgi_temp_path %[1]s/fastcgi;
  uwsgi_temp_path %[1]s/uwsgi;
  scgi_temp_path %[1]s/scgi;
  keepalive_requests 1000000000;
  keepalive_timeout 600s;
  http2_chunk_size 16k;
  server {
    listen 127.0.0.1:%[3]d ssl http2;
    ssl_certificate %[5]s;
    ssl_certificate_key %[4]s;
    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_ecdh_curve X25519:prime256v1;
    root %[2]s;
  }
}
`, dir, docs, port, keyFile, certFile)
}

// CPU returns the user+system CPU time the server has used so far, from /proc
// (Linux only, 10 ms ticks).
func (s *server) CPU() (time.Duration, error) {
	return peer.ProcessCPU(s.cmd.Process.Pid)
}

// Stop ends the server (SIGTERM, then SIGKILL after 3s) and removes its
// directory.
func (s *server) Stop() error {
	defer os.RemoveAll(s.dir)
	s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-s.done:
	case <-time.After(3 * time.Second):
		s.cmd.Process.Kill()
		<-s.done
	}
	return nil
}

// waitListening dials addr until it accepts, the process exits, or limit
// passes.
func waitListening(addr string, exited <-chan error, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			c.Close()
			return nil
		}
		select {
		case werr := <-exited:
			return fmt.Errorf("exited before listening: %v", werr)
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not listening on %s after %v", addr, limit)
		}
	}
}

// freePort returns a loopback TCP port that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// filler returns n bytes of printable text.
func filler(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + i%26)
	}
	return b
}

// capped keeps the first max bytes written to it, for error messages.
type capped struct {
	mu  sync.Mutex
	max int
	buf bytes.Buffer
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.max - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (c *capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}
