package fingerprint

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/guise-http/guise/fields"
	"github.com/guise-http/guise/profile"
)

// TestFlowPages walks the flow as a browser does: the start sets the
// cookie and redirects to the page, which carries it; the page names its
// script and form; the form is answered; and the wait image no longer
// waits once the form came; likewise the nav page's image once the linked
// page was asked for.
func TestFlowPages(t *testing.T) {
	s := startServer(t, nil)
	base := "http://" + s.ListenAddr()
	jar, _ := cookiejar.New(nil)
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	c := &http.Client{Jar: jar, Transport: tr, Timeout: 3 * time.Second}
	get := func(method, path, body string) string {
		t.Helper()
		req, _ := http.NewRequestWithContext(context.Background(), method, base+path, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("%s %s: %d", method, path, resp.StatusCode)
		}
		return string(b)
	}
	page := get("GET", FlowStart, "")
	for _, want := range []string{`src="/flow/app.js"`, `action="/flow/form"`, `src="/flow/wait.png"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the flow page lacks %s", want)
		}
	}
	if js := get("GET", "/flow/app.js", ""); !strings.Contains(js, "/flow/post-json") || !strings.Contains(js, ".submit()") {
		t.Errorf("the flow script does not POST and submit:\n%s", js)
	}
	get("POST", "/flow/form", FlowFormBody)
	get("GET", "/flow/wait.png", "") // the client's 3 s timeout fails a wait of 5 s
	if nav := get("GET", FlowNav, ""); !strings.Contains(nav, `"/flow/linked"`) || !strings.Contains(nav, `src="/flow/nav-wait.png"`) {
		t.Errorf("the nav page does not navigate on, held by its image:\n%s", nav)
	}
	get("GET", "/flow/linked", "")
	get("GET", "/flow/nav-wait.png", "")
	tr.CloseIdleConnections()
	var heads []string
	for _, r := range s.Records() {
		for _, q := range r.HTTPRequests() {
			heads = append(heads, q.Method+" "+q.Target+" cookie="+fields.Header(q.Header).Get("cookie"))
		}
	}
	want := []string{
		"GET /flow/start cookie=",
		"GET /flow/ cookie=" + FlowCookie,
		"GET /flow/app.js cookie=" + FlowCookie,
		"POST /flow/form cookie=" + FlowCookie,
		"GET /flow/wait.png cookie=" + FlowCookie,
		"GET /flow/nav cookie=" + FlowCookie,
		"GET /flow/linked cookie=" + FlowCookie,
		"GET /flow/nav-wait.png cookie=" + FlowCookie,
	}
	if !slices.Equal(heads, want) {
		t.Errorf("requests\n got %q\nwant %q", heads, want)
	}
}

// flowFile is the part of a *-flows.json recording these tests read.
type flowFile struct {
	H2 []struct {
		Method  string         `json:"method"`
		Path    string         `json:"path"`
		Headers []fields.Field `json:"headers"`
	} `json:"h2"`
	Heads []string `json:"http1_heads"`
}

// recordedOrder returns the field names of the first method request to
// path in the recording (HTTP/1.1 with Host), or nil.
func (f *flowFile) recordedOrder(h2 bool, method, path string) []string {
	var h []fields.Field
	if h2 {
		for _, q := range f.H2 {
			if q.Method == method && q.Path == path {
				h = q.Headers
				break
			}
		}
	} else {
		for _, head := range f.Heads {
			if q, err := ParseHTTP1Request([]byte(head)); err == nil && q.Method == method && q.Target == path {
				h = q.Header
				break
			}
		}
	}
	var out []string
	for _, fl := range h {
		out = append(out, fl.Name)
	}
	return out
}

// TestFlowRecordingsMatchProfiles: the Cookie position in the chrome and
// firefox profiles is the one the browsers were recorded sending
// (profile/testdata/recordings/*-flows.json), and their body sets are the
// recorded POSTs; see checkFlows.
func TestFlowRecordingsMatchProfiles(t *testing.T) {
	for _, tc := range []struct{ profile, file string }{
		{"chrome156-linux", "chromium-156-flows.json"},
		{"firefox153-linux", "firefox-esr-153-flows.json"},
	} {
		b, err := os.ReadFile("../profile/testdata/recordings/" + tc.file)
		if err != nil {
			t.Fatal(err)
		}
		var f flowFile
		if err := json.Unmarshal(b, &f); err != nil {
			t.Fatal(err)
		}
		checkFlows(t, tc.profile, f.recordedOrder)
	}
}

// checkFlows compares what a browser sent on the flow pages (order gives
// the field names of its first method request to path over h2 or
// HTTP/1.1, Host included) with profile name: each request that carried
// the cookie lists the profile's fields in the profile's order, Cookie
// included, for each kind over h2 and HTTP/1.1; so does the navigation
// with a Referer; the fetch() POST and the form submission list the
// profile's body sets' fields in order.
func checkFlows(t *testing.T, name string, order func(h2 bool, method, path string) []string) {
	t.Helper()
	p, err := profile.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	for _, proto := range []profile.Proto{profile.H2, profile.HTTP1} {
		for _, k := range []struct {
			kind profile.RequestKind
			path string
		}{
			{profile.Navigate, FlowNav},
			{profile.Subresource, "/flow/app.js"},
			{profile.Image, "/flow/img.png"},
			{profile.Fetch, "/flow/fetch"},
		} {
			rec := order(proto == profile.H2, "GET", k.path)
			if !slices.ContainsFunc(rec, func(n string) bool { return fields.EqualFold(n, "cookie") }) {
				t.Errorf("%s %v %v: the browser's request carries no cookie: %v", name, k.kind, proto, rec)
				continue
			}
			hs := p.HeaderSet(k.kind, proto)
			var want []string
			for _, fl := range hs.Header {
				if fl.Value != "" || slices.Contains(rec, fl.Name) {
					want = append(want, fl.Name)
				}
			}
			if k.kind == profile.Navigate {
				want = withoutUnrecordedActivation(rec, want)
			}
			// Firefox sends Priority for a script in <head> (the
			// profile's recording) and not for one at the end of the
			// body (the flow page's).
			if slices.Contains(rec, "priority") != slices.Contains(want, "priority") {
				rec = slices.DeleteFunc(rec, func(n string) bool { return n == "priority" })
				want = slices.DeleteFunc(want, func(n string) bool { return n == "priority" })
			}
			if !slices.Equal(rec, want) {
				t.Errorf("%s %v over %v:\n browser %v\n profile %v", name, k.kind, proto, rec, want)
			}
		}
		// A navigation with a Referer (the scripted one to /flow/linked,
		// without user activation: no Sec-Fetch-User) lists the navigation
		// set's fields, Referer and Cookie included.
		rec := order(proto == profile.H2, "GET", "/flow/linked")
		var want []string
		for _, fl := range p.HeaderSet(profile.Navigate, proto).Header {
			want = append(want, fl.Name)
		}
		if want = withoutUnrecordedActivation(rec, want); !slices.Equal(rec, want) {
			t.Errorf("%s navigation with a referer over %v:\n browser %v\n profile %v", name, proto, rec, want)
		}
		// Requests with a body: the body sets are the recorded POSTs, in
		// order and value, placeholders aside (Chrome's form set adds
		// Sec-Fetch-User ?1, see gen_flows.go).
		for _, k := range []struct {
			kind profile.RequestKind
			path string
		}{
			{profile.Fetch, "/flow/post-text"},
			{profile.Navigate, "/flow/form"},
		} {
			hs := p.BodyHeaderSet(k.kind, proto)
			if hs == nil {
				t.Fatalf("%s: no %v body set over %v", name, k.kind, proto)
			}
			rec := order(proto == profile.H2, "POST", k.path)
			var want []string
			for _, fl := range hs.Header {
				want = append(want, fl.Name)
			}
			if want = withoutUnrecordedActivation(rec, want); !slices.Equal(rec, want) {
				t.Errorf("%s %v POST over %v:\n browser %v\n profile %v", name, k.kind, proto, rec, want)
			}
			for _, n := range []string{"content-length", "origin", "referer", "cookie"} {
				if i := slices.IndexFunc(hs.Header, func(f fields.Field) bool { return fields.EqualFold(f.Name, n) }); i < 0 || hs.Header[i].Value != "" {
					t.Errorf("%s %v POST over %v: %s is not a placeholder", name, k.kind, proto, n)
				}
			}
		}
	}
}

// withoutUnrecordedActivation returns want without Sec-Fetch-User when rec
// lacks it: a headless browser run from the command line, or a page's
// script, navigates without user activation, and Firefox and Chrome then
// send no Sec-Fetch-User; a profile's navigation is a user's and has it
// (see profile/testdata/recordings/firefox-esr-153-activation.json).
func withoutUnrecordedActivation(rec, want []string) []string {
	isUser := func(n string) bool { return fields.EqualFold(n, "sec-fetch-user") }
	if slices.ContainsFunc(rec, isUser) {
		return want
	}
	return slices.DeleteFunc(slices.Clone(want), isUser)
}

// TestActivationRecordingMatchesProfile: the firefox profile's navigation
// sets are, field for field and in order, what Firefox sent on a navigation
// with user activation (profile/testdata/recordings/firefox-esr-153-activation.json,
// flows.go -activate), Sec-Fetch-User included; the per-request fields the
// recorded first visit had no use for (Cookie, Referer) aside.
func TestActivationRecordingMatchesProfile(t *testing.T) {
	b, err := os.ReadFile("../profile/testdata/recordings/firefox-esr-153-activation.json")
	if err != nil {
		t.Fatal(err)
	}
	var f flowFile
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	p, err := profile.Lookup("firefox153-linux")
	if err != nil {
		t.Fatal(err)
	}
	for _, proto := range []profile.Proto{profile.H2, profile.HTTP1} {
		rec := f.recordedOrder(proto == profile.H2, "GET", FlowNav)
		if !slices.ContainsFunc(rec, func(n string) bool { return fields.EqualFold(n, "sec-fetch-user") }) {
			t.Fatalf("%v: the recorded navigation has no Sec-Fetch-User: %v", proto, rec)
		}
		var want []string
		for _, fl := range p.HeaderSet(profile.Navigate, proto).Header {
			if fl.Value != "" || slices.Contains(rec, fl.Name) {
				want = append(want, fl.Name)
			}
		}
		if !slices.Equal(rec, want) {
			t.Errorf("%v:\n browser %v\n profile %v", proto, rec, want)
		}
	}
}
