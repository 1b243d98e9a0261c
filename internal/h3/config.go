package h3

import (
	"crypto/rand"
	"encoding/binary"
	"io"
	"slices"

	"github.com/guise-http/guise/internal/h3wire"
	"github.com/guise-http/guise/internal/quicwire"
)

// Setting is one SETTINGS parameter as the profile records it.
type Setting struct {
	ID, Value uint64
	// GREASE marks a reserved setting whose id (0x1f*N+0x21) and value
	// are drawn anew for every connection.
	GREASE bool
}

// Config is how a ClientConn speaks: a browser's HTTP/3 behaviour. Its
// fields are read by NewClientConn and must not be changed afterwards.
// The zero value is a valid client with no SETTINGS of its own (so no
// dynamic table), Chromium's pseudo-header order and QPACK streams, a
// static-only QPACK encoder and the CapacityAllowed rule.
type Config struct {
	// Settings go in the control stream's SETTINGS frame in this order.
	// SETTINGS_QPACK_MAX_TABLE_CAPACITY and SETTINGS_QPACK_BLOCKED_STREAMS
	// among them set the decoder's limits; SETTINGS_MAX_FIELD_SECTION_SIZE
	// bounds response field sections.
	Settings []Setting
	// GREASEFrameMaxLen, if positive, sends right after SETTINGS a
	// reserved frame of a random type with 0 to GREASEFrameMaxLen-1
	// random payload bytes.
	GREASEFrameMaxLen int
	// QPACKStreams opens the QPACK encoder and decoder streams right
	// after the control stream, in that order, and writes their types
	// (Firefox). Otherwise (Chromium) both are opened, the decoder stream
	// first, when the first instruction of either is due, and each one's
	// type goes with its first instruction: they take the two stream ids
	// after the control stream's (6 and 10), and one with nothing to say
	// stays off the wire.
	QPACKStreams bool
	// QPACKCapacity says when the encoder sets the dynamic table's
	// capacity; CapacityAllowed (the zero value) sets it only to a
	// server that allows a table.
	QPACKCapacity CapacityRule
	// PseudoOrder is the order of :method, :authority, :scheme and :path;
	// nil means Chromium's (m, a, s, p).
	PseudoOrder []string
	// PriorityUpdate sends, on the control stream before each request's
	// HEADERS, a PRIORITY_UPDATE carrying the request's priority field
	// (Chromium), when the request has one.
	PriorityUpdate bool
	// Huffman says when request strings are Huffman-coded.
	Huffman HuffmanRule
	// QPACKDynamic says how request sections use a dynamic table the
	// server allows; DynamicNever (the zero value) keeps them static-only.
	QPACKDynamic DynamicRule
	// MaxFieldSectionSize bounds a response's field section, encoded and
	// decoded (name + value + 32 per field). 0 means the
	// SETTINGS_MAX_FIELD_SECTION_SIZE in Settings, or 256 KiB without one.
	MaxFieldSectionSize int
	// GREASEWideIDs draws the N of reserved ids (0x1f*N+0x21) over the
	// whole varint range (Firefox); otherwise N has 32 bits (Chromium).
	GREASEWideIDs bool
	// Rand is the source of GREASE draws; nil means crypto/rand.
	Rand io.Reader
}

// Clone returns a deep copy.
func (c *Config) Clone() *Config {
	d := *c
	d.Settings = slices.Clone(c.Settings)
	d.PseudoOrder = slices.Clone(c.PseudoOrder)
	return &d
}

const defaultMaxFieldSection = 256 << 10

func (c *Config) setting(id h3wire.SettingID) (uint64, bool) {
	for _, s := range c.Settings {
		if !s.GREASE && s.ID == uint64(id) {
			return s.Value, true
		}
	}
	return 0, false
}

func (c *Config) maxFieldSection() int {
	if c.MaxFieldSectionSize > 0 {
		return c.MaxFieldSectionSize
	}
	if v, ok := c.setting(h3wire.SettingMaxFieldSectionSize); ok && v > 0 && v < 1<<30 {
		return int(v)
	}
	return defaultMaxFieldSection
}

func (c *Config) pseudoOrder() []string {
	if len(c.PseudoOrder) == 4 {
		return c.PseudoOrder
	}
	return []string{":method", ":authority", ":scheme", ":path"}
}

// greaseID draws a reserved id 0x1f*N+0x21: N of 32 bits, or with wide
// any N that keeps the id a varint.
func greaseID(r io.Reader, wide bool) uint64 {
	if !wide {
		return 0x1f*uint64(randUint32(r)) + 0x21
	}
	var b [8]byte
	io.ReadFull(r, b[:])
	v := binary.BigEndian.Uint64(b[:]) & quicwire.MaxVarint
	id := v/0x1f*0x1f + 0x21
	if id > quicwire.MaxVarint {
		id -= 0x1f
	}
	return id
}

func randUint32(r io.Reader) uint32 {
	var b [4]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return 0
	}
	return binary.BigEndian.Uint32(b[:])
}

func (c *Config) rand() io.Reader {
	if c.Rand != nil {
		return c.Rand
	}
	return rand.Reader
}

// appendControlPreface appends the control stream's first bytes: its type,
// SETTINGS (GREASE drawn) and the GREASE frame.
func (c *Config) appendControlPreface(b []byte) []byte {
	b = quicwire.AppendVarint(b, uint64(h3wire.StreamControl))
	ss := make([]h3wire.Setting, 0, len(c.Settings))
	r := c.rand()
	for _, s := range c.Settings {
		if s.GREASE {
			ss = append(ss, h3wire.Setting{ID: h3wire.SettingID(greaseID(r, c.GREASEWideIDs)), Value: uint64(randUint32(r))})
			continue
		}
		ss = append(ss, h3wire.Setting{ID: h3wire.SettingID(s.ID), Value: s.Value})
	}
	b = h3wire.AppendSettings(b, ss...)
	if c.GREASEFrameMaxLen > 0 {
		n := int(randUint32(r) % uint32(c.GREASEFrameMaxLen))
		p := make([]byte, n)
		io.ReadFull(r, p)
		b = h3wire.AppendFrame(b, h3wire.FrameType(greaseID(r, c.GREASEWideIDs)), p)
	}
	return b
}
