package fingerprint

import (
	"fmt"
	"testing"
)

// The JA4 example of the FoxIO specification
// (github.com/FoxIO-LLC/ja4, technical_details/JA4.md, "Cipher hash",
// "Extension hash", "Example" and "Raw Output"), also the unit test of the
// reference Rust implementation (rust/ja4/src/tls.rs,
// test_client_stats_into_out): ciphers, extensions and signature algorithms
// in wire order, SNI present, first ALPN "h2", TLS 1.3.
var (
	specCiphers = []uint16{0x1301, 0x1302, 0x1303, 0xc02b, 0xc02f, 0xc02c, 0xc030, 0xcca9, 0xcca8,
		0xc013, 0xc014, 0x009c, 0x009d, 0x002f, 0x0035}
	specExtOrder = []uint16{0x001b, 0x0000, 0x0033, 0x0010, 0x4469, 0x0017, 0x002d, 0x000d, 0x0005,
		0x0023, 0x0012, 0x002b, 0xff01, 0x000b, 0x000a, 0x0015}
	specSigAlgs = []uint16{0x0403, 0x0804, 0x0401, 0x0503, 0x0805, 0x0501, 0x0806, 0x0601}
)

// specHello builds that hello, with GREASE added where browsers put it
// (first cipher, first and last extension, first group, first version,
// first signature algorithm) to show it is ignored everywhere. withSigs
// false sends an empty signature_algorithms list.
func specHello(withSigs bool) helloSpec {
	s := helloSpec{ciphers: append([]uint16{0x0a0a}, specCiphers...)}
	s.extensions = append(s.extensions, Extension{Type: 0x1a1a})
	for _, typ := range specExtOrder {
		var e Extension
		switch typ {
		case extServerName:
			e = extSNI("example.com")
		case extALPN:
			e = extALPNOf("h2", "http/1.1")
		case extSignatureAlgorithms:
			e = extSigAlgs()
			if withSigs {
				e = extSigAlgs(append([]uint16{0x2a2a}, specSigAlgs...)...)
			}
		case extSupportedVersions:
			e = extVersions(0x3a3a, 0x0304, 0x0303)
		case extSupportedGroups:
			e = extGroups(0x4a4a, 0x001d, 0x0017)
		case extCompressCertificate:
			e = Extension{Type: typ, Data: vec8(u16list(2))}
		case extKeyShare:
			e = Extension{Type: typ, Data: vec16(append(u16list(0x001d), vec16(make([]byte, 32))...))}
		case extPSKKeyExchangeModes, extECPointFormats:
			e = Extension{Type: typ, Data: vec8([]byte{1})}
		case extALPSOld:
			e = Extension{Type: typ, Data: vec16(vec8([]byte("h2")))}
		default:
			e = Extension{Type: typ}
		}
		s.extensions = append(s.extensions, e)
	}
	s.extensions = append(s.extensions, Extension{Type: 0x5a5a, Data: []byte{0}})
	return s
}

func TestJA4SpecExample(t *testing.T) {
	ch, err := ParseClientHello(specHello(true).record())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, got, want string }{
		{"ja4", ch.JA4(), "t13d1516h2_8daaf6152771_e5627efa2ab1"},
		{"ja4_r", ch.JA4R(), "t13d1516h2_002f,0035,009c,009d,1301,1302,1303,c013,c014,c02b,c02c,c02f,c030,cca8,cca9_0005,000a,000b,000d,0012,0015,0017,001b,0023,002b,002d,0033,4469,ff01_0403,0804,0401,0503,0805,0501,0806,0601"},
		{"ja4_o", ch.JA4O(), "t13d1516h2_acb858a92679_18f69afefd3d"},
		{"ja4_ro", ch.JA4RO(), "t13d1516h2_1301,1302,1303,c02b,c02f,c02c,c030,cca9,cca8,c013,c014,009c,009d,002f,0035_001b,0000,0033,0010,4469,0017,002d,000d,0005,0023,0012,002b,ff01,000b,000a,0015_0403,0804,0401,0503,0805,0501,0806,0601"},
		{"ja4 quic", ch.JA4WithTransport('q'), "q13d1516h2_8daaf6152771_e5627efa2ab1"},
	} {
		if c.got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, c.got, c.want)
		}
	}
}

// JA4.md, "Extension hash": without signature algorithms the string ends
// without an underscore: "0005,...,ff01" hashes to 6d807ffa2a79.
func TestJA4SpecNoSignatureAlgorithms(t *testing.T) {
	ch, err := ParseClientHello(specHello(false).record())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ch.JA4(), "t13d1516h2_8daaf6152771_6d807ffa2a79"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if got, want := ch.JA4R(), "t13d1516h2_002f,0035,009c,009d,1301,1302,1303,c013,c014,c02b,c02c,c02f,c030,cca8,cca9_0005,000a,000b,000d,0012,0015,0017,001b,0023,002b,002d,0033,4469,ff01"; got != want {
		t.Errorf("raw: got %s, want %s", got, want)
	}
}

