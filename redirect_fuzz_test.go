package guise

import (
	"bytes"
	"errors"
	"net/url"
	"strings"
	"testing"
)

// redirectStatuses are the statuses FuzzRedirect answers with: the five
// redirects and three that are not.
var redirectStatuses = [...]int{301, 302, 303, 307, 308, 300, 304, 200}

// FuzzRedirect drives chain.redirect, the redirect rules of client.go, with
// arbitrary Location values (a chain of up to six, one a line), a start URL,
// a method, a status and one more request field of any name, as a server
// controls the first three. Invariants: no panic; an error is ErrBadLocation
// or ErrTooManyRedirects; a next hop's URL is an absolute http(s) URL with a
// host and no fragment; once a hop changed origin (by an origin computed
// apart from sameOrigin: parseURL's serialisation), no credential field
// (Authorization, Proxy-Authorization, Cookie, Cookie2, WWW-Authenticate,
// Proxy-Authenticate, in any ASCII case) is ever sent again; a 303 (but for
// HEAD) and a POST's 301 or 302 become a GET without a body or the fields
// that describe one; a 307 or 308 keeps the method and the body's bytes.
func FuzzRedirect(f *testing.F) {
	f.Add("https://a.example/p?q=1", uint8(1), "/next\nhttps://b.example/x\n//c.example/y#frag", "GET", "X-Extra")
	f.Add("https://a.example/", uint8(3), "https://A.EXAMPLE:443/same\nhttp://a.example/downgrade", "POST", "authorization")
	f.Add("http://a.example:8080/", uint8(4), "http://a.example:8080/kept\nhttp://a.example:8081/other-port", "PUT", "Cookie")
	f.Add("https://a.example/", uint8(2), "ftp://a.example/\njavascript:alert(1)\n//\nhttps://\n:::", "HEAD", "X")
	f.Add("https://a.example/", uint8(0), "https://user:pass@b.example/\n?only-query\n#only-fragment\n../../../..", "GET", "COOKIE2")
	f.Add("https://[::1]:8443/", uint8(1), "https://[::1%25eth0]/\nhttps://127.0.0.1/\nhttps://a.example./", "DELETE", "Proxy-Authorization")
	f.Add("https://a.example/", uint8(5), "/x", "GET", "")
	f.Add("https://a.example/", uint8(1), "https://a.example:/empty-port\nhttps://a.example:443/\nhttps://a.example:0443/", "GET", "Www-Authenticate")
	f.Add("https://a.example/", uint8(1), "https://a.example/\x00\nhttps://a.example/%zz\nhttps://a b/\nHTTPS://B.example", "OPTIONS", "www-authenticate")
	f.Fuzz(func(t *testing.T, start string, status uint8, locations, method, extra string) {
		hop := &Request{URL: start, Method: method, Body: bytes.NewBufferString("the body"), ContentLength: 8,
			Header: Header{
				{Name: "Authorization", Value: "Basic dTpw"},
				{Name: "Cookie", Value: "a=b"},
				{Name: "Proxy-Authorization", Value: "Basic eDp5"},
				{Name: "Content-Type", Value: "text/plain"},
				{Name: extra, Value: "v"},
			}}
		u, err := hop.parse()
		if err != nil {
			return
		}
		ch := &chain{policy: RedirectFollow, max: 4}
		code := redirectStatuses[int(status)%len(redirectStatuses)]
		crossed := false
		for _, loc := range strings.SplitN(locations, "\n", 6) {
			resp := &Response{StatusCode: code, Header: Header{{Name: "Location", Value: loc}}}
			next, err := ch.redirect(resp, hop, u)
			if err != nil {
				if !errors.Is(err, ErrBadLocation) && !errors.Is(err, ErrTooManyRedirects) {
					t.Fatalf("Location %q: error %v", loc, err)
				}
				return
			}
			if next == nil {
				if isRedirect(code) && loc != "" {
					t.Fatalf("Location %q of a %d: no next hop and no error", loc, code)
				}
				return
			}
			nu, err := url.Parse(next.URL)
			if err != nil {
				t.Fatalf("Location %q: next URL %q does not parse: %v", loc, next.URL, err)
			}
			if s := strings.ToLower(nu.Scheme); s != "http" && s != "https" || nu.Host == "" || nu.Fragment != "" || strings.Contains(next.URL, "#") {
				t.Fatalf("Location %q: next URL %q", loc, next.URL)
			}
			np, perr := parseURL(next.URL)
			if perr != nil || np.origin != u.origin {
				crossed = true // a hop the next request cannot even make counts as leaving
			}
			if crossed {
				for _, fl := range next.Header {
					if isCredentialField(fl.Name) {
						t.Fatalf("Location %q (%s to %s): %q still sent after a cross-origin hop", loc, u.origin, np.origin, fl.Name)
					}
				}
			}
			toGET := code == 303 && hop.method() != "HEAD" || (code == 301 || code == 302) && hop.method() == "POST"
			switch {
			case toGET:
				if next.Method != "GET" || next.Body != nil {
					t.Fatalf("%d after %s: next is %s with body %v", code, hop.method(), next.Method, next.Body != nil)
				}
				if next.Header.Get("content-type") != "" {
					t.Fatalf("%d after %s: Content-Type kept without the body", code, hop.method())
				}
			case code == 307 || code == 308:
				if next.Method != hop.method() || next.Body == nil {
					t.Fatalf("%d after %s: next is %s with body %v", code, hop.method(), next.Method, next.Body != nil)
				}
			}
			if next.Body != nil {
				b := new(bytes.Buffer)
				b.ReadFrom(next.Body)
				if b.String() != "the body" {
					t.Fatalf("%d: the body replayed as %q", code, b)
				}
				next.Body = bytes.NewBufferString("the body")
			}
			if perr != nil {
				return // the chain would end here with the parse error
			}
			hop, u = next, &np
		}
	})
}

