//go:build ignore

package main

import (
	"encoding/json"
	"log"
	"os"
	"slices"
	"strings"

	"github.com/guise-http/guise/fields"
	"github.com/guise-http/guise/fingerprint"
	"github.com/guise-http/guise/profile"
)

// flows is what profile/testdata/record/flows.go recorded on the echo
// server's flow pages (fingerprint.FlowStart): requests carrying a cookie
// the server set, fetch() POSTs and a form submission, over h2 and
// HTTP/1.1.
type flows struct {
	H2 []struct {
		Method  string         `json:"method"`
		Path    string         `json:"path"`
		Headers []fields.Field `json:"headers"`
	} `json:"h2"`
	Heads []string `json:"http1_heads"`
}

func readFlows(path string) *flows {
	b, err := os.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	var f flows
	if err := json.Unmarshal(b, &f); err != nil {
		log.Fatalf("%s: %v", path, err)
	}
	return &f
}

// request returns the recorded fields (pseudo-headers and Host left out
// over h2; Host kept over HTTP/1.1, as the header sets have it) of the
// first request to path over proto.
func (f *flows) request(proto profile.Proto, method, path string) fields.Header {
	if proto == profile.H2 {
		for _, q := range f.H2 {
			if q.Method == method && q.Path == path {
				return q.Headers
			}
		}
		log.Fatalf("flows: no h2 %s %s recorded", method, path)
	}
	for _, head := range f.Heads {
		lines := strings.Split(strings.TrimSuffix(head, "\r\n\r\n"), "\r\n")
		if lines[0] != method+" "+path+" HTTP/1.1" {
			continue
		}
		var h fields.Header
		for _, l := range lines[1:] {
			name, value, ok := strings.Cut(l, ": ")
			if !ok {
				log.Fatalf("flows: bad header line %q", l)
			}
			h = append(h, fields.Field{Name: name, Value: value})
		}
		return h
	}
	log.Fatalf("flows: no HTTP/1.1 %s %s recorded", method, path)
	return nil
}

// cookiePaths are the flow requests that show where a browser puts Cookie
// for each request kind: a typed navigation (a second run that kept the
// cookie), a script, an image and a GET fetch().
var cookiePaths = []struct {
	kind profile.RequestKind
	path string
}{
	{profile.Navigate, "/flow/nav"},
	{profile.Subresource, "/flow/app.js"},
	{profile.Image, "/flow/img.png"},
	{profile.Fetch, "/flow/fetch"},
}

// addCookies puts a Cookie placeholder (per-request, empty) into each of
// p's recorded header sets where the browser sent Cookie in the flow
// recording (see insertPlaceholder).
func addCookies(p *profile.Profile, f *flows) {
	for _, proto := range []profile.Proto{profile.H2, profile.HTTP1} {
		for _, c := range cookiePaths {
			insertPlaceholder(p, c.kind, proto, f.request(proto, "GET", c.path), "cookie")
		}
	}
}

// addNavigationReferer puts a Referer placeholder into p's navigation sets
// (recorded from typed navigations, which have none) where the browser
// sent Referer on the flow page's scripted navigation to /flow/linked.
// That navigation had no user activation, so Chrome sent no
// Sec-Fetch-User there; the comparison allows that.
func addNavigationReferer(p *profile.Profile, f *flows) {
	for _, proto := range []profile.Proto{profile.H2, profile.HTTP1} {
		insertPlaceholder(p, profile.Navigate, proto, f.request(proto, "GET", "/flow/linked"), "referer")
	}
}

// insertPlaceholder puts a per-request placeholder for the field name into
// p's header set for kind over proto, right after the field the browser
// sent before it in rec. rec without that field must list the set's fields
// in the set's order (placeholders rec did not need may be missing;
// Priority and Sec-Fetch-User may be missing on one side: Firefox sends no
// Priority for a script at the end of a body, and a scripted navigation
// has no Sec-Fetch-User): a mismatch means the recordings disagree and
// stops the generator.
func insertPlaceholder(p *profile.Profile, kind profile.RequestKind, proto profile.Proto, rec fields.Header, name string) {
	insertRecorded(p, kind, proto, rec, name, true)
}

