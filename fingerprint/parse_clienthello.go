package fingerprint

// TLS record and handshake constants used by the ClientHello parser.
const (
	recordTypeHandshake    = 22
	handshakeClientHello   = 1
	recordHeaderLen        = 5
	maxRecordPayload       = 1<<14 + 2048 // TLSCiphertext bound; a plaintext hello is smaller
	maxClientHelloBodySize = 1 << 17      // far above any real hello (Chrome's PQ hello is ~2 KB)
)

// ClientHello is a parsed TLS ClientHello. Every list keeps wire order and
// GREASE values. Fields decoded from an extension are zero when the
// extension is absent; Extensions holds every extension as sent.
//
// Byte slices (Random, SessionID, Extension.Data, ...) alias the input given
// to ParseClientHello when the hello fits in one record, and an internal copy
// otherwise: do not modify that input while the ClientHello is in use. A
// ClientHello is not modified by its methods and is safe for concurrent
// reads. Build one with ParseClientHello; the zero value is an empty hello.
type ClientHello struct {
	RecordVersion   uint16 // version field of the first record header
	RecordCount     int    // number of TLS records the hello spanned
	HandshakeLength int    // length field of the handshake message header
	Version         uint16 // legacy_version (0x0303 for TLS 1.2 and 1.3)

	Random             []byte
	SessionID          []byte
	CipherSuites       []uint16 // in order, GREASE included
	CompressionMethods []byte
	Extensions         []Extension // in order, GREASE included

	ServerName           string   // first host_name of server_name (0)
	StatusRequest        bool     // status_request (5) present
	SupportedGroups      []uint16 // supported_groups (10)
	ECPointFormats       []byte   // ec_point_formats (11)
	SignatureAlgorithms  []uint16 // signature_algorithms (13)
	ALPN                 []string // application_layer_protocol_negotiation (16)
	SCT                  bool     // signed_certificate_timestamp (18) present
	PaddingLen           int      // length of padding (21) data
	ExtendedMasterSecret bool     // extended_master_secret (23) present
	CertCompression      []uint16 // compress_certificate (27)
	RecordSizeLimit      uint16   // record_size_limit (28)
	DelegatedCredentials []uint16 // delegated_credentials (34)
	SessionTicket        bool     // session_ticket (35) present
	SessionTicketLen     int      // length of the session_ticket data (0: asks for a new ticket)
	HasPreSharedKey      bool     // pre_shared_key (41) present
	SupportedVersions    []uint16 // supported_versions (43)
	PSKModes             []byte   // psk_key_exchange_modes (45)
	KeyShares            []KeyShare
	QUICTransportParams  bool  // quic_transport_parameters (57) present
	ALPS                 *ALPS // application_settings (17513 or 17613)
	ECH                  *ECH  // encrypted_client_hello (65037)
	RenegotiationInfo    bool  // renegotiation_info (65281) present
}

// Extension is one TLS extension as sent: its type and raw data.
type Extension struct {
	Type uint16
	Data []byte
}

// KeyShare is one key_share entry: the group and the key exchange length.
type KeyShare struct {
	Group uint16
	Len   int
}

// ALPS is the application_settings extension: Type is the code point used
// (17513, the old one, or 17613, the one the recorded Chromium 156 sends) and
// Protocols the protocols listed.
type ALPS struct {
	Type      uint16
	Protocols []string
}

// ECH is the shape of an encrypted_client_hello extension. Type 0 is an
// outer hello (or GREASE ECH) and fills the other fields; type 1 is an inner
// hello and carries nothing else.
type ECH struct {
	Type       byte
	KDF, AEAD  uint16
	ConfigID   byte
	EncLen     int
	PayloadLen int
}

// Extension type code points the parser decodes.
const (
	extServerName           = 0
	extStatusRequest        = 5
	extSupportedGroups      = 10
	extECPointFormats       = 11
	extSignatureAlgorithms  = 13
	extALPN                 = 16
	extSCT                  = 18
	extPadding              = 21
	extExtendedMasterSecret = 23
	extCompressCertificate  = 27
	extRecordSizeLimit      = 28
	extDelegatedCredentials = 34
	extSessionTicket        = 35
	extPreSharedKey         = 41
	extSupportedVersions    = 43
	extPSKKeyExchangeModes  = 45
	extKeyShare             = 51
	extQUICTransportParams  = 57
	extALPSOld              = 17513
	extALPS                 = 17613
	extECH                  = 65037
	extRenegotiationInfo    = 65281
)

