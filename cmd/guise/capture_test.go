package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/guise-http/guise/profile"
)

// runCmd runs cmd with args in the background; it returns the command's
// output lines and a channel with its result.
func runCmd(t *testing.T, ctx context.Context, cmdArgs []string) (<-chan string, <-chan error) {
	t.Helper()
	pr, pw := io.Pipe()
	root := newRootCmd()
	root.SetArgs(cmdArgs)
	root.SetOut(pw)
	root.SetErr(pw)
	done := make(chan error, 1)
	go func() {
		err := root.ExecuteContext(ctx)
		pw.Close()
		done <- err
	}()
	lines := make(chan string, 100)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	return lines, done
}

// nextLine returns the first output line containing want (bounded wait).
func nextLine(t *testing.T, lines <-chan string, want string) string {
	t.Helper()
	timeout := time.After(15 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("output ended before a line with %q", want)
			}
			if strings.Contains(l, want) {
				return l
			}
		case <-timeout:
			t.Fatalf("no output line with %q", want)
		}
	}
}

// echoClient returns a client for the echo server at addr trusting the CA
// in caFile, sending SNI fp.test; cache, if set, enables resumption.
func echoClient(t *testing.T, addr, caFile string, cache tls.ClientSessionCache) *http.Client {
	t.Helper()
	pem, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatal("bad CA PEM")
	}
	tr := &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: pool, ServerName: "fp.test", ClientSessionCache: cache},
		ForceAttemptHTTP2: true,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "tcp", addr)
		},
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

func fetchAs(t *testing.T, c *http.Client, path string, hdr map[string]string) {
	t.Helper()
	doAs(t, c, "GET", path, "", hdr)
}

// postAs sends a POST with a short body, with hdr.
func postAs(t *testing.T, c *http.Client, path string, hdr map[string]string) {
	t.Helper()
	doAs(t, c, "POST", path, "a=1", hdr)
}

func doAs(t *testing.T, c *http.Client, method, path, body string, hdr map[string]string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, "https://fp.test"+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

// TestCaptureCommand drives a capture with a Go client that sends the
// fetch metadata of each request kind, and loads the written profile.
func TestCaptureCommand(t *testing.T) {
	dir := t.TempDir()
	out, ca := filepath.Join(dir, "p.json"), filepath.Join(dir, "ca.pem")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lines, done := runCmd(t, ctx, []string{"capture", "--out", out, "--addr", "127.0.0.1:0",
		"--ca-out", ca, "--timeout", "20s", "--records", filepath.Join(dir, "recs")})
	l := nextLine(t, lines, "guise echo server: https://")
	addr := strings.Fields(strings.TrimPrefix(l, "guise echo server: https://"))[0]
	for _, want := range []string{"steps, in the browser", "Chrome, Edge:", "Firefox:", "Safari:", "visit https://fp.test:"} {
		nextLine(t, lines, want)
	}
	nextLine(t, lines, "waiting up to")

	cache := tls.NewLRUClientSessionCache(4)
	c := echoClient(t, addr, ca, cache)
	ua := "Mozilla/5.0 (X11; Linux x86_64; rv:999.0) Gecko/20100101 Firefox/999.0"
	for _, k := range []struct{ path, mode, dest string }{
		{"/", "navigate", "document"}, {"/app.js", "no-cors", "script"},
		{"/pixel.png", "no-cors", "image"}, {"/api/fetch", "cors", "empty"},
	} {
		fetchAs(t, c, k.path, map[string]string{"User-Agent": ua, "Sec-Fetch-Mode": k.mode, "Sec-Fetch-Dest": k.dest, "Sec-Fetch-Site": "same-origin"})
	}
	// The flow page's fetch() POST and form submission.
	for _, k := range []struct{ path, mode, dest, ctype string }{
		{"/flow/post-text", "cors", "empty", "text/plain;charset=UTF-8"},
		{"/flow/form", "navigate", "document", "application/x-www-form-urlencoded"},
	} {
		postAs(t, c, k.path, map[string]string{"User-Agent": ua, "Content-Type": k.ctype, "Origin": "https://fp.test",
			"Sec-Fetch-Mode": k.mode, "Sec-Fetch-Dest": k.dest, "Sec-Fetch-Site": "same-origin"})
	}
	c.Transport.(*http.Transport).CloseIdleConnections()
	// A second connection resumes the session.
	fetchAs(t, echoClient(t, addr, ca, cache), "/api/resume", map[string]string{"User-Agent": ua})

	nextLine(t, lines, "wrote profile firefox999-linux")
	nextLine(t, lines, "recorded reference: ja4 t13")
	nextLine(t, lines, "not recorded, from the embedded firefox153-linux")
	nextLine(t, lines, "http/1.1 navigate")
	for range lines {
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	p, err := profile.Parse(b)
	if err != nil {
		t.Fatalf("profile.Parse of capture output: %v", err)
	}
	if p.Name != "firefox999-linux" || p.TLS.HelloResumed == nil || p.HeaderSet(profile.Image, profile.H2) == nil ||
		p.BodyHeaderSet(profile.Fetch, profile.H2) == nil || p.BodyHeaderSet(profile.Navigate, profile.H2) == nil {
		t.Fatalf("profile %+v", p)
	}
	again, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if back, _ := profile.Parse(again); !reflect.DeepEqual(back, p) {
		t.Fatal("written profile does not round-trip")
	}
	recs, err := filepath.Glob(filepath.Join(dir, "recs", "*.json"))
	if err != nil || len(recs) < 2 {
		t.Fatalf("records written: %v %v", recs, err)
	}
}

func TestCaptureCommandTimeout(t *testing.T) {
	dir := t.TempDir()
	lines, done := runCmd(t, context.Background(), []string{"capture", "--out", filepath.Join(dir, "p.json"),
		"--addr", "127.0.0.1:0", "--timeout", "50ms"})
	for range lines {
	}
	err := <-done
	if err == nil || !strings.Contains(err.Error(), "capture incomplete") {
		t.Fatalf("err %v, want an incomplete capture", err)
	}
	if _, serr := os.Stat(filepath.Join(dir, "p.json")); serr == nil {
		t.Fatal("a profile was written without a visit")
	}
}

func TestServeCommand(t *testing.T) {
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lines, done := runCmd(t, ctx, []string{"serve", "--addr", "127.0.0.1:0", "--ca-out", ca})
	l := nextLine(t, lines, "guise echo server: https://")
	addr := strings.Fields(strings.TrimPrefix(l, "guise echo server: https://"))[0]
	nextLine(t, lines, "CA certificate written to "+ca)
	fetchAs(t, echoClient(t, addr, ca, nil), "/api/all", map[string]string{"User-Agent": "serve-test/1"})
	conn := nextLine(t, lines, `ua="serve-test/1"`)
	for _, want := range []string{" tls h2 ", `sni="fp.test"`, " ja4=t13d", " akamai="} {
		if !strings.Contains(conn, want) {
			t.Errorf("log line %q lacks %q", conn, want)
		}
	}
	cancel()
	for range lines {
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
