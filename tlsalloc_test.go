package guise

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guise-http/guise/internal/testpeer"
)

// newCannedTLSServer is newCannedServer over TLS (testpeer's Localhost
// certificate, ALPN http/1.1 only), so that a Session speaks HTTP/1.1 over
// TLS to it, as to a server without h2. It returns the server's URL.
func newCannedTLSServer(t testing.TB, resp string) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cfg := testpeer.Localhost(t).ServerConfig("http/1.1")
	s := &cannedServer{ln: tls.NewListener(ln, cfg), resp: []byte(resp)}
	s.wg.Add(1)
	go s.serve()
	t.Cleanup(func() { ln.Close(); s.wg.Wait() })
	return "https://" + ln.Addr().String() + "/"
}

// The budgets of a keep-alive HTTP/1.1 request over TLS, the body read
// into the caller's buffer: the Response (which holds the head's copy) and
// one allocation of uTLS's per record read (the reader its record layer
// fills its buffer through). The same with a new Request per call: the
// Request does not escape.
const (
	tlsAllocBudget    = 2
	tlsAllocBudgetNew = 2
)

// The roles of TestAllocsPerTLSRequest's processes.
const (
	tlsAllocRoleEnv = "GUISE_TLSALLOC_ROLE"
	tlsAllocDirEnv  = "GUISE_TLSALLOC_DIR"
)

// TestAllocsPerTLSRequest holds the budgets of HTTP/1.1 over TLS, with the
// server in a child process (this test binary again) so that its
// allocations (crypto/tls's, one per record read) are not counted.
func TestAllocsPerTLSRequest(t *testing.T) {
	if os.Getenv(tlsAllocRoleEnv) == "server" {
		url := newCannedTLSServer(t, smallResponse)
		if err := os.WriteFile(filepath.Join(os.Getenv(tlsAllocDirEnv), "ca.pem"), testpeer.Localhost(t).CAPEM, 0o644); err != nil {
			t.Fatal(err)
		}
		fmt.Printf("tlsalloc-url %s\n", url)
		io.Copy(io.Discard, os.Stdin) // until the parent is done
		return
	}
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	dir := t.TempDir()
	srv := exec.Command(os.Args[0], "-test.run=^TestAllocsPerTLSRequest$")
	srv.Env = append(os.Environ(), tlsAllocRoleEnv+"=server", tlsAllocDirEnv+"="+dir)
	stdin, err := srv.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := srv.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	srv.Stderr = os.Stderr
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close() // the server ends when its stdin closes
		if err := srv.Wait(); err != nil {
			t.Errorf("server process: %v", err)
		}
	}()
	var url string
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if u, ok := strings.CutPrefix(sc.Text(), "tlsalloc-url "); ok {
			url = u
			break
		}
	}
	if url == "" {
		t.Fatalf("the server process announced no URL (%v)", sc.Err())
	}
	go io.Copy(io.Discard, stdout)
	pem, err := os.ReadFile(filepath.Join(dir, "ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		t.Fatal("no CA in ca.pem")
	}

	s := &Session{RootCAs: roots}
	defer s.Close() // before the server's stdin closes: its connections end first
	ctx := context.Background()
	buf := make([]byte, 512)
	get := func(req *Request) {
		resp, err := s.Do(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Proto != "HTTP/1.1" || !strings.HasPrefix(resp.URL, "https:") {
			t.Fatalf("%s to %s", resp.Proto, resp.URL)
		}
		if err := drain(resp.Body, buf); err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	req := &Request{URL: url}
	get(req)
	reused := testing.AllocsPerRun(500, func() { get(req) })
	fresh := testing.AllocsPerRun(500, func() { get(&Request{URL: url}) })
	t.Logf("HTTP/1.1 over TLS: %.2f allocations per request with a reused Request, %.2f with a new one", reused, fresh)
	if reused > tlsAllocBudget {
		t.Errorf("%.2f allocations per request with a reused Request, budget %d", reused, tlsAllocBudget)
	}
	if fresh > tlsAllocBudgetNew {
		t.Errorf("%.2f allocations per request with a new Request, budget %d", fresh, tlsAllocBudgetNew)
	}
}

// BenchmarkSessionDoTLS is BenchmarkSessionDo over TLS, with a reused and
// a new Request per call. The server is in the process: its allocations
// (one per request, crypto/tls's record read) are counted too.
func BenchmarkSessionDoTLS(b *testing.B) {
	url := newCannedTLSServer(b, smallResponse)
	s := &Session{RootCAs: testpeer.Localhost(b).Roots}
	defer s.Close()
	buf := make([]byte, 512)
	ctx := context.Background()
	b.Run("reused", func(b *testing.B) {
		req := &Request{URL: url}
		b.ReportAllocs()
		for b.Loop() {
			resp, err := s.Do(ctx, req)
			if err != nil {
				b.Fatal(err)
			}
			drain(resp.Body, buf)
			resp.Body.Close()
		}
	})
	b.Run("new", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			resp, err := s.Do(ctx, &Request{URL: url})
			if err != nil {
				b.Fatal(err)
			}
			drain(resp.Body, buf)
			resp.Body.Close()
		}
	})
}
