package main

import (
	"bytes"
	"context"
	"encoding/pem"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func testServer(t *testing.T) *httptest.Server {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/redirect":
			http.Redirect(w, r, "/hello", http.StatusFound)
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		case "/missing":
			http.NotFound(w, r)
		case "/setcookie":
			http.SetCookie(w, &http.Cookie{Name: "sid", Value: "42", Path: "/", MaxAge: 3600})
			io.WriteString(w, "set\n")
		case "/showcookie":
			io.WriteString(w, r.Header.Get("Cookie"))
		case "/echo":
			b, _ := io.ReadAll(r.Body)
			w.Header().Set("X-Method", r.Method)
			w.Write(b)
		default:
			w.Header().Set("X-Host", r.Host)
			io.WriteString(w, "hello\n")
		}
	}))
	t.Cleanup(ts.Close)
	return ts
}

func get(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := newGetCmd()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	cmd.SetContext(context.Background())
	err := cmd.Execute()
	code := 0
	if err != nil {
		code = 1
		var ee *exitError
		if errors.As(err, &ee) {
			code = ee.code
		}
	}
	return out.String(), errOut.String(), code
}

func TestGet(t *testing.T) {
	ts := testServer(t)
	if out, _, code := get(t, ts.URL+"/hello"); code != 0 || out != "hello\n" {
		t.Fatalf("plain get: %q %d", out, code)
	}
	if out, _, _ := get(t, "-i", ts.URL+"/hello"); !strings.HasPrefix(out, "HTTP/1.1 200 OK\r\n") || !strings.HasSuffix(out, "\r\n\r\nhello\n") {
		t.Fatalf("-i: %q", out)
	}
	if out, _, _ := get(t, "-I", ts.URL+"/hello"); !strings.HasPrefix(out, "HTTP/1.1 200") || strings.Contains(out, "hello\n") {
		t.Fatalf("-I: %q", out)
	}
	if out, _, _ := get(t, "-i", "-d", "a=1", ts.URL+"/echo"); !strings.Contains(out, "X-Method: POST") || !strings.HasSuffix(out, "a=1") {
		t.Fatalf("-d: %q", out)
	}
	if out, _, _ := get(t, "-i", "-X", "PUT", "-d", "x", ts.URL+"/echo"); !strings.Contains(out, "X-Method: PUT") {
		t.Fatalf("-X: %q", out)
	}
	if out, _, _ := get(t, "-i", ts.URL+"/redirect"); !strings.HasPrefix(out, "HTTP/1.1 302") {
		t.Fatalf("without -L a redirect is shown: %q", out)
	}
	if out, _, code := get(t, "-L", ts.URL+"/redirect"); out != "hello\n" || code != 0 {
		t.Fatalf("-L: %q %d", out, code)
	}
	file := filepath.Join(t.TempDir(), "out")
	if _, _, code := get(t, "-o", file, ts.URL+"/hello"); code != 0 {
		t.Fatalf("-o exit %d", code)
	}
	if b, _ := os.ReadFile(file); string(b) != "hello\n" {
		t.Fatalf("-o wrote %q", b)
	}
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(ts.URL, "http://"))
	if out, _, code := get(t, "-i", "--resolve", "example.test:"+port+":127.0.0.1", "http://example.test:"+port+"/hello"); code != 0 || !strings.Contains(out, "X-Host: example.test:"+port) {
		t.Fatalf("--resolve: %q %d", out, code)
	}
}

func TestGetCookieFiles(t *testing.T) {
	ts := testServer(t)
	jar := filepath.Join(t.TempDir(), "cookies.txt")
	if _, _, code := get(t, "-c", jar, ts.URL+"/setcookie"); code != 0 {
		t.Fatalf("-c exit %d", code)
	}
	b, _ := os.ReadFile(jar)
	if !strings.Contains(string(b), "\tsid\t42") {
		t.Fatalf("cookie file:\n%s", b)
	}
	if out, _, _ := get(t, "-b", jar, ts.URL+"/showcookie"); out != "sid=42" {
		t.Fatalf("-b FILE sent %q", out)
	}
	if out, _, _ := get(t, "-b", "a=1; b=2", ts.URL+"/showcookie"); out != "a=1; b=2" {
		t.Fatalf("-b literal sent %q", out)
	}
}

func TestGetExitCodes(t *testing.T) {
	ts := testServer(t)
	closed := func() string {
		ln, _ := net.Listen("tcp", "127.0.0.1:0")
		addr := ln.Addr().String()
		ln.Close()
		return addr
	}()
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"-f", ts.URL + "/missing"}, exitHTTP},
		{[]string{ts.URL + "/missing"}, 0},
		{[]string{"http://" + closed + "/"}, exitConnect},
		{[]string{"-L", "--max-redirs", "3", ts.URL + "/loop"}, exitTooManyRedirects},
		{[]string{"ftp://127.0.0.1/"}, exitURL},
		{[]string{"-H", "X-Bad: a\rb", ts.URL}, exitURL},
		{[]string{"-H", "no colon", ts.URL}, exitUsage},
		// https:// to a plain HTTP server: the handshake fails.
		{[]string{"https://" + strings.TrimPrefix(ts.URL, "http://") + "/"}, exitTLS},
	} {
		if _, _, code := get(t, tc.args...); code != tc.code {
			t.Errorf("guise get %q: exit %d, want %d", tc.args, code, tc.code)
		}
	}
}

// TestGetCACert: --cacert trusts a private CA; without it the embedded
// roots refuse the certificate (exit 60), and an unreadable or empty file
// is exit 77, as curl's.
func TestGetCACert(t *testing.T) {
	ts := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "secure\n")
	}))
	defer ts.Close()
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty.pem")
	if err := os.WriteFile(empty, []byte("not a certificate\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := get(t, "--cacert", ca, ts.URL+"/"); code != 0 || out != "secure\n" {
		t.Fatalf("--cacert: exit %d, out %q, stderr %q", code, out, errOut)
	}
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{ts.URL + "/"}, exitPeerVerification},
		{[]string{"--cacert", empty, ts.URL + "/"}, exitCACert},
		{[]string{"--cacert", filepath.Join(dir, "missing.pem"), ts.URL + "/"}, exitCACert},
	} {
		if _, _, code := get(t, tc.args...); code != tc.code {
			t.Errorf("guise get %q: exit %d, want %d", tc.args, code, tc.code)
		}
	}
}
