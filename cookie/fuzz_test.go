package cookie

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/publicsuffix"
)

// FuzzSetCookie checks the jar's invariants for any Set-Cookie value and,
// for structured values both jars accept, that net/http/cookiejar (with the
// same public suffix list) makes the same domain and path matching
// decisions.
//
// Known, intended differences, excluded from the comparison:
//   - SameSite enforcement, the __Host-/__Secure- prefixes, SameSite=None
//     and Partitioned requiring Secure, the 400-day cap and the size and
//     count limits are ours only (cookiejar has none of them).
//   - Secure: we reject Secure cookies from http and their overwriting from
//     http, and treat http://localhost as secure; the differential uses
//     https only.
//   - Domain attributes: we accept a trailing dot ("example.com.") and
//     Unicode (converted to an A-label), which cookiejar rejects; we reject
//     Domain attributes on hosts whose last label is numeric ("a.1.2.3"),
//     which cookiejar treats as domains, and Domain attributes with bytes
//     that never occur in host names.
//   - Hosts that are not valid names for us (empty labels, invalid "xn--"
//     labels, over-long labels) get and send no cookies; cookiejar still
//     matches them.
//   - We match on the escaped path (as browsers do), cookiejar on the
//     decoded one; paths here need no escaping.
//   - Attribute values over 1024 bytes are ignored by us (RFC 6265bis).
func FuzzSetCookie(f *testing.F) {
	f.Add("www.example.com", "/a/b", "example.com", "/", uint8(3), "x.example.com", "/x", "a=1; Domain=example.com")
	f.Add("www.bbc.co.uk", "/", "co.uk", "", uint8(1), "www.bbc.co.uk", "/", "a=1; Domain=CO.UK")
	f.Add("co.uk", "/", "co.uk", "", uint8(1), "www.co.uk", "/", "a=1; Domain=co.uk.")
	f.Add("192.168.0.1", "/", "192.168.0.1", "/", uint8(3), "192.168.0.1", "/", "a=1; Domain=.192.168.0.1")
	f.Add("example.com.", "/dir/x", "", "/dir", uint8(2), "EXAMPLE.com", "/dir/y", "a=1; Path=/dir; Secure")
	f.Add("a.b.example.com", "/p", ".b.example.com", "/p/", uint8(7), "b.example.com", "/p/q", "__Host-a=1; Secure; Path=/")
	f.Add("www.example.com", "/", "", "", uint8(0), "www.example.com", "/", "a=b\x00c")
	f.Add("localhost", "/", "localhost", "/", uint8(3), "localhost", "/", "a; SameSite=None; Secure")
	f.Add("www.xn--bcher-kva.de", "/", "bücher.de", "/", uint8(1), "www.bücher.de", "/", "a=1; Domain=BÜCHER.de")
	f.Fuzz(func(t *testing.T, setHost, setPath, domainAttr, pathAttr string, flags uint8, reqHost, reqPath, raw string) {
		setU := &url.URL{Scheme: "https", Host: setHost, Path: setPath}
		reqU := &url.URL{Scheme: "https", Host: reqHost, Path: reqPath}
		if flags&8 != 0 {
			setU.Scheme = "http"
		}
		if flags&16 != 0 {
			reqU.Scheme = "http"
		}
		checkInvariants(t, setU, reqU, raw)

		differential(t, setU, reqU, domainAttr, pathAttr, flags)
	})
}

