package fingerprint

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// recording is the part of a testdata/recordings/*/*.json file the tests
// read: what a real browser sent, recorded on loopback (see
// testdata/recordings/README.md).
type recording struct {
	TLS struct {
		ClientHelloRecordHex string `json:"client_hello_record_hex"`
		ClientHello          struct {
			RecordVersion   uint16 `json:"record_version"`
			RecordCount     int    `json:"record_count"`
			HandshakeLength int    `json:"handshake_length"`
			LegacyVersion   uint16 `json:"legacy_version"`
			RandomHex       string `json:"random_hex"`
			SessionIDHex    string `json:"session_id_hex"`
			CipherSuites    []struct {
				ID uint16 `json:"id"`
			} `json:"cipher_suites"`
			CompressionMethods []byte   `json:"compression_methods"`
			ExtensionIDs       []uint16 `json:"extension_ids"`
			Extensions         []struct {
				ID      uint16 `json:"id"`
				DataHex string `json:"data_hex"`
			} `json:"extensions"`
			ServerName      string `json:"server_name"`
			SupportedGroups []struct {
				ID uint16 `json:"id"`
			} `json:"supported_groups"`
			ECPointFormats []byte `json:"ec_point_formats"`
			KeyShares      []struct {
				Group  uint16 `json:"group"`
				KeyLen int    `json:"key_len"`
			} `json:"key_shares"`
			SignatureAlgorithms []struct {
				ID uint16 `json:"id"`
			} `json:"signature_algorithms"`
			ALPN              []string `json:"alpn"`
			SupportedVersions []struct {
				ID uint16 `json:"id"`
			} `json:"supported_versions"`
			CertCompression []struct {
				ID uint16 `json:"id"`
			} `json:"cert_compression_algos"`
			ALPS *struct {
				ExtensionID uint16   `json:"extension_id"`
				Protocols   []string `json:"protocols"`
			} `json:"alps"`
			ECHPresent bool `json:"ech_present"`
			ECH        *struct {
				Type       byte   `json:"type"`
				KDF        uint16 `json:"kdf"`
				AEAD       uint16 `json:"aead"`
				ConfigID   byte   `json:"config_id"`
				EncLen     int    `json:"enc_len"`
				PayloadLen int    `json:"payload_len"`
			} `json:"ech"`
			PSKModes             []byte `json:"psk_key_exchange_modes"`
			RecordSizeLimit      uint16 `json:"record_size_limit"`
			DelegatedCredentials []struct {
				ID uint16 `json:"id"`
			} `json:"delegated_credentials"`
			StatusRequest        bool `json:"status_request"`
			SCT                  bool `json:"signed_certificate_timestamp"`
			ExtendedMasterSecret bool `json:"extended_master_secret"`
			RenegotiationInfo    bool `json:"renegotiation_info"`
			SessionTicketLen     int  `json:"session_ticket_len"`
		} `json:"client_hello"`
		JA3      string `json:"ja3"`
		JA3Hash  string `json:"ja3_hash"`
		JA3N     string `json:"ja3n"`
		JA3NHash string `json:"ja3n_hash"`
		JA4      string `json:"ja4"`
		JA4R     string `json:"ja4_r"`
		JA4O     string `json:"ja4_o"`
		JA4RO    string `json:"ja4_ro"`
	} `json:"tls"`
	HTTP2 struct {
		Akamai     string `json:"akamai"`
		AkamaiHash string `json:"akamai_hash"`
		Settings   []struct {
			ID    uint16 `json:"id"`
			Value uint32 `json:"value"`
		} `json:"settings"`
		ConnectionWindowUpdate uint32 `json:"connection_window_update"`
		Frames                 []struct {
			Type     uint8  `json:"type"`
			Flags    uint8  `json:"flags"`
			StreamID uint32 `json:"stream_id"`
			Length   int    `json:"length"`
			RawHex   string `json:"raw_hex"`
		} `json:"frames"`
		Requests []struct {
			StreamID          uint32   `json:"stream_id"`
			PseudoHeaderOrder []string `json:"pseudo_header_order"`
			HeaderOrder       []string `json:"header_order"`
			Headers           []struct {
				Name  string `json:"name"`
				Value string `json:"value"`
			} `json:"headers"`
			Priority *struct {
				Exclusive        bool   `json:"exclusive"`
				StreamDependency uint32 `json:"stream_dependency"`
				Weight           int    `json:"weight"`
			} `json:"headers_priority"`
			EndStream bool   `json:"end_stream"`
			Method    string `json:"method"`
			Path      string `json:"path"`
			Authority string `json:"authority"`
		} `json:"requests"`
	} `json:"http2"`
	ClientBytesRecorded int    `json:"client_bytes_recorded"`
	RawClientStreamHex  string `json:"raw_client_stream_head_hex"`
}

type namedRecording struct {
	name          string
	rec           recording
	hello, stream []byte
}

// loadRecordings reads every recording; the test fails if there are not
// the five we were given.
func loadRecordings(tb testing.TB) []namedRecording {
	tb.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "recordings", "*", "*.json"))
	if err != nil {
		tb.Fatal(err)
	}
	if len(paths) != 5 {
		tb.Fatalf("found %d recordings, want 5", len(paths))
	}
	var out []namedRecording
	for _, p := range paths {
		raw, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		var nr namedRecording
		nr.name = filepath.Base(filepath.Dir(p)) + "/" + filepath.Base(p)
		if err := json.Unmarshal(raw, &nr.rec); err != nil {
			tb.Fatalf("%s: %v", p, err)
		}
		nr.hello = mustHex(tb, nr.rec.TLS.ClientHelloRecordHex)
		nr.stream = mustHex(tb, nr.rec.RawClientStreamHex)
		out = append(out, nr)
	}
	return out
}

