package fingerprint

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/guise-http/guise/fields"
	"github.com/guise-http/guise/profile"
)

// sharedRecords decodes the first real-browser recordings, the ones in
// testdata/recordings/<dir> (see testdata/recordings/README.md).
func sharedRecords(t *testing.T, dir string) []*ConnRecord {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "recordings", dir, "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no recordings in %s: %v", dir, err)
	}
	var recs []*ConnRecord
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		r, err := DecodeRecord(b)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		recs = append(recs, r)
	}
	return recs
}

// checkProfileRoundTrip asserts that what capture writes is exactly what
// the profile loader reads back.
func checkProfileRoundTrip(t *testing.T, p *profile.Profile) {
	t.Helper()
	b, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	back, err := profile.Parse(b)
	if err != nil {
		t.Fatalf("profile.Parse of capture output: %v", err)
	}
	if !reflect.DeepEqual(back, p) {
		t.Fatalf("profile does not round-trip:\n got %+v\nwant %+v", back, p)
	}
}

func TestBuildProfileFromSharedRecordings(t *testing.T) {
	for _, c := range []struct{ dir, name, embedded string }{
		{"chromium-156", "chrome156-linux", "chrome156-linux"},
		{"firefox-esr-153", "firefox153-linux", "firefox153-linux"},
	} {
		t.Run(c.dir, func(t *testing.T) {
			recs := sharedRecords(t, c.dir)
			p, err := BuildProfile(recs, "")
			if err != nil {
				t.Fatal(err)
			}
			if p.Name != c.name || !p.Recorded {
				t.Fatalf("name %q recorded %v", p.Name, p.Recorded)
			}
			checkProfileRoundTrip(t, p)
			// The embedded profile was generated from the same browser: the
			// wire format must agree (header values differ: desktop Chrome).
			want, err := profile.Lookup(c.embedded)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(p.HTTP2.Settings, want.HTTP2.Settings) || p.HTTP2.ConnWindowUpdate != want.HTTP2.ConnWindowUpdate ||
				p.HTTP2.FirstStreamID != want.HTTP2.FirstStreamID || !slices.Equal(p.HTTP2.PseudoOrder, want.HTTP2.PseudoOrder) ||
				p.HTTP2.StreamWindowUpdate != want.HTTP2.StreamWindowUpdate {
				t.Errorf("http2 %+v, embedded %+v", p.HTTP2, want.HTTP2)
			}
			for _, k := range []profile.RequestKind{profile.Navigate, profile.Fetch, profile.Subresource, profile.Image} {
				got, exp := p.HeaderSet(k, profile.H2), want.HeaderSet(k, profile.H2)
				if got == nil || exp == nil {
					t.Fatalf("%v: set %v, embedded %v", k, got, exp)
				}
				// The first recordings (testdata/recordings/*/) carry no cookie and their navigation
				// no referer; the embedded sets have the placeholders the
				// flow recordings place.
				var en []string
				for _, f := range exp.Header {
					if f.Value != "" || got.Header.Has(f.Name) {
						en = append(en, f.Name)
					}
				}
				if k == profile.Navigate {
					en = withoutUnrecordedActivation(names(got.Header), en)
				}
				if !slices.Equal(names(got.Header), en) {
					t.Errorf("%v: order %q, embedded %q", k, names(got.Header), en)
				}
				gp, _ := p.Priority(k)
				ep, _ := want.Priority(k)
				if gp.Exclusive != ep.Exclusive || gp.DependsOn != ep.DependsOn {
					t.Errorf("%v: priority %+v, embedded %+v", k, gp, ep)
				}
			}
			if c.dir == "chromium-156" && !p.TLS.ShuffleExtensions {
				t.Error("chromium's three hellos differ in extension order, shuffle not detected")
			}
			if c.dir == "firefox-esr-153" && p.TLS.ShuffleExtensions {
				t.Error("firefox's extension order is fixed, shuffle detected")
			}
			if !slices.Equal(p.TLS.ECHAEADs, want.TLS.ECHAEADs) || !slices.Equal(p.TLS.ECHPayloadLengths, want.TLS.ECHPayloadLengths) {
				t.Errorf("ech aeads %v lengths %v, embedded %v %v", p.TLS.ECHAEADs, p.TLS.ECHPayloadLengths, want.TLS.ECHAEADs, want.TLS.ECHPayloadLengths)
			}
		})
	}
}

