package guise

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"os"
	"slices"
	"testing"

	"github.com/guise-http/guise/fields"
	"github.com/guise-http/guise/fingerprint"
	"github.com/guise-http/guise/profile"
)

// h1OnlyRecording is what profile/testdata/record/main.go recorded from a
// browser with HTTP/2 disabled (Chrome --disable-http2, Firefox
// network.http.http2.enabled=false): its first ClientHello and the raw
// heads of its HTTP/1.1 requests.
type h1OnlyRecording struct {
	Hello string   `json:"hello_http1_hex"`
	Heads []string `json:"http1_heads"`
}

var h1OnlyFiles = map[string]string{
	"chrome":  "profile/testdata/recordings/chromium-156-extra.json",
	"firefox": "profile/testdata/recordings/firefox-esr-153-extra.json",
}

func readH1OnlyRecording(t *testing.T, name string) (hello *fingerprint.ClientHello, heads []*fingerprint.HTTPRequest) {
	t.Helper()
	b, err := os.ReadFile(h1OnlyFiles[name])
	if err != nil {
		t.Fatal(err)
	}
	var r h1OnlyRecording
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	raw, err := hex.DecodeString(r.Hello)
	if err != nil {
		t.Fatal(err)
	}
	if hello, err = fingerprint.ParseClientHello(raw); err != nil {
		t.Fatal(err)
	}
	for _, h := range r.Heads {
		q, err := fingerprint.ParseHTTP1Request([]byte(h))
		if err != nil {
			t.Fatal(err)
		}
		heads = append(heads, q)
	}
	return hello, heads
}

func extIDs(ch *fingerprint.ClientHello, sorted bool) []uint16 {
	var ids []uint16
	for _, e := range ch.Extensions {
		if e.Type&0x0f0f == 0x0a0a && e.Type>>8 == e.Type&0xff {
			ids = append(ids, 0x0a0a) // GREASE
			continue
		}
		ids = append(ids, e.Type)
	}
	if sorted {
		slices.Sort(ids)
	}
	return ids
}

