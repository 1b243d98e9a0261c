package reqhead

import (
	"bytes"
	"slices"
	"testing"

	"github.com/guise-http/guise/fields"
	"github.com/guise-http/guise/profile"
)

// render writes h as HTTP/1.1 field lines.
func render(h fields.Header) []byte {
	var b []byte
	for _, f := range h {
		b = append(b, f.Name+": "+f.Value+"\r\n"...)
	}
	return b
}

// TestBlockEqualsAppend: for every profile and request kind, the
// pre-rendered fields of a request with nothing of its own are byte for
// byte what Append assembles, and any request with something of its own (a
// caller field, a cookie, a body, an empty POST, a redirect hop, a scripted
// navigation) is not given them.
func TestBlockEqualsAppend(t *testing.T) {
	host := fields.Header{{Name: "Host", Value: "fp.test:8443"}}
	blocks := 0
	for _, name := range profile.Names() {
		p, err := profile.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		tb, err := New(p)
		if err != nil {
			t.Fatal(err)
		}
		for k := profile.Navigate; int(k) < kindCount; k++ {
			if p.HeaderSet(k, profile.HTTP1) == nil {
				continue
			}
			r := Request{Proto: profile.HTTP1, Kind: k, Method: "GET", Extra: host}
			want, err := tb.Append(nil, &r)
			if err != nil {
				t.Fatal(err)
			}
			h, blk, ok := tb.Block(&r)
			if !ok {
				t.Errorf("%s %v: no block", name, k)
				continue
			}
			blocks++
			if got := append(render(fields.Header{h}), blk...); !bytes.Equal(got, render(want)) {
				t.Errorf("%s %v:\n got %q\nwant %q", name, k, got, render(want))
			}
			for _, tc := range []struct {
				what string
				r    Request
			}{
				{"caller field", Request{Proto: profile.HTTP1, Kind: k, Header: fields.Header{{Name: "X-A", Value: "1"}}, Extra: host}},
				{"cookie", Request{Proto: profile.HTTP1, Kind: k, Extra: append(host[:1:1], fields.Field{Name: "Cookie", Value: "a=1"})}},
				{"body", Request{Proto: profile.HTTP1, Kind: k, Method: "POST", Extra: host, ContentLength: 5}},
				{"empty POST", Request{Proto: profile.HTTP1, Kind: k, Method: "POST", Extra: host}},
				{"redirect hop", Request{Proto: profile.HTTP1, Kind: k, Extra: host, Redirected: true}},
				{"scripted navigation", Request{Proto: profile.HTTP1, Kind: k, Extra: host, Scripted: true}},
				{"h2", Request{Proto: profile.H2, Kind: k, Extra: host}},
			} {
				if _, _, ok := tb.Block(&tc.r); ok {
					t.Errorf("%s %v: a request with a %s got the block", name, k, tc.what)
				}
			}
		}
	}
	if blocks == 0 {
		t.Fatal("no profile has a block")
	}
}

func TestOriginOf(t *testing.T) {
	for in, want := range map[string]string{
		"https://a.example/x":        "https://a.example",
		"HTTP://a.example:81?q":      "HTTP://a.example:81",
		"https://a.example#f":        "https://a.example",
		"https://a.example":          "https://a.example",
		"https://u:p@a.example/":     "",
		"https:///x":                 "",
		"ftp://a.example/":           "",
		"":                           "",
		"/relative":                  "",
		"https://[::1]:8443/a/b?c#d": "https://[::1]:8443",
	} {
		if got := originOf(in); got != want {
			t.Errorf("originOf(%q) = %q, want %q", in, got, want)
		}
	}
}

func names(h fields.Header) []string {
	var n []string
	for _, f := range h {
		n = append(n, f.Name)
	}
	return n
}

