package profile

import (
	"encoding/hex"
	"fmt"
	"slices"
)

// QUIC is a browser's QUIC version 1 first flight as recorded: the
// ClientHello its Initial packets carry, its transport parameters, and how
// it lays the hello out in packets and datagrams. The fields that say
// "per connection" name what the client draws anew on every connection
// from its random source.
type QUIC struct {
	// Hello is the ClientHello of a recorded QUIC connection in the form
	// TLS.Hello has: one TLS handshake record (type 22) holding the
	// handshake message the CRYPTO frames carried, offering ALPN h3, with
	// the quic_transport_parameters extension (57), whose body a client
	// replaces with TransportParameters. Required.
	Hello []byte
	// ShuffleExtensions reports whether the browser permutes the hello's
	// extensions per connection, keeping the last FixedTailExtensions in
	// place (Chromium permutes all; Firefox keeps transport parameters
	// and ECH last).
	ShuffleExtensions   bool
	FixedTailExtensions int
	// TransportParameters are the parameters in recorded order.
	TransportParameters []TransportParameter
	// ShuffleTransportParameters reports whether the browser sends them
	// in a new order per connection (Chromium), rather than in this one.
	ShuffleTransportParameters bool
	// GREASEParamMaxLen bounds a ParamGREASE parameter's value: 0 to
	// GREASEParamMaxLen-1 random bytes (quiche: 16).
	GREASEParamMaxLen int
	// DCIDRule and DCIDLen give the first Initial's Destination
	// Connection ID length (DCIDLen is the length for ConnIDFixed, else
	// 0); SCIDLen is the Source Connection ID's (Chromium 0, Firefox 3).
	DCIDRule ConnIDRule
	DCIDLen  int
	SCIDLen  int
	// FirstPacketRule and FirstPacketNumber give the first Initial's
	// packet number (FirstPacketNumber is the number for
	// PacketNumberFixed, else 0).
	FirstPacketRule   PacketNumberRule
	FirstPacketNumber uint64
	// PacketNumberLens are the packet number lengths of the first
	// flight's packets in order (Chromium: 1, then 2); nil means the
	// fewest bytes that hold the packet number plus one (neqo).
	PacketNumberLens []int
	// DatagramSize is the size of every datagram of the first flight
	// (Chromium 1250, Firefox 1252).
	DatagramSize int
	// Padding says how the datagrams reach DatagramSize.
	Padding PaddingRule
	// Layout says how the hello is cut into CRYPTO frames, PINGs and
	// PADDING.
	Layout CryptoLayout
}

// TransportParameter is one quic_transport_parameters entry.
type TransportParameter struct {
	// ID is the parameter id (RFC 9000 §18.2).
	ID uint64
	// Value is the recorded value, the one sent for ParamFixed.
	Value []byte
	Rule  ParamRule
}

// H3Setting is one HTTP/3 SETTINGS parameter (RFC 9114 §7.2.4.1).
type H3Setting struct {
	ID    uint64
	Value uint64
	// GREASE marks a reserved setting (0x1f*N+0x21) whose id and value
	// the browser draws per connection; ID and Value are one draw.
	GREASE bool
}

