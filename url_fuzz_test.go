package guise

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
)

// FuzzParseURL drives parseURL, the parser of every request's URL, with
// arbitrary text: it fails with ErrRefusedToSend or ErrUnsupportedScheme
// only; a URL it takes has an http(s) scheme, a dialable host:port, and an
// authority and request-target with no byte a request line or Host field
// cannot carry (RELIABILITY R-18: the query percent-encoded as the
// browsers do); its origin is the scheme and authority in lower case.
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{"https://a.example/p?q=1", "http://a.example:080/?q=a b", "https://[::1]:8443/x?é'\"<>", "http://a.example:/", "HTTPS://A.EXAMPLE/%zz", "ftp://x/", "http://", "http://a b/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		p, err := parseURL(raw)
		if err != nil {
			if !errors.Is(err, ErrRefusedToSend) && !errors.Is(err, ErrUnsupportedScheme) {
				t.Fatalf("%q: untyped error %v", raw, err)
			}
			return
		}
		if p.scheme != "http" && p.scheme != "https" {
			t.Fatalf("%q: scheme %q", raw, p.scheme)
		}
		if _, _, err := net.SplitHostPort(p.addr); err != nil {
			t.Fatalf("%q: address %q: %v", raw, p.addr, err)
		}
		for _, part := range []string{p.authority, p.target} {
			for i := 0; i < len(part); i++ {
				if c := part[i]; c <= ' ' || c >= 0x7f {
					t.Fatalf("%q: byte %#x in %q", raw, c, part)
				}
			}
		}
		if !strings.HasPrefix(p.target, "/") {
			t.Fatalf("%q: target %q", raw, p.target)
		}
		if p.origin != strings.ToLower(p.scheme+"://"+p.authority) {
			t.Fatalf("%q: origin %q for authority %q", raw, p.origin, p.authority)
		}
		if q := p.target[strings.IndexByte(p.target+"?", '?'):]; encodeQuery(q) != q {
			t.Fatalf("%q: query %q encodes again to %q", raw, q, encodeQuery(q))
		}
	})
}

// TestQueryPercentEncoded is RELIABILITY R-18: a query with a space,
// quotes, angle brackets, an apostrophe or non-ASCII text goes out
// percent-encoded, as Chromium and Firefox send it; the caller's own
// escapes stay as they are.
func TestQueryPercentEncoded(t *testing.T) {
	run(t, func(t *testing.T, m mode) {
		got := make(chan string, 1)
		o := newOrigin(t, m, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got <- r.RequestURI }))
		s := o.session(t, nil)
		resp, err := s.Get(context.Background(), o.URL+`/p q?q=a b"<>'é&r=%20x+y`)
		if err != nil {
			t.Fatal(err)
		}
		resp.Bytes()
		if sent, want := <-got, "/p%20q?q=a%20b%22%3C%3E%27%C3%A9&r=%20x+y"; sent != want {
			t.Fatalf("request target %q sent, want %q", sent, want)
		}
	}, modeH1, modeH2, modeH1Plain)
}

// TestInternationalHost is RELIABILITY R-18's host: a U-label host goes out
// as its A-labels (Host, :authority, the server name, the dial), as the
// browsers' URL parser gives it; a host IDNA refuses is refused before
// anything is sent.
func TestInternationalHost(t *testing.T) {
	for _, c := range []struct{ raw, authority, addr string }{
		{"http://bücher.example/", "xn--bcher-kva.example", "xn--bcher-kva.example:80"},
		{"https://BÜCHER.example:8443/", "xn--bcher-kva.example:8443", "xn--bcher-kva.example:8443"},
		{"https://ｅｘａｍｐｌｅ.com/", "example.com", "example.com:443"},
		{"https://b%C3%BCcher.example/", "xn--bcher-kva.example", "xn--bcher-kva.example:443"},
		{"http://\xb70/", "", ""},
		{"http://a\u200d\u200d.example/", "", ""}, // joiners without context
	} {
		p, err := parseURL(c.raw)
		if c.authority == "" {
			if !errors.Is(err, ErrRefusedToSend) {
				t.Errorf("%q: %v, want ErrRefusedToSend", c.raw, err)
			}
			continue
		}
		if err != nil || p.authority != c.authority || p.addr != c.addr {
			t.Errorf("%q: authority %q, addr %q, %v; want %q, %q", c.raw, p.authority, p.addr, err, c.authority, c.addr)
		}
	}
}
