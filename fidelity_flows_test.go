package guise

import (
	"context"
	"encoding/json"
	"net"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/guise-http/guise/fields"
	"github.com/guise-http/guise/fingerprint"
	"github.com/guise-http/guise/internal/reqhead"
	"github.com/guise-http/guise/profile"
)

// flowRecording is a real browser's visit of the echo server's flow pages,
// as profile/testdata/record/flows.go wrote it.
type flowRecording struct {
	H2 []struct {
		Method  string         `json:"method"`
		Path    string         `json:"path"`
		Headers []fields.Field `json:"headers"`
	} `json:"h2"`
	Heads []string `json:"http1_heads"`
}

// flowFiles maps the profiles with a flow recording to it.
var flowFiles = map[string]string{
	"chrome":  "profile/testdata/recordings/chromium-156-flows.json",
	"firefox": "profile/testdata/recordings/firefox-esr-153-flows.json",
	// Firefox navigated by a user (Marionette): flows.go -activate.
	"firefox-activation": "profile/testdata/recordings/firefox-esr-153-activation.json",
}

func readFlowRecording(t *testing.T, name string) *flowRecording {
	t.Helper()
	b, err := os.ReadFile(flowFiles[name])
	if err != nil {
		t.Fatal(err)
	}
	var f flowRecording
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	return &f
}

// request returns the recorded fields of the browser's first method
// request to path (HTTP/1.1: Host included).
func (f *flowRecording) request(t *testing.T, h2 bool, method, path string) fields.Header {
	t.Helper()
	if h2 {
		for _, q := range f.H2 {
			if q.Method == method && q.Path == path {
				return q.Headers
			}
		}
	} else {
		for _, head := range f.Heads {
			q, err := fingerprint.ParseHTTP1Request([]byte(head))
			if err != nil {
				t.Fatal(err)
			}
			if q.Method == method && q.Target == path {
				return q.Header
			}
		}
	}
	t.Fatalf("the recording has no %s %s (h2 %v)", method, path, h2)
	return nil
}

// flowCall is one request guise makes to the echo server's flow pages.
type flowCall struct {
	kind   profile.RequestKind
	method string
	path   string
	header Header // the caller's fields
	body   string
	// noReferrer leaves Request.Referrer empty (a typed navigation);
	// every other call comes from the flow page.
	noReferrer bool
	scripted   bool // Request.Scripted
}

// sendFlows makes the calls, in order, on one Session of profile name with
// the cookie guise_flow=1 in its jar, to a fresh echo server reached as
// fp.test, over h2 (https) or HTTP/1.1 (plain http), every call not marked
// noReferrer with the flow page as its referrer. It returns the origin
// and the fields the server received per call, in wire order and case.
func sendFlows(t *testing.T, name string, h2 bool, calls []flowCall) (string, []fields.Header) {
	t.Helper()
	e := newEchoSession(t, name, h2)
	s, origin := e.s, e.origin
	u, _ := url.Parse(origin + "/")
	s.Cookies().SetCookies(u, []string{fingerprint.FlowCookie + "; Path=/"})
	for _, c := range calls {
		req := &Request{Method: c.method, URL: origin + c.path, Kind: c.kind, Header: c.header, Scripted: c.scripted}
		if !c.noReferrer {
			req.Referrer = origin + "/flow/"
		}
		if c.body != "" {
			req.Body = strings.NewReader(c.body)
		}
		resp, err := s.Do(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := resp.Bytes(); err != nil {
			t.Fatal(err)
		}
		if want := map[bool]string{true: "HTTP/2.0", false: "HTTP/1.1"}[h2]; resp.Proto != want || resp.StatusCode != 200 {
			t.Fatalf("%s %s: %d %s, want 200 %s", c.method, c.path, resp.StatusCode, resp.Proto, want)
		}
	}
	return origin, e.received(t, len(calls))
}

// echoSession is a Session of one profile talking to a fresh echo server
// reached as fp.test, over h2 (https) or HTTP/1.1 (plain http).
type echoSession struct {
	s      *Session
	srv    *fingerprint.Server
	origin string // scheme://fp.test:port
}

// newEchoSession starts the echo server and the Session; both end with
// the test.
func newEchoSession(t *testing.T, profile string, h2 bool) *echoSession {
	t.Helper()
	srv := &fingerprint.Server{}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	_, port, _ := net.SplitHostPort(srv.ListenAddr())
	e := &echoSession{srv: srv, origin: "http://fp.test:" + port}
	if h2 {
		e.origin = "https://fp.test:" + port
	}
	addr := srv.ListenAddr()
	var d net.Dialer
	e.s = &Session{Profile: profile, RootCAs: srv.CertPool(), Transport: &Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, addr)
		}}}
	t.Cleanup(func() { e.s.Transport.Close() })
	return e
}