// HTTP3 is a browser's HTTP/3 behaviour as recorded. Its header sets are
// the profile's Headers of Proto H3.
type HTTP3 struct {
	// Settings are sent in this order in the control stream's SETTINGS
	// frame. Required.
	Settings []H3Setting
	// GREASEFrameMaxLen, if positive, is the bound of the reserved frame
	// the browser sends right after SETTINGS: a random type 0x1f*N+0x21
	// with 0 to GREASEFrameMaxLen-1 random payload bytes (Chromium 4,
	// Firefox 8).
	GREASEFrameMaxLen int
	// QPACKStreams reports whether the browser opens the QPACK encoder and
	// decoder streams after the control stream, writing their types, even
	// when the peer allows no dynamic table (Firefox: encoder, then
	// decoder). Otherwise (Chromium) the decoder stream takes the stream
	// id after the control stream's and the encoder stream the next one,
	// and each goes on the wire only with its first instruction.
	QPACKStreams bool
	// PseudoOrder is the order of :method, :authority, :scheme and :path.
	PseudoOrder []string
	// PriorityUpdate reports whether the browser sends, on the control
	// stream, a PRIORITY_UPDATE for each request (RFC 9218 §7.2) whose
	// value is the request's priority field (Chromium), besides the
	// priority header.
	PriorityUpdate bool
	// QPACKHuffman says when the browser's QPACK encoder Huffman-codes a
	// string literal, read from the recorded HEADERS (Chromium sends "?0"
	// raw, whose Huffman form is as long: HuffmanShorter; Firefox codes
	// "u=4" at the same length: HuffmanNotLonger). Zero means not
	// recorded.
	QPACKHuffman HuffmanRule
	// QPACKDynamic says how the browser's QPACK encoder uses a dynamic
	// table the server allows, read from recordings against a server that
	// allowed one (fingerprint/testdata/recordings/*-h3dyn-*.json); zero
	// means static-only.
	QPACKDynamic QPACKDynamicRule
	// QPACKCapacity says when the browser's QPACK encoder sets the
	// dynamic table's capacity, read from recordings against a server
	// that announced a capacity of 0
	// (fingerprint/testdata/recordings/*-h3notable-*.json); zero means
	// not recorded (as QPACKCapacityAllowed).
	QPACKCapacity QPACKCapacityRule
	// GREASEWideIDs reports that the browser draws the N of its reserved
	// ids (0x1f*N+0x21, GREASE settings and frame types) over the whole
	// varint range (neqo: recorded frame types near 2^60), rather than
	// from 32 bits (quiche: every recorded id below 0x1f*2^32).
	GREASEWideIDs bool
}

func (q *QUIC) clone() *QUIC {
	if q == nil {
		return nil
	}
	c := *q
	c.Hello = slices.Clone(q.Hello)
	c.TransportParameters = slices.Clone(q.TransportParameters)
	for i := range c.TransportParameters {
		c.TransportParameters[i].Value = slices.Clone(c.TransportParameters[i].Value)
	}
	c.PacketNumberLens = slices.Clone(q.PacketNumberLens)
	return &c
}

func (h *HTTP3) clone() *HTTP3 {
	if h == nil {
		return nil
	}
	c := *h
	c.Settings = slices.Clone(h.Settings)
	c.PseudoOrder = slices.Clone(h.PseudoOrder)
	return &c
}

// Bounds the loader checks QUIC values against.
const (
	maxConnIDLen       = 20      // RFC 9000 §17.2
	minDatagramSize    = 1200    // RFC 9000 §14.1: a client's Initial datagram
	maxDatagramSize    = 1500    // what guise sends over any path
	maxFirstPacket     = 1 << 30 // a first packet number well inside a 4-byte encoding
	maxQUICVarint      = 1<<62 - 1
	maxTransportParams = 64
)

// tpVersionInformation and tpInitialSourceConnID are the parameter ids
// whose rules need them.
const (
	tpInitialSourceConnID = 0x0f
	tpVersionInformation  = 0x11
)

func isTPGREASE(id uint64) bool { return id%31 == 27 }

