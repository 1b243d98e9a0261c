// Package h2 is guise's HTTP/2 client connection. It speaks HTTP/2 the way a
// given browser does: the first SETTINGS frame, the connection WINDOW_UPDATE,
// PRIORITY frames, stream ids, HEADERS priority, pseudo-header order and the
// HPACK encoder's choices all come from a Config compiled from a browser
// profile. Frames are read with golang.org/x/net/http2's Framer; HPACK is
// h2's own both ways: requests are encoded as the browsers' encoders would,
// byte for byte, and response header blocks are decoded by a decoder that
// matches x/net's hpack on every block (FuzzHPACKDecoder) while allocating
// far less.
//
// A ClientConn multiplexes requests up to the peer's MAX_CONCURRENT_STREAMS,
// batches concurrent writes into one write, keeps receive windows as the
// browser does, and turns every RFC 9113 violation of the peer into a typed
// error (ConnectionError, StreamError, GoAwayError) without hanging.
package h2

import (
	"slices"
	"time"
)

// Config is a browser's HTTP/2 fingerprint plus limits. It is compiled once
// per profile by the caller and shared, read-only, by many ClientConns: it must
// not be changed after it was passed to NewClientConn. The zero value is a
// valid, fingerprint-less configuration (no SETTINGS entries, stream ids from
// 1, no priority, RFC 9113 defaults).
type Config struct {
	// Settings is the first SETTINGS frame, in this order. PUSH_PROMISE is
	// a connection error whatever it says, so it should carry ENABLE_PUSH 0
	// as browsers do.
	Settings []Setting
	// ConnWindowUpdate is the increment of the WINDOW_UPDATE on stream 0 sent
	// right after SETTINGS, at most 2^31-1; 0 sends none.
	ConnWindowUpdate uint32
	// PriorityFrames are sent after the WINDOW_UPDATE, in order. Their
	// StreamID must not be 0.
	PriorityFrames []PriorityFrame
	// FirstStreamID is the first client stream id (odd); 0 means 1.
	FirstStreamID uint32
	// StreamWindowUpdate is the increment of the WINDOW_UPDATE sent on each
	// new stream right after its HEADERS; 0 sends none.
	StreamWindowUpdate uint32
	// PseudoOrder is the order of the request pseudo-header fields; nil means
	// :method, :authority, :scheme, :path. Names not listed are not sent.
	PseudoOrder []string
	// HPACK says how the browser's HPACK encoder chooses representations.
	HPACK HPACKStyle
	// MaxHeaderListSize caps the response header list we accept (RFC 9113
	// field sizes, name+value+32 each). 0 means the SETTINGS_MAX_HEADER_LIST_SIZE
	// in Settings, or 10 MiB when that is absent.
	MaxHeaderListSize uint32
	// ReadIdleTimeout, when positive, makes the connection send a PING after
	// that long without any frame from the peer.
	ReadIdleTimeout time.Duration
	// PingTimeout is how long a health-check PING may go unanswered before the
	// connection is closed as lost; 0 means 15 seconds.
	PingTimeout time.Duration
	// MaxControlQueue bounds the control frames (SETTINGS ACK, PING ACK,
	// RST_STREAM, WINDOW_UPDATE) we owe the peer but could not yet write; past
	// it the connection is closed with ENHANCE_YOUR_CALM. 0 means 1024.
	MaxControlQueue int
	// WriteTimeout, when positive, bounds each write to the connection; a
	// write that takes longer (a peer that stopped reading) closes the
	// connection. Without it a stuck write can only be ended by Close.
	WriteTimeout time.Duration
	// Max1xx caps the interim (1xx) responses skipped per request; 0 means 8.
	Max1xx int
}

// Clone returns a deep copy of c.
func (c *Config) Clone() *Config {
	n := *c
	n.Settings = slices.Clone(c.Settings)
	n.PriorityFrames = slices.Clone(c.PriorityFrames)
	n.PseudoOrder = slices.Clone(c.PseudoOrder)
	n.HPACK.NoIndex = slices.Clone(c.HPACK.NoIndex)
	n.HPACK.NeverIndex = slices.Clone(c.HPACK.NeverIndex)
	return &n
}

// setting returns the value of the first SETTINGS entry id in c.Settings.
func (c *Config) setting(id SettingID) (uint32, bool) {
	for _, s := range c.Settings {
		if s.ID == id {
			return s.Val, true
		}
	}
	return 0, false
}

// PriorityFrame is one PRIORITY frame of the connection preface.
type PriorityFrame struct {
	StreamID uint32
	PriorityParam
}

// DepRule says which stream a request's HEADERS priority depends on.
type DepRule uint8

const (
	// DepRoot depends on stream 0 (Firefox).
	DepRoot DepRule = iota
	// DepLatestOpen depends on the most recently opened stream that is still
	// open and has an equal or higher weight; 0 when none (Chromium).
	DepLatestOpen
	// DepPrevious depends on the stream opened just before this one, open or
	// not; 0 for the first.
	DepPrevious
)