// received ends the session and the server and returns the fields of the
// requests the server saw, in wire order and case; there must be n.
func (e *echoSession) received(t *testing.T, n int) []fields.Header {
	t.Helper()
	e.s.Transport.Close()
	e.srv.Close()
	var got []fields.Header
	for _, rec := range e.srv.Records() {
		for _, q := range rec.HTTPRequests() {
			got = append(got, q.Header)
		}
	}
	if len(got) != n {
		t.Fatalf("the server saw %d requests, want %d", len(got), n)
	}
	return got
}

func names(h fields.Header) []string {
	out := make([]string, len(h))
	for i, f := range h {
		out[i] = f.Name
	}
	return out
}

// sameOrder compares field names in order and case. Firefox leaves
// Priority out for a script at the end of a page's body and sends it for
// one in <head>: the flow recording has the first, the profile the
// second, so a Priority on one side only is not a difference.
func sameOrder(got, want []string) bool {
	if slices.Contains(got, "priority") != slices.Contains(want, "priority") {
		got = slices.DeleteFunc(slices.Clone(got), func(n string) bool { return n == "priority" })
		want = slices.DeleteFunc(slices.Clone(want), func(n string) bool { return n == "priority" })
	}
	return slices.Equal(got, want)
}

// withoutUserActivation returns g, what guise sent for a navigation,
// without Sec-Fetch-User when the browser's recorded request (want) has
// none, after checking that guise put it where the browser puts it on a
// user's navigation (Chrome: after Sec-Fetch-Mode, as in its typed
// navigation; Firefox: after Sec-Fetch-Site, as in
// profile/testdata/recordings/firefox-esr-153-activation.json). The
// recorded requests without it were made by script or by a headless run
// from the command line, without user activation; guise's navigations are
// a user's.
func withoutUserActivation(t *testing.T, browser, path string, g, want []string) []string {
	t.Helper()
	isUser := func(n string) bool { return fields.EqualFold(n, "sec-fetch-user") }
	if slices.ContainsFunc(want, isUser) {
		return g
	}
	after := map[string]string{"chrome": "sec-fetch-mode", "firefox": "sec-fetch-site"}[browser]
	j := slices.IndexFunc(g, isUser)
	if j < 1 || !fields.EqualFold(g[j-1], after) {
		t.Errorf("%s %s: sec-fetch-user at %d in %v, want right after %s", browser, path, j, g, after)
		return g
	}
	return slices.Delete(slices.Clone(g), j, j+1)
}

// TestCookieOrderMatchesRecordings: a request whose session jar has a
// cookie goes out with the header order the real browser sent when it had
// one (profile/testdata/recordings/*-flows.json), Cookie at the recorded
// place, for each request kind, over h2 and HTTP/1.1; a navigation with a
// referrer has Referer at the recorded place too.
func TestCookieOrderMatchesRecordings(t *testing.T) {
	calls := []flowCall{
		{kind: profile.Navigate, method: "GET", path: fingerprint.FlowNav, noReferrer: true},
		{kind: profile.Subresource, method: "GET", path: "/flow/app.js"},
		{kind: profile.Image, method: "GET", path: "/flow/img.png"},
		{kind: profile.Fetch, method: "GET", path: "/flow/fetch"},
		{kind: profile.Navigate, method: "GET", path: "/flow/linked"},
	}
	for _, name := range []string{"chrome", "firefox"} {
		rec := readFlowRecording(t, name)
		t.Run(name, func(t *testing.T) {
			run(t, func(t *testing.T, m mode) {
				h2 := m == modeH2
				_, got := sendFlows(t, name, h2, calls)
				for i, c := range calls {
					want := names(rec.request(t, h2, c.method, c.path))
					g := names(got[i])
					if c.kind == profile.Navigate {
						g = withoutUserActivation(t, name, c.path, g, want)
					}
					if !sameOrder(g, want) {
						t.Errorf("%v %s:\n got %v\nwant %v", c.kind, c.path, g, want)
					}
					if v := got[i].Get("cookie"); v != fingerprint.FlowCookie {
						t.Errorf("%v %s: cookie %q, want %q", c.kind, c.path, v, fingerprint.FlowCookie)
					}
				}
			})
		})
	}
}

