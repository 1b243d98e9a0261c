//go:build unix

package guise

import (
	"context"
	"crypto/x509"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/guise-http/guise/internal/testpeer"
)

// startNghttpd runs nghttpd (HTTP/2 over TLS only, a separate process, so a
// CPU profile shows the client alone) on a free 127.0.0.1 port, serving
// /small (100 bytes) with testpeer's certificate for 127.0.0.1.
// It returns the base URL and a pool trusting the certificate.
func startNghttpd(tb testing.TB) (string, *x509.CertPool) {
	tb.Helper()
	bin := testpeer.Need(tb, "nghttpd", "nghttp2-server")
	dir := testpeer.Dir(tb)
	cert := testpeer.Localhost(tb)
	certPEM, keyPEM := cert.PEM()
	roots := cert.Roots
	files := map[string][]byte{
		"cert.pem":  certPEM,
		"key.pem":   keyPEM,
		"www/small": []byte(strings.Repeat("x", 100)),
	}
	for name, b := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	port := testpeer.FreePort(tb)
	addr := net.JoinHostPort("127.0.0.1", port)
	testpeer.StartDaemon(tb, addr, nil, bin, "-a", "127.0.0.1", "-d", filepath.Join(dir, "www"),
		port, filepath.Join(dir, "key.pem"), filepath.Join(dir, "cert.pem"))
	return "https://" + addr, roots
}

// BenchmarkIsolatedHTTPS is the bench/h2compare isolated-https scenario in
// one process: GET /small from nghttpd, a new TCP connection and full TLS
// handshake (Chrome's hello, X25519MLKEM768) per request. "Do" is the
// package-level guise.Do without verification (as h2compare runs it);
// "Session" is a new Session per request verifying against the server's
// certificate.
func BenchmarkIsolatedHTTPS(b *testing.B) {
	base, roots := startNghttpd(b)
	url := base + "/small"
	ctx := context.Background()
	get := func(b *testing.B, do func(context.Context, *Request) (*Response, error), req *Request) {
		resp, err := do(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || n != 100 || resp.StatusCode != 200 {
			b.Fatalf("status %d, %d bytes, %v", resp.StatusCode, n, err)
		}
	}
	b.Run("Do", func(b *testing.B) {
		b.ReportAllocs()
		cpu0 := processCPU()
		for b.Loop() {
			get(b, Do, &Request{URL: url, InsecureSkipVerify: true})
		}
		b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
	})
	b.Run("DoC4", func(b *testing.B) {
		// Four goroutines, as h2compare's isolated-https-c4.
		b.ReportAllocs()
		b.SetParallelism(4 / runtime.GOMAXPROCS(0))
		cpu0 := processCPU()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				get(b, Do, &Request{URL: url, InsecureSkipVerify: true})
			}
		})
		b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
	})
	b.Run("Session", func(b *testing.B) {
		b.ReportAllocs()
		cpu0 := processCPU()
		for b.Loop() {
			s := &Session{RootCAs: roots}
			get(b, s.Do, &Request{URL: url})
			s.Close()
		}
		b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
	})
}

// processCPU returns this process's user and system CPU time in ns: the
// client's, as nghttpd runs apart.
func processCPU() int64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// TestAllocsPerIsolatedHTTPS holds the allocation budgets of a request on a
// new TCP+TLS connection (nghttpd: a HelloRetryRequest to P-256, then
// HTTP/2), most of them the key schedule's and the key shares' in
// crypto/tls's code as uTLS runs it: package-level Do, and a new Session
// per request, which verifies the chain through the process's cache like
// Do (before that cache served Sessions too, it cost about 60 more: 753
// against 695 when this was written; Do 614).
func TestAllocsPerIsolatedHTTPS(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	base, roots := startNghttpd(t)
	url := base + "/small"
	ctx := context.Background()
	buf := make([]byte, 256)
	get := func(do func(context.Context, *Request) (*Response, error), req *Request) {
		resp, err := do(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if err := drain(resp.Body, buf); err != nil || resp.StatusCode != 200 {
			t.Fatalf("status %d: %v", resp.StatusCode, err)
		}
	}
	get(Do, &Request{URL: url, RootCAs: roots}) // the profile compiled, the chain cached
	n := testing.AllocsPerRun(50, func() { get(Do, &Request{URL: url, RootCAs: roots}) })
	t.Logf("%.0f allocations per isolated Do", n)
	if n > 640 {
		t.Errorf("%.0f allocations per isolated Do, budget 640", n)
	}
	session := func() {
		s := &Session{RootCAs: roots}
		get(s.Do, &Request{URL: url})
		s.Close()
	}
	n = testing.AllocsPerRun(50, session)
	t.Logf("%.0f allocations per request on a new Session", n)
	if n > 720 {
		t.Errorf("%.0f allocations per request on a new Session, budget 720", n)
	}
}
