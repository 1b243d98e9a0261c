//go:build ignore

// gen builds the embedded profile files in data/ from the real-browser
// recordings in testdata/recordings (the h2 ones copied from
// fingerprint/testdata/recordings: Debian chromium 156 headless and firefox-esr 153 headless,
// recorded on loopback, one TCP connection each). Run it with
// `go generate ./profile`; its output is deterministic.
//
// What it derives rather than copies is written into each profile's Source:
// desktop Chrome's user-agent and sec-ch-ua values per OS (the recording is
// headless Chromium, which differs only in those values), Edge's values,
// Chrome on Android's (chromeAndroid), and the HTTP/1.1 header sets (see
// h1Set).
//
// It also writes the profiles built from public facts rather than
// recordings (Safari, OkHttp): gen_public.go describes them and
// gen_hello.go builds their ClientHello records deterministically.
package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/guise-http/guise/fields"
	"github.com/guise-http/guise/profile"
)

type recording struct {
	TLS struct {
		Record string `json:"client_hello_record_hex"`
		Hello  struct {
			ECH struct {
				PayloadLen int `json:"payload_len"`
			} `json:"ech"`
		} `json:"client_hello"`
	} `json:"tls"`
	HTTP2 struct {
		Settings []struct {
			ID    uint16 `json:"id"`
			Value uint32 `json:"value"`
		} `json:"settings"`
		ConnWindowUpdate uint32 `json:"connection_window_update"`
		Frames           []struct {
			Type            string `json:"type_name"`
			StreamID        uint32 `json:"stream_id"`
			WindowIncrement uint32 `json:"window_increment"`
		} `json:"frames"`
		Requests []struct {
			StreamID    uint32   `json:"stream_id"`
			PseudoOrder []string `json:"pseudo_header_order"`
			Headers     []struct {
				Name  string `json:"name"`
				Value string `json:"value"`
			} `json:"headers"`
			Priority struct {
				Exclusive bool   `json:"exclusive"`
				DependsOn uint32 `json:"stream_dependency"`
				Weight    int    `json:"weight"`
			} `json:"headers_priority"`
		} `json:"requests"`
	} `json:"http2"`
}