// TestBodyOrderMatchesRecordings: requests with a body go out as the real
// browser sent them (profile/testdata/recordings/*-flows.json): a fetch()
// POST of text with the browser's Content-Type, one of JSON with the
// caller's, and a form submission (a navigation POST), each with
// Content-Length, Origin (the referring page's origin) and, for Chrome's
// form, Cache-Control at the recorded places, over h2 and HTTP/1.1.
func TestBodyOrderMatchesRecordings(t *testing.T) {
	calls := []flowCall{
		{kind: profile.Fetch, method: "POST", path: "/flow/post-text", body: fingerprint.FlowTextBody},
		{kind: profile.Fetch, method: "POST", path: "/flow/post-json", body: fingerprint.FlowJSONBody,
			header: Header{{Name: "Content-Type", Value: "application/json"}}},
		{kind: profile.Navigate, method: "POST", path: "/flow/form", body: fingerprint.FlowFormBody},
	}
	for _, name := range []string{"chrome", "firefox"} {
		rec := readFlowRecording(t, name)
		t.Run(name, func(t *testing.T) {
			run(t, func(t *testing.T, m mode) {
				h2 := m == modeH2
				origin, got := sendFlows(t, name, h2, calls)
				for i, c := range calls {
					recorded := rec.request(t, h2, c.method, c.path)
					g := names(got[i])
					if c.kind == profile.Navigate {
						g = withoutUserActivation(t, name, c.path, g, names(recorded))
					}
					if want := names(recorded); !slices.Equal(g, want) {
						t.Errorf("%v %s %s:\n got %v\nwant %v", c.kind, c.method, c.path, g, want)
					}
					for _, f := range []string{"content-type", "content-length", "cache-control"} {
						if v, w := got[i].Get(f), recorded.Get(f); v != w {
							t.Errorf("%s: %s %q, the browser sent %q", c.path, f, v, w)
						}
					}
					if v := got[i].Get("origin"); v != origin {
						t.Errorf("%s: origin %q, want %q", c.path, v, origin)
					}
				}
			})
		})
	}
}

