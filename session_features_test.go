package guise

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"

	"github.com/guise-http/guise/cookie"
)

func TestCookiesWithHTTPBin(t *testing.T) {
	hb := newHTTPBin(t)
	now := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	s := &Session{Jar: cookie.New(&cookie.Options{Now: func() time.Time { return now }})}
	defer s.Close()
	ctx := context.Background()
	cookies := func() map[string]string {
		t.Helper()
		resp, err := s.Get(ctx, hb.URL+"/cookies")
		if err != nil {
			t.Fatal(err)
		}
		var m struct{ Cookies map[string]string }
		getJSON(t, resp, &m)
		return m.Cookies
	}
	// Set on a 302, followed to /cookies: the next hop carries it.
	resp, err := s.Get(ctx, hb.URL+"/cookies/set?a=1&b=2")
	if err != nil {
		t.Fatal(err)
	}
	var m struct{ Cookies map[string]string }
	getJSON(t, resp, &m)
	if m.Cookies["a"] != "1" || m.Cookies["b"] != "2" {
		t.Fatalf("after /cookies/set: %v", m)
	}
	if m := cookies(); len(m) != 2 {
		t.Fatalf("jar lost cookies: %v", m)
	}
	if _, err := s.Get(ctx, hb.URL+"/cookies/delete?a"); err != nil {
		t.Fatal(err)
	}
	if m := cookies(); m["a"] != "" || m["b"] != "2" {
		t.Fatalf("after delete: %v", m)
	}
	// Expiry follows the jar's clock.
	exp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Set-Cookie", "short=1; Max-Age=60; Path=/")
		io.WriteString(w, r.Header.Get("Cookie"))
	}))
	defer exp.Close()
	get := func() string {
		resp, err := s.Get(ctx, exp.URL)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := resp.Bytes()
		return string(b)
	}
	// Cookies do not isolate by port: httpbin's b=2 (same host) goes too.
	get()
	if got := get(); got != "b=2; short=1" {
		t.Fatalf("cookie not sent back: %q", got)
	}
	now = now.Add(2 * time.Minute)
	exp.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.Header.Get("Cookie")) })
	if got := get(); got != "b=2" {
		t.Fatalf("expired cookie sent: %q", got)
	}
	if s.Cookies() != s.Jar {
		t.Fatal("Cookies() is not the Session's Jar")
	}
}

func TestIsolatedCallsKeepNoCookies(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/set" {
			http.SetCookie(w, &http.Cookie{Name: "id", Value: "x", Path: "/"})
			http.Redirect(w, r, "/echo", http.StatusFound)
			return
		}
		io.WriteString(w, r.Header.Get("Cookie"))
	}))
	defer ts.Close()
	resp, err := Get(context.Background(), ts.URL+"/set")
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := resp.Bytes(); string(b) != "id=x" {
		t.Fatalf("the redirect chain of one call lost its cookie: %q", b)
	}
	resp, err = Get(context.Background(), ts.URL+"/echo")
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := resp.Bytes(); string(b) != "" {
		t.Fatalf("an isolated call sent a cookie from another: %q", b)
	}
}

// encoded serves text under the codings named in ?ce= (comma list, in the
// order applied).
func encoded(t *testing.T, text []byte) *httptest.Server {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body := text
		var applied []string
		for _, c := range strings.Split(r.URL.Query().Get("ce"), ",") {
			var buf bytes.Buffer
			var wc io.WriteCloser
			switch c {
			case "gzip":
				wc = gzip.NewWriter(&buf)
			case "br":
				wc = brotli.NewWriter(&buf)
			case "zstd":
				wc, _ = zstd.NewWriter(&buf)
			case "":
				continue
			default:
				t.Errorf("unknown coding %q", c)
				return
			}
			wc.Write(body)
			wc.Close()
			body = buf.Bytes()
			applied = append(applied, c)
		}
		if len(applied) > 0 {
			w.Header().Set("Content-Encoding", strings.Join(applied, ", "))
		}
		w.Write(body)
	}))
	t.Cleanup(ts.Close)
	return ts
}

