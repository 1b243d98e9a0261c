package cookie

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestSecure covers R-15: Secure cookies are neither set nor overwritten
// from an insecure origin, and only sent to secure contexts.
func TestSecure(t *testing.T) {
	t.Run("set", func(t *testing.T) {
		tests := []struct {
			url string
			err error
		}{
			{"http://example.com/", ErrInsecure},
			{"https://example.com/", nil},
			{"wss://example.com/", nil},
			{"ws://example.com/", ErrInsecure},
			{"http://localhost:8080/", nil},
			{"http://app.localhost/", nil},
			{"http://127.0.0.1/", nil},
			{"http://127.9.9.9/", nil},
			{"http://[::1]/", nil},
			{"http://10.0.0.1/", ErrInsecure},
			{"http://localhost.example.com/", ErrInsecure},
		}
		for _, tt := range tests {
			j, _ := newTestJar(t, nil)
			if err := j.SetCookie(mustURL(t, tt.url), "s=1; Secure"); !errors.Is(err, tt.err) {
				t.Errorf("%s: SetCookie = %v, want %v", tt.url, err, tt.err)
			}
		}
	})
	t.Run("send", func(t *testing.T) {
		j, _ := newTestJar(t, nil)
		set(t, j, "https://example.com/", "s=1; Secure", "p=1")
		set(t, j, "http://localhost/", "ls=1; Secure")
		for url, want := range map[string]string{
			"https://example.com/": "s=1; p=1",
			"http://example.com/":  "p=1",
			"ws://example.com/":    "p=1",
			"wss://example.com/":   "s=1; p=1",
			"http://localhost/":    "ls=1",
		} {
			if got := header(t, j, url, SameSiteRequest); got != want {
				t.Errorf("%s: %q, want %q", url, got, want)
			}
		}
	})
	t.Run("overwrite", func(t *testing.T) {
		j, _ := newTestJar(t, nil)
		set(t, j, "https://www.example.com/", "s=secret; Secure; Domain=example.com; Path=/a")
		tests := []struct {
			line string
			err  error
		}{
			{"s=evil", ErrSecureOverlap},                              // host-only at /, path-matches /a? no: /a path-matches /
			{"s=evil; Path=/a/b", ErrSecureOverlap},                   // new path under the secure one
			{"s=evil; Domain=example.com; Path=/a", ErrSecureOverlap}, // exact key
			{"s=evil; Domain=example.com; Max-Age=0; Path=/a", ErrSecureOverlap},
			{"s=ok; Path=/b", nil},     // /b does not path-match /a
			{"other=ok; Path=/a", nil}, // other name
		}
		for _, tt := range tests {
			err := j.SetCookie(mustURL(t, "http://www.example.com/a/x"), tt.line)
			if !errors.Is(err, tt.err) {
				t.Errorf("SetCookie(%q) = %v, want %v", tt.line, err, tt.err)
			}
		}
		if got := header(t, j, "https://www.example.com/a", SameSiteRequest); !strings.Contains(got, "s=secret") || strings.Contains(got, "evil") {
			t.Fatalf("secure cookie changed from http: %q", got)
		}
		// A secure origin may overwrite it.
		set(t, j, "https://www.example.com/", "s=new; Secure; Domain=example.com; Path=/a")
		if got := header(t, j, "https://www.example.com/a", SameSiteRequest); !strings.HasPrefix(got, "s=new") {
			t.Fatalf("https overwrite: %q", got)
		}
	})
}

