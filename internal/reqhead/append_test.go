package reqhead

import (
	"strings"
	"testing"

	"github.com/guise-http/guise/fields"
	"github.com/guise-http/guise/profile"
)

// headCase is one request of TestAppendPerBrowser.
type headCase struct {
	name   string
	kind   profile.RequestKind
	method string
	length int64
	user   fields.Header
	extra  fields.Header
	redir  bool
	script bool
}

var (
	testReferer = fields.Field{Name: "Referer", Value: "https://fp.test/page"}
	testCookie  = fields.Field{Name: "Cookie", Value: "a=1; b=2"}
	testSite    = fields.Field{Name: "Sec-Fetch-Site", Value: "same-origin"}
)

var headCases = []headCase{
	{name: "navigation", kind: profile.Navigate, method: "GET"},
	{name: "navigation with cookie", kind: profile.Navigate, method: "GET", extra: fields.Header{testCookie}},
	{name: "fetch", kind: profile.Fetch, method: "GET", extra: fields.Header{testReferer, testSite}},
	{name: "fetch POST with body", kind: profile.Fetch, method: "POST", length: 5, extra: fields.Header{testReferer, testCookie, testSite}},
	{name: "fetch empty POST", kind: profile.Fetch, method: "POST", extra: fields.Header{testReferer, testSite}},
	{name: "form POST", kind: profile.Navigate, method: "POST", length: 7, extra: fields.Header{testReferer, testSite}},
	{name: "form empty POST", kind: profile.Navigate, method: "POST", extra: fields.Header{testReferer, testSite}},
	{name: "redirect hop", kind: profile.Navigate, method: "GET", extra: fields.Header{testReferer, testCookie, testSite}, redir: true},
	{name: "scripted navigation", kind: profile.Navigate, method: "GET", extra: fields.Header{testReferer, testSite}, script: true},
	{name: "caller fields", kind: profile.Fetch, method: "GET", user: fields.Header{{Name: "accept", Value: "x/y"}, {Name: "X-Custom", Value: "1"}}, extra: fields.Header{testReferer}},
	{name: "image", kind: profile.Image, method: "GET", extra: fields.Header{testReferer, testCookie}},
}

// tokens renders h as TestAppendPerBrowser's want strings do: names in
// order, with the value of the fields a request sets (and of a caller's
// "x/y").
func tokens(h fields.Header) string {
	var toks []string
	for _, f := range h {
		tok := f.Name
		switch strings.ToLower(f.Name) {
		case "host", "cookie", "referer", "origin", "content-length", "content-type", "sec-fetch-site", "sec-fetch-user", "x-custom":
			tok += "=" + f.Value
		}
		if f.Value == "x/y" {
			tok += "=" + f.Value
		}
		toks = append(toks, tok)
	}
	return strings.Join(toks, " ")
}