// RELIABILITY D-10.
func TestContentDecoding(t *testing.T) {
	text := bytes.Repeat([]byte("browser-shaped bytes "), 5000)
	ts := encoded(t, text)
	hb := newHTTPBin(t)
	s := &Session{}
	defer s.Close()
	ctx := context.Background()
	for _, ce := range []string{"gzip", "br", "zstd", "gzip,br", "zstd,gzip,br"} {
		resp, err := s.Get(ctx, ts.URL+"/?ce="+ce)
		if err != nil {
			t.Fatal(err)
		}
		b, err := resp.Bytes()
		if err != nil || !bytes.Equal(b, text) || !resp.Decoded || resp.Header.Has("content-encoding") {
			t.Fatalf("%s: %d bytes, decoded %v, err %v", ce, len(b), resp.Decoded, err)
		}
	}
	for path, field := range map[string]string{"/gzip": "gzipped", "/deflate": "deflated"} {
		resp, err := s.Get(ctx, hb.URL+path)
		if err != nil {
			t.Fatal(err)
		}
		b, err := resp.Bytes()
		if err != nil || !resp.Decoded || !bytes.Contains(b, []byte(`"`+field+`": true`)) {
			t.Fatalf("httpbin %s: decoded %v %v %q", path, resp.Decoded, err, b)
		}
	}
	// The caller's own Accept-Encoding or a Range: the body stays as sent.
	for _, h := range []Header{{{Name: "accept-encoding", Value: "gzip"}}, {{Name: "range", Value: "bytes=0-"}}} {
		resp, err := s.Do(ctx, &Request{URL: ts.URL + "/?ce=gzip", Header: h})
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.Decoded || resp.Header.Get("content-encoding") != "gzip" {
			t.Fatalf("%v: decoded anyway", h)
		}
	}
	// A decoded-size cap.
	capped := &Session{MaxBodySize: 1000}
	defer capped.Close()
	resp, err := capped.Get(ctx, ts.URL+"/?ce=gzip")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := resp.Bytes(); !errors.Is(err, ErrDecodeLimit) {
		t.Fatalf("over MaxBodySize: %v", err)
	}
	// More than five codings.
	six := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Content-Encoding", "gzip, gzip, gzip")
		w.Header().Add("Content-Encoding", "gzip, gzip, gzip")
		w.Write([]byte("x"))
	}))
	defer six.Close()
	if _, err := s.Get(ctx, six.URL); !errors.Is(err, ErrTooManyEncodings) {
		t.Fatalf("six codings: %v", err)
	}
}

// TestNoDecodingWithoutABody: HEAD, 204 and 304 responses that name a
// Content-Encoding have no body to decode (D-08).
func TestNoDecodingWithoutABody(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Encoding", "gzip")
		switch r.URL.Path {
		case "/204":
			w.WriteHeader(204)
		case "/304":
			w.WriteHeader(304)
		}
	}))
	defer ts.Close()
	s := &Session{}
	defer s.Close()
	for _, req := range []*Request{{Method: "HEAD", URL: ts.URL}, {URL: ts.URL + "/204"}, {URL: ts.URL + "/304"}} {
		resp, err := s.Do(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := resp.Bytes()
		if err != nil || len(b) != 0 || resp.Decoded || resp.Header.Get("content-encoding") != "gzip" {
			t.Fatalf("%s %s: %q %v decoded=%v", req.method(), req.URL, b, err, resp.Decoded)
		}
	}
}

// TestDecodedBodiesKeepTheConnection (RELIABILITY D-09, D-07): a gzip body
// read to its end through the decoder, with Content-Length or chunked,
// leaves the connection for the next request; a coding guise does not know
// is passed through as sent, Content-Encoding kept.
func TestDecodedBodiesKeepTheConnection(t *testing.T) {
	text := bytes.Repeat([]byte("decoded and reused "), 2000)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(text)
	zw.Close()
	ts := newTestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/unknown":
			w.Header().Set("Content-Encoding", "x-custom")
			io.WriteString(w, "raw bytes")
			return
		case "/cl":
			w.Header().Set("Content-Length", strconv.Itoa(gz.Len()))
		}
		w.Header().Set("Content-Encoding", "gzip")
		b := gz.Bytes()
		w.Write(b[:len(b)/2]) // chunked for /chunked: two flushes
		w.(http.Flusher).Flush()
		w.Write(b[len(b)/2:])
	}))
	s := &Session{}
	defer s.Close()
	for i := range 10 {
		path := "/cl"
		if i%2 == 1 {
			path = "/chunked"
		}
		resp, err := s.Get(context.Background(), ts.URL+path)
		if err != nil {
			t.Fatal(err)
		}
		b, err := resp.Bytes()
		if err != nil || !resp.Decoded || !bytes.Equal(b, text) {
			t.Fatalf("%s: decoded %v, %d bytes, %v", path, resp.Decoded, len(b), err)
		}
	}
	if n := ts.conns.Load(); n != 1 {
		t.Errorf("%d connections for 10 decoded bodies, want 1", n)
	}
	resp, err := s.Get(context.Background(), ts.URL+"/unknown")
	if err != nil {
		t.Fatal(err)
	}
	b, err := resp.Bytes()
	if err != nil || resp.Decoded || string(b) != "raw bytes" || resp.Header.Get("content-encoding") != "x-custom" {
		t.Fatalf("unknown coding: decoded %v, %q, %q, %v", resp.Decoded, b, resp.Header.Get("content-encoding"), err)
	}
}