func mustHex(tb testing.TB, s string) []byte {
	tb.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func ids[T any](xs []T, id func(T) uint16) []uint16 {
	var out []uint16
	for _, x := range xs {
		out = append(out, id(x))
	}
	return out
}

func TestRecordingsTLSFingerprints(t *testing.T) {
	for _, r := range loadRecordings(t) {
		t.Run(r.name, func(t *testing.T) {
			ch, err := ParseClientHello(r.hello)
			if err != nil {
				t.Fatal(err)
			}
			want := r.rec.TLS
			for _, c := range []struct{ name, got, want string }{
				{"ja3", ch.JA3(), want.JA3},
				{"ja3_hash", ch.JA3Hash(), want.JA3Hash},
				{"ja3n", ch.JA3N(), want.JA3N},
				{"ja3n_hash", ch.JA3NHash(), want.JA3NHash},
				{"ja4", ch.JA4(), want.JA4},
				{"ja4_r", ch.JA4R(), want.JA4R},
				{"ja4_o", ch.JA4O(), want.JA4O},
				{"ja4_ro", ch.JA4RO(), want.JA4RO},
			} {
				if c.got != c.want {
					t.Errorf("%s:\n got %s\nwant %s", c.name, c.got, c.want)
				}
			}
		})
	}
}

func TestRecordingsClientHelloFields(t *testing.T) {
	for _, r := range loadRecordings(t) {
		t.Run(r.name, func(t *testing.T) {
			ch, err := ParseClientHello(r.hello)
			if err != nil {
				t.Fatal(err)
			}
			w := r.rec.TLS.ClientHello
			eq := func(what string, got, want any) {
				t.Helper()
				gj, _ := json.Marshal(got)
				wj, _ := json.Marshal(want)
				if string(gj) != string(wj) {
					t.Errorf("%s: got %s, want %s", what, gj, wj)
				}
			}
			eq("record_version", ch.RecordVersion, w.RecordVersion)
			eq("record_count", ch.RecordCount, w.RecordCount)
			eq("handshake_length", ch.HandshakeLength, w.HandshakeLength)
			eq("legacy_version", ch.Version, w.LegacyVersion)
			eq("random", hex.EncodeToString(ch.Random), w.RandomHex)
			eq("session_id", hex.EncodeToString(ch.SessionID), w.SessionIDHex)
			eq("cipher_suites", ch.CipherSuites, ids(w.CipherSuites, func(x struct {
				ID uint16 `json:"id"`
			}) uint16 {
				return x.ID
			}))
			eq("compression_methods", ch.CompressionMethods, w.CompressionMethods)
			var gotExt []uint16
			for i, e := range ch.Extensions {
				gotExt = append(gotExt, e.Type)
				if i < len(w.Extensions) && hex.EncodeToString(e.Data) != w.Extensions[i].DataHex {
					t.Errorf("extension %d data differs", e.Type)
				}
			}
			eq("extension_ids", gotExt, w.ExtensionIDs)
			eq("server_name", ch.ServerName, w.ServerName)
			idOf := func(x struct {
				ID uint16 `json:"id"`
			}) uint16 {
				return x.ID
			}
			eq("supported_groups", ch.SupportedGroups, ids(w.SupportedGroups, idOf))
			eq("ec_point_formats", ch.ECPointFormats, w.ECPointFormats)
			var ks []KeyShare
			for _, k := range w.KeyShares {
				ks = append(ks, KeyShare{Group: k.Group, Len: k.KeyLen})
			}
			eq("key_shares", ch.KeyShares, ks)
			eq("signature_algorithms", ch.SignatureAlgorithms, ids(w.SignatureAlgorithms, idOf))
			eq("alpn", ch.ALPN, w.ALPN)
			eq("supported_versions", ch.SupportedVersions, ids(w.SupportedVersions, idOf))
			eq("cert_compression", ch.CertCompression, ids(w.CertCompression, idOf))
			if w.ALPS == nil {
				eq("alps", ch.ALPS, (*ALPS)(nil))
			} else {
				eq("alps", ch.ALPS, &ALPS{Type: w.ALPS.ExtensionID, Protocols: w.ALPS.Protocols})
			}
			eq("ech_present", ch.ECH != nil, w.ECHPresent)
			if w.ECH != nil {
				eq("ech", ch.ECH, &ECH{Type: w.ECH.Type, KDF: w.ECH.KDF, AEAD: w.ECH.AEAD,
					ConfigID: w.ECH.ConfigID, EncLen: w.ECH.EncLen, PayloadLen: w.ECH.PayloadLen})
			}
			eq("psk_modes", ch.PSKModes, w.PSKModes)
			eq("record_size_limit", ch.RecordSizeLimit, w.RecordSizeLimit)
			eq("delegated_credentials", ch.DelegatedCredentials, ids(w.DelegatedCredentials, idOf))
			eq("status_request", ch.StatusRequest, w.StatusRequest)
			eq("sct", ch.SCT, w.SCT)
			eq("ems", ch.ExtendedMasterSecret, w.ExtendedMasterSecret)
			eq("renegotiation_info", ch.RenegotiationInfo, w.RenegotiationInfo)
			eq("session_ticket_len", ch.SessionTicketLen, w.SessionTicketLen)
			if !slices.Contains(gotExt, extSessionTicket) || ch.HasPreSharedKey || ch.PaddingLen != 0 {
				t.Errorf("session_ticket=%v psk=%v padding=%d: want ticket ext, no psk, no padding",
					slices.Contains(gotExt, extSessionTicket), ch.HasPreSharedKey, ch.PaddingLen)
			}
		})
	}
}
