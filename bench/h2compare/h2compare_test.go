package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/guise-http/guise/bench/internal/peer"
)

// needServer returns the path of the server's program (nghttpd or nginx),
// or skips the test when it is not installed, unless GUISE_REQUIRE_PEERS=1
// (CI), when it fails. (The library's internal/testpeer does this, but as a
// helper of the other module's tests.)
func needServer(t *testing.T, kind, pkg string) string {
	t.Helper()
	p, err := findServer(kind)
	if err == nil {
		return p
	}
	if os.Getenv("GUISE_REQUIRE_PEERS") == "1" {
		t.Fatalf("%v; GUISE_REQUIRE_PEERS=1 requires it (apt-get install %s)", err, pkg)
	}
	t.Skipf("skipping: %v (apt-get install %s)", err, pkg)
	return ""
}

func TestSelfTest(t *testing.T) {
	bin := needServer(t, serverNghttpd, "nghttp2-server")
	report := selfTest(t, "-nghttpd", bin)
	if !strings.Contains(report, "go run ./h2compare -nghttpd") {
		t.Errorf("report lacks the command line")
	}
	if !strings.Contains(report, "- server: nghttpd nghttp2/") || !strings.Contains(report, "P-256 only") {
		t.Errorf("report does not name nghttpd and its TLS group:\n%s", report)
	}
}

// TestSelfTestNginx runs every scenario against nginx, which, unlike
// nghttpd, takes the X25519 share of a browser's hello as it is.
func TestSelfTestNginx(t *testing.T) {
	bin := needServer(t, serverNginx, "nginx-light")
	report := selfTest(t, "-server", "nginx", "-nginx", bin)
	if !strings.Contains(report, "- server: nginx/") || !strings.Contains(report, "X25519 then P-256") {
		t.Errorf("report does not name nginx and its TLS groups:\n%s", report)
	}
}

// selfTest runs the whole program with the given flags and very short
// turns, checks the report's shape, and returns it.
func selfTest(t *testing.T, args ...string) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "report.md")
	var stdout, stderr bytes.Buffer
	args = append(args, "-rounds", "1", "-d", "30ms", "-warmup", "0", "-q", "-out", out)
	err := run(args, &stdout, &stderr)
	if err != nil {
		t.Fatalf("run: %v\nstderr: %s", err, stderr.String())
	}
	report := stdout.String()
	written, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if string(written) != report {
		t.Errorf("-out file differs from stdout")
	}
	for _, sc := range scenarios() {
		if !strings.Contains(report, "## "+sc.name+"\n") {
			t.Errorf("report lacks scenario %s", sc.name)
		}
	}
	// guise and net/http must have measured every scenario over HTTP/2
	// (both servers are set up to speak nothing else).
	for _, row := range []string{"| guise | HTTP/2.0 | ", "| guise.Do | HTTP/2.0 | ", "| guise new Session | HTTP/2.0 | ", "| net/http | HTTP/2.0 | "} {
		if !strings.Contains(report, row) {
			t.Errorf("report has no row %q:\n%s", row, report)
		}
	}
	for _, line := range strings.Split(report, "\n") {
		if (strings.HasPrefix(line, "| guise") || strings.HasPrefix(line, "| net/http")) && strings.Contains(line, "failed") {
			t.Errorf("failed row: %s", line)
		}
		// The server's CPU is read from /proc on Linux: every measured
		// row has a number in its last column.
		if runtime.GOOS == "linux" && strings.HasPrefix(line, "| guise") && strings.HasSuffix(line, "| – |") {
			t.Errorf("row without the server's CPU: %s", line)
		}
	}
	return report
}

func TestFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-rounds", "0"},
		{"-d", "0s"},
		{"-scenarios", "h2-small-c16,nope"},
		{"-server", "apache"},
		{"extra"},
	} {
		var o, e bytes.Buffer
		if err := run(args, &o, &e); err == nil {
			t.Errorf("run(%q) = nil error", args)
		}
	}
	var o, e bytes.Buffer
	if err := run([]string{"-list"}, &o, &e); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(o.String(), "\n"); got != len(scenarios()) {
		t.Errorf("-list printed %d lines, want %d", got, len(scenarios()))
	}
}

func TestMissingServer(t *testing.T) {
	for _, args := range [][]string{
		{"-nghttpd", filepath.Join(t.TempDir(), "nghttpd")},
		{"-server", "nginx", "-nginx", filepath.Join(t.TempDir(), "nginx")},
	} {
		var o, e bytes.Buffer
		if err := run(append(args, "-q"), &o, &e); err == nil {
			t.Errorf("run(%q) with a missing server succeeded", args)
		}
	}
}

