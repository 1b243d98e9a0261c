package profile_test

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/guise-http/guise/fingerprint"
	"github.com/guise-http/guise/profile"
)

// safari26Captures pairs each Safari 26 profile with the real device's
// hello it was built from (testdata/safari26/README says where they come
// from).
var safari26Captures = []struct{ name, file string }{
	{"safari26-macos", "macos-26.4.hex"},
	{"safari26-ios", "ios-26.4.hex"},
}

func readCapture(t *testing.T, file string) *fingerprint.ClientHello {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "safari26", file))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	ch, err := fingerprint.ParseClientHello(rec)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return ch
}

// greaseMask replaces each GREASE value by 0x0a0a: the values are drawn
// per connection, their places are not.
func greaseMask(vs []uint16) []uint16 {
	out := slices.Clone(vs)
	for i, v := range out {
		if fingerprint.IsGREASE(v) {
			out[i] = 0x0a0a
		}
	}
	return out
}

func extTypes(ch *fingerprint.ClientHello) []uint16 {
	var ts []uint16
	for _, e := range ch.Extensions {
		ts = append(ts, e.Type)
	}
	return greaseMask(ts)
}

// TestSafari26MatchesRealDevices compares every field of the Safari 26
// profiles' hellos with the real devices' captures: all but the bytes a
// browser draws per connection (random, session id, key share contents,
// GREASE values) and the server name, which guise sets per connection.
func TestSafari26MatchesRealDevices(t *testing.T) {
	for _, c := range safari26Captures {
		t.Run(c.name, func(t *testing.T) {
			p, err := profile.Lookup(c.name)
			if err != nil {
				t.Fatal(err)
			}
			got, err := fingerprint.ParseClientHello(p.TLS.Hello)
			if err != nil {
				t.Fatal(err)
			}
			want := readCapture(t, c.file)
			if want.ServerName != "testssl.sh" || got.ServerName != "fp.test" {
				t.Errorf("server names %q (capture) and %q (profile)", want.ServerName, got.ServerName)
			}

			eq := func(field string, g, w any) {
				t.Helper()
				format := "%v"
				if _, ok := g.([]uint16); ok {
					format = "%04x"
				}
				if gs, ws := fmt.Sprintf(format, g), fmt.Sprintf(format, w); gs != ws {
					t.Errorf("%s: profile %s, real device %s", field, gs, ws)
				}
			}
			eq("record version", got.RecordVersion, want.RecordVersion)
			eq("records", got.RecordCount, want.RecordCount)
			eq("legacy version", got.Version, want.Version)
			eq("random length", len(got.Random), len(want.Random))
			eq("session id length", len(got.SessionID), len(want.SessionID))
			eq("ciphers", greaseMask(got.CipherSuites), greaseMask(want.CipherSuites))
			eq("compression", got.CompressionMethods, want.CompressionMethods)
			eq("extensions", extTypes(got), extTypes(want))
			eq("status_request", got.StatusRequest, want.StatusRequest)
			eq("supported_groups", greaseMask(got.SupportedGroups), greaseMask(want.SupportedGroups))
			eq("ec_point_formats", got.ECPointFormats, want.ECPointFormats)
			eq("signature_algorithms", got.SignatureAlgorithms, want.SignatureAlgorithms)
			eq("alpn", got.ALPN, want.ALPN)
			eq("sct", got.SCT, want.SCT)
			eq("padding", got.PaddingLen, want.PaddingLen)
			eq("extended_master_secret", got.ExtendedMasterSecret, want.ExtendedMasterSecret)
			eq("compress_certificate", got.CertCompression, want.CertCompression)
			eq("record_size_limit", got.RecordSizeLimit, want.RecordSizeLimit)
			eq("delegated_credentials", got.DelegatedCredentials, want.DelegatedCredentials)
			eq("session_ticket", got.SessionTicket, want.SessionTicket)
			eq("pre_shared_key", got.HasPreSharedKey, want.HasPreSharedKey)
			eq("supported_versions", greaseMask(got.SupportedVersions), greaseMask(want.SupportedVersions))
			eq("psk_key_exchange_modes", got.PSKModes, want.PSKModes)
			eq("renegotiation_info", got.RenegotiationInfo, want.RenegotiationInfo)
			eq("alps", got.ALPS, want.ALPS)
			eq("ech", got.ECH, want.ECH)
			var gks, wks []fingerprint.KeyShare
			for _, k := range got.KeyShares {
				gks = append(gks, fingerprint.KeyShare{Group: greaseMask([]uint16{k.Group})[0], Len: k.Len})
			}
			for _, k := range want.KeyShares {
				wks = append(wks, fingerprint.KeyShare{Group: greaseMask([]uint16{k.Group})[0], Len: k.Len})
			}
			eq("key_share", gks, wks)
			// The GREASE values that must agree within one hello: the
			// group's in supported_groups and key_share.
			if got.SupportedGroups[0] != got.KeyShares[0].Group {
				t.Errorf("GREASE group %#04x in supported_groups, %#04x in key_share", got.SupportedGroups[0], got.KeyShares[0].Group)
			}
			// Every extension's body but those holding per-connection
			// bytes (server_name, key_share) and GREASE ones.
			for i, e := range want.Extensions {
				if e.Type == 0x0000 || e.Type == 0x0033 || i >= len(got.Extensions) {
					continue
				}
				g := got.Extensions[i]
				if fingerprint.IsGREASE(e.Type) {
					if !bytes.Equal(g.Data, e.Data) {
						t.Errorf("GREASE extension %d: body %x, real device %x", i, g.Data, e.Data)
					}
					continue
				}
				gd, wd := g.Data, e.Data
				if e.Type == 0x000a || e.Type == 0x002b {
					gd, wd = maskGREASEBytes(gd), maskGREASEBytes(wd)
				}
				if !bytes.Equal(gd, wd) {
					t.Errorf("extension %#04x: body %x, real device %x", e.Type, g.Data, e.Data)
				}
			}
			// Same length apart from the server name.
			if d := len(want.ServerName) - len(got.ServerName); got.HandshakeLength+d != want.HandshakeLength {
				t.Errorf("hello of %d bytes, real device %d with a name %d bytes longer", got.HandshakeLength, want.HandshakeLength, d)
			}

			const ja4 = "t13d2013h2_a09f3c656075_7f0f34a4126d"
			if g, w := got.JA4(), want.JA4(); g != ja4 || w != ja4 {
				t.Errorf("JA4 %s (profile), %s (real device), want %s", g, w, ja4)
			}
			if g, w := got.JA4O(), want.JA4O(); g != w {
				t.Errorf("JA4_o %s (profile), %s (real device)", g, w)
			}
			if g, w := got.JA3Hash(), want.JA3Hash(); g != w || g != "ecdf4f49dd59effc439639da29186671" {
				t.Errorf("JA3 %s (profile), %s (real device)", g, w)
			}
		})
	}
}