func main() {
	log.SetFlags(0)
	log.SetPrefix("profile/gen: ")
	chrome := read("testdata/recordings/chromium-156.json")
	firefox := read("testdata/recordings/firefox-esr-153.json")
	chromeExtra := readExtra("testdata/recordings/chromium-156-extra.json")
	firefoxExtra := readExtra("testdata/recordings/firefox-esr-153-extra.json")
	chromeFlows := readFlows("testdata/recordings/chromium-156-flows.json")
	firefoxFlows := readFlows("testdata/recordings/firefox-esr-153-flows.json")
	firefoxActivation := readFlows("testdata/recordings/firefox-esr-153-activation.json")
	chromeWS := readWebSocket("testdata/recordings/chromium-156-websocket.json")
	firefoxWS := readWebSocket("testdata/recordings/firefox-esr-153-websocket.json")

	var out []*profile.Profile
	base := fromRecording(chrome, profile.Chrome, 156, profile.LatestOpen)
	base.TLS.ShuffleExtensions = true
	base.TLS.HelloHTTP1, base.TLS.HelloResumed = chromeExtra.hellos()
	base.Headers = append(base.Headers, chromeExtra.h1Sets()...)
	base.HTTP1.Recorded = true
	addCookies(base, chromeFlows)
	addNavigationReferer(base, chromeFlows)
	addBodySets(base, chromeFlows)
	markUserActivation(base, chromeFlows)
	addRedirectSets(base, chromeFlows)
	addWebSocketSets(base, chromeWS)
	base.HTTP1.WebSocketFullALPN = readWSH1Origin("testdata/recordings/chromium-156-websocket-h1origin.json")
	base.WebSocket.EmptyUncompressed = readWSDeflate("../fingerprint/testdata/ws-deflate/chromium-156.json")
	base.WebSocket.KeepSmaller = readWSKeepSmaller("../fingerprint/testdata/ws-deflate/chromium-156-no-takeover.json")
	// BoringSSL's GREASE ECH carries a real X25519 public key.
	base.TLS.ECHX25519Key = true
	base.TLS.ResumeOmitsSessionTicket = omitsTicket(base.TLS)
	base.HTTP2.HPACK = chromiumHPACK
	// Chrome picks its GREASE ECH payload length from these per connection
	// (all four occur across fingerprint/testdata/recordings, whose README
	// counts them; the three h2 recordings show 176 and 240).
	base.TLS.ECHPayloadLengths = []int{144, 176, 208, 240}
	addH3(base, "chromium-156", chromiumH3)
	recSrc := "TLS hello and HTTP/2 preface, settings, priorities and h2 header order recorded from Debian chromium 156.0.8078.108 (new headless) on loopback, 2026-11-29 (testdata/recordings/chromium-156.json); HTTP/1.1-only and resumed hellos and HTTP/1.1 request heads (order, case, values) recorded from the same browser with profile/testdata/record/main.go (testdata/recordings/chromium-156-extra.json); the Cookie position per request kind and protocol, the Referer position in a navigation, and the header sets of requests with a body (fetch() POST, form submission: order, Content-Type, Origin, Cache-Control, Content-Length) recorded from the same browser with profile/testdata/record/flows.go (testdata/recordings/chromium-156-flows.json); Sec-Fetch-User added to the form set as in the typed navigation (the recorded form was submitted by script), and marked user_activation as the scripted navigation to /flow/linked went without it; the redirect sets in the order of the recorded hop GET /flow/ after the 302 of /flow/start (same file), the Referer placeholder before accept-encoding as in the navigation set; resume_omits_session_ticket read off the two recorded hellos; ech_x25519_key and the HPACK style as BoringSSL and quiche do them (the HPACK choices checked against the recorded HEADERS blocks by internal/h2's tests)" + webSocketSource("chromium-156-websocket.json") + h3Source("chromium-156", chromiumH3)
	for _, v := range []struct {
		os       profile.OS
		platform string
		uaOS     string
	}{
		{profile.Linux, `"Linux"`, "X11; Linux x86_64"},
		{profile.MacOS, `"macOS"`, "Macintosh; Intel Mac OS X 10_15_7"},
		{profile.Windows, `"Windows"`, "Windows NT 10.0; Win64; x64"},
	} {
		p := base.Clone()
		p.OS = v.os
		p.Name = profile.CanonicalName(p.Browser, p.Version, p.OS)
		p.Recorded = true
		p.Source = recSrc + "; header values derived for desktop Google Chrome on " + v.os.String() +
			": user-agent, sec-ch-ua (brand list for major 156 with \"Google Chrome\"), sec-ch-ua-platform"
		setValues(p, map[string]string{
			"user-agent":         "Mozilla/5.0 (" + v.uaOS + ") AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36",
			"sec-ch-ua":          `"Not:A-Brand";v="8", "Chromium";v="156", "Google Chrome";v="156"`,
			"sec-ch-ua-platform": v.platform,
		})
		out = append(out, p)

		if v.os == profile.Linux {
			continue
		}
		e := p.Clone()
		e.Browser = profile.Edge
		e.Name = profile.CanonicalName(e.Browser, e.Version, e.OS)
		e.Recorded = false
		e.Source = "not recorded: Microsoft Edge 156 is Chromium 156, so the TLS and HTTP/2 wire format are taken from the chromium 156 recording (testdata/recordings/chromium-156.json), assumed identical; header values from Edge's public user-agent and brand format (\"Microsoft Edge\", Edg/156.0.0.0)"
		setValues(e, map[string]string{
			"user-agent": "Mozilla/5.0 (" + v.uaOS + ") AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36 Edg/156.0.0.0",
			"sec-ch-ua":  `"Not:A-Brand";v="8", "Chromium";v="156", "Microsoft Edge";v="156"`,
		})
		out = append(out, e)
	}

	out = append(out, chromeAndroid(out[0]))

	ff := fromRecording(firefox, profile.Firefox, 153, profile.Root)
	ff.OS = profile.Linux
	ff.Name = profile.CanonicalName(ff.Browser, ff.Version, ff.OS)
	ff.Recorded = true
	// Firefox's GREASE ECH uses AES-128-GCM or ChaCha20-Poly1305 (the two
	// recordings show 3 and 1; fingerprint/testdata/recordings/README.md
	// counts both).
	ff.TLS.ECHAEADs = []uint16{1, 3}
	ff.TLS.HelloHTTP1, ff.TLS.HelloResumed = firefoxExtra.hellos()
	ff.Source = "TLS hello, HTTP/2 preface, priorities, per-stream WINDOW_UPDATE, h2 header order and values recorded from Debian firefox-esr 153.8.0esr (headless) on loopback, 2026-11-29 (testdata/recordings/firefox-esr-153.json); HTTP/1.1-only and resumed hellos and HTTP/1.1 request heads (order, case, values) recorded from the same browser with profile/testdata/record/main.go (testdata/recordings/firefox-esr-153-extra.json); the Cookie position per request kind and protocol, the Referer position in a navigation, and the header sets of requests with a body (fetch() POST, form submission: order, Content-Type, Origin, Content-Length) recorded from the same browser with profile/testdata/record/flows.go (testdata/recordings/firefox-esr-153-flows.json); Sec-Fetch-User in navigations (and the form set), which a headless run from the command line does not send, recorded from the same browser driven through Marionette, whose navigation has user activation (flows.go -activate, testdata/recordings/firefox-esr-153-activation.json), marked user_activation as the scripted navigation to /flow/linked went without it; no redirect set, as the recorded hop GET /flow/ after the 302 of /flow/start keeps the navigation order; resume_omits_session_ticket read off the two recorded hellos; the HPACK style as Necko does it (checked against the recorded HEADERS blocks by internal/h2's tests)" + webSocketSource("firefox-esr-153-websocket.json") + h3Source("firefox-esr-153", firefoxH3)
	ff.Headers = append(ff.Headers, firefoxExtra.h1Sets()...)
	ff.HTTP1.Recorded = true
	addCookies(ff, firefoxFlows)
	addNavigationReferer(ff, firefoxFlows)
	addUserActivation(ff, firefoxActivation)
	addBodySets(ff, firefoxFlows)
	markUserActivation(ff, firefoxFlows)
	addRedirectSets(ff, firefoxFlows)
	addWebSocketSets(ff, firefoxWS)
	ff.HTTP1.WebSocketFullALPN = readWSH1Origin("testdata/recordings/firefox-esr-153-websocket-h1origin.json")
	ff.WebSocket.EmptyUncompressed = readWSDeflate("../fingerprint/testdata/ws-deflate/firefox-esr-153.json")
	ff.WebSocket.KeepSmaller = readWSKeepSmaller("../fingerprint/testdata/ws-deflate/firefox-esr-153-no-takeover.json")
	addH3(ff, "firefox-esr-153", firefoxH3)
	ff.TLS.ResumeOmitsSessionTicket = omitsTicket(ff.TLS)
	ff.HTTP2.HPACK = firefoxHPACK
	out = append(out, ff)
	// Firefox uses NSS and its own network stack on every desktop OS; only
	// the user-agent's platform token differs.
	for _, v := range []struct {
		os   profile.OS
		uaOS string
	}{
		{profile.MacOS, "Macintosh; Intel Mac OS X 10.15"},
		{profile.Windows, "Windows NT 10.0; Win64; x64"},
	} {
		p := ff.Clone()
		p.OS = v.os
		p.Name = profile.CanonicalName(p.Browser, p.Version, p.OS)
		p.Source = ff.Source + "; user-agent platform token derived for Firefox on " + v.os.String()
		setValues(p, map[string]string{
			"user-agent": "Mozilla/5.0 (" + v.uaOS + "; rv:153.0) Gecko/20100101 Firefox/153.0",
		})
		out = append(out, p)
	}

	out = append(out, publicProfiles()...)
	write(out)
}