func (q *QUIC) validate() error {
	if len(q.Hello) == 0 {
		return perr("quic.hello", "missing")
	}
	if err := checkHello("quic.hello", q.Hello); err != nil {
		return err
	}
	if !helloHas(q.Hello, extQUICTransportParameters) {
		return perr("quic.hello", "no quic_transport_parameters extension")
	}
	if !helloALPNIs(q.Hello, "h3") {
		return perr("quic.hello", "does not offer ALPN h3 alone")
	}
	if n := countExtensions(q.Hello); q.FixedTailExtensions < 0 || q.FixedTailExtensions > n {
		return perr("quic.fixed_tail_extensions", "%d out of range 0..%d", q.FixedTailExtensions, n)
	}
	if len(q.TransportParameters) == 0 || len(q.TransportParameters) > maxTransportParams {
		return perr("quic.transport_parameters", "%d entries, want 1..%d", len(q.TransportParameters), maxTransportParams)
	}
	grease := false
	for i, p := range q.TransportParameters {
		f := fmt.Sprintf("quic.transport_parameters[%d]", i)
		if p.ID > maxQUICVarint {
			return perr(f, "id %d exceeds 2^62-1", p.ID)
		}
		if p.Rule < ParamFixed || int(p.Rule) >= len(paramRuleNames) {
			return perr(f, "missing or invalid rule (%d)", p.Rule)
		}
		for _, o := range q.TransportParameters[:i] {
			if o.ID == p.ID {
				return perr(f, "duplicate id %#x", p.ID)
			}
		}
		switch p.Rule {
		case ParamGREASE:
			if !isTPGREASE(p.ID) {
				return perr(f, "grease rule for id %#x, which is not 31*N+27", p.ID)
			}
			if len(p.Value) >= q.GREASEParamMaxLen {
				return perr(f, "grease value of %d bytes, quic.grease_param_max_len is %d", len(p.Value), q.GREASEParamMaxLen)
			}
			grease = true
		case ParamSourceConnID:
			if p.ID != tpInitialSourceConnID || len(p.Value) != q.SCIDLen {
				return perr(f, "scid rule for id %#x with %d bytes: want initial_source_connection_id of scid_len bytes", p.ID, len(p.Value))
			}
		case ParamVersionInformation:
			if p.ID != tpVersionInformation || len(p.Value) < 8 || len(p.Value)%4 != 0 {
				return perr(f, "version-information rule for id %#x with %d bytes", p.ID, len(p.Value))
			}
		}
	}
	if !grease && q.GREASEParamMaxLen != 0 {
		return perr("quic.grease_param_max_len", "%d without a grease parameter", q.GREASEParamMaxLen)
	}
	if q.GREASEParamMaxLen < 0 || q.GREASEParamMaxLen > 256 {
		return perr("quic.grease_param_max_len", "%d out of range 0..256", q.GREASEParamMaxLen)
	}
	switch q.DCIDRule {
	case ConnIDFixed:
		if q.DCIDLen < 8 || q.DCIDLen > maxConnIDLen {
			return perr("quic.dcid_len", "%d out of range 8..20 (RFC 9000 §7.2)", q.DCIDLen)
		}
	case ConnIDBiased:
		if q.DCIDLen != 0 {
			return perr("quic.dcid_len", "%d with rule %v, which draws it", q.DCIDLen, q.DCIDRule)
		}
	default:
		return perr("quic.dcid_rule", "missing or invalid (%d)", q.DCIDRule)
	}
	if q.SCIDLen < 0 || q.SCIDLen > maxConnIDLen {
		return perr("quic.scid_len", "%d out of range 0..20", q.SCIDLen)
	}
	switch q.FirstPacketRule {
	case PacketNumberFixed:
		if q.FirstPacketNumber > maxFirstPacket {
			return perr("quic.first_packet_number", "%d exceeds %d", q.FirstPacketNumber, maxFirstPacket)
		}
	case PacketNumberRandom:
		if q.FirstPacketNumber != 0 {
			return perr("quic.first_packet_number", "%d with rule %v, which draws it", q.FirstPacketNumber, q.FirstPacketRule)
		}
	default:
		return perr("quic.first_packet_number_rule", "missing or invalid (%d)", q.FirstPacketRule)
	}
	for i, n := range q.PacketNumberLens {
		if n < 1 || n > 4 {
			return perr(fmt.Sprintf("quic.packet_number_lens[%d]", i), "%d out of range 1..4", n)
		}
	}
	if q.DatagramSize < minDatagramSize || q.DatagramSize > maxDatagramSize {
		return perr("quic.datagram_size", "%d out of range %d..%d", q.DatagramSize, minDatagramSize, maxDatagramSize)
	}
	if q.Padding < PaddingFrames || int(q.Padding) >= len(paddingNames) {
		return perr("quic.padding", "missing or invalid (%d)", q.Padding)
	}
	if q.Layout < LayoutChaos || int(q.Layout) >= len(layoutNames) {
		return perr("quic.crypto_layout", "missing or invalid (%d)", q.Layout)
	}
	return nil
}

func isH3GREASE(v uint64) bool { return v >= 0x21 && (v-0x21)%0x1f == 0 }