// TestBodyHeaderOrigin: Origin of a request with a body comes from its
// Referer, else from the request's own origin when the caller of
// appendHeader knows it; a caller's Origin stands; a request without a body,
// or of a kind with no body variant, gets none; Content-Length fills its
// slot only for a known length.
func TestBodyHeaderOrigin(t *testing.T) {
	c, err := compile("chrome")
	if err != nil {
		t.Fatal(err)
	}
	ref := fields.Header{{Name: "Referer", Value: "https://a.example:8443/page?q#f"}}
	for _, tc := range []struct {
		name         string
		kind         profile.RequestKind
		user, extra  fields.Header
		length       int64
		origin       string
		wantOrigin   string
		wantLength   string
		wantCacheCtl bool
	}{
		{"from referer", profile.Fetch, nil, ref, 3, "https://b.example", "https://a.example:8443", "3", false},
		{"from request", profile.Fetch, nil, nil, 3, "https://b.example", "https://b.example", "3", false},
		{"unknown", profile.Fetch, nil, nil, 3, "", "", "3", false},
		{"caller's", profile.Fetch, fields.Header{{Name: "Origin", Value: "null"}}, ref, 3, "", "null", "3", false},
		{"caller's referer", profile.Navigate, fields.Header{{Name: "Referer", Value: "http://c.example/x"}}, nil, 3, "", "http://c.example", "3", true},
		{"unknown length", profile.Navigate, nil, ref, -1, "", "https://a.example:8443", "", true},
		{"no body", profile.Fetch, nil, ref, 0, "https://b.example", "", "", false},
		{"image", profile.Image, nil, ref, 3, "https://b.example", "", "3", false},
	} {
		for _, proto := range []profile.Proto{profile.HTTP1, profile.H2} {
			method := "POST"
			if tc.length == 0 {
				method = "GET"
			}
			h, err := c.appendHeader(nil, &reqhead.Request{Proto: proto, Kind: tc.kind, Method: method, Header: tc.user, Extra: tc.extra,
				ContentLength: tc.length, Origin: &tc.origin})
			if err != nil {
				t.Fatal(err)
			}
			if v := h.Get("origin"); v != tc.wantOrigin {
				t.Errorf("%s/%s: origin %q, want %q", tc.name, proto, v, tc.wantOrigin)
			}
			cl := h.Get("content-length")
			if proto == profile.HTTP1 && tc.kind == profile.Image {
				cl = "3" // the h1 engine appends it
			}
			if cl != tc.wantLength {
				t.Errorf("%s/%s: content-length %q, want %q", tc.name, proto, cl, tc.wantLength)
			}
			if got := h.Has("cache-control"); got != tc.wantCacheCtl {
				t.Errorf("%s/%s: cache-control %v, want %v", tc.name, proto, got, tc.wantCacheCtl)
			}
		}
	}
}

// TestRequestOrigin: the origin the request path gives appendHeader is the
// URL's scheme and authority as the Origin field serialises them (no
// default port, host in lower case).
func TestRequestOrigin(t *testing.T) {
	for _, tc := range []struct {
		url  string
		want string
	}{
		{"https://Fp.Test:443/form", "https://fp.test"},
		{"https://fp.test:8443/form?q", "https://fp.test:8443"},
		{"http://[::1]:80/", "http://[::1]"},
	} {
		u, err := (&Request{URL: tc.url}).parse()
		if err != nil {
			t.Fatal(err)
		}
		if u.origin != tc.want {
			t.Errorf("origin of %s = %q, want %q", tc.url, u.origin, tc.want)
		}
	}
}

// TestHeaderAllocs pins the allocations of assembling a request's fields:
// none for a GET or a small POST into a buffer with room, one (the length's
// digits) for a POST of 100 bytes or more.
func TestHeaderAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under -race")
	}
	c, err := compile("chrome")
	if err != nil {
		t.Fatal(err)
	}
	extra := fields.Header{{Name: "Cookie", Value: "a=1"}, {Name: "Referer", Value: "https://fp.test/page"}}
	dst := make(fields.Header, 0, 32)
	for _, tc := range []struct {
		kind   profile.RequestKind
		method string
		length int64
		want   float64
	}{
		{profile.Navigate, "GET", 0, 0},
		{profile.Fetch, "POST", 5, 0},
		{profile.Fetch, "POST", 0, 0},
		{profile.Navigate, "POST", 12345, 1},
	} {
		for _, proto := range []profile.Proto{profile.HTTP1, profile.H2} {
			n := testing.AllocsPerRun(100, func() {
				r := reqhead.Request{Proto: proto, Kind: tc.kind, Method: tc.method, Extra: extra, ContentLength: tc.length, Origin: &testOrigin}
				if _, err := c.appendHeader(dst[:0], &r); err != nil {
					t.Fatal(err)
				}
			})
			if n > tc.want {
				t.Errorf("%v %s length %d over %s: %v allocations, want %v", tc.kind, tc.method, tc.length, proto, n, tc.want)
			}
		}
	}
}

func BenchmarkHeaderPOST(b *testing.B) {
	c, err := compile("chrome")
	if err != nil {
		b.Fatal(err)
	}
	extra := fields.Header{{Name: "Cookie", Value: "a=1"}, {Name: "Referer", Value: "https://fp.test/page"}}
	user := fields.Header{{Name: "Content-Type", Value: "application/json"}}
	dst := make(fields.Header, 0, 32)
	b.ReportAllocs()
	for b.Loop() {
		dst, _ = c.appendHeader(dst[:0], &reqhead.Request{Proto: profile.H2, Kind: profile.Fetch, Method: "POST", Header: user, Extra: extra,
			ContentLength: 42, Origin: &testOrigin})
	}
}

