package profile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestQUICParseErrors is RELIABILITY Q-09: the loader rejects bad QUIC
// and HTTP/3 values with a *ParseError naming the field.
func TestQUICParseErrors(t *testing.T) {
	base, err := Lookup("chrome156-linux")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		field string
		edit  func(p *Profile)
	}{
		{"quic", func(p *Profile) { p.HTTP3 = nil }},
		{"headers[", func(p *Profile) { p.QUIC, p.HTTP3 = nil, nil }},
		{"quic.hello", func(p *Profile) { p.QUIC.Hello = nil }},
		{"quic.hello", func(p *Profile) { p.QUIC.Hello = p.TLS.Hello }}, // ALPN h2, http/1.1 and no extension 57
		{"quic.hello", func(p *Profile) { p.QUIC.Hello = p.QUIC.Hello[:len(p.QUIC.Hello)-1] }},
		{"quic.fixed_tail_extensions", func(p *Profile) { p.QUIC.FixedTailExtensions = 99 }},
		{"quic.transport_parameters", func(p *Profile) { p.QUIC.TransportParameters = nil }},
		{"quic.transport_parameters[1]", func(p *Profile) { p.QUIC.TransportParameters[1].ID = p.QUIC.TransportParameters[0].ID }},
		{"quic.transport_parameters[0]", func(p *Profile) { p.QUIC.TransportParameters[0].Rule = 0 }},
		{"quic.transport_parameters[0]", func(p *Profile) { p.QUIC.TransportParameters[0].Rule = ParamGREASE }},
		{"quic.transport_parameters[0]", func(p *Profile) { p.QUIC.TransportParameters[0].ID = 1 << 62 }},
		{"quic.transport_parameters[0]", func(p *Profile) { p.QUIC.TransportParameters[0].Rule = ParamSourceConnID }},
		{"quic.transport_parameters[0]", func(p *Profile) { p.QUIC.TransportParameters[0].Rule = ParamVersionInformation }},
		{"quic.transport_parameters[3]", func(p *Profile) { p.QUIC.GREASEParamMaxLen = 2 }},
		{"quic.dcid_len", func(p *Profile) { p.QUIC.DCIDLen = 21 }},
		{"quic.dcid_len", func(p *Profile) { p.QUIC.DCIDLen = 7 }},
		{"quic.dcid_len", func(p *Profile) { p.QUIC.DCIDRule = ConnIDBiased }},
		{"quic.dcid_rule", func(p *Profile) { p.QUIC.DCIDRule = 9 }},
		{"quic.transport_parameters[8]", func(p *Profile) { p.QUIC.SCIDLen = 3 }}, // the scid parameter is empty
		{"quic.first_packet_number", func(p *Profile) { p.QUIC.FirstPacketRule = PacketNumberRandom }},
		{"quic.first_packet_number_rule", func(p *Profile) { p.QUIC.FirstPacketRule = 0 }},
		{"quic.packet_number_lens[1]", func(p *Profile) { p.QUIC.PacketNumberLens[1] = 5 }},
		{"quic.datagram_size", func(p *Profile) { p.QUIC.DatagramSize = 1199 }},
		{"quic.datagram_size", func(p *Profile) { p.QUIC.DatagramSize = 9000 }},
		{"quic.padding", func(p *Profile) { p.QUIC.Padding = 0 }},
		{"quic.crypto_layout", func(p *Profile) { p.QUIC.Layout = 7 }},
		{"http3.settings", func(p *Profile) { p.HTTP3.Settings = nil }},
		{"http3.settings[1]", func(p *Profile) { p.HTTP3.Settings[1].ID = p.HTTP3.Settings[0].ID }},
		{"http3.settings[0]", func(p *Profile) { p.HTTP3.Settings[0].ID = 0x04 }},
		{"http3.settings[0]", func(p *Profile) { p.HTTP3.Settings[0].GREASE = true }},
		{"http3.settings[0]", func(p *Profile) { p.HTTP3.Settings[0].Value = 1 << 62 }},
		{"http3.grease_frame_max_len", func(p *Profile) { p.HTTP3.GREASEFrameMaxLen = -1 }},
		{"http3.qpack_capacity", func(p *Profile) { p.HTTP3.QPACKCapacity = 9 }},
		{"http3.pseudo_order", func(p *Profile) { p.HTTP3.PseudoOrder = p.HTTP3.PseudoOrder[:3] }},
		{"http3.pseudo_order", func(p *Profile) { p.HTTP3.PseudoOrder[0] = ":path" }},
		{"headers[", func(p *Profile) {
			hs := p.HeaderSet(Navigate, H3)
			hs.Header[0].Name = "Sec-CH-UA"
		}},
	} {
		p := base.Clone()
		c.edit(p)
		_, err := p.Marshal()
		var pe *ParseError
		if !errors.As(err, &pe) || !strings.HasPrefix(pe.Field, c.field) {
			t.Errorf("want a *ParseError in %s, got %v", c.field, err)
		}
	}
	// The same through the file: an unknown rule name.
	b, err := base.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []struct{ from, to string }{
		{`"crypto_layout": "chaos-protection"`, `"crypto_layout": "chaos"`},
		{`"rule": "grease"`, `"rule": "random"`},
		{`"dcid_rule": "fixed"`, `"dcid_rule": ""`},
		{`"hello": "16030107`, `"hello": "zz030107`},
	} {
		s := string(b)
		if !strings.Contains(s, bad.from) {
			t.Fatalf("no %s in the file", bad.from)
		}
		_, err := Parse([]byte(strings.Replace(s, bad.from, bad.to, 1)))
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("%s: %v, want a *ParseError", bad.to, err)
		}
	}
}

// TestQUICFuzzSeeds keeps a profile with QUIC fields among FuzzParse's
// corpus files.
func TestQUICFuzzSeeds(t *testing.T) {
	ents, err := os.ReadDir(filepath.Join("testdata", "fuzz", "FuzzParse"))
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("testdata", "fuzz", "FuzzParse", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		found = found || strings.Contains(string(b), "crypto_layout")
	}
	if !found {
		t.Error("no FuzzParse seed has quic fields")
	}
}