// chromeAndroid derives Chrome 156 on Android from linux, the profile of
// the recorded Chromium 156: the same network stack (BoringSSL, the HTTP/2
// and HTTP/1.1 code, the header order), so only the values that name the
// platform change. The user-agent is the reduced one Chrome on Android
// sends (platform "Linux; Android 10; K", "Mobile" before "Safari").
func chromeAndroid(linux *profile.Profile) *profile.Profile {
	if linux.Name != "chrome156-linux" {
		log.Fatalf("chromeAndroid: derived from %s, want chrome156-linux", linux.Name)
	}
	p := linux.Clone()
	p.OS = profile.Android
	p.Name = profile.CanonicalName(p.Browser, p.Version, p.OS)
	p.Recorded = false
	p.Source = "not recorded: Google Chrome 156 on Android runs the network stack of Chromium 156, so the TLS hellos, HTTP/2 preface, priorities, HPACK style and the header sets (order, case, values) are those of chrome156-linux, from the chromium 156 recordings (testdata/recordings/chromium-156*.json), assumed identical; header values derived for Chrome on Android: the reduced mobile user-agent (\"Linux; Android 10; K\", \"Mobile Safari\"), sec-ch-ua-mobile ?1, sec-ch-ua-platform \"Android\""
	setValues(p, map[string]string{
		"user-agent":         "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Mobile Safari/537.36",
		"sec-ch-ua-mobile":   "?1",
		"sec-ch-ua-platform": `"Android"`,
	})
	return p
}

