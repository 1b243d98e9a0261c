package profile

import "fmt"

// Browser names a browser family. The zero value is invalid.
type Browser uint8

// Browsers with profiles.
const (
	Chrome Browser = iota + 1
	Firefox
	Safari
	Edge
	OkHttp
)

var browserNames = [...]string{Chrome: "chrome", Firefox: "firefox", Safari: "safari", Edge: "edge", OkHttp: "okhttp"}

// String returns the lower-case name used in profile names ("chrome").
func (b Browser) String() string { return enumName(browserNames[:], int(b), "Browser") }

// MarshalText implements encoding.TextMarshaler.
func (b Browser) MarshalText() ([]byte, error) { return enumText(browserNames[:], int(b), "browser") }

// UnmarshalText implements encoding.TextUnmarshaler.
func (b *Browser) UnmarshalText(t []byte) error {
	i, err := enumParse(browserNames[:], t, "browser")
	*b = Browser(i)
	return err
}

// OS names an operating system a profile was recorded on (or stands for).
// The zero value is invalid.
type OS uint8

// Operating systems.
const (
	Linux OS = iota + 1
	Windows
	MacOS
	IOS
	Android
)

var osNames = [...]string{Linux: "linux", Windows: "windows", MacOS: "macos", IOS: "ios", Android: "android"}

// String returns the lower-case name used in profile names ("linux").
func (o OS) String() string { return enumName(osNames[:], int(o), "OS") }

// MarshalText implements encoding.TextMarshaler.
func (o OS) MarshalText() ([]byte, error) { return enumText(osNames[:], int(o), "os") }

// UnmarshalText implements encoding.TextUnmarshaler.
func (o *OS) UnmarshalText(t []byte) error {
	i, err := enumParse(osNames[:], t, "os")
	*o = OS(i)
	return err
}

// RequestKind is the kind of request a default header set is for. Browsers
// send different headers, in a different order, for a top-level navigation
// than for a script or a fetch(). The zero value is invalid.
type RequestKind uint8

// Request kinds.
const (
	// Navigate is a top-level document navigation (sec-fetch-mode: navigate).
	Navigate RequestKind = iota + 1
	// Fetch is a fetch() or XMLHttpRequest call (sec-fetch-mode: cors,
	// sec-fetch-dest: empty).
	Fetch
	// Subresource is a no-cors sub-resource load with accept "*/*"; it was
	// recorded from a <script src> load (sec-fetch-dest: script).
	Subresource
	// Image is an <img> load (sec-fetch-dest: image).
	Image
	// WebSocket is the handshake of new WebSocket(): the HTTP/1.1 Upgrade
	// request, or over h2 the extended CONNECT of RFC 8441 (pseudo-headers
	// in HTTP2.WebSocketPseudoOrder).
	WebSocket
)

var kindNames = [...]string{Navigate: "navigate", Fetch: "fetch", Subresource: "subresource", Image: "image", WebSocket: "websocket"}

// String returns the kind's name ("navigate").
func (k RequestKind) String() string { return enumName(kindNames[:], int(k), "RequestKind") }

// MarshalText implements encoding.TextMarshaler.
func (k RequestKind) MarshalText() ([]byte, error) { return enumText(kindNames[:], int(k), "kind") }

// UnmarshalText implements encoding.TextUnmarshaler.
func (k *RequestKind) UnmarshalText(t []byte) error {
	i, err := enumParse(kindNames[:], t, "kind")
	*k = RequestKind(i)
	return err
}

// Proto is the protocol a default header set is sent over. The zero value
// is invalid.
type Proto uint8

// Protocols, named by their ALPN identifiers.
const (
	H2    Proto = iota + 1 // "h2"
	HTTP1                  // "http/1.1"
	H3                     // "h3": HTTP/3 over QUIC; pseudo-headers in HTTP3.PseudoOrder
)

var protoNames = [...]string{H2: "h2", HTTP1: "http/1.1", H3: "h3"}

// String returns the ALPN identifier ("h2", "http/1.1", "h3").
func (p Proto) String() string { return enumName(protoNames[:], int(p), "Proto") }

// MarshalText implements encoding.TextMarshaler.
func (p Proto) MarshalText() ([]byte, error) { return enumText(protoNames[:], int(p), "proto") }

// UnmarshalText implements encoding.TextUnmarshaler.
func (p *Proto) UnmarshalText(t []byte) error {
	i, err := enumParse(protoNames[:], t, "proto")
	*p = Proto(i)
	return err
}

// DependRule says which stream an HTTP/2 HEADERS frame's priority depends
// on. The zero value is invalid.
type DependRule uint8

// Dependency rules.
const (
	// Root: every stream depends on stream 0 (Firefox).
	Root DependRule = iota + 1
	// LatestOpen: a stream depends on the most recently opened stream that
	// is still open and whose weight is at least its own, else on stream 0
	// (Chrome's priority dependency list; Exclusive is set).
	LatestOpen
)

