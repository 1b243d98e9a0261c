package fingerprint

import (
	"crypto/tls"
	"encoding/hex"
	"strconv"
)

// tlsJSON is the "tls" object of a record or report; names follow the
// first recordings in testdata/recordings/*/.
type tlsJSON struct {
	ClientHelloRecordHex string           `json:"client_hello_record_hex"`
	ClientHello          *clientHelloJSON `json:"client_hello,omitempty"`
	JA3                  string           `json:"ja3,omitempty"`
	JA3Hash              string           `json:"ja3_hash,omitempty"`
	JA3N                 string           `json:"ja3n,omitempty"`
	JA3NHash             string           `json:"ja3n_hash,omitempty"`
	JA4                  string           `json:"ja4,omitempty"`
	JA4R                 string           `json:"ja4_r,omitempty"`
	JA4O                 string           `json:"ja4_o,omitempty"`
	JA4RO                string           `json:"ja4_ro,omitempty"`
	Negotiated           *Negotiated      `json:"negotiated,omitempty"`
	Resumed              bool             `json:"resumed"`
	ParseError           string           `json:"parse_error,omitempty"`
}

// idName is a code point with its name, as the recordings list them.
type idName struct {
	ID     uint16 `json:"id"`
	Hex    string `json:"hex"`
	Name   string `json:"name"`
	GREASE bool   `json:"grease,omitempty"`
}

type extensionJSON struct {
	ID      uint16 `json:"id"`
	Name    string `json:"name"`
	Length  int    `json:"length"`
	GREASE  bool   `json:"grease,omitempty"`
	DataHex string `json:"data_hex"`
}

type keyShareJSON struct {
	Group     uint16 `json:"group"`
	GroupName string `json:"group_name"`
	KeyLen    int    `json:"key_len"`
	GREASE    bool   `json:"grease,omitempty"`
}

type alpsJSON struct {
	ExtensionID uint16   `json:"extension_id"`
	Protocols   []string `json:"protocols"`
}

type echJSON struct {
	Type       byte   `json:"type"`
	KDF        uint16 `json:"kdf"`
	AEAD       uint16 `json:"aead"`
	ConfigID   byte   `json:"config_id"`
	EncLen     int    `json:"enc_len"`
	PayloadLen int    `json:"payload_len"`
}

// clientHelloJSON is the parsed hello in the recordings' shape.
type clientHelloJSON struct {
	RecordVersion        uint16          `json:"record_version"`
	RecordCount          int             `json:"record_count"`
	HandshakeLength      int             `json:"handshake_length"`
	LegacyVersion        uint16          `json:"legacy_version"`
	RandomHex            string          `json:"random_hex"`
	SessionIDLen         int             `json:"session_id_len"`
	SessionIDHex         string          `json:"session_id_hex"`
	CipherSuites         []idName        `json:"cipher_suites"`
	CompressionMethods   []int           `json:"compression_methods"`
	Extensions           []extensionJSON `json:"extensions"`
	ExtensionIDs         []uint16        `json:"extension_ids"`
	ServerName           string          `json:"server_name,omitempty"`
	SupportedGroups      []idName        `json:"supported_groups,omitempty"`
	ECPointFormats       []int           `json:"ec_point_formats,omitempty"`
	KeyShares            []keyShareJSON  `json:"key_shares,omitempty"`
	SignatureAlgorithms  []idName        `json:"signature_algorithms,omitempty"`
	ALPN                 []string        `json:"alpn,omitempty"`
	SupportedVersions    []idName        `json:"supported_versions,omitempty"`
	CertCompression      []idName        `json:"cert_compression_algos,omitempty"`
	ALPS                 *alpsJSON       `json:"alps,omitempty"`
	ECHPresent           bool            `json:"ech_present"`
	ECH                  *echJSON        `json:"ech,omitempty"`
	PSKModes             []int           `json:"psk_key_exchange_modes,omitempty"`
	StatusRequest        bool            `json:"status_request"`
	SCT                  bool            `json:"signed_certificate_timestamp"`
	ExtendedMasterSecret bool            `json:"extended_master_secret"`
	RenegotiationInfo    bool            `json:"renegotiation_info"`
	SessionTicketLen     int             `json:"session_ticket_len"`
	PreSharedKey         bool            `json:"pre_shared_key"`
	RecordSizeLimit      uint16          `json:"record_size_limit,omitempty"`
	PaddingLen           int             `json:"padding_len,omitempty"`
}

// certCompressionNames names the compress_certificate algorithms (RFC 8879).
var certCompressionNames = map[uint16]string{1: "zlib", 2: "brotli", 3: "zstd"}

// tlsReport derives the "tls" object from a record's raw hello.
func tlsReport(r *ConnRecord) *tlsJSON {
	if r.Transport != TransportTLS {
		return nil
	}
	j := &tlsJSON{ClientHelloRecordHex: hex.EncodeToString(r.ClientHelloRecord), Negotiated: r.Negotiated}
	if r.Negotiated != nil {
		j.Resumed = r.Negotiated.Resumed
	}
	ch, err := ParseClientHello(r.ClientHelloRecord)
	if err != nil {
		j.ParseError = err.Error()
		return j
	}
	j.ClientHello = helloJSON(ch)
	j.JA3, j.JA3Hash = ch.JA3(), ch.JA3Hash()
	j.JA3N, j.JA3NHash = ch.JA3N(), ch.JA3NHash()
	j.JA4, j.JA4R, j.JA4O, j.JA4RO = ch.JA4(), ch.JA4R(), ch.JA4O(), ch.JA4RO()
	return j
}

