package tlsfp

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guise-http/guise/profile"
	utls "github.com/refraction-networking/utls"
)

// wantNSSPayload is NSS 153's GREASE ECH payload length for the hello h,
// worked out from its wire form alone: the EncodedClientHelloInner a real
// ECH offer would carry (the fixed fields, server_name whole with the name
// padded to 100 bytes, supported_versions with TLS 1.3, pre_shared_key
// whole, the inner ECH marker, one ech_outer_extensions naming the rest
// but the TLS 1.2-only ones), padded to 31 mod 32, plus the 16-byte tag.
func wantNSSPayload(h *hello) int {
	n := 2 + 32 + 1 + 2 + 2*len(h.ciphers) + 1 + len(h.comp) + 2 + 5
	outer := 0
	for _, e := range h.exts {
		switch e.id {
		case 0xfe0d, 21, 11, 23, 35, 0xff01:
		case 0:
			name := int(e.body[3])<<8 | int(e.body[4])
			n += 4 + len(e.body) + max(100-name, 0)
		case 43:
			n += 7
		case 41:
			n += 4 + len(e.body)
		default:
			outer++
		}
	}
	n += 5 + 2*outer
	return n - n%32 + 31 + 16
}

// TestNSSGreaseECHRecordings checks the model against every Firefox hello
// recorded, over TCP and QUIC, full and resumed: what the browser sent is
// what both the test's model and tlsfp's give.
func TestNSSGreaseECHRecordings(t *testing.T) {
	files, _ := filepath.Glob("../../fingerprint/testdata/recordings/firefox-esr-153-*.json")
	seen := map[int]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var rec struct {
			TLS struct {
				Record string `json:"client_hello_record_hex"`
			} `json:"tls"`
			QUIC struct {
				Initial struct {
					Hello string `json:"client_hello_hex"`
				} `json:"initial"`
			} `json:"quic"`
		}
		if err := json.Unmarshal(b, &rec); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		raw, _ := hex.DecodeString(rec.TLS.Record)
		if rec.QUIC.Initial.Hello != "" {
			msg, _ := hex.DecodeString(rec.QUIC.Initial.Hello)
			raw = append([]byte{0x16, 3, 1, byte(len(msg) >> 8), byte(len(msg))}, msg...)
		}
		if len(raw) == 0 {
			continue
		}
		h := parseHelloRecord(t, raw)
		e, ok := h.ext(0xfe0d)
		if !ok {
			continue
		}
		_, got := echShapeOf(e)
		if w := wantNSSPayload(h); got != w {
			t.Errorf("%s: payload %d, the model gives %d", filepath.Base(f), got, w)
		}
		inner, name, psk, ok := nssInner(raw)
		s := &echShape{inner: inner, pad31: true}
		if n := s.nssPayload(name, true, psk, 0); !ok || n != got {
			t.Errorf("%s: payload %d, tlsfp's model gives %d", filepath.Base(f), got, n)
		}
		seen[got] = true
	}
	for _, n := range []int{239, 399, 431} { // full; TCP resumed; QUIC resumed
		if !seen[n] {
			t.Errorf("no Firefox recording with a %d-byte payload: the recordings changed", n)
		}
	}
}

// TestNSSGreaseECHBuilt checks the payload tlsfp builds against the
// model for pre_shared_key lengths across several 32-byte blocks, host
// names shorter and longer than the 100 bytes NSS pads to, and the QUIC
// hello with and without early_data.
func TestNSSGreaseECHBuilt(t *testing.T) {
	p, err := profile.Lookup("firefox")
	if err != nil {
		t.Fatal(err)
	}
	tcp, err := compile(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	quic, err := quicCompiled(p)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		tpl  *template
		drop bool
	}{
		{"tcp", tcp, false}, {"tcp resumed", tcp.resumed, false},
		{"quic", quic, false}, {"quic resumed", quic.resumed, false}, {"quic resumed without early_data", quic.resumed, true},
	}
	hosts := []string{"fp.test", strings.Repeat("a", 63) + ".example", strings.Repeat("b", 60) + "." + strings.Repeat("c", 60) + ".test"}
	for _, c := range cases {
		for _, host := range hosts {
			for psk := 0; psk < 200; psk += 7 {
				n := 0
				if c.tpl != tcp && c.tpl != quic {
					n = 60 + psk // a resumed hello always has one
				}
				spec := c.tpl.build(newRNG(rand.Reader), host, n, c.drop)
				h := specHello(t, spec, n)
				e, _ := h.ext(0xfe0d)
				if _, got := echShapeOf(e); got != wantNSSPayload(h) {
					t.Fatalf("%s, host of %d bytes, psk %d: payload %d, want %d", c.name, len(host), n, got, wantNSSPayload(h))
				}
				if _, early := h.ext(42); early == c.drop && c.tpl == quic.resumed {
					t.Fatalf("%s: early_data present %t", c.name, early)
				}
			}
		}
	}
}

// specHello is the hello spec describes, its extensions as each writes
// itself, with a pre_shared_key of psk bytes (as one would be once uTLS
// fills it in) where the spec has one.
func specHello(t *testing.T, spec *utls.ClientHelloSpec, psk int) *hello {
	t.Helper()
	h := &hello{ciphers: spec.CipherSuites, comp: spec.CompressionMethods}
	for _, e := range spec.Extensions {
		if _, ok := e.(utls.PreSharedKeyExtension); ok {
			h.exts = append(h.exts, ext{41, make([]byte, psk-4)})
			continue
		}
		b := make([]byte, e.Len())
		if _, err := e.Read(b); err != nil && err != io.EOF {
			t.Fatalf("%T: %v", e, err)
		}
		if len(b) < 4 {
			continue // nothing written (an empty server_name)
		}
		h.exts = append(h.exts, ext{uint16(b[0])<<8 | uint16(b[1]), b[4:]})
	}
	return h
}