func names(h []fields.Field) []string {
	out := make([]string, len(h))
	for i, f := range h {
		out[i] = f.Name
	}
	return out
}

func TestBuildProfileErrors(t *testing.T) {
	if _, err := BuildProfile(nil, ""); !errors.Is(err, ErrNoNavigation) {
		t.Fatalf("no records: %v", err)
	}
	recs := sharedRecords(t, "firefox-esr-153")
	for _, bad := range []string{"firefox", "153-linux", "netscape4-linux", "firefox153-beos", "firefox0-linux"} {
		if _, err := BuildProfile(recs, bad); err == nil {
			t.Errorf("name %q accepted", bad)
		}
	}
	p, err := BuildProfile(recs, "firefox154-windows")
	if err != nil || p.Name != "firefox154-windows" || p.OS != profile.Windows || p.Version != 154 {
		t.Fatalf("explicit name: %v %+v", err, p)
	}
}

func TestParseUserAgent(t *testing.T) {
	for _, c := range []struct {
		ua string
		b  profile.Browser
		v  int
		os profile.OS
	}{
		{"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.0.0 Safari/537.36", profile.Chrome, 156, profile.Linux},
		{"Mozilla/5.0 (X11; Linux x86_64; rv:153.0) Gecko/20100101 Firefox/153.0", profile.Firefox, 153, profile.Linux},
		{"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36 Edg/156.0.0.0", profile.Edge, 156, profile.Windows},
		{"Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.4 Safari/605.1.15", profile.Safari, 18, profile.MacOS},
		{"Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Mobile Safari/537.36", profile.Chrome, 156, profile.Android},
	} {
		b, v, os, err := parseUserAgent(c.ua)
		if err != nil || b != c.b || v != c.v || os != c.os {
			t.Errorf("%q: %v %d %v %v", c.ua, b, v, os, err)
		}
	}
	if _, _, _, err := parseUserAgent("curl/8.0"); err == nil {
		t.Error("curl accepted as a browser")
	}
}

func TestWaitCaptureIncomplete(t *testing.T) {
	s := startServer(t, nil)
	tr := transport(t, s, true, nil)
	get(t, tr, "https://fp.test/api/fetch", map[string][]string{"sec-fetch-mode": {"cors"}, "sec-fetch-dest": {"empty"}})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	recs, err := s.WaitCapture(ctx, Want{HTTP1: true, Resumed: true})
	var ce *CaptureError
	if !errors.As(err, &ce) || !errors.Is(err, ErrIncomplete) {
		t.Fatalf("err %v", err)
	}
	want := []string{"h2 navigate", "h2 subresource", "h2 image", "http/1.1 navigate", "http/1.1 fetch", "http/1.1 subresource", "http/1.1 image", "resumed connection"}
	if !slices.Equal(ce.Missing, want) || len(recs) != 1 {
		t.Fatalf("missing %q (%d records), want %q", ce.Missing, len(recs), want)
	}
}

// browserHeads are request heads as a browser sends them for each kind,
// used to drive a complete capture with a Go client.
var browserHeads = []struct {
	path string
	hdr  [][2]string
}{
	{"/", [][2]string{{"user-agent", "Mozilla/5.0 (X11; Linux x86_64; rv:999.0) Gecko/20100101 Firefox/999.0"}, {"accept", "text/html"}, {"sec-fetch-dest", "document"}, {"sec-fetch-mode", "navigate"}, {"sec-fetch-user", "?1"}, {"sec-fetch-site", "none"}}},
	{"/app.js", [][2]string{{"user-agent", "x"}, {"accept", "*/*"}, {"referer", "https://fp.test/"}, {"sec-fetch-dest", "script"}, {"sec-fetch-mode", "no-cors"}, {"sec-fetch-site", "same-origin"}}},
	{"/pixel.png", [][2]string{{"user-agent", "x"}, {"accept", "image/*"}, {"sec-fetch-dest", "image"}, {"sec-fetch-mode", "no-cors"}, {"sec-fetch-site", "same-origin"}}},
	{"/api/fetch", [][2]string{{"user-agent", "x"}, {"accept", "*/*"}, {"sec-fetch-dest", "empty"}, {"sec-fetch-mode", "cors"}, {"sec-fetch-site", "same-origin"}}},
}