// chromiumHPACK is the HPACK encoder of Chromium 156 (quiche): Huffman when
// strictly shorter, every field indexed except the pseudo-header fields
// other than :authority, names from the static table first. Read off the
// HEADERS blocks of the chromium recordings (internal/h2's fidelity tests
// check it byte for byte against them).
var chromiumHPACK = profile.HPACK{
	Huffman:      profile.HuffmanShorter,
	NameRef:      profile.NameRefStaticFirst,
	SizeUpdate:   profile.SizeUpdateOnChange,
	NoIndex:      []string{":method", ":scheme", ":path", ":protocol"},
	CookieCrumbs: true,
}

// firefoxHPACK is the HPACK encoder of Firefox ESR 153 (Necko): Huffman
// unless longer, :path never indexed nor matched, authorization and short
// cookie crumbs never indexed, fields over half the table as literals, a
// table size update after every HEADER_TABLE_SIZE setting. Read off the
// firefox recordings as chromiumHPACK is.
var firefoxHPACK = profile.HPACK{
	Huffman:              profile.HuffmanNotLonger,
	NameRef:              profile.NameRefLastMatch,
	SizeUpdate:           profile.SizeUpdateOnSetting,
	NoIndex:              []string{":path"},
	NoIndexSkipsExact:    true,
	NeverIndex:           []string{"authorization", "proxy-authorization"},
	CookieCrumbs:         true,
	ShortCrumbNeverIndex: 20,
	HalfTableLiteral:     true,
}

// omitsTicket reports whether the recorded resumed hello leaves out the
// session_ticket extension the full hello carries.
func omitsTicket(t profile.TLS) bool {
	has := func(rec []byte) bool {
		b := rec[9+2+32:]
		b = b[1+int(b[0]):]
		b = b[2+(int(b[0])<<8|int(b[1])):]
		b = b[1+int(b[0]):]
		for b = b[2:]; len(b) >= 4; b = b[4+(int(b[2])<<8|int(b[3])):] {
			if b[0] == 0 && b[1] == 35 {
				return true
			}
		}
		return false
	}
	return has(t.Hello) && !has(t.HelloResumed)
}

// extra holds what profile/testdata/record/main.go captured: hellos and raw HTTP/1.1
// request heads.
type extra struct {
	HTTP1   string   `json:"hello_http1_hex"`
	Resumed string   `json:"hello_resumed_hex"`
	Heads   []string `json:"http1_heads"`
}

// h1Sets turns recorded HTTP/1.1 request heads into header sets, the first
// head of each kind winning. Host, Referer and Sec-Fetch-Site are
// per-request; Host and Referer keep their position with an empty value.
func (e *extra) h1Sets() []profile.HeaderSet {
	var sets []profile.HeaderSet
	for _, head := range e.Heads {
		lines := strings.Split(strings.TrimSuffix(head, "\r\n\r\n"), "\r\n")
		var h fields.Header
		for _, l := range lines[1:] {
			name, value, ok := strings.Cut(l, ": ")
			if !ok {
				log.Fatalf("bad header line %q", l)
			}
			h = append(h, fields.Field{Name: name, Value: value})
		}
		kind := kindOf(h)
		if kind == 0 || slices.ContainsFunc(sets, func(s profile.HeaderSet) bool { return s.Kind == kind }) {
			continue
		}
		hs := profile.HeaderSet{Kind: kind, Proto: profile.HTTP1}
		for _, f := range h {
			switch strings.ToLower(f.Name) {
			case "host", "referer":
				f.Value = ""
				hs.PerRequest = append(hs.PerRequest, f.Name)
			case "sec-fetch-site":
				hs.PerRequest = append(hs.PerRequest, f.Name)
			}
			hs.Header = append(hs.Header, f)
		}
		sets = append(sets, hs)
	}
	for _, k := range []profile.RequestKind{profile.Navigate, profile.Fetch, profile.Subresource, profile.Image} {
		if !slices.ContainsFunc(sets, func(s profile.HeaderSet) bool { return s.Kind == k }) {
			log.Fatalf("no HTTP/1.1 %v request recorded", k)
		}
	}
	return sets
}

func readExtra(path string) *extra {
	b, err := os.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	var e extra
	if err := json.Unmarshal(b, &e); err != nil {
		log.Fatalf("%s: %v", path, err)
	}
	return &e
}

func (e *extra) hellos() (http1, resumed []byte) {
	var err error
	if http1, err = hex.DecodeString(e.HTTP1); err != nil {
		log.Fatal(err)
	}
	if resumed, err = hex.DecodeString(e.Resumed); err != nil {
		log.Fatal(err)
	}
	return http1, resumed
}

