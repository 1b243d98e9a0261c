package fingerprint

import (
	"errors"
	"testing"
)

func TestParseHTTP1Request(t *testing.T) {
	head := "POST /submit?q=1 HTTP/1.1\r\nHost: a.test\r\nX-Mixed-CASE:  v1 \r\nx-mixed-case:\tv2\r\nContent-Length: 3\r\n\r\nabc"
	r, err := ParseHTTP1Request([]byte(head))
	if err != nil {
		t.Fatal(err)
	}
	if r.Method != "POST" || r.Target != "/submit?q=1" || r.Proto != "HTTP/1.1" {
		t.Errorf("request line: %q %q %q", r.Method, r.Target, r.Proto)
	}
	want := [][2]string{{"Host", "a.test"}, {"X-Mixed-CASE", "v1"}, {"x-mixed-case", "v2"}, {"Content-Length", "3"}}
	if len(r.Header) != len(want) {
		t.Fatalf("fields: %+v", r.Header)
	}
	for i, w := range want {
		if r.Header[i].Name != w[0] || r.Header[i].Value != w[1] {
			t.Errorf("field %d: %q: %q, want %q: %q", i, r.Header[i].Name, r.Header[i].Value, w[0], w[1])
		}
	}
	// Bare LF line ends are accepted.
	r, err = ParseHTTP1Request([]byte("GET / HTTP/1.0\nA: b\n\n"))
	if err != nil || r.Proto != "HTTP/1.0" || len(r.Header) != 1 || r.JA4H()[:12] != "ge10nn010000" {
		t.Errorf("LF head: %v %+v", err, r)
	}
}

func TestParseHTTP1RequestErrors(t *testing.T) {
	full := "GET / HTTP/1.1\r\nHost: a\r\n\r\n"
	for n := 0; n < len(full)-1; n++ {
		if _, err := ParseHTTP1Request([]byte(full[:n])); !errors.Is(err, ErrTruncated) {
			t.Fatalf("prefix %d: got %v, want ErrTruncated", n, err)
		}
	}
	for _, c := range []struct{ name, in, what string }{
		{"no proto", "GET /\r\n\r\n", "request line"},
		{"bad proto", "GET / HTTP/11\r\n\r\n", "request line"},
		{"bad method", "G(T / HTTP/1.1\r\n\r\n", "request line"},
		{"empty target", "GET  HTTP/1.1\r\n\r\n", "request line"},
		{"tls bytes", "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\n", "request line"},
		{"space before colon", "GET / HTTP/1.1\r\nHost : a\r\n\r\n", "header field name"},
		{"no colon", "GET / HTTP/1.1\r\nHost\r\n\r\n", "header field name"},
		{"folding", "GET / HTTP/1.1\r\nA: b\r\n c\r\n\r\n", "obsolete line folding"},
		{"nul in value", "GET / HTTP/1.1\r\nA: b\x00c\r\n\r\n", "header field value"},
		{"cr in value", "GET / HTTP/1.1\r\nA: b\rc\r\n\r\n", "header field value"},
	} {
		_, err := ParseHTTP1Request([]byte(c.in))
		var pe *ParseError
		if !errors.Is(err, ErrMalformed) || !errors.As(err, &pe) || pe.What != c.what || pe.Proto != "h1" {
			t.Errorf("%s: got %v, want malformed %q", c.name, err, c.what)
		}
	}
}