// IsGREASE reports whether v is one of the sixteen GREASE values of RFC 8701
// (0x0a0a, 0x1a1a, ..., 0xfafa) used for cipher suites, extensions, groups,
// signature algorithms and versions.
func IsGREASE(v uint16) bool {
	return v&0x0f0f == 0x0a0a && v>>8 == v&0xff
}

// ParseClientHello parses raw TLS record bytes holding a ClientHello,
// including a hello fragmented over several handshake records. Bytes after
// the hello are ignored. It never panics and never reads out of range; on
// failure it returns a *ParseError whose Err is ErrTruncated (send more
// bytes), ErrNotClientHello or ErrMalformed.
func ParseClientHello(record []byte) (*ClientHello, error) {
	msg, base, ch, err := reassembleHello(record)
	if err != nil {
		return nil, err
	}
	if err := ch.parseHandshake(msg, base); err != nil {
		return nil, err
	}
	return ch, nil
}

// ParseClientHelloMessage parses a ClientHello handshake message without the
// record layer (type 1, 24-bit length, body), as carried in QUIC CRYPTO
// frames. Error offsets count from the start of msg.
func ParseClientHelloMessage(msg []byte) (*ClientHello, error) {
	if len(msg) >= 1 && msg[0] != handshakeClientHello {
		return nil, &ParseError{Proto: "tls", What: "handshake type", Offset: 0, Err: ErrNotClientHello}
	}
	if len(msg) < 4 {
		return nil, truncated("tls", "handshake header", len(msg))
	}
	n := int(msg[1])<<16 | int(msg[2])<<8 | int(msg[3])
	if n > maxClientHelloBodySize {
		return nil, malformed("tls", "handshake length", 1)
	}
	if len(msg) < 4+n {
		return nil, truncated("tls", "handshake body", len(msg))
	}
	ch := &ClientHello{HandshakeLength: n}
	if err := ch.parseHandshake(msg[:4+n], 0); err != nil {
		return nil, err
	}
	return ch, nil
}

// reassembleHello returns the complete handshake message (header included)
// from one or more records, and the offset of its first byte in the input
// (0 for a reassembled message, whose error offsets count in the message).
func reassembleHello(in []byte) ([]byte, int, *ClientHello, error) {
	ch := &ClientHello{}
	var msg []byte // reassembly buffer, used only when the hello spans records
	var single []byte
	pos := 0
	need := -1 // total handshake message length once known
	for {
		if len(in)-pos < recordHeaderLen {
			if pos == 0 && len(in) >= 1 && in[0] != recordTypeHandshake {
				return nil, 0, nil, &ParseError{Proto: "tls", What: "record type", Offset: 0, Err: ErrNotClientHello}
			}
			return nil, 0, nil, truncated("tls", "record header", len(in))
		}
		typ := in[pos]
		ver := uint16(in[pos+1])<<8 | uint16(in[pos+2])
		n := int(in[pos+3])<<8 | int(in[pos+4])
		if typ != recordTypeHandshake {
			if pos == 0 {
				return nil, 0, nil, &ParseError{Proto: "tls", What: "record type", Offset: pos, Err: ErrNotClientHello}
			}
			return nil, 0, nil, malformed("tls", "record type inside fragmented hello", pos)
		}
		if n == 0 || n > maxRecordPayload {
			return nil, 0, nil, malformed("tls", "record length", pos+3)
		}
		if pos == 0 {
			ch.RecordVersion = ver
		}
		ch.RecordCount++
		payloadStart := pos + recordHeaderLen
		if len(in)-payloadStart < n {
			return nil, 0, nil, truncated("tls", "record payload", len(in))
		}
		payload := in[payloadStart : payloadStart+n]
		pos = payloadStart + n

		if ch.RecordCount == 1 {
			single = payload
		} else {
			if msg == nil {
				msg = make([]byte, 0, max(need, len(single)+n))
				msg = append(msg, single...)
			}
			msg = append(msg, payload...)
		}
		cur := single
		if msg != nil {
			cur = msg
		}
		if need < 0 && len(cur) >= 4 {
			if cur[0] != handshakeClientHello {
				return nil, 0, nil, &ParseError{Proto: "tls", What: "handshake type", Offset: recordHeaderLen, Err: ErrNotClientHello}
			}
			body := int(cur[1])<<16 | int(cur[2])<<8 | int(cur[3])
			if body > maxClientHelloBodySize {
				return nil, 0, nil, malformed("tls", "handshake length", recordHeaderLen+1)
			}
			need = 4 + body
			ch.HandshakeLength = body
		}
		if need >= 0 && len(cur) >= need {
			if msg == nil {
				return cur[:need:need], recordHeaderLen, ch, nil
			}
			return cur[:need:need], 0, ch, nil
		}
	}
}