// TestHTTP1OnlyMatchesRecordings: a Session with Protocol HTTP1 reaching
// the h2-capable echo server opens its connection as the browser does with
// HTTP/2 disabled, and sends that browser's HTTP/1.1 heads. The hello has
// the recording's JA4 and JA3N and its extensions (in Firefox's fixed
// order; Chrome shuffles); Chrome's offers ALPN http/1.1 with 16 extensions
// besides GREASE and no ALPS, Firefox's differs from its h2 hello in the
// ALPN list only. The navigation, script, image and fetch() heads have the
// recorded fields in the recorded order and case, with the recorded values
// but for the per-request ones (Host, Referer), desktop Chrome's
// User-Agent and Sec-CH-UA (the recording is headless chromium), and the
// Sec-Fetch-User of a user's navigation, which the headless runs lack.
func TestHTTP1OnlyMatchesRecordings(t *testing.T) {
	for _, name := range []string{"chrome", "firefox"} {
		t.Run(name, func(t *testing.T) {
			p, err := profile.Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			wantHello, heads := readH1OnlyRecording(t, name)
			e := newEchoSession(t, name, true)
			e.s.Protocol = HTTP1
			calls := []struct {
				kind profile.RequestKind
				path string
			}{{profile.Navigate, "/"}, {profile.Subresource, "/b.js"}, {profile.Image, "/a.png"}, {profile.Fetch, "/api/fetch"}}
			for _, c := range calls {
				req := &Request{URL: e.origin + c.path, Kind: c.kind}
				if c.kind != profile.Navigate {
					req.Referrer = e.origin + "/"
				}
				resp, err := e.s.Do(context.Background(), req)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := resp.Bytes(); err != nil {
					t.Fatal(err)
				}
				if resp.Proto != "HTTP/1.1" {
					t.Fatalf("%s: %s over an HTTP1 Session", c.path, resp.Proto)
				}
			}
			e.s.Transport.Close()
			e.srv.Close()
			var got []*fingerprint.HTTPRequest
			full := 0
			for _, rec := range e.srv.Records() {
				if rec.Transport != fingerprint.TransportTLS || rec.Protocol != fingerprint.ProtoHTTP1 {
					t.Fatalf("connection #%d: %s %s, want TLS and http/1.1", rec.ID, rec.Transport, rec.Protocol)
				}
				got = append(got, rec.HTTPRequests()...)
				ch, err := rec.ClientHello()
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(ch.ALPN, []string{"http/1.1"}) || ch.ALPS != nil {
					t.Errorf("connection #%d: ALPN %q, ALPS %v", rec.ID, ch.ALPN, ch.ALPS != nil)
				}
				if ch.HasPreSharedKey {
					continue // resumed: tlsfp's TestResumptionHTTP1Derived
				}
				full++
				if ch.JA4() != wantHello.JA4() || ch.JA3N() != wantHello.JA3N() {
					t.Errorf("connection #%d: JA4 %s JA3N %s, recording %s %s", rec.ID, ch.JA4(), ch.JA3N(), wantHello.JA4(), wantHello.JA3N())
				}
				shuffled := p.TLS.ShuffleExtensions
				if g, w := extIDs(ch, shuffled), extIDs(wantHello, shuffled); !slices.Equal(g, w) {
					t.Errorf("connection #%d: extensions %v, recording %v", rec.ID, g, w)
				}
			}
			if full == 0 {
				t.Fatal("no full handshake recorded")
			}
			// What the recordings themselves show, as the issue states it.
			h2Hello, err := fingerprint.ParseClientHello(p.TLS.Hello)
			if err != nil {
				t.Fatal(err)
			}
			nonGREASE := len(slices.DeleteFunc(extIDs(wantHello, false), func(id uint16) bool { return id == 0x0a0a }))
			t.Logf("recorded h1-only hello: %d extensions besides GREASE, ALPN %q, ALPS %v; the h2 hello has %d, ALPN %q, ALPS %v",
				nonGREASE, wantHello.ALPN, wantHello.ALPS != nil,
				len(slices.DeleteFunc(extIDs(h2Hello, false), func(id uint16) bool { return id == 0x0a0a })), h2Hello.ALPN, h2Hello.ALPS != nil)
			switch name {
			case "chrome":
				if n := nonGREASE; n != 16 || wantHello.ALPS != nil || !slices.Equal(wantHello.ALPN, []string{"http/1.1"}) {
					t.Errorf("recorded Chrome h1-only hello: %d extensions besides GREASE, ALPS %v, ALPN %q; want 16, none, http/1.1", nonGREASE, wantHello.ALPS != nil, wantHello.ALPN)
				}
			case "firefox":
				if g, w := extIDs(wantHello, false), extIDs(h2Hello, false); !slices.Equal(g, w) {
					t.Errorf("recorded Firefox h1-only extensions %v, h2 hello %v", g, w)
				}
				for i, x := range wantHello.Extensions {
					if x.Type != 16 && string(x.Data) != string(h2Hello.Extensions[i].Data) && x.Type != 0 && x.Type != 51 && x.Type != 0xfe0d {
						t.Errorf("recorded Firefox h1-only extension %d differs from the h2 hello's", x.Type)
					}
				}
			}
			if len(got) != len(calls) {
				t.Fatalf("the server saw %d requests, want %d", len(got), len(calls))
			}
			for i, c := range calls {
				var want *fingerprint.HTTPRequest
				for _, h := range heads {
					if h.Target == c.path {
						want = h
						break
					}
				}
				if want == nil {
					t.Fatalf("no recorded head for %s", c.path)
				}
				g, w := names(got[i].Header), names(want.Header)
				if c.kind == profile.Navigate {
					g = withoutUserActivation(t, name, c.path, g, w)
				}
				if !sameOrder(g, w) {
					t.Errorf("%v %s order:\n got %v\nwant %v", c.kind, c.path, g, w)
				}
				for _, f := range want.Header {
					switch {
					case fields.EqualFold(f.Name, "host"), fields.EqualFold(f.Name, "referer"):
						continue
					case name == "chrome" && (fields.EqualFold(f.Name, "user-agent") || fields.EqualFold(f.Name, "sec-ch-ua")):
						continue
					}
					if v := fields.Header(got[i].Header).Get(f.Name); v != f.Value {
						t.Errorf("%v %s: %s: %q, recording %q", c.kind, c.path, f.Name, v, f.Value)
					}
				}
			}
		})
	}
}