// addUserActivation puts Sec-Fetch-User, with the browser's value, into
// p's navigation sets where the browser sent it on a navigation a user
// started (act: the -activate recording of /flow/nav). The headless runs
// the sets come from had no user activation (Firefox sent no
// Sec-Fetch-User in them); a person typing the address or clicking a link
// does.
func addUserActivation(p *profile.Profile, act *flows) {
	for _, proto := range []profile.Proto{profile.H2, profile.HTTP1} {
		insertRecorded(p, profile.Navigate, proto, act.request(proto, "GET", "/flow/nav"), "sec-fetch-user", false)
	}
}

// insertRecorded is insertPlaceholder, or, with perRequest false, the same
// for a field that keeps the recorded value.
func insertRecorded(p *profile.Profile, kind profile.RequestKind, proto profile.Proto, rec fields.Header, name string, perRequest bool) {
	hs := p.HeaderSet(kind, proto)
	if hs == nil {
		log.Fatalf("%v: no %v %v header set", p.Browser, kind, proto)
	}
	at := -1
	var others []string
	for i, fl := range rec {
		if fields.EqualFold(fl.Name, name) {
			at = i
			continue
		}
		others = append(others, fl.Name)
	}
	if at < 0 {
		log.Fatalf("%v: the %v request over %v has no %s", p.Browser, kind, proto, name)
	}
	if containsFold(hs.Header, name) {
		log.Fatalf("%v: the %v set over %v has %s already", p.Browser, kind, proto, name)
	}
	var set []string
	for _, fl := range hs.Header {
		if fl.Value != "" || containsName(others, fl.Name) {
			set = append(set, fl.Name)
		}
	}
	for _, opt := range []string{"priority", "sec-fetch-user"} {
		in := func(names []string) bool {
			return slices.ContainsFunc(names, func(n string) bool { return fields.EqualFold(n, opt) })
		}
		if in(set) != in(others) {
			del := func(n string) bool { return fields.EqualFold(n, opt) }
			set = slices.DeleteFunc(set, del)
			others = slices.DeleteFunc(others, del)
		}
	}
	if strings.Join(set, ",") != strings.Join(others, ",") {
		log.Fatalf("%v: %v over %v: flow recording %v, header set %v", p.Browser, kind, proto, others, set)
	}
	pos := 0
	if at > 0 {
		pos = -1
		for i, fl := range hs.Header {
			if fl.Name == rec[at-1].Name {
				pos = i + 1
			}
		}
		if pos < 0 {
			log.Fatalf("%v: %v over %v: %s follows %s, which the set lacks", p.Browser, kind, proto, name, rec[at-1].Name)
		}
	}
	f := fields.Field{Name: rec[at].Name}
	if !perRequest {
		f.Value = rec[at].Value
	}
	hs.Header = append(hs.Header[:pos], append(fields.Header{f}, hs.Header[pos:]...)...)
	if !perRequest {
		return
	}
	var per []string
	for _, fl := range hs.Header {
		if fields.EqualFold(fl.Name, name) || containsName(hs.PerRequest, fl.Name) {
			per = append(per, fl.Name)
		}
	}
	hs.PerRequest = per
}

// bodyPaths are the flow requests the Body header sets are taken from
// (fingerprint.BodyPaths).
var bodyPaths = fingerprint.BodyPaths

// addBodySets adds to p, per protocol, the header sets for a fetch() and
// a navigation with a body, as the browser sent them in the flow
// recording (fingerprint.BodyHeaderSet, which guise capture uses too): its
// order and values, Content-Length, Origin, Referer, Cookie (and Host) as
// placeholders, Content-Type and, for Chrome's form, Cache-Control with the
// browser's values as defaults. The recorded form was submitted by script,
// without user activation; where the browser's plain navigation set sends
// Sec-Fetch-User (Chrome: a typed navigation; Firefox: once
// addUserActivation has run), the form set gets it too, after the field it
// follows there (Chrome: Sec-Fetch-Mode, Firefox: Sec-Fetch-Site), as a
// user's click sends it.
func addBodySets(p *profile.Profile, f *flows) {
	for _, proto := range []profile.Proto{profile.H2, profile.HTTP1} {
		for _, c := range bodyPaths {
			hs, err := fingerprint.BodyHeaderSet(c.Kind, proto, f.request(proto, "POST", c.Path), p.HeaderSet(c.Kind, proto))
			if err != nil {
				log.Fatalf("%v: %v", p.Browser, err)
			}
			p.Headers = append(p.Headers, hs)
		}
	}
}