// isCredentialField reports whether name (in any ASCII case) is a field a
// cross-origin redirect must drop; written apart from client.go's
// sensitive, as the fuzz target's oracle.
func isCredentialField(name string) bool {
	lower := strings.Map(func(r rune) rune {
		if 'A' <= r && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return r
	}, name)
	switch lower {
	case "authorization", "proxy-authorization", "cookie", "cookie2", "www-authenticate", "proxy-authenticate":
		return true
	}
	return false
}

// TestAuthorityPortAsBrowsersSerialise: the Host and :authority a URL gives
// carry its port as the URL Standard serialises it: "a.example:" and
// "a.example:443" (https) are "a.example", "a.example:0080" (https) is
// "a.example:80". FuzzRedirect found the first: a Location of
// "https://a.example:/" kept the empty port, so the hop's origin differed
// from its own ("https://a.example:"), and Host said "a.example:".
func TestAuthorityPortAsBrowsersSerialise(t *testing.T) {
	for _, tt := range []struct{ raw, authority, addr, origin string }{
		{"https://a.example:/x", "a.example", "a.example:443", "https://a.example"},
		{"https://a.example:443/", "a.example", "a.example:443", "https://a.example"},
		{"https://a.example:0443/", "a.example", "a.example:443", "https://a.example"},
		{"https://a.example:0080/", "a.example:80", "a.example:80", "https://a.example:80"},
		{"http://a.example:80/", "a.example", "a.example:80", "http://a.example"},
		{"http://a.example:8080/", "a.example:8080", "a.example:8080", "http://a.example:8080"},
		{"http://a.example:000/", "a.example:0", "a.example:0", "http://a.example:0"},
		{"https://[::1]:/", "[::1]", "[::1]:443", "https://[::1]"},
		{"https://[::1]:8443/", "[::1]:8443", "[::1]:8443", "https://[::1]:8443"},
		{"https://[::1]/", "[::1]", "[::1]:443", "https://[::1]"},
		{"https://A.Example/", "A.Example", "A.Example:443", "https://a.example"},
	} {
		p, err := parseURL(tt.raw)
		if err != nil {
			t.Fatalf("%s: %v", tt.raw, err)
		}
		if p.authority != tt.authority || p.addr != tt.addr || p.origin != tt.origin {
			t.Errorf("%s: authority %q, addr %q, origin %q; want %q, %q, %q", tt.raw, p.authority, p.addr, p.origin, tt.authority, tt.addr, tt.origin)
		}
	}
}

// TestBrokenLocation (RELIABILITY R-10): a Location that is not a URL at
// all (an unclosed IPv6 bracket, a port that is not a number, a bad
// percent escape, a control byte, a scheme and nothing else) ends the call
// with ErrBadLocation, and no next hop is made.
func TestBrokenLocation(t *testing.T) {
	for _, loc := range []string{"http://[::1", "https://a.example:port/", "/%zz", "https://a.example/\x7f", "https://a\x00b/", "https:", "http://", "ht tp://a.example/"} {
		hop := &Request{URL: "https://a.example/"}
		u, err := hop.parse()
		if err != nil {
			t.Fatal(err)
		}
		ch := &chain{policy: RedirectFollow, max: DefaultMaxRedirects}
		next, err := ch.redirect(&Response{StatusCode: 302, Header: Header{{Name: "Location", Value: loc}}}, hop, u)
		if !errors.Is(err, ErrBadLocation) || next != nil {
			t.Errorf("Location %q: next %v, err %v; want ErrBadLocation", loc, next, err)
		}
	}
}