func TestPrefixes(t *testing.T) {
	tests := []struct {
		url, line string
		err       error
	}{
		{"https://a.example.com/", "__Secure-x=1; Secure", nil},
		{"https://a.example.com/", "__Secure-x=1", ErrPrefix},
		{"https://a.example.com/", "__secure-x=1", ErrPrefix},
		{"https://a.example.com/", "__Secure-x=1; Secure; Domain=example.com", nil},
		{"http://a.example.com/", "__Secure-x=1; Secure", ErrInsecure},
		{"https://a.example.com/", "__Host-x=1; Secure; Path=/", nil},
		{"https://a.example.com/dir/", "__Host-x=1; Secure; Path=/", nil},
		{"https://a.example.com/", "__Host-x=1; Secure", nil}, // default path of "/" is "/"
		{"https://a.example.com/dir/x", "__Host-x=1; Secure", ErrPrefix},
		{"https://a.example.com/", "__Host-x=1; Path=/", ErrPrefix},
		{"https://a.example.com/", "__HOST-x=1; Path=/", ErrPrefix},
		{"https://a.example.com/", "__Host-x=1; Secure; Path=/; Domain=a.example.com", ErrPrefix},
		{"https://a.example.com/", "__Host-x=1; Secure; Path=/; Domain=example.com", ErrPrefix},
		{"https://a.example.com/", "__Host-x=1; Secure; Path=/a", ErrPrefix},
		{"https://a.example.com/", "__Host-=1; Secure; Path=/", nil},
		{"https://a.example.com/", "__Host-x; Secure; Path=/", ErrPrefix}, // nameless, value looks prefixed
		{"https://a.example.com/", "__Secure-x; Secure", ErrPrefix},
		{"https://a.example.com/", "_Host-x=1", nil},
	}
	for _, tt := range tests {
		j, _ := newTestJar(t, nil)
		if err := j.SetCookie(mustURL(t, tt.url), tt.line); !errors.Is(err, tt.err) {
			t.Errorf("%s %q: %v, want %v", tt.url, tt.line, err, tt.err)
		}
	}
}

func TestExpiry(t *testing.T) {
	const u = "https://example.com/"
	past := "Wed, 01 Jan 2020 00:00:00 GMT"
	future := "Thu, 01 Jan 2027 00:00:00 GMT"
	tests := []struct {
		name    string
		line    string
		stored  bool
		expires time.Time // zero: session
	}{
		{"session", "a=1", true, time.Time{}},
		{"max-age", "a=1; Max-Age=60", true, epoch.Add(time.Minute)},
		{"expires", "a=1; Expires=" + future, true, time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"max-age beats past expires", "a=1; Max-Age=60; Expires=" + past, true, epoch.Add(time.Minute)},
		{"max-age beats expires, any order", "a=1; Expires=" + past + "; Max-Age=60", true, epoch.Add(time.Minute)},
		{"max-age 0 beats future expires", "a=1; Expires=" + future + "; Max-Age=0", false, time.Time{}},
		{"max-age negative", "a=1; Max-Age=-5", false, time.Time{}},
		{"max-age -0", "a=1; Max-Age=-0", false, time.Time{}},
		{"past expires", "a=1; Expires=" + past, false, time.Time{}},
		{"expires now", "a=1; Expires=Mon, 01 Jun 2026 12:00:00 GMT", false, time.Time{}},
		{"bad max-age ignored", "a=1; Max-Age=1a", true, time.Time{}},
		{"plus max-age ignored", "a=1; Max-Age=+5", true, time.Time{}},
		{"empty max-age ignored", "a=1; Max-Age=", true, time.Time{}},
		{"bad max-age, expires applies", "a=1; Max-Age=x; Expires=" + past, false, time.Time{}},
		{"bad expires ignored", "a=1; Expires=tomorrow", true, time.Time{}},
		{"last max-age wins", "a=1; Max-Age=0; Max-Age=60", true, epoch.Add(time.Minute)},
		{"400 day cap max-age", "a=1; Max-Age=99999999999999999999", true, epoch.Add(maxAge)},
		{"400 day cap expires", "a=1; Expires=Fri, 01 Jan 2100 00:00:00 GMT", true, epoch.Add(maxAge)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j, _ := newTestJar(t, nil)
			set(t, j, u, tt.line)
			all := j.All()
			if len(all) == 1 != tt.stored {
				t.Fatalf("stored %d cookies, want stored=%v", len(all), tt.stored)
			}
			if tt.stored && !all[0].Expires.Equal(tt.expires) {
				t.Fatalf("Expires %v, want %v", all[0].Expires, tt.expires)
			}
		})
	}
	t.Run("delete", func(t *testing.T) {
		for _, del := range []string{"a=x; Max-Age=0", "a=x; Max-Age=-1", "a=x; Expires=" + past} {
			j, _ := newTestJar(t, nil)
			set(t, j, u, "a=1", "b=2")
			set(t, j, u, del)
			if got := header(t, j, u, SameSiteRequest); got != "b=2" {
				t.Errorf("after %q: %q, want b=2", del, got)
			}
		}
	})
	t.Run("clock", func(t *testing.T) {
		j, clk := newTestJar(t, nil)
		set(t, j, u, "a=1; Max-Age=10", "s=1")
		if got := header(t, j, u, SameSiteRequest); got != "a=1; s=1" {
			t.Fatalf("before: %q", got)
		}
		clk.Advance(10 * time.Second)
		if got := header(t, j, u, SameSiteRequest); got != "s=1" {
			t.Fatalf("after expiry: %q", got)
		}
		if j.Len() != 1 {
			t.Fatalf("expired cookie kept: Len %d", j.Len())
		}
		// Session cookies never expire with time: the jar never resets itself.
		clk.Advance(10 * 365 * 24 * time.Hour)
		if got := header(t, j, u, SameSiteRequest); got != "s=1" {
			t.Fatalf("session cookie after 10 years: %q", got)
		}
	})
}