// maskGREASEBytes masks a GREASE value at any even offset of a list body.
func maskGREASEBytes(b []byte) []byte {
	out := slices.Clone(b)
	for i := 0; i+1 < len(out); i++ {
		if v := uint16(out[i])<<8 | uint16(out[i+1]); fingerprint.IsGREASE(v) {
			out[i], out[i+1] = 0x0a, 0x0a
		}
	}
	return out
}

// TestSafari26HTTP checks the HTTP facts of the Safari 26 profiles:
// Akamai, no HEADERS priority, zstd and the user-agents real devices send.
func TestSafari26HTTP(t *testing.T) {
	for _, c := range []struct{ name, ua string }{
		{"safari26-macos", "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/26.4 Safari/605.1.15"},
		{"safari26-ios", "Mozilla/5.0 (iPhone; CPU iPhone OS 18_7 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/26.4 Mobile/15E148 Safari/604.1"},
	} {
		p, err := profile.Lookup(c.name)
		if err != nil {
			t.Fatal(err)
		}
		h := &fingerprint.HTTP2{ConnWindowUpdate: p.HTTP2.ConnWindowUpdate,
			Requests: []fingerprint.HTTP2Request{{PseudoOrder: p.HTTP2.PseudoOrder}}}
		for _, s := range p.HTTP2.Settings {
			h.Settings = append(h.Settings, fingerprint.Setting{ID: uint16(s.ID), Value: s.Value})
		}
		if got := h.Akamai(); got != "2:0;3:100;4:2097152;9:1|10420225|0|m,s,a,p" {
			t.Errorf("%s: Akamai %s", c.name, got)
		}
		if kp, ok := p.Priority(profile.Navigate); ok || p.HTTP2.HeaderPriority != nil {
			t.Errorf("%s: HEADERS priority %+v, want none", c.name, kp)
		}
		nav := p.HeaderSet(profile.Navigate, profile.H2)
		if got := nav.Header.Get("user-agent"); got != c.ua {
			t.Errorf("%s: user-agent %q, want %q", c.name, got, c.ua)
		}
		if got := nav.Header.Get("accept-encoding"); got != "gzip, deflate, br, zstd" {
			t.Errorf("%s: accept-encoding %q", c.name, got)
		}
		if h1 := p.HeaderSet(profile.Navigate, profile.HTTP1); h1 == nil || h1.Header.Get("Accept-Encoding") != "gzip, deflate, br, zstd" || h1.Header.Get("User-Agent") != c.ua {
			t.Errorf("%s: navigate h1 set %+v", c.name, h1)
		}
	}
	// The bare names follow the newest Safari; safari18-* stay for Safari
	// 26 on an older macOS, which keeps the old hello.
	for alias, want := range map[string]string{"safari": "safari26-macos", "safari-ios": "safari26-ios", "safari-macos": "safari26-macos", "safari26": "safari26-macos", "safari18": "safari18-macos", "safari18-ios": "safari18-ios"} {
		if p, err := profile.Lookup(alias); err != nil || p.Name != want {
			t.Errorf("Lookup(%q) = %v, %v; want %s", alias, p, err, want)
		}
	}
}