func (h *HTTP3) validate() error {
	if len(h.Settings) == 0 {
		return perr("http3.settings", "missing")
	}
	for i, s := range h.Settings {
		f := fmt.Sprintf("http3.settings[%d]", i)
		if s.ID > maxQUICVarint || s.Value > maxQUICVarint {
			return perr(f, "id %d or value %d exceeds 2^62-1", s.ID, s.Value)
		}
		if s.ID >= 0x02 && s.ID <= 0x05 {
			return perr(f, "id %#x is an HTTP/2 setting HTTP/3 reserves (RFC 9114 §7.2.4.1)", s.ID)
		}
		if s.GREASE && !isH3GREASE(s.ID) {
			return perr(f, "grease setting with id %#x, which is not 0x1f*N+0x21", s.ID)
		}
		for _, o := range h.Settings[:i] {
			if o.ID == s.ID {
				return perr(f, "duplicate id %#x", s.ID)
			}
		}
	}
	if h.GREASEFrameMaxLen < 0 || h.GREASEFrameMaxLen > 256 {
		return perr("http3.grease_frame_max_len", "%d out of range 0..256", h.GREASEFrameMaxLen)
	}
	if int(h.QPACKHuffman) >= len(huffmanNames) {
		return perr("http3.qpack_huffman", "invalid rule (%d)", h.QPACKHuffman)
	}
	if int(h.QPACKDynamic) >= len(qpackDynamicNames) {
		return perr("http3.qpack_dynamic", "invalid rule (%d)", h.QPACKDynamic)
	}
	if int(h.QPACKCapacity) >= len(qpackCapacityNames) {
		return perr("http3.qpack_capacity", "invalid rule (%d)", h.QPACKCapacity)
	}
	return checkPseudoOrder("http3.pseudo_order", h.PseudoOrder)
}

// checkPseudoOrder checks that order holds the four request pseudo-headers
// once each.
func checkPseudoOrder(field string, order []string) error {
	if len(order) != len(pseudoHeaders) {
		return perr(field, "%d entries, want %d", len(order), len(pseudoHeaders))
	}
	for _, ph := range pseudoHeaders {
		if n := countOf(order, ph); n != 1 {
			return perr(field, "%q appears %d times", ph, n)
		}
	}
	return nil
}

// extQUICTransportParameters is the quic_transport_parameters extension.
const (
	extQUICTransportParameters = 57
	extALPN                    = 16
)

// helloExtension returns the body of extension typ of the hello record b,
// which checkHello accepted.
func helloExtension(b []byte, typ uint16) ([]byte, bool) {
	b = b[9+2+32:]
	b = b[1+int(b[0]):]                // session id
	b = b[2+(int(b[0])<<8|int(b[1])):] // cipher suites
	b = b[1+int(b[0]):]                // compression methods
	for b = b[2:]; len(b) >= 4; {
		t, n := uint16(b[0])<<8|uint16(b[1]), int(b[2])<<8|int(b[3])
		if t == typ {
			return b[4 : 4+n], true
		}
		b = b[4+n:]
	}
	return nil, false
}

// helloALPNIs reports whether the hello offers exactly one protocol, proto.
func helloALPNIs(b []byte, proto string) bool {
	e, ok := helloExtension(b, extALPN)
	return ok && len(e) == 3+len(proto) && int(e[0])<<8|int(e[1]) == 1+len(proto) &&
		int(e[2]) == len(proto) && string(e[3:]) == proto
}

func countExtensions(b []byte) int {
	b = b[9+2+32:]
	b = b[1+int(b[0]):]
	b = b[2+(int(b[0])<<8|int(b[1])):]
	b = b[1+int(b[0]):]
	n := 0
	walkExtensions("", b[2:], func(uint16) { n++ })
	return n
}

// The file form of QUIC and HTTP3.

type wireQUIC struct {
	Hello                      string           `json:"hello"`
	ShuffleExtensions          bool             `json:"shuffle_extensions"`
	FixedTailExtensions        int              `json:"fixed_tail_extensions"`
	TransportParameters        []wireTParam     `json:"transport_parameters"`
	ShuffleTransportParameters bool             `json:"shuffle_transport_parameters"`
	GREASEParamMaxLen          int              `json:"grease_param_max_len,omitempty"`
	DCIDRule                   ConnIDRule       `json:"dcid_rule"`
	DCIDLen                    int              `json:"dcid_len"`
	SCIDLen                    int              `json:"scid_len"`
	FirstPacketRule            PacketNumberRule `json:"first_packet_number_rule"`
	FirstPacketNumber          uint64           `json:"first_packet_number"`
	PacketNumberLens           []int            `json:"packet_number_lens,omitempty"`
	DatagramSize               int              `json:"datagram_size"`
	Padding                    PaddingRule      `json:"padding"`
	Layout                     CryptoLayout     `json:"crypto_layout"`
}

type wireTParam struct {
	ID    uint64    `json:"id"`
	Value string    `json:"value_hex"`
	Rule  ParamRule `json:"rule"`
}

type wireH3Setting struct {
	ID     uint64 `json:"id"`
	Value  uint64 `json:"value"`
	GREASE bool   `json:"grease,omitempty"`
}