// parseHandshake parses a complete ClientHello handshake message into ch.
// base is the offset of msg[0] in the caller's input, for error offsets.
func (ch *ClientHello) parseHandshake(msg []byte, base int) error {
	r := byteReader{b: msg[4:], base: base + 4}
	const p = "tls"
	var ok bool
	if ch.Version, ok = r.u16(); !ok {
		return malformed(p, "legacy_version", r.off())
	}
	if ch.Random, ok = r.bytes(32); !ok {
		return malformed(p, "random", r.off())
	}
	sid, ok := r.vec8()
	if !ok || sid.left() > 32 {
		return malformed(p, "session_id", r.off())
	}
	ch.SessionID = sid.b
	cs, ok := r.vec16()
	if !ok {
		return malformed(p, "cipher_suites", r.off())
	}
	if ch.CipherSuites, ok = cs.u16s(); !ok || len(ch.CipherSuites) == 0 {
		return malformed(p, "cipher_suites", cs.base)
	}
	cm, ok := r.vec8()
	if !ok || cm.left() == 0 {
		return malformed(p, "compression_methods", r.off())
	}
	ch.CompressionMethods = cm.b
	if r.empty() {
		return nil // a hello without extensions (SSL 3.0 era) is valid
	}
	exts, ok := r.vec16()
	if !ok || !r.empty() {
		return malformed(p, "extensions", r.off())
	}
	ch.Extensions = make([]Extension, 0, countExtensions(exts))
	for !exts.empty() {
		start := exts.off()
		typ, ok := exts.u16()
		if !ok {
			return malformed(p, "extension header", start)
		}
		data, ok := exts.vec16()
		if !ok {
			return malformed(p, "extension header", start)
		}
		ch.Extensions = append(ch.Extensions, Extension{Type: typ, Data: data.b})
		if !ch.decodeExtension(typ, data) {
			return malformed(p, "extension "+extensionLabel(typ), start)
		}
	}
	return nil
}

// countExtensions counts the entries of an extension block without
// decoding them, to size the Extensions slice once.
func countExtensions(r byteReader) int {
	n := 0
	for r.left() >= 4 {
		r.pos += 2
		l, _ := r.u16()
		if r.left() < int(l) {
			break
		}
		r.pos += int(l)
		n++
	}
	return n
}