// TestScriptedNavigationMatchesRecordings: navigations marked Scripted go
// out exactly as the browsers sent the flow page's scripted ones
// (profile/testdata/recordings/*-flows.json): the navigation to
// /flow/linked and the form submission, without Sec-Fetch-User, in the
// recorded order, over h2 and HTTP/1.1; and so does Firefox's typed
// navigation of the headless run, which had no user activation either.
func TestScriptedNavigationMatchesRecordings(t *testing.T) {
	for _, name := range []string{"chrome", "firefox"} {
		rec := readFlowRecording(t, name)
		calls := []flowCall{
			{kind: profile.Navigate, method: "GET", path: "/flow/linked", scripted: true},
			{kind: profile.Navigate, method: "POST", path: "/flow/form", body: fingerprint.FlowFormBody, scripted: true},
		}
		if name == "firefox" {
			calls = append(calls, flowCall{kind: profile.Navigate, method: "GET", path: fingerprint.FlowNav, noReferrer: true, scripted: true})
		}
		for _, h2 := range []bool{true, false} {
			t.Run(name+map[bool]string{true: "/h2", false: "/h1"}[h2], func(t *testing.T) {
				_, got := sendFlows(t, name, h2, calls)
				for i, c := range calls {
					want := names(rec.request(t, h2, c.method, c.path))
					if g := names(got[i]); !slices.Equal(g, want) {
						t.Errorf("%s %s:\n got %v\nwant %v", c.method, c.path, g, want)
					}
					if got[i].Has("sec-fetch-user") {
						t.Errorf("%s %s: a scripted navigation sent Sec-Fetch-User", c.method, c.path)
					}
				}
			})
		}
	}
}

// TestH2CallerFieldNames: over HTTP/2 the template goes out as compiled
// (lower case), a caller's field that takes a template field's place gets
// its name, and the caller's and guise's other fields are lower-cased,
// those HTTP/2 forbids dropped, in their order after the template's.
func TestH2CallerFieldNames(t *testing.T) {
	for _, name := range []string{"chrome", "firefox"} {
		c, err := compile(name)
		if err != nil {
			t.Fatal(err)
		}
		user := fields.Header{{Name: "Accept-Language", Value: "de"}, {Name: "X-Custom", Value: "1"},
			{Name: "Connection", Value: "close"}, {Name: "X-Other", Value: "2"}}
		extra := fields.Header{{Name: "Host", Value: "fp.test"}, {Name: "X-Guise", Value: "3"}}
		h, err := c.appendHeader(nil, &reqhead.Request{Proto: profile.H2, Kind: profile.Navigate, Header: user, Extra: extra, Origin: &testOrigin})
		if err != nil {
			t.Fatal(err)
		}
		tpl := c.p.HeaderSet(profile.Navigate, profile.H2).Header
		n := 0
		for _, f := range h {
			if f.Name != strings.ToLower(f.Name) {
				t.Errorf("%s: field %q not lower case", name, f.Name)
			}
			switch f.Name {
			case "host", "connection":
				t.Errorf("%s: %q sent over HTTP/2", name, f.Name)
			case "accept-language":
				if f.Value != "de" {
					t.Errorf("%s: accept-language %q, want the caller's", name, f.Value)
				}
			}
			if tpl.Has(f.Name) {
				n++
			}
		}
		if got, want := h[len(h)-3:], (fields.Header{{Name: "x-custom", Value: "1"}, {Name: "x-other", Value: "2"}, {Name: "x-guise", Value: "3"}}); !slices.Equal(got, want) {
			t.Errorf("%s: last fields %q, want %q", name, got, want)
		}
		if n != len(h)-3 {
			t.Errorf("%s: %d of %d fields from the template, want all but the last 3", name, n, len(h))
		}
	}
}