// JA4.md, "ALPN Extension Value": first and last characters of the first
// ALPN value; hex when either end is not alphanumeric; "00" without one.
func TestJA4ALPNRule(t *testing.T) {
	for _, c := range []struct {
		alpn []string // nil: no ALPN extension
		want string
	}{
		{[]string{"h2", "http/1.1"}, "h2"},
		{[]string{"http/1.1"}, "h1"},
		{[]string{"h3"}, "h3"},
		{[]string{"x"}, "xx"},          // one character is both first and last
		{[]string{"\xab"}, "ab"},       // spec: 0xAB
		{[]string{"\xab\xcd"}, "ad"},   // spec: 0xAB 0xCD
		{[]string{"0\xab"}, "3b"},      // spec: 0x30 0xAB
		{[]string{"01\xab\xcd"}, "3d"}, // spec: 0x30 0x31 0xAB 0xCD
		{[]string{"0\xab\xcd1"}, "01"}, // spec: 0x30 0xAB 0xCD 0x31
		{[]string{"", "h2"}, "00"},     // empty first value
		{[]string{}, "00"},             // extension with an empty list
		{nil, "00"},                    // no extension
		{[]string{"é"}, "c9"},          // UTF-8 0xC3 0xA9
	} {
		s := helloSpec{ciphers: []uint16{0x1301}}
		if c.alpn != nil {
			s.extensions = append(s.extensions, extALPNOf(c.alpn...))
		}
		ch, err := ParseClientHello(s.record())
		if err != nil {
			t.Fatal(err)
		}
		if got := ch.JA4()[8:10]; got != c.want {
			t.Errorf("ALPN %q: got %q, want %q", c.alpn, got, c.want)
		}
	}
}

// JA4.md: counts ignore GREASE and are capped at 99; the version comes
// from supported_versions when present, else from legacy_version; "i"
// without SNI; empty lists give 000000000000.
func TestJA4Sections(t *testing.T) {
	many := make([]uint16, 0, 120)
	for i := range 120 {
		many = append(many, uint16(0x0100+i))
	}
	manyExts := make([]Extension, 0, 110)
	for i := range 110 {
		manyExts = append(manyExts, Extension{Type: uint16(0x1000 + i)})
	}
	for _, c := range []struct {
		name string
		spec helloSpec
		want string
	}{
		{"tls12 no extensions", helloSpec{ciphers: []uint16{0xc02f}, noExts: true},
			"t12i010000_" + hash12([]byte("c02f")) + "_000000000000"},
		{"tls10 legacy", helloSpec{version: 0x0301, ciphers: []uint16{0x002f}, noExts: true},
			"t10i010000_" + hash12([]byte("002f")) + "_000000000000"},
		{"only sni and alpn", helloSpec{ciphers: []uint16{0x1301},
			extensions: []Extension{extSNI("a.test"), extALPNOf("h2")}},
			"t12d0102h2_" + hash12([]byte("1301")) + "_000000000000"},
		{"supported_versions wins, grease ignored", helloSpec{ciphers: []uint16{0x1301, 0xfafa},
			extensions: []Extension{extVersions(0xeaea, 0x0303, 0x0304)}},
			"t13i0101" + "00_" + hash12([]byte("1301")) + "_" + hash12([]byte("002b"))},
		{"unknown version", helloSpec{version: 0x7f17, ciphers: []uint16{0x1301}, noExts: true},
			"t00i010000_" + hash12([]byte("1301")) + "_000000000000"},
		{"caps at 99", helloSpec{ciphers: many, extensions: manyExts}, "t12i9999"},
	} {
		ch, err := ParseClientHello(c.spec.record())
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := ch.JA4()
		if len(c.want) < 20 {
			got = got[:len(c.want)]
		}
		if got != c.want {
			t.Errorf("%s: got %s, want %s", c.name, got, c.want)
		}
	}
}

func TestIsGREASE(t *testing.T) {
	n := 0
	for v := range 1 << 16 {
		if IsGREASE(uint16(v)) {
			n++
			if want := uint16(v&0xf0)<<8 | uint16(v&0xf0) | 0x0a0a; uint16(v) != want {
				t.Errorf("IsGREASE(%#04x) = true", v)
			}
		}
	}
	if n != 16 {
		t.Errorf("%d GREASE values, want 16", n)
	}
	for _, v := range []uint16{0x0a0a, 0x1a1a, 0x7a7a, 0xfafa} {
		if !IsGREASE(v) {
			t.Errorf("IsGREASE(%#04x) = false", v)
		}
	}
}