// decodeExtension fills the typed fields of ch from one extension. It
// reports false when the extension's contents are malformed.
func (ch *ClientHello) decodeExtension(typ uint16, d byteReader) bool {
	var ok bool
	switch typ {
	case extServerName:
		if d.empty() {
			return true // a server's echo form; clients send a list
		}
		list, ok := d.vec16()
		if !ok || !d.empty() {
			return false
		}
		for !list.empty() {
			nt, ok := list.u8()
			if !ok {
				return false
			}
			name, ok := list.vec16()
			if !ok {
				return false
			}
			if nt == 0 && ch.ServerName == "" {
				ch.ServerName = string(name.b)
			}
		}
	case extStatusRequest:
		ch.StatusRequest = true
	case extSupportedGroups:
		l, ok := d.vec16()
		if !ok || !d.empty() {
			return false
		}
		ch.SupportedGroups, ok = l.u16s()
		return ok
	case extECPointFormats:
		l, ok := d.vec8()
		if !ok || !d.empty() {
			return false
		}
		ch.ECPointFormats = l.b
	case extSignatureAlgorithms:
		l, ok := d.vec16()
		if !ok || !d.empty() {
			return false
		}
		ch.SignatureAlgorithms, ok = l.u16s()
		return ok
	case extALPN:
		ch.ALPN, ok = protocolList(d)
		return ok
	case extSCT:
		ch.SCT = true
	case extPadding:
		ch.PaddingLen = d.left()
	case extExtendedMasterSecret:
		ch.ExtendedMasterSecret = true
	case extCompressCertificate:
		l, ok := d.vec8()
		if !ok || !d.empty() {
			return false
		}
		ch.CertCompression, ok = l.u16s()
		return ok
	case extRecordSizeLimit:
		v, ok := d.u16()
		if !ok || !d.empty() {
			return false
		}
		ch.RecordSizeLimit = v
	case extDelegatedCredentials:
		l, ok := d.vec16()
		if !ok || !d.empty() {
			return false
		}
		ch.DelegatedCredentials, ok = l.u16s()
		return ok
	case extSessionTicket:
		ch.SessionTicket = true
		ch.SessionTicketLen = d.left()
	case extPreSharedKey:
		ch.HasPreSharedKey = true
	case extSupportedVersions:
		l, ok := d.vec8()
		if !ok || !d.empty() {
			return false
		}
		ch.SupportedVersions, ok = l.u16s()
		return ok
	case extPSKKeyExchangeModes:
		l, ok := d.vec8()
		if !ok || !d.empty() {
			return false
		}
		ch.PSKModes = l.b
	case extKeyShare:
		l, ok := d.vec16()
		if !ok || !d.empty() {
			return false
		}
		ch.KeyShares = make([]KeyShare, 0, countKeyShares(l))
		for !l.empty() {
			g, ok := l.u16()
			if !ok {
				return false
			}
			k, ok := l.vec16()
			if !ok {
				return false
			}
			ch.KeyShares = append(ch.KeyShares, KeyShare{Group: g, Len: k.left()})
		}
	case extQUICTransportParams:
		ch.QUICTransportParams = true
	case extALPS, extALPSOld:
		protos, ok := protocolList(d)
		if !ok {
			return false
		}
		ch.ALPS = &ALPS{Type: typ, Protocols: protos}
	case extECH:
		e := &ECH{}
		if e.Type, ok = d.u8(); !ok {
			return false
		}
		if e.Type == 0 {
			if e.KDF, ok = d.u16(); !ok {
				return false
			}
			if e.AEAD, ok = d.u16(); !ok {
				return false
			}
			if e.ConfigID, ok = d.u8(); !ok {
				return false
			}
			enc, ok := d.vec16()
			if !ok {
				return false
			}
			payload, ok := d.vec16()
			if !ok {
				return false
			}
			e.EncLen, e.PayloadLen = enc.left(), payload.left()
		}
		if !d.empty() {
			return false
		}
		ch.ECH = e
	case extRenegotiationInfo:
		ch.RenegotiationInfo = true
	}
	return true
}

// protocolList decodes a ProtocolNameList (ALPN and ALPS): a two-byte
// length, then one-byte-length-prefixed names.
func protocolList(d byteReader) ([]string, bool) {
	l, ok := d.vec16()
	if !ok || !d.empty() {
		return nil, false
	}
	var out []string
	for !l.empty() {
		p, ok := l.vec8()
		if !ok {
			return nil, false
		}
		out = append(out, protocolName(p.b))
	}
	return out, true
}

// protocolName returns p as a string, without allocating for the ALPN
// values browsers send.
func protocolName(p []byte) string {
	switch string(p) {
	case "h2":
		return "h2"
	case "http/1.1":
		return "http/1.1"
	case "h3":
		return "h3"
	}
	return string(p)
}

// countKeyShares counts the entries of a key_share list.
func countKeyShares(l byteReader) int {
	n := 0
	for l.left() >= 4 {
		l.pos += 2
		k, _ := l.u16()
		if l.left() < int(k) {
			break
		}
		l.pos += int(k)
		n++
	}
	return n
}

// Extension returns the data of the first extension of type typ and whether
// it is present.
func (ch *ClientHello) Extension(typ uint16) ([]byte, bool) {
	for _, e := range ch.Extensions {
		if e.Type == typ {
			return e.Data, true
		}
	}
	return nil, false
}

// HasExtension reports whether an extension of type typ is present.
func (ch *ClientHello) HasExtension(typ uint16) bool {
	_, ok := ch.Extension(typ)
	return ok
}