var dependNames = [...]string{Root: "root", LatestOpen: "latest-open"}

// String returns the rule's name ("root", "latest-open").
func (d DependRule) String() string { return enumName(dependNames[:], int(d), "DependRule") }

// MarshalText implements encoding.TextMarshaler.
func (d DependRule) MarshalText() ([]byte, error) {
	return enumText(dependNames[:], int(d), "depends_on")
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (d *DependRule) UnmarshalText(t []byte) error {
	i, err := enumParse(dependNames[:], t, "depends_on")
	*d = DependRule(i)
	return err
}

// SettingID is an HTTP/2 SETTINGS parameter identifier (RFC 9113 6.5.2).
type SettingID uint16

// SETTINGS identifiers browsers send.
const (
	SettingHeaderTableSize       SettingID = 0x1
	SettingEnablePush            SettingID = 0x2
	SettingMaxConcurrentStreams  SettingID = 0x3
	SettingInitialWindowSize     SettingID = 0x4
	SettingMaxFrameSize          SettingID = 0x5
	SettingMaxHeaderListSize     SettingID = 0x6
	SettingEnableConnectProtocol SettingID = 0x8
	SettingNoRFC7540Priorities   SettingID = 0x9
)

var settingNames = map[SettingID]string{
	SettingHeaderTableSize:       "HEADER_TABLE_SIZE",
	SettingEnablePush:            "ENABLE_PUSH",
	SettingMaxConcurrentStreams:  "MAX_CONCURRENT_STREAMS",
	SettingInitialWindowSize:     "INITIAL_WINDOW_SIZE",
	SettingMaxFrameSize:          "MAX_FRAME_SIZE",
	SettingMaxHeaderListSize:     "MAX_HEADER_LIST_SIZE",
	SettingEnableConnectProtocol: "ENABLE_CONNECT_PROTOCOL",
	SettingNoRFC7540Priorities:   "NO_RFC7540_PRIORITIES",
}

// String returns the RFC name ("INITIAL_WINDOW_SIZE"), or "UNKNOWN_SETTING_n".
func (s SettingID) String() string {
	if n, ok := settingNames[s]; ok {
		return n
	}
	return fmt.Sprintf("UNKNOWN_SETTING_%d", uint16(s))
}

func enumName(names []string, i int, typ string) string {
	if i > 0 && i < len(names) {
		return names[i]
	}
	return fmt.Sprintf("%s(%d)", typ, i)
}

func enumText(names []string, i int, field string) ([]byte, error) {
	if i > 0 && i < len(names) {
		return []byte(names[i]), nil
	}
	return nil, fmt.Errorf("profile: invalid %s %d", field, i)
}

func enumParse(names []string, t []byte, field string) (int, error) {
	if i := enumIndex(names, string(t)); i > 0 {
		return i, nil
	}
	return 0, &ParseError{Field: field, Reason: fmt.Sprintf("unknown value %q", t)}
}

// enumIndex returns the index of s in names, or 0.
func enumIndex(names []string, s string) int {
	for i := 1; i < len(names); i++ {
		if names[i] == s {
			return i
		}
	}
	return 0
}

// HuffmanRule says when a browser's HPACK encoder Huffman-codes a string
// literal. The zero value is invalid.
type HuffmanRule uint8

// Huffman rules.
const (
	// HuffmanShorter codes a string only when that is strictly shorter
	// (Chromium's quiche encoder).
	HuffmanShorter HuffmanRule = iota + 1
	// HuffmanNotLonger codes a string unless that is longer (Firefox).
	HuffmanNotLonger
	// HuffmanNever sends every string raw.
	HuffmanNever
)

var huffmanNames = [...]string{HuffmanShorter: "shorter", HuffmanNotLonger: "not-longer", HuffmanNever: "never"}

// String returns the rule's name ("shorter").
func (r HuffmanRule) String() string { return enumName(huffmanNames[:], int(r), "HuffmanRule") }

// MarshalText implements encoding.TextMarshaler.
func (r HuffmanRule) MarshalText() ([]byte, error) {
	return enumText(huffmanNames[:], int(r), "huffman")
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (r *HuffmanRule) UnmarshalText(t []byte) error {
	i, err := enumParse(huffmanNames[:], t, "huffman")
	*r = HuffmanRule(i)
	return err
}

// QPACKDynamicRule says how a browser's QPACK encoder uses a dynamic
// table the server allows (with at least one blocked stream). The zero
// value means the encoder never inserts (or that it was not recorded).
type QPACKDynamicRule uint8

// QPACK dynamic table rules.
const (
	// QPACKInsertAll inserts every field with no exact static or dynamic
	// match and references it in the same section (Chromium's quiche).
	QPACKInsertAll QPACKDynamicRule = iota + 1
	// QPACKInsertNewNames inserts only fields whose name is in neither
	// table, referenced post-base; other names go as literals with a name
	// reference (Firefox's neqo).
	QPACKInsertNewNames
)

var qpackDynamicNames = [...]string{QPACKInsertAll: "insert-all", QPACKInsertNewNames: "insert-new-names"}

// String returns the rule's name ("insert-all").
func (r QPACKDynamicRule) String() string {
	return enumName(qpackDynamicNames[:], int(r), "QPACKDynamicRule")
}

// MarshalText implements encoding.TextMarshaler.
func (r QPACKDynamicRule) MarshalText() ([]byte, error) {
	return enumText(qpackDynamicNames[:], int(r), "qpack_dynamic")
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (r *QPACKDynamicRule) UnmarshalText(t []byte) error {
	i, err := enumParse(qpackDynamicNames[:], t, "qpack_dynamic")
	*r = QPACKDynamicRule(i)
	return err
}

// QPACKCapacityRule says when a browser's QPACK encoder sets the
// dynamic table's capacity (Set Dynamic Table Capacity, RFC 9204
// §4.3.1). The zero value means it was not recorded, which behaves as
// QPACKCapacityAllowed.
type QPACKCapacityRule uint8

// QPACK capacity rules.
const (
	// QPACKCapacityAllowed sets it only to a server that allows a table,
	// when the server's SETTINGS arrive (Firefox's neqo).
	QPACKCapacityAllowed QPACKCapacityRule = iota + 1
	// QPACKCapacityAnnounced sets it whenever the server's SETTINGS
	// carry SETTINGS_QPACK_MAX_TABLE_CAPACITY, 0 included, with the first
	// request encoded after them (Chromium's quiche).
	QPACKCapacityAnnounced
)

var qpackCapacityNames = [...]string{QPACKCapacityAllowed: "allowed", QPACKCapacityAnnounced: "announced"}

// String returns the rule's name ("announced").
func (r QPACKCapacityRule) String() string {
	return enumName(qpackCapacityNames[:], int(r), "QPACKCapacityRule")
}

// MarshalText implements encoding.TextMarshaler.
func (r QPACKCapacityRule) MarshalText() ([]byte, error) {
	return enumText(qpackCapacityNames[:], int(r), "qpack_capacity")
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (r *QPACKCapacityRule) UnmarshalText(t []byte) error {
	i, err := enumParse(qpackCapacityNames[:], t, "qpack_capacity")
	*r = QPACKCapacityRule(i)
	return err
}

// NameRefRule says which table entry a literal's indexed name refers to
// when several entries carry the name. The zero value is invalid.
type NameRefRule uint8

// Name reference rules.
const (
	// NameRefStaticFirst takes the lowest static index, else the newest
	// dynamic entry (Chromium).
	NameRefStaticFirst NameRefRule = iota + 1
	// NameRefLastMatch takes the last entry with the name, scanning the
	// static table upwards and then the dynamic table from newest to
	// oldest (Firefox).
	NameRefLastMatch
)

var nameRefNames = [...]string{NameRefStaticFirst: "static-first", NameRefLastMatch: "last-match"}

// String returns the rule's name ("static-first").
func (r NameRefRule) String() string { return enumName(nameRefNames[:], int(r), "NameRefRule") }

// MarshalText implements encoding.TextMarshaler.
func (r NameRefRule) MarshalText() ([]byte, error) {
	return enumText(nameRefNames[:], int(r), "name_ref")
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (r *NameRefRule) UnmarshalText(t []byte) error {
	i, err := enumParse(nameRefNames[:], t, "name_ref")
	*r = NameRefRule(i)
	return err
}

// SizeUpdateRule says when a browser starts a header block with a dynamic
// table size update after the peer's SETTINGS_HEADER_TABLE_SIZE. The zero
// value is invalid.
type SizeUpdateRule uint8

// Size update rules.
const (
	// SizeUpdateOnChange emits one only when the table size changes
	// (Chromium).
	SizeUpdateOnChange SizeUpdateRule = iota + 1
	// SizeUpdateOnSetting emits one whenever the peer's SETTINGS carried
	// HEADER_TABLE_SIZE, even unchanged (Firefox).
	SizeUpdateOnSetting
)

var sizeUpdateNames = [...]string{SizeUpdateOnChange: "on-change", SizeUpdateOnSetting: "on-setting"}

// String returns the rule's name ("on-change").
func (r SizeUpdateRule) String() string {
	return enumName(sizeUpdateNames[:], int(r), "SizeUpdateRule")
}

// MarshalText implements encoding.TextMarshaler.
func (r SizeUpdateRule) MarshalText() ([]byte, error) {
	return enumText(sizeUpdateNames[:], int(r), "size_update")
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (r *SizeUpdateRule) UnmarshalText(t []byte) error {
	i, err := enumParse(sizeUpdateNames[:], t, "size_update")
	*r = SizeUpdateRule(i)
	return err
}