type wireHTTP3 struct {
	Settings          []wireH3Setting   `json:"settings"`
	GREASEFrameMaxLen int               `json:"grease_frame_max_len,omitempty"`
	QPACKStreams      bool              `json:"qpack_streams"`
	PseudoOrder       []string          `json:"pseudo_order"`
	PriorityUpdate    bool              `json:"priority_update"`
	QPACKHuffman      HuffmanRule       `json:"qpack_huffman,omitempty"`
	QPACKDynamic      QPACKDynamicRule  `json:"qpack_dynamic,omitempty"`
	QPACKCapacity     QPACKCapacityRule `json:"qpack_capacity,omitempty"`
	GREASEWideIDs     bool              `json:"grease_wide_ids,omitempty"`
}

func quicToWire(q *QUIC) *wireQUIC {
	if q == nil {
		return nil
	}
	w := &wireQUIC{
		Hello: hex.EncodeToString(q.Hello), ShuffleExtensions: q.ShuffleExtensions, FixedTailExtensions: q.FixedTailExtensions,
		ShuffleTransportParameters: q.ShuffleTransportParameters, GREASEParamMaxLen: q.GREASEParamMaxLen,
		DCIDRule: q.DCIDRule, DCIDLen: q.DCIDLen, SCIDLen: q.SCIDLen,
		FirstPacketRule: q.FirstPacketRule, FirstPacketNumber: q.FirstPacketNumber, PacketNumberLens: q.PacketNumberLens,
		DatagramSize: q.DatagramSize, Padding: q.Padding, Layout: q.Layout,
	}
	for _, p := range q.TransportParameters {
		w.TransportParameters = append(w.TransportParameters, wireTParam{ID: p.ID, Value: hex.EncodeToString(p.Value), Rule: p.Rule})
	}
	return w
}

func quicFromWire(w *wireQUIC) (*QUIC, error) {
	if w == nil {
		return nil, nil
	}
	q := &QUIC{
		ShuffleExtensions: w.ShuffleExtensions, FixedTailExtensions: w.FixedTailExtensions,
		ShuffleTransportParameters: w.ShuffleTransportParameters, GREASEParamMaxLen: w.GREASEParamMaxLen,
		DCIDRule: w.DCIDRule, DCIDLen: w.DCIDLen, SCIDLen: w.SCIDLen,
		FirstPacketRule: w.FirstPacketRule, FirstPacketNumber: w.FirstPacketNumber, PacketNumberLens: nilIfEmpty(w.PacketNumberLens),
		DatagramSize: w.DatagramSize, Padding: w.Padding, Layout: w.Layout,
	}
	var err error
	if q.Hello, err = decodeHex("quic.hello", w.Hello); err != nil {
		return nil, err
	}
	for i, p := range w.TransportParameters {
		v, err := decodeHex(fmt.Sprintf("quic.transport_parameters[%d].value_hex", i), p.Value)
		if err != nil {
			return nil, err
		}
		q.TransportParameters = append(q.TransportParameters, TransportParameter{ID: p.ID, Value: v, Rule: p.Rule})
	}
	return q, nil
}

func http3ToWire(h *HTTP3) *wireHTTP3 {
	if h == nil {
		return nil
	}
	w := &wireHTTP3{GREASEFrameMaxLen: h.GREASEFrameMaxLen, QPACKStreams: h.QPACKStreams, PseudoOrder: h.PseudoOrder, PriorityUpdate: h.PriorityUpdate,
		QPACKHuffman: h.QPACKHuffman, QPACKDynamic: h.QPACKDynamic, QPACKCapacity: h.QPACKCapacity, GREASEWideIDs: h.GREASEWideIDs}
	for _, s := range h.Settings {
		w.Settings = append(w.Settings, wireH3Setting(s))
	}
	return w
}

func http3FromWire(w *wireHTTP3) *HTTP3 {
	if w == nil {
		return nil
	}
	h := &HTTP3{GREASEFrameMaxLen: w.GREASEFrameMaxLen, QPACKStreams: w.QPACKStreams, PseudoOrder: nilIfEmpty(w.PseudoOrder), PriorityUpdate: w.PriorityUpdate,
		QPACKHuffman: w.QPACKHuffman, QPACKDynamic: w.QPACKDynamic, QPACKCapacity: w.QPACKCapacity, GREASEWideIDs: w.GREASEWideIDs}
	for _, s := range w.Settings {
		h.Settings = append(h.Settings, H3Setting(s))
	}
	return h
}