func containsFold(h fields.Header, name string) bool {
	for _, f := range h {
		if fields.EqualFold(f.Name, name) {
			return true
		}
	}
	return false
}

// markUserActivation flags Sec-Fetch-User in p's navigation sets (plain and
// with a body) as sent only on a navigation a user started: the flow
// page's scripted navigation to /flow/linked went without it, over both
// protocols (for Chrome, whose typed navigation sends it, that is the
// evidence; Firefox run headless sends it on none).
func markUserActivation(p *profile.Profile, f *flows) {
	for _, proto := range []profile.Proto{profile.H2, profile.HTTP1} {
		if containsFold(f.request(proto, "GET", "/flow/linked"), "sec-fetch-user") {
			log.Fatalf("%v: the scripted navigation over %v sent sec-fetch-user", p.Browser, proto)
		}
	}
	for i := range p.Headers {
		hs := &p.Headers[i]
		if hs.Kind != profile.Navigate {
			continue
		}
		for _, fl := range hs.Header {
			if fields.EqualFold(fl.Name, "sec-fetch-user") {
				hs.UserActivation = append(hs.UserActivation, fl.Name)
			}
		}
	}
}

// addRedirectSets adds, per protocol, the header set of a navigation that
// follows a redirect, when the browser ordered the recorded hop (GET /flow/,
// which the 302 of /flow/start leads to) otherwise than its navigation set:
// the navigation set's fields and values in the hop's order. A field of the
// set the hop did not carry (the Referer placeholder: the hop came from a
// typed navigation; Sec-Fetch-User in Firefox's headless run) keeps its
// place before the field it precedes in the set. The hop must carry the
// set's other fields and no others, or the generator stops. A browser whose
// hop keeps the set's order gets no redirect set.
func addRedirectSets(p *profile.Profile, f *flows) {
	for _, proto := range []profile.Proto{profile.H2, profile.HTTP1} {
		nav := p.HeaderSet(profile.Navigate, proto)
		hop := f.request(proto, "GET", "/flow/")
		var present fields.Header // nav's fields the hop has, in the hop's order
		for _, h := range hop {
			if containsFold(present, h.Name) {
				continue // cookie crumbs
			}
			i := slices.IndexFunc(nav.Header, func(fl fields.Field) bool { return fields.EqualFold(fl.Name, h.Name) })
			if i < 0 {
				log.Fatalf("%v: the redirect hop over %v has %s, which the navigation set lacks", p.Browser, proto, h.Name)
			}
			present = append(present, nav.Header[i])
		}
		out := slices.Clone(present)
		for i, fl := range nav.Header {
			if containsFold(present, fl.Name) {
				continue
			}
			if fl.Value != "" && !fields.EqualFold(fl.Name, "sec-fetch-user") {
				log.Fatalf("%v: the redirect hop over %v has no %s", p.Browser, proto, fl.Name)
			}
			at := len(out)
			for _, next := range nav.Header[i+1:] {
				if j := slices.IndexFunc(out, func(o fields.Field) bool { return o.Name == next.Name }); j >= 0 && containsFold(present, next.Name) {
					at = j
					break
				}
			}
			out = slices.Insert(out, at, fl)
		}
		if slices.Equal(out, nav.Header) {
			continue
		}
		hs := profile.HeaderSet{Kind: profile.Navigate, Proto: proto, Redirect: true, Header: out}
		for _, fl := range out {
			if slices.Contains(nav.PerRequest, fl.Name) {
				hs.PerRequest = append(hs.PerRequest, fl.Name)
			}
			if slices.Contains(nav.UserActivation, fl.Name) {
				hs.UserActivation = append(hs.UserActivation, fl.Name)
			}
		}
		p.Headers = append(p.Headers, hs)
	}
}