// differential sets a structured cookie in our jar and in
// net/http/cookiejar and compares what each sends. It reports whether a
// comparison was made (both accepted the cookie).
func differential(t *testing.T, setU, reqU *url.URL, domainAttr, pathAttr string, flags uint8) bool {
	setU.Scheme, reqU.Scheme = "https", "https"
	if !simpleHost(setU.Host) || !simpleHost(reqU.Host) || !simplePath(setU.Path) || !simplePath(reqU.Path) ||
		!attrValue(domainAttr) || !attrValue(pathAttr) {
		return false
	}
	line := "n=v"
	if flags&1 != 0 {
		line += "; Domain=" + domainAttr
	}
	if flags&2 != 0 {
		line += "; Path=" + pathAttr
	}
	if flags&4 != 0 {
		line += "; Secure"
	}
	ours := New(nil)
	theirs, err := cookiejar.New(&cookiejar.Options{PublicSuffixList: publicsuffix.List})
	if err != nil {
		t.Fatal(err)
	}
	if err := ours.SetCookie(setU, line); err != nil {
		return false
	}
	parsed := (&http.Response{Header: http.Header{"Set-Cookie": {line}}}).Cookies()
	theirs.SetCookies(setU, parsed)
	all := ours.All()
	if len(all) != 1 {
		t.Fatalf("accepted %q but stored %d cookies", line, len(all))
	}
	c := all[0]
	host := c.Domain
	if strings.IndexByte(host, ':') >= 0 {
		host = "[" + host + "]"
	}
	probe := &url.URL{Scheme: "https", Host: host, Path: c.Path}
	if len(theirs.Cookies(probe)) == 0 && len(theirs.Cookies(reqU)) == 0 {
		return false // cookiejar rejected it, or stored it where neither URL sees it
	}
	if _, ok := canonicalHost(reqU.Hostname()); !ok {
		return false
	}
	for _, u := range []*url.URL{probe, reqU} {
		if u.EscapedPath() != u.Path {
			// Intended difference: we match the path as it goes on the
			// wire (escaped, "/%21"), cookiejar the decoded one ("/!").
			continue
		}
		o, th := len(ours.Cookies(u)) > 0, len(theirs.Cookies(u)) > 0
		if o != th {
			t.Fatalf("Set-Cookie %q from %s: request %s: ours sends %v, cookiejar %v (stored %+v)", line, setU, u, o, th, *c)
		}
	}
	return true
}

// TestDifferentialCompares makes sure the differential compares something.
func TestDifferentialCompares(t *testing.T) {
	tests := []struct {
		setHost, setPath, domain, path string
		flags                          uint8
		reqHost, reqPath               string
		compared                       bool
	}{
		{"www.example.com", "/a/b", "example.com", "/", 3, "x.example.com", "/x", true},
		{"www.example.com", "/a/b", "", "", 0, "www.example.com", "/a/c", true},
		{"www.example.com", "/a/b", "", "", 0, "x.example.com", "/a", true},
		{"www.example.com", "/", "", "/p", 2, "www.example.com", "/pq", true},
		{"co.uk", "/", "co.uk", "", 1, "www.co.uk", "/", true},
		{"EXAMPLE.com.", "/", "Example.COM", "", 1, "a.example.com", "/", true},
		{"192.168.0.1", "/", "192.168.0.1", "", 1, "192.168.0.1", "/", true},
		{"www.bbc.co.uk", "/", "co.uk", "", 1, "www.bbc.co.uk", "/", false},            // both reject
		{"www.example.com", "/", "example.com.", "", 1, "www.example.com", "/", false}, // cookiejar rejects
	}
	for _, tt := range tests {
		setU := &url.URL{Scheme: "https", Host: tt.setHost, Path: tt.setPath}
		reqU := &url.URL{Scheme: "https", Host: tt.reqHost, Path: tt.reqPath}
		if got := differential(t, setU, reqU, tt.domain, tt.path, tt.flags); got != tt.compared {
			t.Errorf("%+v: compared %v", tt, got)
		}
	}
}

