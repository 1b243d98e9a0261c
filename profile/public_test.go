package profile_test

import (
	"bytes"
	"encoding/binary"
	"slices"
	"strings"
	"testing"

	"github.com/guise-http/guise/fingerprint"
	"github.com/guise-http/guise/profile"
)

// publicFacts are the fingerprints published for the clients the profiles
// built from public facts stand for (each profile's Source says where).
var publicFacts = []struct {
	name, ja4, ja3, akamai string
	akamaiHash             string
	osName                 string
	uaHas                  string
}{
	// JA4 and Akamai: deedy5/primp's Safari 18.5 tests against
	// tls.browserleaks.com; JA3: a real Safari hello in a public flow
	// dataset (same JA4 there).
	{"safari18-macos", "t13d2014h2_a09f3c656075_e42f34c56612", "773906b0efdefa24a7f2b8eb6985bf37",
		"2:0;3:100;4:2097152;9:1|10420225|0|m,s,a,p", "c52879e43202aeb92740be6e8c86ea96", "macos", "Macintosh; Intel Mac OS X 10_15_7"},
	{"safari18-ios", "t13d2014h2_a09f3c656075_e42f34c56612", "773906b0efdefa24a7f2b8eb6985bf37",
		"2:0;3:100;4:2097152;9:1|10420225|0|m,s,a,p", "c52879e43202aeb92740be6e8c86ea96", "ios", "iPhone; CPU iPhone OS 18_5"},
	// Safari 26.4 on macOS 26.4 and iOS 26.4: JA4 as testssl.sh records
	// it with its real-device hellos (safari26_test.go compares every
	// field); JA3 and Akamai as a real iPhone on 26.0.1 showed
	// tls.browserleaks.com (lexiforest/curl-impersonate#186).
	{"safari26-macos", "t13d2013h2_a09f3c656075_7f0f34a4126d", "ecdf4f49dd59effc439639da29186671",
		"2:0;3:100;4:2097152;9:1|10420225|0|m,s,a,p", "c52879e43202aeb92740be6e8c86ea96", "macos", "Macintosh; Intel Mac OS X 10_15_7"},
	{"safari26-ios", "t13d2013h2_a09f3c656075_7f0f34a4126d", "ecdf4f49dd59effc439639da29186671",
		"2:0;3:100;4:2097152;9:1|10420225|0|m,s,a,p", "c52879e43202aeb92740be6e8c86ea96", "ios", "iPhone; CPU iPhone OS 18_7"},
	// JA3 and Akamai as published (tls.peet.ws) for tls-client's
	// okhttp4_android_13. tls.peet.ws's JA4 is
	// t13d1513h2_8daaf6152771_40271e0a5736: it leaves padding (0015) out of
	// the extension hash; FoxIO's JA4, which fingerprint computes, keeps it.
	{"okhttp4-android", "t13d1513h2_8daaf6152771_eca864cca44a", "f79b6bad2ad0641e1921aef10262856b",
		"4:16777216|16711681|0|m,p,a,s", "605a1154008045d7e3cb3c6fb062c0ce", "android", "okhttp/4.12.0"},
}

func TestPublicProfilesMatchPublishedFingerprints(t *testing.T) {
	for _, pf := range publicFacts {
		p, err := profile.Lookup(pf.name)
		if err != nil {
			t.Fatal(err)
		}
		if p.Recorded || p.HTTP1.Recorded || !strings.HasPrefix(p.Source, "not recorded here: built from public facts") {
			t.Errorf("%s: Recorded=%v HTTP1.Recorded=%v source %q: want marked as not recorded", pf.name, p.Recorded, p.HTTP1.Recorded, p.Source)
		}
		if p.OS.String() != pf.osName {
			t.Errorf("%s: OS %v", pf.name, p.OS)
		}
		ch, err := fingerprint.ParseClientHello(p.TLS.Hello)
		if err != nil {
			t.Fatalf("%s: %v", pf.name, err)
		}
		if got := ch.JA4(); got != pf.ja4 {
			t.Errorf("%s: JA4 %s, published %s (JA4_r %s)", pf.name, got, pf.ja4, ch.JA4R())
		}
		if got := ch.JA3Hash(); got != pf.ja3 {
			t.Errorf("%s: JA3 %s, published %s (%s)", pf.name, got, pf.ja3, ch.JA3())
		}
		h := &fingerprint.HTTP2{ConnWindowUpdate: p.HTTP2.ConnWindowUpdate,
			Requests: []fingerprint.HTTP2Request{{PseudoOrder: p.HTTP2.PseudoOrder}}}
		for _, s := range p.HTTP2.Settings {
			h.Settings = append(h.Settings, fingerprint.Setting{ID: uint16(s.ID), Value: s.Value})
		}
		if got, hash := h.Akamai(), h.AkamaiHash(); got != pf.akamai || hash != pf.akamaiHash {
			t.Errorf("%s: Akamai %s (%s), published %s (%s)", pf.name, got, hash, pf.akamai, pf.akamaiHash)
		}
		nav := p.HeaderSet(profile.Navigate, profile.H2)
		if nav == nil || !strings.Contains(nav.Header.Get("user-agent"), pf.uaHas) {
			t.Errorf("%s: navigate h2 set %+v", pf.name, nav)
		}
		if h1 := p.HeaderSet(profile.Navigate, profile.HTTP1); h1 == nil || h1.Header[0].Name != "Host" {
			t.Errorf("%s: navigate h1 set %+v, want Host first", pf.name, h1)
		}
	}
}

