package profile

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/guise-http/guise/fields"
)

func TestNames(t *testing.T) {
	names := Names()
	want := []string{"chrome156-android", "chrome156-linux", "chrome156-macos", "chrome156-windows", "edge156-macos", "edge156-windows",
		"firefox153-linux", "firefox153-macos", "firefox153-windows", "okhttp4-android", "safari18-ios", "safari18-macos", "safari26-ios", "safari26-macos"}
	if !slices.Equal(names, want) {
		t.Fatalf("Names() = %q, want %q", names, want)
	}
}

func TestLookup(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "chrome156-linux"},
		{Default, "chrome156-linux"},
		{"chrome156", "chrome156-linux"},
		{"Chrome156-Windows", "chrome156-windows"},
		{"chrome-macos", "chrome156-macos"},
		{"firefox", "firefox153-linux"},
		{"firefox153", "firefox153-linux"},
		{"firefox153-linux", "firefox153-linux"},
		{"edge-windows", "edge156-windows"},
		{"firefox-windows", "firefox153-windows"},
		{"safari", "safari26-macos"},
		{"Safari18", "safari18-macos"},
		{"safari-ios", "safari26-ios"},
		{"safari18-ios", "safari18-ios"},
		{"okhttp", "okhttp4-android"},
		{"okhttp4", "okhttp4-android"},
		{"chrome-android", "chrome156-android"},
		{"Chrome156-Android", "chrome156-android"},
	} {
		p, err := Lookup(tc.in)
		if err != nil {
			t.Errorf("Lookup(%q): %v", tc.in, err)
			continue
		}
		if p.Name != tc.want {
			t.Errorf("Lookup(%q) = %s, want %s", tc.in, p.Name, tc.want)
		}
	}
	for _, bad := range []string{"chrome155", "netscape", "chrome-plan9", "firefox153-ios", "chrome0", "chrome-1", "156", "edge", "chrome156x", "firefox153-android", "safari-linux", "safari17", "okhttp-ios", "okhttp5"} {
		if p, err := Lookup(bad); !errors.Is(err, ErrUnknown) {
			t.Errorf("Lookup(%q) = %v, %v; want ErrUnknown", bad, p != nil, err)
		}
	}
}

func TestLookupShared(t *testing.T) {
	var wg sync.WaitGroup
	got := make([]*Profile, 8)
	for i := range got {
		wg.Go(func() {
			p, err := Lookup("chrome")
			if err != nil {
				t.Error(err)
			}
			got[i] = p
		})
	}
	wg.Wait()
	for _, p := range got[1:] {
		if p != got[0] {
			t.Fatal("Lookup returned different values for one name: decoded more than once")
		}
	}
	if n := testing.AllocsPerRun(100, func() { _, _ = Lookup("chrome156-linux") }); n > 0 {
		t.Errorf("Lookup of a canonical name allocates %v times, want 0 (no re-decoding)", n)
	}
}