// checkInvariants sets raw from setU and checks what the jar stores and
// sends to reqU.
func checkInvariants(t *testing.T, setU, reqU *url.URL, raw string) {
	j := New(nil)
	err := j.SetCookie(setU, raw)
	setHost, hostOK := canonicalHost(setU.Hostname())
	all := j.All()
	if err != nil && len(all) != 0 {
		t.Fatalf("rejected (%v) but stored %d", err, len(all))
	}
	for _, c := range all {
		if !hostOK {
			t.Fatalf("stored a cookie from invalid host %q", setU.Host)
		}
		for _, s := range []string{c.Name, c.Value} {
			for i := 0; i < len(s); i++ {
				if b := s[i]; (b < 0x20 && b != '\t') || b == 0x7f {
					t.Fatalf("stored a control character: %q", s)
				}
			}
		}
		if len(c.Name)+len(c.Value) > 4096 || c.Name == "" && c.Value == "" {
			t.Fatalf("stored %q=%q", c.Name, c.Value)
		}
		if c.HostOnly && c.Domain != setHost {
			t.Fatalf("host-only cookie for %q set by %q", c.Domain, setHost)
		}
		if !c.HostOnly && (!domainMatch(setHost, c.Domain) || j.isPublicSuffix(c.Domain) || isIPLike(c.Domain)) {
			t.Fatalf("domain cookie for %q set by %q", c.Domain, setHost)
		}
		if c.Path == "" || c.Path[0] != '/' {
			t.Fatalf("path %q", c.Path)
		}
		if c.Secure && !isSecureContext(setU.Scheme, setHost) {
			t.Fatalf("secure cookie from %s", setU)
		}
	}
	reqHost, ok := canonicalHost(reqU.Hostname())
	hdr := j.AppendCookieHeader(nil, reqU, CrossSiteNavigation)
	sent := j.Cookies(reqU)
	if !ok && (len(sent) > 0 || len(hdr) > 0) {
		t.Fatalf("cookies sent to invalid host %q", reqU.Host)
	}
	for _, c := range sent {
		if c.HostOnly && c.Domain != reqHost || !c.HostOnly && !domainMatch(reqHost, c.Domain) {
			t.Fatalf("cookie for %q sent to %q", c.Domain, reqHost)
		}
		if c.Secure && !isSecureContext(reqU.Scheme, reqHost) {
			t.Fatalf("secure cookie sent to %s", reqU)
		}
	}
	if len(hdr) > 0 && bytes.ContainsAny(hdr, "\r\n\x00") {
		t.Fatalf("header %q", hdr)
	}
}

func simpleHost(h string) bool {
	if h == "" || len(h) > 253 || strings.Contains(h, "localhost") {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '-') {
			return false
		}
	}
	return net.ParseIP(h) == nil || strings.Count(h, ".") == 3
}

func simplePath(p string) bool {
	for i := 0; i < len(p); i++ {
		c := p[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("/._~-", c) >= 0) {
			return false
		}
	}
	return p == "" || p[0] == '/'
}

func attrValue(v string) bool {
	if len(v) > maxAttrValue || v != strings.TrimSpace(v) {
		return false
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x21 || c >= 0x7f || c == '"' || c == ';' || c == '\\' || c == ',' {
			return false
		}
	}
	return true
}

// FuzzParseCookieDate: no panic, linear, and an accepted date is in range
// and survives formatting in the IMF-fixdate form and parsing again.
func FuzzParseCookieDate(f *testing.F) {
	for _, s := range []string{"Sat, 02 Jan 2027 03:04:05 GMT", "Saturday, 02-Jan-27 03:04:05 GMT", "Sat Jan  2 03:04:05 2027", "31 Feb 2027 00:00:00", "1 Jan 69 1:2:3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, ok := parseCookieDate(s)
		if !ok {
			return
		}
		if d.Year() < 1601 || d.Location() != time.UTC {
			t.Fatalf("%q -> %v", s, d)
		}
		back, ok := parseCookieDate(d.Format(http.TimeFormat))
		if !ok || !back.Equal(d) {
			t.Fatalf("%q -> %v -> %v %v", s, d, back, ok)
		}
	})
}