func TestPublicProfilesHTTP(t *testing.T) {
	s, err := profile.Lookup("safari18")
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "safari18-macos" || s.HTTP2.FirstStreamID != 1 || s.HTTP2.StreamWindowUpdate != 0 || s.HTTP2.Priorities != nil {
		t.Errorf("safari: %s %+v", s.Name, s.HTTP2)
	}
	if kp, ok := s.Priority(profile.Navigate); !ok || kp != (profile.KindPriority{Kind: profile.Navigate, Weight: 256, DependsOn: profile.Root}) {
		t.Errorf("safari navigate priority %+v %v", kp, ok)
	}
	var order []string
	for _, f := range s.HeaderSet(profile.Navigate, profile.H2).Header {
		order = append(order, f.Name)
	}
	if want := []string{"sec-fetch-dest", "user-agent", "accept", "sec-fetch-site", "sec-fetch-mode", "accept-language", "cookie", "priority", "accept-encoding"}; !slices.Equal(order, want) {
		t.Errorf("safari navigate order %q, want %q", order, want)
	}

	o, err := profile.Lookup("okhttp")
	if err != nil {
		t.Fatal(err)
	}
	if o.Name != "okhttp4-android" || o.HTTP2.FirstStreamID != 3 || o.HTTP2.HeaderPriority != nil {
		t.Errorf("okhttp: %s %+v", o.Name, o.HTTP2)
	}
	for _, k := range []profile.RequestKind{profile.Navigate, profile.Fetch, profile.Subresource, profile.Image} {
		h2, h1 := o.HeaderSet(k, profile.H2), o.HeaderSet(k, profile.HTTP1)
		if h2 == nil || h1 == nil {
			t.Fatalf("okhttp: no %v set", k)
		}
		if h2.Header.Get("user-agent") != "okhttp/4.12.0" || h2.Header.Get("accept-encoding") != "gzip" || h2.Header.Has("connection") {
			t.Errorf("okhttp %v h2 set %+v", k, h2.Header)
		}
		var names []string
		for _, f := range h1.Header {
			names = append(names, f.Name)
		}
		if !slices.Equal(names, []string{"Host", "Connection", "Accept-Encoding", "User-Agent", "Cookie"}) || h1.Header.Get("Connection") != "Keep-Alive" {
			t.Errorf("okhttp %v h1 set %+v", k, h1.Header)
		}
	}
}

// helloExts walks a ClientHello record: the extensions in order, with the
// message length. A local check independent of fingerprint's parser.
func helloExts(t *testing.T, rec []byte) (msgLen int, exts map[uint16][]byte, order []uint16) {
	t.Helper()
	if len(rec) < 9 || rec[0] != 0x16 || rec[5] != 1 {
		t.Fatalf("not a ClientHello record")
	}
	msgLen = 4 + (int(rec[6])<<16 | int(rec[7])<<8 | int(rec[8]))
	b := rec[9+2+32:]
	b = b[1+int(b[0]):]
	b = b[2+int(binary.BigEndian.Uint16(b)):]
	b = b[1+int(b[0]):]
	n := int(binary.BigEndian.Uint16(b))
	b = b[2:]
	if n != len(b) {
		t.Fatalf("extensions length %d, have %d bytes", n, len(b))
	}
	exts = map[uint16][]byte{}
	for len(b) > 0 {
		typ, l := binary.BigEndian.Uint16(b), int(binary.BigEndian.Uint16(b[2:]))
		exts[typ] = b[4 : 4+l]
		order = append(order, typ)
		b = b[4+l:]
	}
	return msgLen, exts, order
}

func isGREASE(v uint16) bool { return v&0x0f0f == 0x0a0a && v>>8 == v&0xff }

func TestPublicHellos(t *testing.T) {
	for _, name := range []string{"safari18-macos", "safari18-ios", "okhttp4-android"} {
		p, err := profile.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		msgLen, exts, order := helloExts(t, p.TLS.Hello)
		// BoringSSL pads a hello of 256..511 bytes to 512.
		if msgLen != 512 || exts[0x15] == nil || order[len(order)-1] != 0x15 {
			t.Errorf("%s: hello message of %d bytes, padding last: %v", name, msgLen, order)
		}
		if !bytes.Contains(exts[0], []byte("fp.test")) {
			t.Errorf("%s: SNI %q", name, exts[0])
		}
		// key_share: x25519 with 32 bytes (after a 1-byte GREASE share in
		// Safari).
		ks := exts[0x33]
		ks = ks[2:]
		if name != "okhttp4-android" {
			if g := binary.BigEndian.Uint16(ks); !isGREASE(g) || !bytes.Equal(ks[2:5], []byte{0, 1, 0}) {
				t.Errorf("%s: first key share %x", name, ks[:5])
			}
			ks = ks[5:]
		}
		if binary.BigEndian.Uint16(ks) != 0x001d || binary.BigEndian.Uint16(ks[2:]) != 32 || len(ks) != 36 {
			t.Errorf("%s: x25519 share %x", name, ks)
		}
		greased := 0
		for _, e := range order {
			if isGREASE(e) {
				greased++
			}
		}
		if want := map[bool]int{true: 2, false: 0}[name != "okhttp4-android"]; greased != want || (want > 0 && (!isGREASE(order[0]) || !isGREASE(order[len(order)-2]))) {
			t.Errorf("%s: %d GREASE extensions in %x", name, greased, order)
		}
	}
	// The two Safari profiles share one wire format.
	m, _ := profile.Lookup("safari18-macos")
	i, _ := profile.Lookup("safari18-ios")
	if !bytes.Equal(m.TLS.Hello, i.TLS.Hello) {
		t.Error("safari macOS and iOS hellos differ")
	}
}