// TestQuirksAreData: a browser that behaves differently is a profile with
// other data, not other code. Firefox's profile given a redirect set sends
// its hop in that order; given no user_activation mark, its scripted
// navigation keeps Sec-Fetch-User; Chrome's fetch set without needs_body
// keeps Content-Type on an empty POST. The browser field is never looked
// at: the changed profile claims to be Chrome.
func TestQuirksAreData(t *testing.T) {
	ff, err := profile.Lookup("firefox")
	if err != nil {
		t.Fatal(err)
	}
	hop := &Request{Proto: profile.H2, Kind: profile.Navigate, Redirected: true}
	scripted := &Request{Proto: profile.H2, Kind: profile.Navigate, Scripted: true}
	base, _ := New(ff)
	plain, _ := base.Append(nil, &Request{Proto: profile.H2})
	if got, _ := base.Append(nil, hop); !slices.Equal(names(got), names(plain)) {
		t.Fatalf("firefox redirect hop %v, want the navigation order %v", names(got), names(plain))
	}
	if got, _ := base.Append(nil, scripted); got.Has("sec-fetch-user") {
		t.Fatal("firefox scripted navigation sent sec-fetch-user")
	}

	p := ff.Clone()
	p.Browser = profile.Chrome // must not matter
	nav := p.HeaderSet(profile.Navigate, profile.H2)
	rev := nav.Header.Clone()
	slices.Reverse(rev)
	var per []string
	for _, f := range rev {
		if slices.Contains(nav.PerRequest, f.Name) {
			per = append(per, f.Name)
		}
	}
	nav.UserActivation = nil
	p.BodyHeaderSet(profile.Fetch, profile.H2).NeedsBody = nil
	p.Headers = append(p.Headers, profile.HeaderSet{Kind: profile.Navigate, Proto: profile.H2, Redirect: true, Header: rev, PerRequest: per})
	tb, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := tb.Append(nil, hop)
	want := names(plain)
	slices.Reverse(want)
	if !slices.Equal(names(got), want) {
		t.Errorf("redirect hop %v, want the redirect set's order %v", names(got), want)
	}
	if got, _ := tb.Append(nil, scripted); !got.Has("sec-fetch-user") {
		t.Error("scripted navigation without a user_activation mark dropped sec-fetch-user")
	}
	empty := &Request{Proto: profile.H2, Kind: profile.Fetch, Method: "POST"}
	if got, _ := tb.Append(nil, empty); !got.Has("content-type") {
		t.Error("empty fetch POST without a needs_body mark dropped content-type")
	}
	if got, _ := base.Append(nil, empty); got.Has("content-type") {
		t.Error("firefox empty fetch POST sent content-type")
	}
}

// TestAppendErrors: a request the profile has no set for is an error, and
// dst comes back as it was.
func TestAppendErrors(t *testing.T) {
	p, err := profile.Lookup("safari")
	if err != nil {
		t.Fatal(err)
	}
	tb, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	dst := fields.Header{{Name: "a", Value: "1"}}
	for _, r := range []Request{
		{Proto: profile.H2, Kind: profile.Fetch},
		{Proto: 0, Kind: profile.Navigate},
		{Proto: profile.HTTP1, Kind: profile.RequestKind(99)},
	} {
		got, err := tb.Append(dst, &r)
		if err == nil || len(got) != 1 {
			t.Errorf("%+v: %v, %v; want an error and dst unchanged", r, got, err)
		}
	}
	var zero Table
	if _, err := zero.Append(nil, &Request{Proto: profile.H2}); err == nil {
		t.Error("the zero Table assembled a header")
	}
}

// TestAppendAllocs: assembling into a buffer with room allocates nothing
// for a GET, a small POST or an empty POST.
func TestAppendAllocs(t *testing.T) {
	p, err := profile.Lookup("chrome")
	if err != nil {
		t.Fatal(err)
	}
	tb, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	extra := fields.Header{{Name: "Cookie", Value: "a=1"}, {Name: "Referer", Value: "https://fp.test/page"}}
	dst := make(fields.Header, 0, 32)
	for _, r := range []Request{
		{Proto: profile.H2, Extra: extra},
		{Proto: profile.HTTP1, Extra: extra, Redirected: true},
		{Proto: profile.H2, Kind: profile.Fetch, Method: "POST", ContentLength: 5, Extra: extra, Origin: &testOrigin},
		{Proto: profile.HTTP1, Kind: profile.Fetch, Method: "POST", Extra: extra, Origin: &testOrigin},
	} {
		if n := testing.AllocsPerRun(100, func() { _, _ = tb.Append(dst[:0], &r) }); n != 0 {
			t.Errorf("%+v: %v allocations, want 0", r, n)
		}
	}
}

func BenchmarkAppendNavigation(b *testing.B) {
	p, _ := profile.Lookup("chrome")
	tb, _ := New(p)
	r := Request{Proto: profile.H2, Extra: fields.Header{{Name: "Cookie", Value: "a=1"}}}
	dst := make(fields.Header, 0, 32)
	b.ReportAllocs()
	for b.Loop() {
		dst, _ = tb.Append(dst[:0], &r)
	}
}

var testOrigin = "https://fp.test"