func read(path string) *recording {
	b, err := os.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	var r recording
	if err := json.Unmarshal(b, &r); err != nil {
		log.Fatalf("%s: %v", path, err)
	}
	return &r
}

// kindOf classifies a recorded request by its fetch metadata.
func kindOf(h fields.Header) profile.RequestKind {
	switch {
	case h.Get("sec-fetch-mode") == "navigate":
		return profile.Navigate
	case h.Get("sec-fetch-mode") == "cors":
		return profile.Fetch
	case h.Get("sec-fetch-dest") == "script":
		return profile.Subresource
	case h.Get("sec-fetch-dest") == "image":
		return profile.Image
	}
	return 0
}

// perRequest names the fields whose value depends on the request.
var perRequest = []string{"referer", "sec-fetch-site"}

func fromRecording(r *recording, b profile.Browser, version int, rule profile.DependRule) *profile.Profile {
	hello, err := hex.DecodeString(r.TLS.Record)
	if err != nil {
		log.Fatal(err)
	}
	p := &profile.Profile{Browser: b, Version: version, TLS: profile.TLS{Hello: hello}}
	for _, s := range r.HTTP2.Settings {
		p.HTTP2.Settings = append(p.HTTP2.Settings, profile.Setting{ID: profile.SettingID(s.ID), Value: s.Value})
	}
	p.HTTP2.ConnWindowUpdate = r.HTTP2.ConnWindowUpdate
	for _, f := range r.HTTP2.Frames {
		if f.Type == "WINDOW_UPDATE" && f.StreamID != 0 {
			p.HTTP2.StreamWindowUpdate = f.WindowIncrement
			break
		}
	}
	if len(r.HTTP2.Requests) == 0 {
		log.Fatal("recording has no requests")
	}
	p.HTTP2.FirstStreamID = r.HTTP2.Requests[0].StreamID
	p.HTTP2.PseudoOrder = r.HTTP2.Requests[0].PseudoOrder
	for _, req := range r.HTTP2.Requests {
		var h fields.Header
		for _, f := range req.Headers {
			if !strings.HasPrefix(f.Name, ":") {
				h = append(h, fields.Field{Name: f.Name, Value: f.Value})
			}
		}
		kind := kindOf(h)
		if kind == 0 || p.HeaderSet(kind, profile.H2) != nil {
			continue // first request of each kind wins
		}
		hs := profile.HeaderSet{Kind: kind, Proto: profile.H2}
		for _, f := range h {
			if containsName(perRequest, f.Name) {
				hs.PerRequest = append(hs.PerRequest, f.Name)
				if f.Name == "referer" {
					f.Value = "" // the recording's referer is the test host
				}
			}
			hs.Header = append(hs.Header, f)
		}
		p.Headers = append(p.Headers, hs)
		p.HTTP2.HeaderPriority = append(p.HTTP2.HeaderPriority, profile.KindPriority{
			Kind: kind, Exclusive: req.Priority.Exclusive, Weight: req.Priority.Weight, DependsOn: rule,
		})
	}
	for _, k := range []profile.RequestKind{profile.Navigate, profile.Fetch, profile.Subresource, profile.Image} {
		if p.HeaderSet(k, profile.H2) == nil {
			log.Fatalf("%v: no %v request in the recording", b, k)
		}
	}
	return p
}

func containsName(names []string, n string) bool {
	for _, x := range names {
		if x == n {
			return true
		}
	}
	return false
}

func setValues(p *profile.Profile, vals map[string]string) {
	for i := range p.Headers {
		h := p.Headers[i].Header
		for j := range h {
			if v, ok := vals[strings.ToLower(h[j].Name)]; ok {
				h[j].Value = v
			}
		}
	}
}

func write(ps []*profile.Profile) {
	keep := map[string]bool{}
	for _, p := range ps {
		b, err := p.Marshal()
		if err != nil {
			log.Fatalf("%s: %v", p.Name, err)
		}
		if _, err := profile.Parse(b); err != nil {
			log.Fatalf("%s: does not parse back: %v", p.Name, err)
		}
		name := p.Name + ".json"
		keep[name] = true
		path := filepath.Join("data", name)
		if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, b) {
			continue
		}
		if err := os.WriteFile(path, b, 0o644); err != nil {
			log.Fatal(err)
		}
		fmt.Fprintln(os.Stderr, "wrote", path)
	}
	// The generator owns data/: remove what it no longer produces.
	ents, err := os.ReadDir("data")
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".json") && !keep[e.Name()] {
			if err := os.Remove(filepath.Join("data", e.Name())); err != nil {
				log.Fatal(err)
			}
		}
	}
}