func TestDefaultPath(t *testing.T) {
	for in, want := range map[string]string{
		"": "/", "/": "/", "/a": "/", "/a/": "/a", "/a/b": "/a", "/a/b/": "/a/b", "a/b": "/", "//": "/", "/a//b": "/a/",
	} {
		if got := defaultPath(in); got != want {
			t.Errorf("defaultPath(%q) = %q, want %q", in, got, want)
		}
	}
	j, _ := newTestJar(t, nil)
	set(t, j, "https://example.com/dir/page?q=1", "a=1", "b=1; Path=", "c=1; Path=rel", "d=1; Path=/x/")
	want := map[string]string{"a": "/dir", "b": "/dir", "c": "/dir", "d": "/x/"}
	for _, c := range j.All() {
		if c.Path != want[c.Name] {
			t.Errorf("%s: Path %q, want %q", c.Name, c.Path, want[c.Name])
		}
	}
}

func TestPathMatch(t *testing.T) {
	tests := []struct {
		req, cookie string
		want        bool
	}{
		{"/", "/", true},
		{"/a", "/", true},
		{"/a", "/a", true},
		{"/a/", "/a", true},
		{"/a/b", "/a", true},
		{"/ab", "/a", false},
		{"/a", "/a/", false},
		{"/a/b", "/a/", true},
		{"/", "/a", false},
		{"/A", "/a", false},
	}
	for _, tt := range tests {
		if got := pathMatch(tt.req, tt.cookie); got != tt.want {
			t.Errorf("pathMatch(%q, %q) = %v", tt.req, tt.cookie, got)
		}
	}
}

// TestHeaderOrder checks the Cookie header: longer paths first, then
// earlier creation; replacing a cookie keeps its creation time.
func TestHeaderOrder(t *testing.T) {
	j, clk := newTestJar(t, nil)
	const u = "https://www.example.com/"
	set(t, j, u, "a=1; Path=/")
	clk.Advance(time.Second)
	set(t, j, u, "b=1; Path=/x/y")
	clk.Advance(time.Second)
	set(t, j, u, "c=1; Path=/x")
	set(t, j, u, "d=1; Path=/x; Domain=example.com") // same creation time as c: insertion order
	clk.Advance(time.Second)
	set(t, j, u, "e=1")
	clk.Advance(time.Second)
	set(t, j, u, "a=2; Path=/") // replaced: keeps its place
	set(t, j, u, "nameless")
	if got, want := header(t, j, "https://www.example.com/x/y/z", SameSiteRequest), "b=1; c=1; d=1; a=2; e=1; nameless"; got != want {
		t.Fatalf("Cookie %q, want %q", got, want)
	}
	if got := names(j.Cookies(mustURL(t, "https://www.example.com/x"))); got != "c d a e " {
		t.Fatalf("Cookies names %q", got)
	}
	// An appended header goes after existing bytes.
	if got := string(j.AppendCookieHeader([]byte("x"), mustURL(t, "https://example.com/x"), SameSiteRequest)); got != "xd=1" {
		t.Fatalf("append: %q", got)
	}
}