var depRuleNames = [...]string{"root", "latest-open", "previous"}

// String returns the rule's name.
func (r DepRule) String() string {
	if int(r) < len(depRuleNames) {
		return depRuleNames[r]
	}
	return "unknown"
}

// Priority is the priority a request's HEADERS frame carries. The zero value
// sends no priority (no PRIORITY flag).
type Priority struct {
	// Send sets the PRIORITY flag on HEADERS.
	Send bool
	// Exclusive is the E bit.
	Exclusive bool
	// Weight is the weight, 1 to 256 (the wire carries Weight-1); 0 means 16.
	Weight uint16
	// Dep chooses the stream dependency.
	Dep DepRule
}

// HuffmanRule says when a string literal is Huffman-encoded.
type HuffmanRule uint8

const (
	// HuffmanShorter encodes with Huffman only when that is strictly shorter
	// (Chromium).
	HuffmanShorter HuffmanRule = iota
	// HuffmanNotLonger encodes with Huffman unless that is longer (Firefox).
	HuffmanNotLonger
	// HuffmanNever sends every string raw.
	HuffmanNever
)

// NameRefRule says which table entry a literal's indexed name points at when
// several entries carry the name.
type NameRefRule uint8

const (
	// NameRefStaticFirst prefers the lowest static index, else the newest
	// dynamic entry (Chromium).
	NameRefStaticFirst NameRefRule = iota
	// NameRefLastMatch takes the last entry with the name scanning the static
	// table upwards and then the dynamic table from newest to oldest
	// (Firefox).
	NameRefLastMatch
)

// SizeUpdateRule says when a dynamic table size update starts a header block
// after the peer sent SETTINGS_HEADER_TABLE_SIZE.
type SizeUpdateRule uint8

const (
	// SizeUpdateOnChange emits one only when the table size changes (Chromium).
	SizeUpdateOnChange SizeUpdateRule = iota
	// SizeUpdateOnSetting emits one whenever the peer's SETTINGS carried
	// HEADER_TABLE_SIZE, even unchanged (Firefox).
	SizeUpdateOnSetting
)

// HPACKStyle describes how a browser's HPACK encoder chooses representations.
// The zero value is Chromium-like without its pseudo-header rule.
type HPACKStyle struct {
	// Huffman says when strings are Huffman-encoded.
	Huffman HuffmanRule
	// NameRef says which entry a literal's name refers to.
	NameRef NameRefRule
	// SizeUpdate says when a dynamic table size update is emitted.
	SizeUpdate SizeUpdateRule
	// NoIndex names are sent as literals without indexing when the table has
	// no exact match.
	NoIndex []string
	// NoIndexSkipsExact sends NoIndex names as literals even when the table
	// holds the exact pair (Firefox's :path).
	NoIndexSkipsExact bool
	// NeverIndex names are sent as never-indexed literals.
	NeverIndex []string
	// CookieCrumbs splits a cookie field at "; " into one field per crumb
	// (RFC 9113 8.2.3), as both browsers do.
	CookieCrumbs bool
	// ShortCrumbNeverIndex, if positive, sends cookie crumbs shorter than it
	// as never-indexed literals (Firefox: 20).
	ShortCrumbNeverIndex int
	// HalfTableLiteral sends fields larger than half the table as literals
	// without indexing (Firefox).
	HalfTableLiteral bool
	// MaxTableSize caps the encoder's dynamic table whatever the peer allows;
	// 0 means 65536.
	MaxTableSize uint32
}

// ChromiumHPACK returns the HPACK style of Chromium 156 (quiche's encoder):
// Huffman when strictly shorter, every field indexed except pseudo-header
// fields other than :authority, names from the static table first.
func ChromiumHPACK() HPACKStyle {
	return HPACKStyle{
		Huffman:      HuffmanShorter,
		NameRef:      NameRefStaticFirst,
		SizeUpdate:   SizeUpdateOnChange,
		NoIndex:      []string{":method", ":scheme", ":path", ":protocol"},
		CookieCrumbs: true,
	}
}

// FirefoxHPACK returns the HPACK style of Firefox ESR 153 (Necko's
// compressor): Huffman unless longer, :path never indexed nor matched,
// authorization and short cookie crumbs never-indexed, a table size update
// after every HEADER_TABLE_SIZE setting.
func FirefoxHPACK() HPACKStyle {
	return HPACKStyle{
		Huffman:              HuffmanNotLonger,
		NameRef:              NameRefLastMatch,
		SizeUpdate:           SizeUpdateOnSetting,
		NoIndex:              []string{":path"},
		NoIndexSkipsExact:    true,
		NeverIndex:           []string{"authorization", "proxy-authorization"},
		CookieCrumbs:         true,
		ShortCrumbNeverIndex: 20,
		HalfTableLiteral:     true,
	}
}