func ExampleClientHello_JA4() {
	ch, err := ParseClientHello(specHello(true).record())
	if err != nil {
		panic(err)
	}
	fmt.Println(ch.JA4())
	// Output: t13d1516h2_8daaf6152771_e5627efa2ab1
}

// FoxIO's test data for a Chrome hello with a GREASE value in
// signature_algorithms (github.com/FoxIO-LLC/ja4,
// python/test/testdata/sigalg-grease.pcapng.json, from
// pcap/sigalg-grease.pcapng): the hello is rebuilt from the wire order its
// JA4_ro lists, GREASE added where Chrome puts it, and must give the four
// published strings.
func TestJA4FoxIOSigAlgGREASE(t *testing.T) {
	s := helloSpec{ciphers: []uint16{0x3a3a, 0x1301, 0x1302, 0x1303, 0xc02b, 0xc02f, 0xc02c, 0xc030, 0xcca9,
		0xcca8, 0xc013, 0xc014, 0x009c, 0x009d, 0x002f, 0x0035}}
	s.extensions = append(s.extensions, Extension{Type: 0xdada})
	for _, typ := range []uint16{0xfe0d, 0x0010, 0x0017, 0x0033, 0x44cd, 0xff01, 0x000a, 0x000d, 0x0023, 0x002b,
		0x000b, 0xca34, 0x002d, 0x0000, 0x0005, 0x001b, 0x0012} {
		var e Extension
		switch typ {
		case extECH:
			e = Extension{Type: typ, Data: append([]byte{0, 0, 1, 0, 1, 7}, append(vec16(make([]byte, 32)), vec16(make([]byte, 144))...)...)}
		case extALPN:
			e = extALPNOf("h2", "http/1.1")
		case extKeyShare:
			e = Extension{Type: typ, Data: vec16(append(append(u16list(0x2a2a), vec16([]byte{0})...), append(u16list(0x001d), vec16(make([]byte, 32))...)...))}
		case extALPS:
			e = Extension{Type: typ, Data: vec16(vec8([]byte("h2")))}
		case extSupportedGroups:
			e = extGroups(0x2a2a, 0x11ec, 0x001d, 0x0017, 0x0018)
		case extSignatureAlgorithms:
			e = extSigAlgs(0x4a4a, 0x0904, 0x0905, 0x0906, 0x0403, 0x0804, 0x0401, 0x0503, 0x0805, 0x0501, 0x0806, 0x0601)
		case extSupportedVersions:
			e = extVersions(0x6a6a, 0x0304, 0x0303)
		case extECPointFormats, extPSKKeyExchangeModes:
			e = Extension{Type: typ, Data: vec8([]byte{typ2byte(typ)})}
		case extCompressCertificate:
			e = Extension{Type: typ, Data: vec8(u16list(2))}
		case extServerName:
			e = extSNI("optimizationguide-pa.googleapis.com")
		default:
			e = Extension{Type: typ}
		}
		s.extensions = append(s.extensions, e)
	}
	s.extensions = append(s.extensions, Extension{Type: 0x8a8a, Data: []byte{0}})
	ch, err := ParseClientHello(s.record())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, got, want string }{
		{"ja4", ch.JA4(), "t13d1517h2_8daaf6152771_cb7bf5808d99"},
		{"ja4_r", ch.JA4R(), "t13d1517h2_002f,0035,009c,009d,1301,1302,1303,c013,c014,c02b,c02c,c02f,c030,cca8,cca9_0005,000a,000b,000d,0012,0017,001b,0023,002b,002d,0033,44cd,ca34,fe0d,ff01_0904,0905,0906,0403,0804,0401,0503,0805,0501,0806,0601"},
		{"ja4_o", ch.JA4O(), "t13d1517h2_acb858a92679_88bf22a3e888"},
		{"ja4_ro", ch.JA4RO(), "t13d1517h2_1301,1302,1303,c02b,c02f,c02c,c030,cca9,cca8,c013,c014,009c,009d,002f,0035_fe0d,0010,0017,0033,44cd,ff01,000a,000d,0023,002b,000b,ca34,002d,0000,0005,001b,0012_0904,0905,0906,0403,0804,0401,0503,0805,0501,0806,0601"},
	} {
		if c.got != c.want {
			t.Errorf("%s:\n got %s\nwant %s", c.name, c.got, c.want)
		}
	}
}

// typ2byte gives the one-byte list entry for ec_point_formats (0,
// uncompressed) and psk_key_exchange_modes (1, psk_dhe_ke).
func typ2byte(typ uint16) byte {
	if typ == extECPointFormats {
		return 0
	}
	return 1
}