// TestServerGroups checks what the report says of each server's key
// exchange: offered X25519MLKEM768 and X25519 shares, as a browser's hello
// carries, nginx takes X25519 and nghttpd asks for P-256.
func TestServerGroups(t *testing.T) {
	for _, tc := range []struct {
		kind, pkg string
		want      tls.CurveID
	}{
		{serverNginx, "nginx-light", tls.X25519},
		{serverNghttpd, "nghttp2-server", tls.CurveP256},
	} {
		t.Run(tc.kind, func(t *testing.T) {
			srv, err := startServer(tc.kind, needServer(t, tc.kind, tc.pkg))
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Stop()
			c, err := tls.Dial("tcp", strings.TrimPrefix(srv.Base, "https://"), &tls.Config{
				RootCAs:          srv.Roots,
				ServerName:       "localhost",
				NextProtos:       []string{"h2"},
				CurvePreferences: []tls.CurveID{tls.X25519MLKEM768, tls.X25519, tls.CurveP256},
			})
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			st := c.ConnectionState()
			if st.CurveID != tc.want || st.HelloRetryRequest != (tc.want == tls.CurveP256) {
				t.Errorf("group %v, HelloRetryRequest %v; want %v", st.CurveID, st.HelloRetryRequest, tc.want)
			}
			if st.NegotiatedProtocol != "h2" {
				t.Errorf("ALPN %q, want h2", st.NegotiatedProtocol)
			}
		})
	}
}

func TestSelfSigned(t *testing.T) {
	now := time.Now()
	keyPEM, certPEM, err := peer.SelfSignedPEM(now)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := pem.Decode(keyPEM); b == nil || b.Type != "PRIVATE KEY" {
		t.Fatalf("key PEM %q", keyPEM)
	}
	b, _ := pem.Decode(certPEM)
	if b == nil {
		t.Fatal("no certificate PEM")
	}
	cert, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	if cert.PublicKeyAlgorithm != x509.ECDSA {
		t.Errorf("key algorithm %v, want ECDSA", cert.PublicKeyAlgorithm)
	}
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	for _, name := range []string{"localhost", "127.0.0.1"} {
		if _, err := cert.Verify(x509.VerifyOptions{DNSName: name, Roots: pool, CurrentTime: now}); err != nil {
			t.Errorf("verify for %s: %v", name, err)
		}
	}
	if _, err := cert.Verify(x509.VerifyOptions{DNSName: "example.com", Roots: pool, CurrentTime: now}); err == nil {
		t.Errorf("certificate verifies for example.com")
	}
}

func TestMedian(t *testing.T) {
	ops := func(v ...int64) []sample {
		s := make([]sample, len(v))
		for i, n := range v {
			s[i] = sample{ops: n, wall: time.Second}
		}
		return s
	}
	f := func(s sample) float64 { return s.perSec(false) }
	for _, tc := range []struct {
		in   []sample
		want float64
	}{
		{nil, 0},
		{ops(5), 5},
		{ops(9, 1, 5), 5},
		{ops(9, 1, 5, 3), 4},
	} {
		if got := median(tc.in, f); got != tc.want {
			t.Errorf("median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestRefs(t *testing.T) {
	rs := []*result{
		{spec: clientSpec{name: "guise", fam: famGuise}, rounds: 1, rate: 300, cpu: 10},
		{spec: clientSpec{name: "net/http", fam: famNetHTTP}, rounds: 1, rate: 100, cpu: 20},
		{spec: clientSpec{name: "tls-a", fam: famTLSClient}, rounds: 1, rate: 150, cpu: 40},
		{spec: clientSpec{name: "tls-b", fam: famTLSClient}, rounds: 1, rate: 120, cpu: 25},
		{spec: clientSpec{name: "tls-failed", fam: famTLSClient}, err: errors.New("x")},
	}
	got := refs(rs)
	want := ratios{rateNet: 3, rateTLS: 2, cpuNet: 2, cpuTLS: 2.5}
	if got[0] != want {
		t.Errorf("guise ratios %+v, want %+v (best tls-client row per column)", got[0], want)
	}
	if got[4] != (ratios{}) {
		t.Errorf("failed row has ratios %+v", got[4])
	}
}

func TestMarkdownFailedRow(t *testing.T) {
	sc := scenarios()[:1]
	rs := [][]*result{{
		{spec: clientSpec{name: "guise", fam: famGuise}, rounds: 2, rate: 10, cpu: 1, dials: 1, total: 20},
		{spec: clientSpec{name: "tls-client", fam: famTLSClient}, err: errors.New("boom | pipe"), dials: -1},
	}}
	var b bytes.Buffer
	if err := markdown(&b, meta{command: "go run ./h2compare"}, sc, rs); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	if !strings.Contains(s, "| tls-client |  | failed: boom / pipe | | | | | | | | |\n") {
		t.Errorf("no failed row in:\n%s", s)
	}
	if !strings.Contains(s, "| guise |  | 10.0 | 1.0 | 0.0 | 1 | - | - | - | - | – |\n") {
		t.Errorf("no guise row in:\n%s", s)
	}
}