// TestAppendPerBrowser asserts the exact fields of each request of
// headCases per profile and protocol. The want lists were produced by the
// code this package replaced (compiled.headerFor in the root, before
// browser behaviour became profile data), so they pin that nothing
// changed on the wire.
func TestAppendPerBrowser(t *testing.T) {
	for name, want := range wantHeads {
		p, err := profile.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		tb, err := New(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(want) != 2*len(headCases) {
			t.Fatalf("%s: %d want lines for %d cases", name, len(want), len(headCases))
		}
		for i, w := range want {
			tc := headCases[i/2]
			if w.name != tc.name {
				t.Fatalf("%s: want line %d is for %q, case is %q", name, i, w.name, tc.name)
			}
			r := Request{Proto: profile.H2, Kind: tc.kind, Method: tc.method, Header: tc.user, Extra: tc.extra,
				ContentLength: tc.length, Redirected: tc.redir, Scripted: tc.script}
			if tc.length != 0 || tc.method == "POST" {
				r.Origin = &testOrigin
			}
			if w.proto == "h1" {
				r.Proto = profile.HTTP1
				r.Extra = append(fields.Header{{Name: "Host", Value: "fp.test"}}, tc.extra...)
			}
			h, err := tb.Append(nil, &r)
			got := tokens(h)
			if err != nil {
				got = "ERROR"
			}
			if got != w.fields {
				t.Errorf("%s %s over %s:\n got %s\nwant %s", name, tc.name, w.proto, got, w.fields)
			}
		}
	}
}

// wantHeads holds, per profile, one line per case of headCases and
// protocol: the case's name, "h1" or "h2", and tokens of the fields.
var wantHeads = map[string][]struct{ name, proto, fields string }{
	"chrome156-linux": {
		{"navigation", "h1", "Host=fp.test Connection sec-ch-ua sec-ch-ua-mobile sec-ch-ua-platform Upgrade-Insecure-Requests User-Agent Accept Sec-Fetch-Site=none Sec-Fetch-Mode Sec-Fetch-User=?1 Sec-Fetch-Dest Accept-Encoding Accept-Language"},
		{"navigation", "h2", "sec-ch-ua sec-ch-ua-mobile sec-ch-ua-platform upgrade-insecure-requests user-agent accept sec-fetch-site=none sec-fetch-mode sec-fetch-user=?1 sec-fetch-dest accept-encoding accept-language priority"},
		{"navigation with cookie", "h1", "Host=fp.test Connection sec-ch-ua sec-ch-ua-mobile sec-ch-ua-platform Upgrade-Insecure-Requests User-Agent Accept Sec-Fetch-Site=none Sec-Fetch-Mode Sec-Fetch-User=?1 Sec-Fetch-Dest Accept-Encoding Accept-Language Cookie=a=1; b=2"},
		{"navigation with cookie", "h2", "sec-ch-ua sec-ch-ua-mobile sec-ch-ua-platform upgrade-insecure-requests user-agent accept sec-fetch-site=none sec-fetch-mode sec-fetch-user=?1 sec-fetch-dest accept-encoding accept-language cookie=a=1; b=2 priority"},
		{"fetch", "h1", "Host=fp.test Connection sec-ch-ua-platform User-Agent sec-ch-ua sec-ch-ua-mobile Accept Sec-Fetch-Site=same-origin Sec-Fetch-Mode Sec-Fetch-Dest Referer=https://fp.test/page Accept-Encoding Accept-Language"},
		{"fetch", "h2", "sec-ch-ua-platform user-agent sec-ch-ua sec-ch-ua-mobile accept sec-fetch-site=same-origin sec-fetch-mode sec-fetch-dest referer=https://fp.test/page accept-encoding accept-language priority"},
		{"fetch POST with body", "h1", "Host=fp.test Connection Content-Length=5 sec-ch-ua-platform User-Agent sec-ch-ua Content-Type=text/plain;charset=UTF-8 sec-ch-ua-mobile Accept Origin=https://fp.test Sec-Fetch-Site=same-origin Sec-Fetch-Mode Sec-Fetch-Dest Referer=https://fp.test/page Accept-Encoding Accept-Language Cookie=a=1; b=2"},
		{"fetch POST with body", "h2", "content-length=5 sec-ch-ua-platform user-agent sec-ch-ua content-type=text/plain;charset=UTF-8 sec-ch-ua-mobile accept origin=https://fp.test sec-fetch-site=same-origin sec-fetch-mode sec-fetch-dest referer=https://fp.test/page accept-encoding accept-language cookie=a=1; b=2 priority"},
		{"fetch empty POST", "h1", "Host=fp.test Connection Content-Length=0 sec-ch-ua-platform User-Agent sec-ch-ua sec-ch-ua-mobile Accept Origin=https://fp.test Sec-Fetch-Site=same-origin Sec-Fetch-Mode Sec-Fetch-Dest Referer=https://fp.test/page Accept-Encoding Accept-Language"},
		{"fetch empty POST", "h2", "content-length=0 sec-ch-ua-platform user-agent sec-ch-ua sec-ch-ua-mobile accept origin=https://fp.test sec-fetch-site=same-origin sec-fetch-mode sec-fetch-dest referer=https://fp.test/page accept-encoding accept-language priority"},
		{"form POST", "h1", "Host=fp.test Connection Content-Length=7 Cache-Control sec-ch-ua sec-ch-ua-mobile sec-ch-ua-platform Upgrade-Insecure-Requests Content-Type=application/x-www-form-urlencoded User-Agent Origin=https://fp.test Accept Sec-Fetch-Site=same-origin Sec-Fetch-Mode Sec-Fetch-User=?1 Sec-Fetch-Dest Referer=https://fp.test/page Accept-Encoding Accept-Language"},
		{"form POST", "h2", "content-length=7 cache-control sec-ch-ua sec-ch-ua-mobile sec-ch-ua-platform upgrade-insecure-requests content-type=application/x-www-form-urlencoded user-agent origin=https://fp.test accept sec-fetch-site=same-origin sec-fetch-mode sec-fetch-user=?1 sec-fetch-dest referer=https://fp.test/page accept-encoding accept-language priority"},
		{"form empty POST", "h1", "Host=fp.test Connection Content-Length=0 Cache-Control sec-ch-ua sec-ch-ua-mobile sec-ch-ua-platform Upgrade-Insecure-Requests Content-Type=application/x-www-form-urlencoded User-Agent Origin=https://fp.test Accept Sec-Fetch-Site=same-origin Sec-Fetch-Mode Sec-Fetch-User=?1 Sec-Fetch-Dest Referer=https://fp.test/page Accept-Encoding Accept-Language"},
		{"form empty POST", "h2", "content-length=0 cache-control sec-ch-ua sec-ch-ua-mobile sec-ch-ua-platform upgrade-insecure-requests content-type=application/x-www-form-urlencoded user-agent origin=https://fp.test accept sec-fetch-site=same-origin sec-fetch-mode sec-fetch-user=?1 sec-fetch-dest referer=https://fp.test/page accept-encoding accept-language priority"},
		{"redirect hop", "h1", "Host=fp.test Connection Upgrade-Insecure-Requests User-Agent Accept Sec-Fetch-Site=same-origin Sec-Fetch-Mode Sec-Fetch-User=?1 Sec-Fetch-Dest sec-ch-ua sec-ch-ua-mobile sec-ch-ua-platform Referer=https://fp.test/page Accept-Encoding Accept-Language Cookie=a=1; b=2"},
		{"redirect hop", "h2", "upgrade-insecure-requests user-agent accept sec-fetch-site=same-origin sec-fetch-mode sec-fetch-user=?1 sec-fetch-dest sec-ch-ua sec-ch-ua-mobile sec-ch-ua-platform referer=https://fp.test/page accept-encoding accept-language cookie=a=1; b=2 priority"},
		{"scripted navigation", "h1", "Host=fp.test Connection sec-ch-ua sec-ch-ua-mobile sec-ch-ua-platform Upgrade-Insecure-Requests User-Agent Accept Sec-Fetch-Site=same-origin Sec-Fetch-Mode Sec-Fetch-Dest Referer=https://fp.test/page Accept-Encoding Accept-Language"},
		{"scripted navigation", "h2", "sec-ch-ua sec-ch-ua-mobile sec-ch-ua-platform upgrade-insecure-requests user-agent accept sec-fetch-site=same-origin sec-fetch-mode sec-fetch-dest referer=https://fp.test/page accept-encoding accept-language priority"},
		{"caller fields", "h1", "Host=fp.test Connection sec-ch-ua-platform User-Agent sec-ch-ua sec-ch-ua-mobile accept=x/y Sec-Fetch-Site=same-origin Sec-Fetch-Mode Sec-Fetch-Dest Referer=https://fp.test/page Accept-Encoding Accept-Language X-Custom=1"},
		{"caller fields", "h2", "sec-ch-ua-platform user-agent sec-ch-ua sec-ch-ua-mobile accept=x/y sec-fetch-site=same-origin sec-fetch-mode sec-fetch-dest referer=https://fp.test/page accept-encoding accept-language priority x-custom=1"},
		{"image", "h1", "Host=fp.test Connection sec-ch-ua-platform User-Agent sec-ch-ua sec-ch-ua-mobile Accept Sec-Fetch-Site=same-origin Sec-Fetch-Mode Sec-Fetch-Dest Referer=https://fp.test/page Accept-Encoding Accept-Language Cookie=a=1; b=2"},
		{"image", "h2", "sec-ch-ua-platform user-agent sec-ch-ua sec-ch-ua-mobile accept sec-fetch-site=same-origin sec-fetch-mode sec-fetch-dest referer=https://fp.test/page accept-encoding accept-language cookie=a=1; b=2 priority"},
	},
	"firefox153-linux": {
		{"navigation", "h1", "Host=fp.test User-Agent Accept Accept-Language Accept-Encoding Connection Upgrade-Insecure-Requests Sec-Fetch-Dest Sec-Fetch-Mode Sec-Fetch-Site=none Sec-Fetch-User=?1 Priority"},
		{"navigation", "h2", "user-agent accept accept-language accept-encoding upgrade-insecure-requests sec-fetch-dest sec-fetch-mode sec-fetch-site=none sec-fetch-user=?1 priority te"},
		{"navigation with cookie", "h1", "Host=fp.test User-Agent Accept Accept-Language Accept-Encoding Connection Cookie=a=1; b=2 Upgrade-Insecure-Requests Sec-Fetch-Dest Sec-Fetch-Mode Sec-Fetch-Site=none Sec-Fetch-User=?1 Priority"},
		{"navigation with cookie", "h2", "user-agent accept accept-language accept-encoding cookie=a=1; b=2 upgrade-insecure-requests sec-fetch-dest sec-fetch-mode sec-fetch-site=none sec-fetch-user=?1 priority te"},
		{"fetch", "h1", "Host=fp.test User-Agent Accept Accept-Language Accept-Encoding Referer=https://fp.test/page Connection Sec-Fetch-Dest Sec-Fetch-Mode Sec-Fetch-Site=same-origin Priority"},
		{"fetch", "h2", "user-agent accept accept-language accept-encoding referer=https://fp.test/page sec-fetch-dest sec-fetch-mode sec-fetch-site=same-origin priority te"},
		{"fetch POST with body", "h1", "Host=fp.test User-Agent Accept Accept-Language Accept-Encoding Referer=https://fp.test/page Content-Type=text/plain;charset=UTF-8 Content-Length=5 Origin=https://fp.test Connection Cookie=a=1; b=2 Sec-Fetch-Dest Sec-Fetch-Mode Sec-Fetch-Site=same-origin Priority"},
		{"fetch POST with body", "h2", "user-agent accept accept-language accept-encoding referer=https://fp.test/page content-type=text/plain;charset=UTF-8 content-length=5 origin=https://fp.test cookie=a=1; b=2 sec-fetch-dest sec-fetch-mode sec-fetch-site=same-origin priority te"},
		{"fetch empty POST", "h1", "Host=fp.test User-Agent Accept Accept-Language Accept-Encoding Referer=https://fp.test/page Content-Length=0 Origin=https://fp.test Connection Sec-Fetch-Dest Sec-Fetch-Mode Sec-Fetch-Site=same-origin Priority"},
		{"fetch empty POST", "h2", "user-agent accept accept-language accept-encoding referer=https://fp.test/page content-length=0 origin=https://fp.test sec-fetch-dest sec-fetch-mode sec-fetch-site=same-origin priority te"},
		{"form POST", "h1", "Host=fp.test User-Agent Accept Accept-Language Accept-Encoding Content-Type=application/x-www-form-urlencoded Content-Length=7 Origin=https://fp.test Connection Referer=https://fp.test/page Upgrade-Insecure-Requests Sec-Fetch-Dest Sec-Fetch-Mode Sec-Fetch-Site=same-origin Sec-Fetch-User=?1 Priority"},
		{"form POST", "h2", "user-agent accept accept-language accept-encoding content-type=application/x-www-form-urlencoded content-length=7 origin=https://fp.test referer=https://fp.test/page upgrade-insecure-requests sec-fetch-dest sec-fetch-mode sec-fetch-site=same-origin sec-fetch-user=?1 priority te"},
		{"form empty POST", "h1", "Host=fp.test User-Agent Accept Accept-Language Accept-Encoding Content-Type=application/x-www-form-urlencoded Content-Length=0 Origin=https://fp.test Connection Referer=https://fp.test/page Upgrade-Insecure-Requests Sec-Fetch-Dest Sec-Fetch-Mode Sec-Fetch-Site=same-origin Sec-Fetch-User=?1 Priority"},
		{"form empty POST", "h2", "user-agent accept accept-language accept-encoding content-type=application/x-www-form-urlencoded content-length=0 origin=https://fp.test referer=https://fp.test/page upgrade-insecure-requests sec-fetch-dest sec-fetch-mode sec-fetch-site=same-origin sec-fetch-user=?1 priority te"},
		{"redirect hop", "h1", "Host=fp.test User-Agent Accept Accept-Language Accept-Encoding Connection Referer=https://fp.test/page Cookie=a=1; b=2 Upgrade-Insecure-Requests Sec-Fetch-Dest Sec-Fetch-Mode Sec-Fetch-Site=same-origin Sec-Fetch-User=?1 Priority"},
		{"redirect hop", "h2", "user-agent accept accept-language accept-encoding referer=https://fp.test/page cookie=a=1; b=2 upgrade-insecure-requests sec-fetch-dest sec-fetch-mode sec-fetch-site=same-origin sec-fetch-user=?1 priority te"},
		{"scripted navigation", "h1", "Host=fp.test User-Agent Accept Accept-Language Accept-Encoding Connection Referer=https://fp.test/page Upgrade-Insecure-Requests Sec-Fetch-Dest Sec-Fetch-Mode Sec-Fetch-Site=same-origin Priority"},
		{"scripted navigation", "h2", "user-agent accept accept-language accept-encoding referer=https://fp.test/page upgrade-insecure-requests sec-fetch-dest sec-fetch-mode sec-fetch-site=same-origin priority te"},
		{"caller fields", "h1", "Host=fp.test User-Agent accept=x/y Accept-Language Accept-Encoding Referer=https://fp.test/page Connection Sec-Fetch-Dest Sec-Fetch-Mode Sec-Fetch-Site=same-origin Priority X-Custom=1"},
		{"caller fields", "h2", "user-agent accept=x/y accept-language accept-encoding referer=https://fp.test/page sec-fetch-dest sec-fetch-mode sec-fetch-site=same-origin priority te x-custom=1"},
		{"image", "h1", "Host=fp.test User-Agent Accept Accept-Language Accept-Encoding Connection Referer=https://fp.test/page Cookie=a=1; b=2 Sec-Fetch-Dest Sec-Fetch-Mode Sec-Fetch-Site=same-origin Priority"},
		{"image", "h2", "user-agent accept accept-language accept-encoding referer=https://fp.test/page cookie=a=1; b=2 sec-fetch-dest sec-fetch-mode sec-fetch-site=same-origin priority te"},
	},
	"edge156-windows": {
		{"navigation", "h1", "Host=fp.test Connection sec-ch-ua sec-ch-ua-mobile sec-ch-ua-platform Upgrade-Insecure-Requests User-Agent Accept Sec-Fetch-Site=none Sec-Fetch-Mode Sec-Fetch-User=?1 Sec-Fetch-Dest Accept-Encoding Accept-Language"},
		{"navigation", "h2", "sec-ch-ua sec-ch-ua-mobile sec-ch-ua-platform upgrade-insecure-requests user-agent accept sec-fetch-site=none sec-fetch-mode sec-fetch-user=?1 sec-fetch-dest accept-encoding accept-language priority"},
		{"navigation with cookie", "h1", "Host=fp.test Connection sec-ch-ua sec-ch-ua-mobile sec-ch-ua-platform Upgrade-Insecure-Requests User-Agent Accept Sec-Fetch-Site=none Sec-Fetch-Mode Sec-Fetch-User=?1 Sec-Fetch-Dest Accept-Encoding Accept-Language Cookie=a=1; b=2"},
		{"navigation with cookie", "h2", "sec-ch-ua sec-ch-ua-mobile sec-ch-ua-platform upgrade-insecure-requests user-agent accept sec-fetch-site=none sec-fetch-mode sec-fetch-user=?1 sec-fetch-dest accept-encoding accept-language cookie=a=1; b=2 priority"},
		{"fetch", "h1", "Host=fp.test Connection sec-ch-ua-platform User-Agent sec-ch-ua sec-ch-ua-mobile Accept Sec-Fetch-Site=same-origin Sec-Fetch-Mode Sec-Fetch-Dest Referer=https://fp.test/page Accept-Encoding Accept-Language"},
		{"fetch", "h2", "sec-ch-ua-platform user-agent sec-ch-ua sec-ch-ua-mobile accept sec-fetch-site=same-origin sec-fetch-mode sec-fetch-dest referer=https://fp.test/page accept-encoding accept-language priority"},
		{"fetch POST with body", "h1", "Host=fp.test Connection Content-Length=5 sec-ch-ua-platform User-Agent sec-ch-ua Content-Type=text/plain;charset=UTF-8 sec-ch-ua-mobile Accept Origin=https://fp.test Sec-Fetch-Site=same-origin Sec-Fetch-Mode Sec-Fetch-Dest Referer=https://fp.test/page Accept-Encoding Accept-Language Cookie=a=1; b=2"},
		{"fetch POST with body", "h2", "content-length=5 sec-ch-ua-platform user-agent sec-ch-ua content-type=text/plain;charset=UTF-8 sec-ch-ua-mobile accept origin=https://fp.test sec-fetch-site=same-origin sec-fetch-mode sec-fetch-dest referer=https://fp.test/page accept-encoding accept-language cookie=a=1; b=2 priority"},
		{"fetch empty POST", "h1", "Host=fp.test Connection Content-Length=0 sec-ch-ua-platform User-Agent sec-ch-ua sec-ch-ua-mobile Accept Origin=https://fp.test Sec-Fetch-Site=same-origin Sec-Fetch-Mode Sec-Fetch-Dest Referer=https://fp.test/page Accept-Encoding Accept-Language"},
		{"fetch empty POST", "h2", "content-length=0 sec-ch-ua-platform user-agent sec-ch-ua sec-ch-ua-mobile accept origin=https://fp.test sec-fetch-site=same-origin sec-fetch-mode sec-fetch-dest referer=https://fp.test/page accept-encoding accept-language priority"},
		{"form POST", "h1", "Host=fp.test Connection Content-Length=7 Cache-Control sec-ch-ua sec-ch-ua-mobile sec-ch-ua-platform Upgrade-Insecure-Requests Content-Type=application/x-www-form-urlencoded User-Agent Origin=https://fp.test Accept Sec-Fetch-Site=same-origin Sec-Fetch-Mode Sec-Fetch-User=?1 Sec-Fetch-Dest Referer=https://fp.test/page Accept-Encoding Accept-Language"},
		{"form POST", "h2", "content-length=7 cache-control sec-ch-ua sec-ch-ua-mobile sec-ch-ua-platform upgrade-insecure-requests content-type=application/x-www-form-urlencoded user-agent origin=https://fp.test accept sec-fetch-site=same-origin sec-fetch-mode sec-fetch-user=?1 sec-fetch-dest referer=https://fp.test/page accept-encoding accept-language priority"},
		{"form empty POST", "h1", "Host=fp.test Connection Content-Length=0 Cache-Control sec-ch-ua sec-ch-ua-mobile sec-ch-ua-platform Upgrade-Insecure-Requests Content-Type=application/x-www-form-urlencoded User-Agent Origin=https://fp.test Accept Sec-Fetch-Site=same-origin Sec-Fetch-Mode Sec-Fetch-User=?1 Sec-Fetch-Dest Referer=https://fp.test/page Accept-Encoding Accept-Language"},
		{"form empty POST", "h2", "content-length=0 cache-control sec-ch-ua sec-ch-ua-mobile sec-ch-ua-platform upgrade-insecure-requests content-type=application/x-www-form-urlencoded user-agent origin=https://fp.test accept sec-fetch-site=same-origin sec-fetch-mode sec-fetch-user=?1 sec-fetch-dest referer=https://fp.test/page accept-encoding accept-language priority"},
		{"redirect hop", "h1", "Host=fp.test Connection Upgrade-Insecure-Requests User-Agent Accept Sec-Fetch-Site=same-origin Sec-Fetch-Mode Sec-Fetch-User=?1 Sec-Fetch-Dest sec-ch-ua sec-ch-ua-mobile sec-ch-ua-platform Referer=https://fp.test/page Accept-Encoding Accept-Language Cookie=a=1; b=2"},
		{"redirect hop", "h2", "upgrade-insecure-requests user-agent accept sec-fetch-site=same-origin sec-fetch-mode sec-fetch-user=?1 sec-fetch-dest sec-ch-ua sec-ch-ua-mobile sec-ch-ua-platform referer=https://fp.test/page accept-encoding accept-language cookie=a=1; b=2 priority"},
		{"scripted navigation", "h1", "Host=fp.test Connection sec-ch-ua sec-ch-ua-mobile sec-ch-ua-platform Upgrade-Insecure-Requests User-Agent Accept Sec-Fetch-Site=same-origin Sec-Fetch-Mode Sec-Fetch-Dest Referer=https://fp.test/page Accept-Encoding Accept-Language"},
		{"scripted navigation", "h2", "sec-ch-ua sec-ch-ua-mobile sec-ch-ua-platform upgrade-insecure-requests user-agent accept sec-fetch-site=same-origin sec-fetch-mode sec-fetch-dest referer=https://fp.test/page accept-encoding accept-language priority"},
		{"caller fields", "h1", "Host=fp.test Connection sec-ch-ua-platform User-Agent sec-ch-ua sec-ch-ua-mobile accept=x/y Sec-Fetch-Site=same-origin Sec-Fetch-Mode Sec-Fetch-Dest Referer=https://fp.test/page Accept-Encoding Accept-Language X-Custom=1"},
		{"caller fields", "h2", "sec-ch-ua-platform user-agent sec-ch-ua sec-ch-ua-mobile accept=x/y sec-fetch-site=same-origin sec-fetch-mode sec-fetch-dest referer=https://fp.test/page accept-encoding accept-language priority x-custom=1"},
		{"image", "h1", "Host=fp.test Connection sec-ch-ua-platform User-Agent sec-ch-ua sec-ch-ua-mobile Accept Sec-Fetch-Site=same-origin Sec-Fetch-Mode Sec-Fetch-Dest Referer=https://fp.test/page Accept-Encoding Accept-Language Cookie=a=1; b=2"},
		{"image", "h2", "sec-ch-ua-platform user-agent sec-ch-ua sec-ch-ua-mobile accept sec-fetch-site=same-origin sec-fetch-mode sec-fetch-dest referer=https://fp.test/page accept-encoding accept-language cookie=a=1; b=2 priority"},
	},
	"safari18-macos": {
		{"navigation", "h1", "Host=fp.test Sec-Fetch-Dest User-Agent Accept Sec-Fetch-Site=none Sec-Fetch-Mode Accept-Language Accept-Encoding Connection"},
		{"navigation", "h2", "sec-fetch-dest user-agent accept sec-fetch-site=none sec-fetch-mode accept-language priority accept-encoding"},
		{"navigation with cookie", "h1", "Host=fp.test Sec-Fetch-Dest User-Agent Accept Sec-Fetch-Site=none Sec-Fetch-Mode Accept-Language Cookie=a=1; b=2 Accept-Encoding Connection"},
		{"navigation with cookie", "h2", "sec-fetch-dest user-agent accept sec-fetch-site=none sec-fetch-mode accept-language cookie=a=1; b=2 priority accept-encoding"},
		{"fetch", "h1", "ERROR"},
		{"fetch", "h2", "ERROR"},
		{"fetch POST with body", "h1", "ERROR"},
		{"fetch POST with body", "h2", "ERROR"},
		{"fetch empty POST", "h1", "ERROR"},
		{"fetch empty POST", "h2", "ERROR"},
		{"form POST", "h1", "Host=fp.test Sec-Fetch-Dest User-Agent Accept Sec-Fetch-Site=same-origin Sec-Fetch-Mode Accept-Language Accept-Encoding Connection Referer=https://fp.test/page"},
		{"form POST", "h2", "content-length=7 sec-fetch-dest user-agent accept sec-fetch-site=same-origin sec-fetch-mode accept-language priority accept-encoding referer=https://fp.test/page"},
		{"form empty POST", "h1", "Host=fp.test Sec-Fetch-Dest User-Agent Accept Sec-Fetch-Site=same-origin Sec-Fetch-Mode Accept-Language Accept-Encoding Connection Referer=https://fp.test/page Content-Length=0"},
		{"form empty POST", "h2", "content-length=0 sec-fetch-dest user-agent accept sec-fetch-site=same-origin sec-fetch-mode accept-language priority accept-encoding referer=https://fp.test/page"},
		{"redirect hop", "h1", "Host=fp.test Sec-Fetch-Dest User-Agent Accept Sec-Fetch-Site=same-origin Sec-Fetch-Mode Accept-Language Cookie=a=1; b=2 Accept-Encoding Connection Referer=https://fp.test/page"},
		{"redirect hop", "h2", "sec-fetch-dest user-agent accept sec-fetch-site=same-origin sec-fetch-mode accept-language cookie=a=1; b=2 priority accept-encoding referer=https://fp.test/page"},
		{"scripted navigation", "h1", "Host=fp.test Sec-Fetch-Dest User-Agent Accept Sec-Fetch-Site=same-origin Sec-Fetch-Mode Accept-Language Accept-Encoding Connection Referer=https://fp.test/page"},
		{"scripted navigation", "h2", "sec-fetch-dest user-agent accept sec-fetch-site=same-origin sec-fetch-mode accept-language priority accept-encoding referer=https://fp.test/page"},
		{"caller fields", "h1", "ERROR"},
		{"caller fields", "h2", "ERROR"},
		{"image", "h1", "ERROR"},
		{"image", "h2", "ERROR"},
	},
	"okhttp4-android": {
		{"navigation", "h1", "Host=fp.test Connection Accept-Encoding User-Agent"},
		{"navigation", "h2", "accept-encoding user-agent"},
		{"navigation with cookie", "h1", "Host=fp.test Connection Accept-Encoding User-Agent Cookie=a=1; b=2"},
		{"navigation with cookie", "h2", "accept-encoding user-agent cookie=a=1; b=2"},
		{"fetch", "h1", "Host=fp.test Connection Accept-Encoding User-Agent Referer=https://fp.test/page Sec-Fetch-Site=same-origin"},
		{"fetch", "h2", "accept-encoding user-agent referer=https://fp.test/page sec-fetch-site=same-origin"},
		{"fetch POST with body", "h1", "Host=fp.test Connection Accept-Encoding User-Agent Cookie=a=1; b=2 Referer=https://fp.test/page Sec-Fetch-Site=same-origin"},
		{"fetch POST with body", "h2", "content-length=5 accept-encoding user-agent cookie=a=1; b=2 referer=https://fp.test/page sec-fetch-site=same-origin"},
		{"fetch empty POST", "h1", "Host=fp.test Connection Accept-Encoding User-Agent Referer=https://fp.test/page Sec-Fetch-Site=same-origin Content-Length=0"},
		{"fetch empty POST", "h2", "content-length=0 accept-encoding user-agent referer=https://fp.test/page sec-fetch-site=same-origin"},
		{"form POST", "h1", "Host=fp.test Connection Accept-Encoding User-Agent Referer=https://fp.test/page Sec-Fetch-Site=same-origin"},
		{"form POST", "h2", "content-length=7 accept-encoding user-agent referer=https://fp.test/page sec-fetch-site=same-origin"},
		{"form empty POST", "h1", "Host=fp.test Connection Accept-Encoding User-Agent Referer=https://fp.test/page Sec-Fetch-Site=same-origin Content-Length=0"},
		{"form empty POST", "h2", "content-length=0 accept-encoding user-agent referer=https://fp.test/page sec-fetch-site=same-origin"},
		{"redirect hop", "h1", "Host=fp.test Connection Accept-Encoding User-Agent Cookie=a=1; b=2 Referer=https://fp.test/page Sec-Fetch-Site=same-origin"},
		{"redirect hop", "h2", "accept-encoding user-agent cookie=a=1; b=2 referer=https://fp.test/page sec-fetch-site=same-origin"},
		{"scripted navigation", "h1", "Host=fp.test Connection Accept-Encoding User-Agent Referer=https://fp.test/page Sec-Fetch-Site=same-origin"},
		{"scripted navigation", "h2", "accept-encoding user-agent referer=https://fp.test/page sec-fetch-site=same-origin"},
		{"caller fields", "h1", "Host=fp.test Connection Accept-Encoding User-Agent accept=x/y X-Custom=1 Referer=https://fp.test/page"},
		{"caller fields", "h2", "accept-encoding user-agent accept=x/y x-custom=1 referer=https://fp.test/page"},
		{"image", "h1", "Host=fp.test Connection Accept-Encoding User-Agent Cookie=a=1; b=2 Referer=https://fp.test/page"},
		{"image", "h2", "accept-encoding user-agent cookie=a=1; b=2 referer=https://fp.test/page"},
	},
}
