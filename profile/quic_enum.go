package profile

// ConnIDRule says how a browser picks the length of the Destination
// Connection ID of its first Initial packet. The zero value is invalid.
type ConnIDRule uint8

// Connection ID length rules.
const (
	// ConnIDFixed uses QUIC.DCIDLen on every connection (Chromium: 8).
	ConnIDFixed ConnIDRule = iota + 1
	// ConnIDBiased draws a random byte b and uses max(8, 5 + (b & b>>4)):
	// 8 more than half the time, up to 20 (neqo, Firefox; 8, 9 and 15
	// recorded). QUIC.DCIDLen is then 0.
	ConnIDBiased
)

var connIDNames = [...]string{ConnIDFixed: "fixed", ConnIDBiased: "biased-8-20"}

// String returns the rule's name ("fixed").
func (r ConnIDRule) String() string { return enumName(connIDNames[:], int(r), "ConnIDRule") }

// MarshalText implements encoding.TextMarshaler.
func (r ConnIDRule) MarshalText() ([]byte, error) {
	return enumText(connIDNames[:], int(r), "dcid_rule")
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (r *ConnIDRule) UnmarshalText(t []byte) error {
	i, err := enumParse(connIDNames[:], t, "dcid_rule")
	*r = ConnIDRule(i)
	return err
}

// PacketNumberRule says which packet number a browser's first Initial
// packet carries. The zero value is invalid.
type PacketNumberRule uint8

// First packet number rules.
const (
	// PacketNumberFixed starts at QUIC.FirstPacketNumber (Chromium: 1).
	PacketNumberFixed PacketNumberRule = iota + 1
	// PacketNumberRandom draws two random bytes r0, r1 and starts at
	// (r0 & 31) + (max(r1-224, 0) << 5) + 1: mostly below 33, at most
	// 1024 (neqo, Firefox; 4, 8 and 20 recorded).
	PacketNumberRandom
)

var pnRuleNames = [...]string{PacketNumberFixed: "fixed", PacketNumberRandom: "random-1-1024"}

// String returns the rule's name ("fixed").
func (r PacketNumberRule) String() string {
	return enumName(pnRuleNames[:], int(r), "PacketNumberRule")
}

// MarshalText implements encoding.TextMarshaler.
func (r PacketNumberRule) MarshalText() ([]byte, error) {
	return enumText(pnRuleNames[:], int(r), "first_packet_number_rule")
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (r *PacketNumberRule) UnmarshalText(t []byte) error {
	i, err := enumParse(pnRuleNames[:], t, "first_packet_number_rule")
	*r = PacketNumberRule(i)
	return err
}

// PaddingRule says how a browser brings its Initial datagrams to
// QUIC.DatagramSize. The zero value is invalid.
type PaddingRule uint8

// Padding rules.
const (
	// PaddingFrames fills each Initial packet with PADDING frames until
	// the packet is the whole datagram (Chromium).
	PaddingFrames PaddingRule = iota + 1
	// PaddingAfterPacket sends the packet at its own size and fills the
	// rest of the datagram with zero bytes after it (Firefox).
	PaddingAfterPacket
)

var paddingNames = [...]string{PaddingFrames: "frames", PaddingAfterPacket: "after-packet"}

// String returns the rule's name ("frames").
func (r PaddingRule) String() string { return enumName(paddingNames[:], int(r), "PaddingRule") }

// MarshalText implements encoding.TextMarshaler.
func (r PaddingRule) MarshalText() ([]byte, error) {
	return enumText(paddingNames[:], int(r), "padding")
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (r *PaddingRule) UnmarshalText(t []byte) error {
	i, err := enumParse(paddingNames[:], t, "padding")
	*r = PaddingRule(i)
	return err
}

// CryptoLayout says how a browser cuts its ClientHello into the CRYPTO
// frames of its first Initial packets. The zero value is invalid.
type CryptoLayout uint8

// CRYPTO layouts.
const (
	// LayoutChaos is quiche's chaos protection (Chromium): the first
	// packet carries the hello's first 55 to 86 bytes and its end, later
	// packets the middle; in every packet the CRYPTO data is split into
	// up to 11 frames, up to 9 PINGs are added, the padding is spread
	// between them in random runs and all frames are shuffled.
	LayoutChaos CryptoLayout = iota + 1
	// LayoutSNISlice is neqo's SNI slicing (Firefox): the hello is cut at
	// the middle of the server name, the first packet carries a CRYPTO
	// frame from the cut side of one part and then one from the other,
	// so that the name spans two packets, each packet about half the
	// hello; no PING, no PADDING frame.
	LayoutSNISlice
)

var layoutNames = [...]string{LayoutChaos: "chaos-protection", LayoutSNISlice: "sni-slice"}

// String returns the layout's name ("chaos-protection").
func (l CryptoLayout) String() string { return enumName(layoutNames[:], int(l), "CryptoLayout") }

// MarshalText implements encoding.TextMarshaler.
func (l CryptoLayout) MarshalText() ([]byte, error) {
	return enumText(layoutNames[:], int(l), "crypto_layout")
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (l *CryptoLayout) UnmarshalText(t []byte) error {
	i, err := enumParse(layoutNames[:], t, "crypto_layout")
	*l = CryptoLayout(i)
	return err
}

// ParamRule says where the value of one transport parameter comes from.
// The zero value is invalid.
type ParamRule uint8

// Transport parameter rules.
const (
	// ParamFixed sends the recorded id and value.
	ParamFixed ParamRule = iota + 1
	// ParamGREASE sends a reserved id 31*N+27 drawn per connection with
	// a random value of 0 to QUIC.GREASEParamMaxLen-1 bytes (quiche).
	// The recorded id and value are one draw.
	ParamGREASE
	// ParamSourceConnID sends the connection's Source Connection ID
	// (initial_source_connection_id, RFC 9000 §7.3).
	ParamSourceConnID
	// ParamVersionInformation sends the recorded version_information
	// (RFC 9368) with each reserved version (0x?a?a?a?a) redrawn.
	ParamVersionInformation
)

var paramRuleNames = [...]string{ParamFixed: "fixed", ParamGREASE: "grease", ParamSourceConnID: "scid", ParamVersionInformation: "version-information"}

// String returns the rule's name ("fixed").
func (r ParamRule) String() string { return enumName(paramRuleNames[:], int(r), "ParamRule") }

// MarshalText implements encoding.TextMarshaler.
func (r ParamRule) MarshalText() ([]byte, error) {
	return enumText(paramRuleNames[:], int(r), "rule")
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (r *ParamRule) UnmarshalText(t []byte) error {
	i, err := enumParse(paramRuleNames[:], t, "rule")
	*r = ParamRule(i)
	return err
}