// TestSameSite checks Chrome's enforcement, with Lax by default.
func TestSameSite(t *testing.T) {
	j, clk := newTestJar(t, nil)
	set(t, j, "https://example.com/", "strict=1; SameSite=Strict", "lax=1; SameSite=lax",
		"none=1; SameSite=None; Secure", "unspec=1", "bogus=1; SameSite=bogus")
	tests := []struct {
		site SiteContext
		want string
	}{
		{SameSiteRequest, "strict=1; lax=1; none=1; unspec=1; bogus=1"},
		{CrossSiteNavigation, "lax=1; none=1; unspec=1; bogus=1"},
		{CrossSite, "none=1"},
		{CrossSiteUnsafeNavigation, "none=1; unspec=1; bogus=1"}, // Lax+POST: young unspecified cookies
		{SiteContext(99), "none=1"},
	}
	for _, tt := range tests {
		if got := header(t, j, "https://example.com/", tt.site); got != tt.want {
			t.Errorf("%v: %q, want %q", tt.site, got, tt.want)
		}
	}
	clk.Advance(laxPostWindow + time.Second)
	if got := header(t, j, "https://example.com/", CrossSiteUnsafeNavigation); got != "none=1" {
		t.Errorf("Lax+POST after 2 minutes: %q", got)
	}
	if err := j.SetCookie(mustURL(t, "https://example.com/"), "n=1; SameSite=None"); !errors.Is(err, ErrSameSiteNone) {
		t.Errorf("SameSite=None without Secure: %v", err)
	}
	if err := j.SetCookie(mustURL(t, "https://example.com/"), "p=1; Partitioned"); !errors.Is(err, ErrPartitioned) {
		t.Errorf("Partitioned without Secure: %v", err)
	}
	if err := j.SetCookie(mustURL(t, "https://example.com/"), "p=1; Partitioned; Secure"); err != nil {
		t.Errorf("Partitioned; Secure: %v", err)
	}
}

// TestControlChars covers R-13 (curl CVE-2022-35252).
func TestControlChars(t *testing.T) {
	bad := []string{"a=b\x00c", "a\x00=b", "a=b\rc", "a=b\nSet-Cookie: x=y", "a=\x01", "a=\x7f", "a=1; Path=/\x00", "a=1; Domain=example.com\x1f", "\x00"}
	for _, line := range bad {
		j, _ := newTestJar(t, nil)
		if err := j.SetCookie(mustURL(t, "https://example.com/"), line); !errors.Is(err, ErrControlChar) {
			t.Errorf("%q: %v, want ErrControlChar", line, err)
		}
		if j.Len() != 0 {
			t.Errorf("%q stored", line)
		}
	}
	j, _ := newTestJar(t, nil)
	set(t, j, "https://example.com/", "\ta\t=\tb\tc\t; Path=/", "ü=ö")
	if got := header(t, j, "https://example.com/", SameSiteRequest); got != "a=b\tc; ü=ö" {
		t.Fatalf("HTAB and UTF-8: %q", got)
	}
}

func TestSyntax(t *testing.T) {
	tests := []struct {
		line, want string
		err        error
	}{
		{"a=1", "a=1", nil},
		{" a = 1 ", "a=1", nil},
		{"a=", "a=", nil},
		{"a", "a", nil}, // nameless cookie, value "a"
		{"=a", "a", nil},
		{"a=b=c", "a=b=c", nil},
		{`a="q"`, `a="q"`, nil},
		{"", "", ErrSyntax},
		{"=", "", ErrSyntax},
		{"; Path=/", "", ErrSyntax},
		{"  ;a=1", "", ErrSyntax},
	}
	for _, tt := range tests {
		j, _ := newTestJar(t, nil)
		if err := j.SetCookie(mustURL(t, "https://example.com/"), tt.line); !errors.Is(err, tt.err) {
			t.Errorf("%q: %v, want %v", tt.line, err, tt.err)
		}
		if got := header(t, j, "https://example.com/", SameSiteRequest); got != tt.want {
			t.Errorf("%q: header %q, want %q", tt.line, got, tt.want)
		}
	}
}