// FuzzCanonicalHost: canonical output is a fixed point and ASCII; Punycode
// round-trips.
func FuzzCanonicalHost(f *testing.F) {
	for _, s := range []string{"example.com", "BÜCHER.de.", "xn--bcher-kva.de", "xn--example-", "[::1]", "a..b", "例え.テスト"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, ok := canonicalHost(s)
		if !ok {
			return
		}
		if !isASCII(h) || strings.HasSuffix(h, ".") {
			t.Fatalf("%q -> %q", s, h)
		}
		if h2, ok := canonicalHost(h); !ok || h2 != h {
			t.Fatalf("not a fixed point: %q -> %q -> %q %v", s, h, h2, ok)
		}
		for _, label := range strings.Split(h, ".") {
			if rest, ok := strings.CutPrefix(label, "xn--"); ok {
				u, err := punyDecode(rest)
				if err != nil {
					t.Fatalf("%q: label %q does not decode: %v", s, label, err)
				}
				if enc, err := punyEncode(u); err != nil || enc != rest {
					t.Fatalf("%q: label %q -> %q -> %q %v", s, label, u, enc, err)
				}
			}
		}
	})
}

// FuzzReadNetscape: no panic; what is imported obeys the jar's rules and
// survives a write and read.
func FuzzReadNetscape(f *testing.F) {
	f.Add(".example.com\tTRUE\t/\tFALSE\t0\tdom\t1\n#HttpOnly_www.example.com\tFALSE\t/\tTRUE\t1800000000\tho\t2\n")
	f.Add("# Netscape HTTP Cookie File\n\nco.uk\tFALSE\t/\tFALSE\t0\ta\t1\n.co.uk\tTRUE\t/\tFALSE\t0\tb\t1\nx\tFALSE\t/\tFALSE\t0\tc\n")
	f.Fuzz(func(t *testing.T, in string) {
		j := New(&Options{Now: func() time.Time { return epoch }})
		j.ReadNetscape(strings.NewReader(in))
		roundTrip(t, j, (*Jar).WriteNetscape, (*Jar).ReadNetscape)
	})
}

// FuzzReadJSON: as FuzzReadNetscape, for JSON.
func FuzzReadJSON(f *testing.F) {
	f.Add(`{"version":1,"cookies":[{"name":"a","value":"1","domain":"example.com","path":"/","hostOnly":false,"secure":true,"httpOnly":false,"sameSite":"strict"}]}`)
	f.Add(`[{"domain":".example.com","name":"a","path":"/","sameSite":"no_restriction","secure":true,"expirationDate":1800000000.5,"value":"1"}]`)
	f.Add(`{"cookies":[{"name":"s","value":"1","domain":".example.com","path":"/","expires":-1,"httpOnly":true,"secure":true,"sameSite":"Lax"}],"origins":[]}`)
	f.Fuzz(func(t *testing.T, in string) {
		j := New(&Options{Now: func() time.Time { return epoch }})
		j.ReadJSON(strings.NewReader(in))
		roundTrip(t, j, (*Jar).WriteJSON, (*Jar).ReadJSON)
	})
}

func roundTrip(t *testing.T, j *Jar, write func(*Jar, io.Writer) error, read func(*Jar, io.Reader) error) {
	all := j.All()
	for _, c := range all {
		if !c.HostOnly && j.isPublicSuffix(c.Domain) {
			t.Fatalf("imported a public-suffix domain cookie: %+v", c)
		}
		if c.Path == "" || c.Path[0] != '/' {
			t.Fatalf("path %q", c.Path)
		}
	}
	var buf bytes.Buffer
	if err := write(j, &buf); err != nil {
		t.Fatal(err)
	}
	j2 := New(&Options{Now: func() time.Time { return epoch }})
	if err := read(j2, &buf); err != nil {
		t.Fatalf("reading our own output: %v", err)
	}
	want := 0
	for _, c := range all {
		if !strings.ContainsAny(c.Name+c.Value+c.Path, "\t\r\n") {
			want++
		}
	}
	if got := len(j2.All()); got < want && got != len(all) {
		t.Fatalf("round trip kept %d of %d", got, len(all))
	}
}