// recordedHello reads the raw record from a recording in testdata.
func recordedHello(t *testing.T, file string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/recordings/" + file)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		TLS struct {
			Record string `json:"client_hello_record_hex"`
		} `json:"tls"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	h, err := hex.DecodeString(r.TLS.Record)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestRecordedData(t *testing.T) {
	chromeHello := recordedHello(t, "chromium-156.json")
	for _, name := range []string{"chrome156-linux", "chrome156-windows", "chrome156-macos", "edge156-windows", "chrome156-android"} {
		p, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(p.TLS.Hello, chromeHello) {
			t.Errorf("%s: hello differs from the chromium recording", name)
		}
		if len(p.TLS.HelloHTTP1) == 0 || len(p.TLS.HelloResumed) == 0 || bytes.Equal(p.TLS.HelloHTTP1, p.TLS.Hello) {
			t.Errorf("%s: HTTP/1.1 or resumed hello missing", name)
		}
		if !bytes.Contains(p.TLS.HelloHTTP1, []byte("\x00\x10\x00\x0b\x00\x09\x08http/1.1")) {
			t.Errorf("%s: HelloHTTP1 does not offer http/1.1 alone", name)
		}
		if !p.TLS.ShuffleExtensions || !slices.Equal(p.TLS.ECHPayloadLengths, []int{144, 176, 208, 240}) {
			t.Errorf("%s: TLS = shuffle %v, ech %v", name, p.TLS.ShuffleExtensions, p.TLS.ECHPayloadLengths)
		}
		wantSettings := []Setting{{SettingHeaderTableSize, 65536}, {SettingEnablePush, 0}, {SettingInitialWindowSize, 6291456}, {SettingMaxHeaderListSize, 262144}}
		if !slices.Equal(p.HTTP2.Settings, wantSettings) || p.HTTP2.ConnWindowUpdate != 15663105 || p.HTTP2.FirstStreamID != 1 || p.HTTP2.StreamWindowUpdate != 0 {
			t.Errorf("%s: HTTP2 = %+v", name, p.HTTP2)
		}
		if !slices.Equal(p.HTTP2.PseudoOrder, []string{":method", ":authority", ":scheme", ":path"}) {
			t.Errorf("%s: pseudo order %q", name, p.HTTP2.PseudoOrder)
		}
		if kp, _ := p.Priority(Navigate); kp != (KindPriority{Navigate, true, 256, LatestOpen}) {
			t.Errorf("%s: navigate priority %+v", name, kp)
		}
		if kp, _ := p.Priority(Image); kp.Weight != 183 {
			t.Errorf("%s: image priority %+v", name, kp)
		}
		nav := p.HeaderSet(Navigate, H2)
		if nav == nil || nav.Header[0].Name != "sec-ch-ua" || nav.Header.Get("sec-fetch-site") != "none" {
			t.Fatalf("%s: navigate h2 set %+v", name, nav)
		}
		if ua := nav.Header.Get("user-agent"); bytes.Contains([]byte(ua), []byte("Headless")) {
			t.Errorf("%s: user-agent %q is the headless one", name, ua)
		}
		if h1 := p.HeaderSet(Navigate, HTTP1); h1 == nil || h1.Header[0].Name != "Host" || h1.Header.Has("priority") {
			t.Errorf("%s: navigate h1 set %+v", name, h1)
		}
		if !p.HTTP1.Recorded {
			t.Errorf("%s: HTTP/1.1 sets not marked recorded", name)
		}
		if h1 := p.HeaderSet(Image, HTTP1); h1 == nil || h1.Header[1].Name != "Connection" || h1.Header[2].Name != "sec-ch-ua-platform" || h1.Header.Get("Referer") != "" {
			t.Errorf("%s: image h1 set %+v", name, h1)
		}
	}
	if p, _ := Lookup("chrome156-windows"); p.HeaderSet(Fetch, H2).Header.Get("sec-ch-ua-platform") != `"Windows"` {
		t.Error("chrome156-windows: sec-ch-ua-platform not Windows")
	}
	if p, _ := Lookup("edge156-windows"); p.Recorded || !bytes.Contains([]byte(p.HeaderSet(Navigate, H2).Header.Get("user-agent")), []byte("Edg/156")) {
		t.Error("edge156-windows: want Recorded=false and an Edg/156 user-agent")
	}

	ff, err := Lookup("firefox")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ff.TLS.Hello, recordedHello(t, "firefox-esr-153.json")) {
		t.Error("firefox: hello differs from the recording")
	}
	if len(ff.TLS.HelloHTTP1) == 0 || len(ff.TLS.HelloResumed) == 0 {
		t.Error("firefox: HTTP/1.1 or resumed hello missing")
	}
	if fw, _ := Lookup("firefox153-windows"); fw == nil || !bytes.Equal(fw.TLS.Hello, ff.TLS.Hello) ||
		fw.HeaderSet(Navigate, HTTP1).Header.Get("User-Agent") != "Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:153.0) Gecko/20100101 Firefox/153.0" {
		t.Error("firefox153-windows: want the Linux wire format with a Windows user-agent")
	}
	if !slices.Equal(ff.TLS.ECHAEADs, []uint16{1, 3}) {
		t.Errorf("firefox ECH AEADs %v", ff.TLS.ECHAEADs)
	}
	if ff.TLS.ShuffleExtensions || ff.HTTP2.FirstStreamID != 3 || ff.HTTP2.StreamWindowUpdate != 12451840 || ff.HTTP2.ConnWindowUpdate != 12517377 {
		t.Errorf("firefox: %+v %+v", ff.TLS, ff.HTTP2)
	}
	if kp, _ := ff.Priority(Navigate); kp != (KindPriority{Navigate, false, 42, Root}) {
		t.Errorf("firefox navigate priority %+v", kp)
	}
	if !slices.Equal(ff.HTTP2.PseudoOrder, []string{":method", ":path", ":authority", ":scheme"}) {
		t.Errorf("firefox pseudo order %q", ff.HTTP2.PseudoOrder)
	}
	// Recorded, not derivable from h2: in a fetch() Referer precedes
	// Connection, and the script request has no Priority.
	if fe := ff.HeaderSet(Fetch, HTTP1); fe == nil || fe.Header[5].Name != "Referer" || fe.Header[6].Name != "Connection" {
		t.Errorf("firefox fetch h1 set %+v", fe)
	}
	if sc := ff.HeaderSet(Subresource, HTTP1); sc == nil || sc.Header.Has("Priority") || !slices.Equal(sc.PerRequest, []string{"Host", "Referer", "Cookie", "Sec-Fetch-Site"}) {
		t.Errorf("firefox script h1 set %+v", sc)
	}
	sub := ff.HeaderSet(Subresource, H2)
	if !slices.Equal(sub.PerRequest, []string{"referer", "cookie", "sec-fetch-site"}) || sub.Header.Get("referer") != "" {
		t.Errorf("firefox subresource per-request %q", sub.PerRequest)
	}
	// Recorded (testdata/recordings/*-flows.json): where Cookie goes.
	ch, err := Lookup("chrome156-linux")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		p           *Profile
		kind        RequestKind
		proto       Proto
		after, name string
	}{
		{ff, Navigate, H2, "referer", "cookie"},
		{ff, Fetch, H2, "referer", "cookie"},
		{ff, Navigate, HTTP1, "Referer", "Cookie"},
		{ff, Fetch, HTTP1, "Connection", "Cookie"},
		{ch, Navigate, H2, "accept-language", "cookie"},
		{ch, Image, H2, "accept-language", "cookie"},
		{ch, Navigate, HTTP1, "Accept-Language", "Cookie"},
		{ch, Subresource, HTTP1, "Accept-Language", "Cookie"},
		// and Referer in a navigation
		{ch, Navigate, H2, "sec-fetch-dest", "referer"},
		{ch, Navigate, HTTP1, "Sec-Fetch-Dest", "Referer"},
		{ff, Navigate, H2, "accept-encoding", "referer"},
		{ff, Navigate, HTTP1, "Connection", "Referer"},
	} {
		h := c.p.HeaderSet(c.kind, c.proto).Header
		i := slices.IndexFunc(h, func(f fields.Field) bool { return f.Name == c.name })
		if i < 1 || h[i-1].Name != c.after || h[i].Value != "" {
			t.Errorf("%s %v %v: %s at %d in %v, want right after %s", c.p.Name, c.kind, c.proto, c.name, i, h, c.after)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	for _, name := range Names() {
		p, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		b, err := p.Marshal()
		if err != nil {
			t.Fatalf("%s: Marshal: %v", name, err)
		}
		q, err := Parse(b)
		if err != nil {
			t.Fatalf("%s: Parse(Marshal): %v", name, err)
		}
		if !reflect.DeepEqual(p, q) {
			t.Errorf("%s: Parse(Marshal(p)) != p", name)
		}
		embedded, _ := dataFS.ReadFile("data/" + name + ".json")
		if !bytes.Equal(b, embedded) {
			t.Errorf("%s: Marshal output differs from the embedded file (regenerate with go generate ./profile)", name)
		}
		c := p.Clone()
		c.Headers[0].Header[0].Value = "changed"
		c.TLS.Hello[10] ^= 1
		if reflect.DeepEqual(p, c) {
			t.Errorf("%s: Clone shares memory", name)
		}
	}
}

func TestParseErrors(t *testing.T) {
	p, err := Lookup("chrome")
	if err != nil {
		t.Fatal(err)
	}
	good, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	edit := func(f func(m map[string]any)) []byte {
		var m map[string]any
		if err := json.Unmarshal(good, &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	sub := func(m map[string]any, k string) map[string]any { return m[k].(map[string]any) }
	for _, tc := range []struct {
		name  string
		data  []byte
		field string
	}{
		{"syntax", []byte(`{"format":`), ""},
		{"trailing", append(slices.Clone(good), []byte("{}")...), ""},
		{"unknown field", edit(func(m map[string]any) { m["colour"] = "blue" }), ""},
		{"format", edit(func(m map[string]any) { m["format"] = 1 }), "format"},
		{"hpack missing", edit(func(m map[string]any) { delete(sub(m, "http2"), "hpack") }), "http2.hpack.huffman"},
		{"hpack huffman", edit(func(m map[string]any) { sub(sub(m, "http2"), "hpack")["huffman"] = "sometimes" }), "huffman"},
		{"hpack name_ref", edit(func(m map[string]any) { delete(sub(sub(m, "http2"), "hpack"), "name_ref") }), "http2.hpack.name_ref"},
		{"hpack size_update", edit(func(m map[string]any) { sub(sub(m, "http2"), "hpack")["size_update"] = "" }), "size_update"},
		{"hpack no_index case", edit(func(m map[string]any) { sub(sub(m, "http2"), "hpack")["no_index"] = []string{":Path"} }), "http2.hpack.no_index[0]"},
		{"hpack never_index dup", edit(func(m map[string]any) { sub(sub(m, "http2"), "hpack")["never_index"] = []string{"a", "a"} }), "http2.hpack.never_index[1]"},
		{"hpack crumbs", edit(func(m map[string]any) { sub(sub(m, "http2"), "hpack")["short_crumb_never_index"] = -1 }), "http2.hpack.short_crumb_never_index"},
		{"ticket omitted without one", edit(func(m map[string]any) {
			sub(m, "tls")["resume_omits_session_ticket"] = true
			sub(m, "tls")["hello"] = hex.EncodeToString(withoutExtension(t, p.TLS.Hello, 35))
		}), "tls.resume_omits_session_ticket"},
		{"x25519 without ech", edit(func(m map[string]any) {
			sub(m, "tls")["hello"] = hex.EncodeToString(withoutExtension(t, p.TLS.Hello, 0xfe0d))
		}), "tls.ech_x25519_key"},
		{"redirect fetch", edit(func(m map[string]any) {
			m["headers"].([]any)[0].(map[string]any)["redirect"] = true
			m["headers"].([]any)[0].(map[string]any)["kind"] = "fetch"
		}), "headers[0]"},
		{"dup redirect set", edit(func(m map[string]any) {
			hs := m["headers"].([]any)
			m["headers"] = append(hs, hs[len(hs)-1])
		}), fmt.Sprintf("headers[%d]", len(p.Headers))},
		{"needs_body in a plain set", edit(func(m map[string]any) {
			m["headers"].([]any)[0].(map[string]any)["header"].([]any)[0].(map[string]any)["needs_body"] = true
		}), "headers[0].needs_body"},
		{"redirect flag dropped", edit(func(m map[string]any) {
			for _, hs := range m["headers"].([]any) {
				delete(hs.(map[string]any), "redirect")
			}
		}), fmt.Sprintf("headers[%d]", slices.IndexFunc(p.Headers, func(hs HeaderSet) bool { return hs.Redirect }))},
		{"browser", edit(func(m map[string]any) { m["browser"] = "netscape" }), "browser"},
		{"name", edit(func(m map[string]any) { m["name"] = "chrome" }), "name"},
		{"no source", edit(func(m map[string]any) { m["source"] = " " }), "source"},
		{"hello hex", edit(func(m map[string]any) { sub(m, "tls")["hello"] = "zz" }), "tls.hello"},
		{"hello missing", edit(func(m map[string]any) { delete(sub(m, "tls"), "hello") }), "tls.hello"},
		{"hello not a record", edit(func(m map[string]any) { sub(m, "tls")["hello"] = "170303000401000000" }), "tls.hello"},
		{"hello short", edit(func(m map[string]any) { sub(m, "tls")["hello"] = "16030100050100000100" }), "tls.hello"},
		{"hello repeated extension", edit(func(m map[string]any) {
			sub(m, "tls")["hello"] = helloWith(t, p.TLS.Hello, []byte{0, 0x23, 0, 0})
		}), "tls.hello"},
		{"hello trailing bytes", edit(func(m map[string]any) {
			h := append(slices.Clone(p.TLS.Hello), 0)
			h[4]++
			h[8]++
			sub(m, "tls")["hello"] = hex.EncodeToString(h)
		}), "tls.hello"},
		{"ech length", edit(func(m map[string]any) { sub(m, "tls")["ech_payload_lengths"] = []int{0} }), "tls.ech_payload_lengths[0]"},
		{"ech aead", edit(func(m map[string]any) { sub(m, "tls")["ech_aeads"] = []int{1, 1} }), "tls.ech_aeads[1]"},
		{"dup setting", edit(func(m map[string]any) {
			h := sub(m, "http2")
			h["settings"] = append(h["settings"].([]any), h["settings"].([]any)[0])
		}), "http2.settings[4]"},
		{"even stream", edit(func(m map[string]any) { sub(m, "http2")["first_stream_id"] = 2 }), "http2.first_stream_id"},
		{"window", edit(func(m map[string]any) { sub(m, "http2")["conn_window_update"] = 1 << 31 }), "http2.conn_window_update"},
		{"pseudo", edit(func(m map[string]any) {
			sub(m, "http2")["pseudo_order"] = []string{":method", ":method", ":scheme", ":path"}
		}), "http2.pseudo_order"},
		{"weight", edit(func(m map[string]any) {
			sub(m, "http2")["header_priority"].([]any)[0].(map[string]any)["weight"] = 257
		}), "http2.header_priority[0]"},
		{"kind", edit(func(m map[string]any) {
			m["headers"].([]any)[0].(map[string]any)["kind"] = "telepathy"
		}), "kind"},
		{"dup set", edit(func(m map[string]any) {
			hs := m["headers"].([]any)
			m["headers"] = append(hs, hs[0])
		}), fmt.Sprintf("headers[%d]", len(p.Headers))},
		{"dup body set", edit(func(m map[string]any) {
			hs := m["headers"].([]any)
			m["headers"] = append(hs, hs[slices.IndexFunc(p.Headers, func(hs HeaderSet) bool { return hs.Body })])
		}), fmt.Sprintf("headers[%d]", len(p.Headers))},
		{"body flag dropped", edit(func(m map[string]any) {
			for _, hs := range m["headers"].([]any) {
				delete(hs.(map[string]any), "body")
			}
		}), fmt.Sprintf("headers[%d]", slices.IndexFunc(p.Headers, func(hs HeaderSet) bool { return hs.Body }))},
		{"h2 upper", edit(func(m map[string]any) {
			m["headers"].([]any)[0].(map[string]any)["header"].([]any)[0].(map[string]any)["name"] = "Sec-Ch-Ua"
		}), "headers[0].header[0]"},
		{"crlf value", edit(func(m map[string]any) {
			m["headers"].([]any)[0].(map[string]any)["header"].([]any)[0].(map[string]any)["value"] = "a\r\nb"
		}), "headers[0].header[0]"},
		{"empty fixed value", edit(func(m map[string]any) {
			m["headers"].([]any)[0].(map[string]any)["header"].([]any)[0].(map[string]any)["value"] = ""
		}), "headers[0].header[0]"},
		{"too big", make([]byte, MaxFileSize+1), ""},
	} {
		_, err := Parse(tc.data)
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("%s: Parse error %v is not a *ParseError", tc.name, err)
			continue
		}
		if pe.Field != tc.field {
			t.Errorf("%s: field %q, want %q (%v)", tc.name, pe.Field, tc.field, err)
		}
	}
}

func TestParseRepeatedExtension(t *testing.T) {
	p, _ := Lookup("chrome")
	c := p.Clone()
	h, _ := hex.DecodeString(helloWith(t, p.TLS.Hello, []byte{0, 0x23, 0, 0}))
	c.TLS.Hello = h
	var pe *ParseError
	if _, err := c.Marshal(); !errors.As(err, &pe) || pe.Field != "tls.hello" || !strings.Contains(pe.Reason, "extension 35 appears twice") {
		t.Fatalf("Marshal with a repeated extension: %v", err)
	}
}

func TestMarshalValidates(t *testing.T) {
	p, _ := Lookup("firefox")
	c := p.Clone()
	c.HTTP2.Settings = nil
	var pe *ParseError
	if _, err := c.Marshal(); !errors.As(err, &pe) || pe.Field != "http2.settings" {
		t.Fatalf("Marshal of an invalid profile: %v", err)
	}
	c = p.Clone()
	c.Headers[0].PerRequest = []string{"nonexistent"}
	if _, err := c.Marshal(); !errors.As(err, &pe) {
		t.Fatalf("Marshal with a per-request name not in the set: %v", err)
	}
}

func TestEnumStrings(t *testing.T) {
	if Chrome.String() != "chrome" || MacOS.String() != "macos" || Navigate.String() != "navigate" ||
		HTTP1.String() != "http/1.1" || LatestOpen.String() != "latest-open" ||
		SettingInitialWindowSize.String() != "INITIAL_WINDOW_SIZE" || SettingID(0x99).String() != "UNKNOWN_SETTING_153" ||
		Browser(0).String() != "Browser(0)" {
		t.Error("enum String mismatch")
	}
	if _, err := Browser(0).MarshalText(); err == nil {
		t.Error("zero Browser marshals")
	}
}

func FuzzParse(f *testing.F) {
	for _, name := range []string{"chrome156-linux", "firefox153-linux", "safari18-macos", "okhttp4-android"} {
		b, err := dataFS.ReadFile("data/" + name + ".json")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"format":1}`))
	f.Add([]byte(`{"format":2,"fallback":"chrome156-linux","reference":{"ja4":"t13d","ja3n":"x","akamai":"1:1|0|0|m,a,s,p","pseudo_order":[":method"],"header_order":["a"]}}`))
	f.Add([]byte(`{"format":2}`))
	f.Add([]byte(`{"format":2,"http2":{"hpack":{"huffman":"shorter","name_ref":"last-match","size_update":"on-setting","no_index":[":path"]}}}`))
	f.Add([]byte(`{"format":2,"headers":[{"kind":"navigate","proto":"h2","redirect":true,"header":[{"name":"a","value":"b","user_activation":true,"needs_body":true}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse(data)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *ParseError", err)
			}
			return
		}
		b, err := p.Marshal()
		if err != nil {
			t.Fatalf("Marshal of a parsed profile: %v", err)
		}
		q, err := Parse(b)
		if err != nil {
			t.Fatalf("Parse(Marshal(p)): %v", err)
		}
		if !reflect.DeepEqual(p, q) {
			t.Fatal("Parse(Marshal(p)) != p")
		}
	})
}

// helloWith returns rec with ext appended and the lengths fixed, in hex.
func helloWith(t *testing.T, rec, ext []byte) string {
	t.Helper()
	out := append(slices.Clone(rec), ext...)
	n := len(out) - 5
	out[3], out[4] = byte(n>>8), byte(n)
	n = len(out) - 9
	out[6], out[7], out[8] = byte(n>>16), byte(n>>8), byte(n)
	b := out[9+2+32:]
	off := 9 + 2 + 32 + 1 + int(b[0])
	off += 2 + (int(out[off])<<8 | int(out[off+1]))
	off += 1 + int(out[off])
	n = len(out) - off - 2
	out[off], out[off+1] = byte(n>>8), byte(n)
	if _, err := Parse(mustMarshalWithHello(t, rec)); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(out)
}

func mustMarshalWithHello(t *testing.T, rec []byte) []byte {
	t.Helper()
	p, _ := Lookup("chrome")
	c := p.Clone()
	c.TLS.Hello = rec
	b, err := c.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestParseWithoutBodySets: a file written before header sets had a Body
// variant (no "body" keys, no body sets) still parses, and its profile has
// no body sets.
func TestParseWithoutBodySets(t *testing.T) {
	p, err := Lookup("firefox")
	if err != nil {
		t.Fatal(err)
	}
	if p.BodyHeaderSet(Fetch, H2) == nil || p.BodyHeaderSet(Navigate, HTTP1) == nil || p.BodyHeaderSet(Image, H2) != nil {
		t.Fatal("firefox: want body sets for fetch and navigate only")
	}
	q := p.Clone()
	q.Headers = slices.DeleteFunc(q.Headers, func(hs HeaderSet) bool { return hs.Body })
	b, err := q.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(b, []byte(`"body"`)) {
		t.Fatal(`a profile without body sets writes "body" keys`)
	}
	r, err := Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if r.BodyHeaderSet(Fetch, H2) != nil || r.HeaderSet(Fetch, H2) == nil {
		t.Error("parsed: body set present or plain set missing")
	}
}

// withoutExtension returns rec without extension typ, the lengths fixed.
func withoutExtension(t *testing.T, rec []byte, typ uint16) []byte {
	t.Helper()
	out := slices.Clone(rec)
	off := 9 + 2 + 32
	off += 1 + int(out[off])
	off += 2 + (int(out[off])<<8 | int(out[off+1]))
	off += 1 + int(out[off])
	extLen := off
	for i := off + 2; i+4 <= len(out); {
		n := int(out[i+2])<<8 | int(out[i+3])
		if uint16(out[i])<<8|uint16(out[i+1]) == typ {
			out = append(out[:i], out[i+4+n:]...)
			n = len(out) - 5
			out[3], out[4] = byte(n>>8), byte(n)
			n = len(out) - 9
			out[6], out[7], out[8] = byte(n>>16), byte(n>>8), byte(n)
			n = len(out) - extLen - 2
			out[extLen], out[extLen+1] = byte(n>>8), byte(n)
			return out
		}
		i += 4 + n
	}
	t.Fatalf("no extension %d", typ)
	return nil
}