func TestCaptureGoClientToProfile(t *testing.T) {
	s := startServer(t, nil)
	settings := []h2Setting{{1, 65536}, {2, 0}, {4, 131072}, {5, 16384}}
	for _, bh := range browserHeads {
		hdr := append([][2]string{{":method", "GET"}, {":path", bh.path}, {":authority", "fp.test"}, {":scheme", "https"}}, bh.hdr...)
		h2Raw(t, s, settings, 12517377, hdr)
	}
	// The flow page's fetch() POST and form submission, which the body
	// sets come from; the form has no Sec-Fetch-User (a script submitted
	// it) and gets the navigation's, after Sec-Fetch-Mode as there.
	// Cookie comes as two fields (crumbs, as Chrome sends it over h2); the
	// set keeps one.
	for _, bh := range []struct {
		path string
		hdr  [][2]string
	}{
		{"/flow/post-text", [][2]string{{"content-length", "5"}, {"user-agent", "x"}, {"content-type", "text/plain;charset=UTF-8"}, {"accept", "*/*"}, {"origin", "https://fp.test"}, {"sec-fetch-site", "same-origin"}, {"sec-fetch-mode", "cors"}, {"sec-fetch-dest", "empty"}, {"referer", "https://fp.test/flow/"}, {"cookie", "a=1"}, {"cookie", "b=2"}}},
		{"/flow/form", [][2]string{{"content-length", "5"}, {"cache-control", "max-age=0"}, {"origin", "https://fp.test"}, {"content-type", "application/x-www-form-urlencoded"}, {"user-agent", "x"}, {"sec-fetch-site", "same-origin"}, {"sec-fetch-mode", "navigate"}, {"sec-fetch-dest", "document"}, {"referer", "https://fp.test/flow/"}}},
	} {
		hdr := append([][2]string{{":method", "POST"}, {":path", bh.path}, {":authority", "fp.test"}, {":scheme", "https"}}, bh.hdr...)
		h2RawBody(t, s, settings, 12517377, hdr, []byte("hello"))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	recs, err := s.WaitCapture(ctx, Want{Body: true})
	if err != nil {
		t.Fatal(err)
	}
	p, err := BuildProfile(recs, "")
	if err != nil {
		t.Fatal(err)
	}
	checkProfileRoundTrip(t, p)
	// The plain sets come from the GETs only.
	if f := p.HeaderSet(profile.Fetch, profile.H2); f == nil || f.Header.Has("content-type") {
		t.Errorf("plain fetch set %+v", f)
	}
	post := p.BodyHeaderSet(profile.Fetch, profile.H2)
	if post == nil {
		t.Fatal("no fetch set with a body")
	}
	if want := []string{"content-length", "user-agent", "content-type", "accept", "origin", "sec-fetch-site", "sec-fetch-mode", "sec-fetch-dest", "referer", "cookie"}; !slices.Equal(names(post.Header), want) {
		t.Errorf("fetch body set %q, want %q", names(post.Header), want)
	}
	if want := []string{"content-length", "origin", "sec-fetch-site", "referer", "cookie"}; !slices.Equal(post.PerRequest, want) {
		t.Errorf("fetch body set per request %q, want %q", post.PerRequest, want)
	}
	for _, f := range post.Header {
		if v := f.Value; (slices.Contains(post.PerRequest, f.Name) && f.Name != "sec-fetch-site") != (v == "") {
			t.Errorf("fetch body set: %s = %q", f.Name, v)
		}
	}
	if v := post.Header.Get("content-type"); v != "text/plain;charset=UTF-8" {
		t.Errorf("fetch body set content-type %q", v)
	}
	form := p.BodyHeaderSet(profile.Navigate, profile.H2)
	if form == nil {
		t.Fatal("no navigation set with a body")
	}
	if want := []string{"content-length", "cache-control", "origin", "content-type", "user-agent", "sec-fetch-site", "sec-fetch-mode", "sec-fetch-user", "sec-fetch-dest", "referer"}; !slices.Equal(names(form.Header), want) {
		t.Errorf("form set %q, want %q", names(form.Header), want)
	}
	// Without an http/1.1 visit, the http/1.1 sets are the embedded
	// Firefox's, with the recorded browser's own User-Agent.
	if h1 := p.BodyHeaderSet(profile.Fetch, profile.HTTP1); h1 == nil || p.Fallback != "firefox153-linux" ||
		!slices.Contains(p.Filled(), "http/1.1 fetch with a body") || h1.Header.Get("User-Agent") != post.Header.Get("user-agent") {
		t.Errorf("http/1.1 fetch set with a body %+v from fallback %q (filled %q)", h1, p.Fallback, p.Filled())
	}
	if slices.Contains(p.Filled(), "h2 fetch with a body") {
		t.Error("a recorded set listed as filled")
	}
	if r := p.Reference; r == nil || !strings.HasPrefix(r.JA4, "t13") || r.Akamai == "" || len(r.HeaderOrder) == 0 {
		t.Errorf("reference %+v", r)
	}
	if p.Name != "firefox999-linux" || p.HTTP2.ConnWindowUpdate != 12517377 || p.HTTP2.FirstStreamID != 1 {
		t.Fatalf("profile %+v", p)
	}
	if want := []string{":method", ":path", ":authority", ":scheme"}; !slices.Equal(p.HTTP2.PseudoOrder, want) {
		t.Errorf("pseudo order %q", p.HTTP2.PseudoOrder)
	}
	sub := p.HeaderSet(profile.Subresource, profile.H2)
	if sub == nil || !slices.Equal(sub.PerRequest, []string{"referer", "sec-fetch-site"}) || sub.Header[2].Value != "" {
		t.Errorf("subresource set %+v", sub)
	}
	if kp, ok := p.Priority(profile.Navigate); !ok || !kp.Exclusive || kp.Weight != 256 || kp.DependsOn != profile.LatestOpen {
		t.Errorf("navigate priority %+v", kp)
	}
}

func TestBodyHeaderSetNeedsBodyFields(t *testing.T) {
	full := []fields.Field{{Name: "content-length", Value: "1"}, {Name: "origin", Value: "https://a"}, {Name: "content-type", Value: "text/plain"}}
	if _, err := BodyHeaderSet(profile.Fetch, profile.H2, full, nil); err != nil {
		t.Fatal(err)
	}
	for i := range full {
		rec := slices.Delete(slices.Clone(full), i, i+1)
		if _, err := BodyHeaderSet(profile.Fetch, profile.H2, rec, nil); err == nil {
			t.Errorf("no error without %s", full[i].Name)
		}
	}
}

func TestWaitCaptureBodyMissing(t *testing.T) {
	s := startServer(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := s.WaitCapture(ctx, Want{Body: true, HTTP1: true})
	var ce *CaptureError
	if !errors.As(err, &ce) {
		t.Fatalf("err %v", err)
	}
	want := []string{"h2 navigate", "h2 fetch", "h2 subresource", "h2 image", "h2 fetch with a body", "h2 navigate with a body",
		"http/1.1 navigate", "http/1.1 fetch", "http/1.1 subresource", "http/1.1 image", "http/1.1 fetch with a body", "http/1.1 navigate with a body"}
	if !slices.Equal(ce.Missing, want) {
		t.Fatalf("missing %q, want %q", ce.Missing, want)
	}
}

// TestEmbeddedOf checks the fallback a capture names: the browser's
// profile on the captured OS, else on its home OS, else on any.
func TestEmbeddedOf(t *testing.T) {
	for _, tc := range []struct {
		b    profile.Browser
		os   profile.OS
		want string
	}{
		{profile.Chrome, profile.Windows, "chrome156-windows"},
		{profile.Firefox, profile.Android, "firefox153-linux"},
		{profile.Safari, profile.IOS, "safari26-ios"}, // the newest of the browser on that OS
	} {
		if p := embeddedOf(tc.b, tc.os); p == nil || p.Name != tc.want {
			t.Errorf("embeddedOf(%v, %v) = %v, want %s", tc.b, tc.os, p, tc.want)
		}
	}
	if p := embeddedOf(profile.Edge, profile.Linux); p == nil || p.Browser != profile.Edge {
		t.Errorf("embeddedOf(edge, linux) = %v, want an Edge profile", p)
	}
}