func TestCookieDate(t *testing.T) {
	want := time.Date(2027, 1, 2, 3, 4, 5, 0, time.UTC)
	good := []string{
		"Sat, 02 Jan 2027 03:04:05 GMT",
		"Saturday, 02-Jan-27 03:04:05 GMT",
		"Sat Jan  2 03:04:05 2027",
		"2 jan 2027 3:4:5",
		"02-JANUARY-2027 03:04:05",
		"03:04:05 2027 jan 2",
		"Sat, 02 Jan 2027 03:04:05 GMT+0100", // zones are ignored
	}
	for _, s := range good {
		if got, ok := parseCookieDate(s); !ok || !got.Equal(want) {
			t.Errorf("parseCookieDate(%q) = %v, %v", s, got, ok)
		}
	}
	if got, ok := parseCookieDate("1 Jan 70 00:00:00"); !ok || got.Year() != 1970 {
		t.Errorf("two-digit 70: %v %v", got, ok)
	}
	if got, ok := parseCookieDate("1 Jan 69 00:00:00"); !ok || got.Year() != 2069 {
		t.Errorf("two-digit 69: %v %v", got, ok)
	}
	bad := []string{"", "tomorrow", "31 Feb 2027 00:00:00", "1 Jan 1600 00:00:00", "1 Jan 2027 24:00:00",
		"1 Jan 2027 00:60:00", "1 Jan 2027 00:00:60", "0 Jan 2027 00:00:00", "32 Jan 2027 00:00:00",
		"1 Jan 2027", "1 Foo 2027 00:00:00", "1 Jan 20270 00:00:00", "1 Jan 2027 000:00:00"}
	for _, s := range bad {
		if got, ok := parseCookieDate(s); ok {
			t.Errorf("parseCookieDate(%q) = %v, want failure", s, got)
		}
	}
}

func TestTooLarge(t *testing.T) {
	j, _ := newTestJar(t, nil)
	u := mustURL(t, "https://example.com/")
	if err := j.SetCookie(u, "n="+strings.Repeat("v", 4095)); err != nil {
		t.Fatalf("4096 bytes: %v", err)
	}
	if err := j.SetCookie(u, "n="+strings.Repeat("v", 4096)); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("4097 bytes: %v", err)
	}
	// Over-long attribute values are ignored, not the cookie.
	set(t, j, "https://www.example.com/d/x", "long=1; Path=/"+strings.Repeat("p", 1024)+"; Domain="+strings.Repeat("x", 1025))
	for _, c := range j.All() {
		if c.Name == "long" && (c.Path != "/d" || !c.HostOnly) {
			t.Fatalf("over-long attributes not ignored: %+v", c)
		}
	}
}

func TestDeleteClear(t *testing.T) {
	j, _ := newTestJar(t, nil)
	set(t, j, "https://www.example.com/", "a=1", "a=2; Path=/x", "b=1; Domain=example.com")
	if n := j.Delete("a", "WWW.example.com", "/x"); n != 1 {
		t.Fatalf("Delete path: %d", n)
	}
	if n := j.Delete("a", "www.example.com", ""); n != 1 {
		t.Fatalf("Delete any path: %d", n)
	}
	if n := j.Delete("b", ".example.com", ""); n != 1 || j.Len() != 0 {
		t.Fatalf("Delete domain cookie: %d, Len %d", n, j.Len())
	}
	set(t, j, "https://www.example.com/", "a=1", "b=1")
	j.Clear()
	if j.Len() != 0 || header(t, j, "https://www.example.com/", SameSiteRequest) != "" {
		t.Fatal("Clear left cookies")
	}
	set(t, j, "https://www.example.com/", "a=1")
	if got := header(t, j, "https://www.example.com/", SameSiteRequest); got != "a=1" {
		t.Fatalf("jar after Clear: %q", got)
	}
}

// TestZeroJar: the zero value is an empty jar with default options.
func TestZeroJar(t *testing.T) {
	var j Jar
	if got := header(t, &j, "https://example.com/", SameSiteRequest); got != "" {
		t.Fatalf("empty zero jar sent %q", got)
	}
	set(t, &j, "https://www.example.com/", "a=1; Domain=example.com")
	if err := j.SetCookie(mustURL(t, "https://www.example.com/"), "b=1; Domain=com"); !errors.Is(err, ErrPublicSuffix) {
		t.Fatalf("zero jar public suffix: %v", err)
	}
	if got := header(t, &j, "https://x.example.com/", SameSiteRequest); got != "a=1" {
		t.Fatalf("zero jar: %q", got)
	}
	j.Clear()
	if j.Len() != 0 {
		t.Fatal("Clear")
	}
}