func helloJSON(ch *ClientHello) *clientHelloJSON {
	j := &clientHelloJSON{
		RecordVersion:        ch.RecordVersion,
		RecordCount:          ch.RecordCount,
		HandshakeLength:      ch.HandshakeLength,
		LegacyVersion:        ch.Version,
		RandomHex:            hex.EncodeToString(ch.Random),
		SessionIDLen:         len(ch.SessionID),
		SessionIDHex:         hex.EncodeToString(ch.SessionID),
		ServerName:           ch.ServerName,
		ALPN:                 ch.ALPN,
		ECHPresent:           ch.ECH != nil,
		StatusRequest:        ch.StatusRequest,
		SCT:                  ch.SCT,
		ExtendedMasterSecret: ch.ExtendedMasterSecret,
		RenegotiationInfo:    ch.RenegotiationInfo,
		SessionTicketLen:     ch.SessionTicketLen,
		PreSharedKey:         ch.HasPreSharedKey,
		RecordSizeLimit:      ch.RecordSizeLimit,
		PaddingLen:           ch.PaddingLen,
	}
	for _, c := range ch.CipherSuites {
		j.CipherSuites = append(j.CipherSuites, named(c, cipherName(c)))
	}
	for _, m := range ch.CompressionMethods {
		j.CompressionMethods = append(j.CompressionMethods, int(m))
	}
	for _, e := range ch.Extensions {
		j.Extensions = append(j.Extensions, extensionJSON{
			ID: e.Type, Name: ExtensionName(e.Type), Length: len(e.Data), GREASE: IsGREASE(e.Type),
			DataHex: hex.EncodeToString(e.Data),
		})
		j.ExtensionIDs = append(j.ExtensionIDs, e.Type)
	}
	for _, g := range ch.SupportedGroups {
		j.SupportedGroups = append(j.SupportedGroups, named(g, groupName(g)))
	}
	for _, f := range ch.ECPointFormats {
		j.ECPointFormats = append(j.ECPointFormats, int(f))
	}
	for _, ks := range ch.KeyShares {
		j.KeyShares = append(j.KeyShares, keyShareJSON{Group: ks.Group, GroupName: groupName(ks.Group), KeyLen: ks.Len, GREASE: IsGREASE(ks.Group)})
	}
	for _, s := range ch.SignatureAlgorithms {
		j.SignatureAlgorithms = append(j.SignatureAlgorithms, named(s, sigName(s)))
	}
	for _, v := range ch.SupportedVersions {
		j.SupportedVersions = append(j.SupportedVersions, named(v, versionName(v)))
	}
	for _, c := range ch.CertCompression {
		n := certCompressionNames[c]
		if n == "" {
			n = strconv.Itoa(int(c))
		}
		j.CertCompression = append(j.CertCompression, named(c, n))
	}
	if ch.ALPS != nil {
		j.ALPS = &alpsJSON{ExtensionID: ch.ALPS.Type, Protocols: ch.ALPS.Protocols}
	}
	if e := ch.ECH; e != nil {
		j.ECH = &echJSON{Type: e.Type, KDF: e.KDF, AEAD: e.AEAD, ConfigID: e.ConfigID, EncLen: e.EncLen, PayloadLen: e.PayloadLen}
	}
	for _, m := range ch.PSKModes {
		j.PSKModes = append(j.PSKModes, int(m))
	}
	return j
}

func named(v uint16, name string) idName {
	g := IsGREASE(v)
	if g {
		name = "GREASE"
	}
	return idName{ID: v, Hex: "0x" + hex4(v), Name: name, GREASE: g}
}

func hex4(v uint16) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[v>>12], digits[v>>8&0xf], digits[v>>4&0xf], digits[v&0xf]})
}

// cipherName names a cipher suite as crypto/tls does ("0x1234" if unknown).
func cipherName(v uint16) string { return tls.CipherSuiteName(v) }

// groupName names a supported group as crypto/tls does ("x25519" for 29).
func groupName(v uint16) string {
	if v == uint16(tls.X25519) {
		return "x25519"
	}
	return tls.CurveID(v).String()
}

// sigName names a signature scheme by its IANA name where known.
func sigName(v uint16) string {
	if n, ok := sigNames[v]; ok {
		return n
	}
	return tls.SignatureScheme(v).String()
}

var sigNames = map[uint16]string{
	0x0401: "rsa_pkcs1_sha256", 0x0501: "rsa_pkcs1_sha384", 0x0601: "rsa_pkcs1_sha512",
	0x0403: "ecdsa_secp256r1_sha256", 0x0503: "ecdsa_secp384r1_sha384", 0x0603: "ecdsa_secp521r1_sha512",
	0x0804: "rsa_pss_rsae_sha256", 0x0805: "rsa_pss_rsae_sha384", 0x0806: "rsa_pss_rsae_sha512",
	0x0807: "ed25519", 0x0808: "ed448", 0x0809: "rsa_pss_pss_sha256", 0x080a: "rsa_pss_pss_sha384",
	0x080b: "rsa_pss_pss_sha512", 0x0201: "rsa_pkcs1_sha1", 0x0203: "ecdsa_sha1",
	0x0904: "mldsa44", 0x0905: "mldsa65", 0x0906: "mldsa87",
}

// versionName names a TLS version ("TLS 1.3").
func versionName(v uint16) string { return tls.VersionName(v) }
