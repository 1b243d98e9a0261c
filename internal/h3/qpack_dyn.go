package h3

import (
	"errors"
	"slices"
	"sync"
)

// DynamicRule says how the encoder uses a dynamic table the server
// allows. Both recorded browsers use one only when the server allows a
// table and at least one blocked stream: against 65536 bytes and no
// blocked streams each set the capacity and inserted nothing
// (fingerprint/testdata/recordings/*-h3dynnoblock-*.json), and against
// 65536 and 100 each referenced its new entries in the very section that
// needed them, before any acknowledgement (*-h3dyn-*.json).
type DynamicRule uint8

const (
	// DynamicNever never inserts: static-only sections, whatever the
	// server allows.
	DynamicNever DynamicRule = iota
	// DynamicInsertAll is Chromium's (quiche's): every field with neither
	// an exact static nor an exact dynamic match is inserted (with a
	// static name reference if the static table has the name, else a
	// dynamic one, else a literal name) and referenced; Base is the
	// Required Insert Count.
	DynamicInsertAll
	// DynamicInsertNewNames is Firefox's (neqo's): only a field whose
	// name is in neither table is inserted (with a literal name) and
	// referenced post-base; a name in the static table is sent as a
	// literal with a static name reference, and a value of a name in the
	// dynamic table as a literal with a dynamic name reference. Base is
	// the insert count before the section's inserts.
	DynamicInsertNewNames
)

// CapacityRule says when the encoder sends Set Dynamic Table Capacity
// (RFC 9204 §4.3.1) on its encoder stream.
type CapacityRule uint8

const (
	// CapacityAllowed sets it, as soon as the server's SETTINGS are
	// read, when they allow a table (SETTINGS_QPACK_MAX_TABLE_CAPACITY
	// above 0) and QPACKDynamic uses one; to a server that allows none
	// it sends nothing (Firefox's neqo).
	CapacityAllowed CapacityRule = iota
	// CapacityAnnounced sets it whenever the server's SETTINGS carry
	// SETTINGS_QPACK_MAX_TABLE_CAPACITY, 0 included, to the server's
	// value bounded by maxEncoderTable, and holds the instruction until
	// the next field section is encoded, which writes it first (Chromium's
	// quiche: its session sets the capacity on that setting, and its
	// encoder flushes its stream when it encodes a header list). SETTINGS
	// without the setting get nothing.
	CapacityAnnounced
)

// maxEncoderTable bounds the capacity the encoder sets: both recorded
// browsers set 65536 against a server allowing 65536, and quiche bounds
// it by its own 64 KiB default.
const maxEncoderTable = 64 << 10

// Decoder stream failures, the Cause of a ConnectionError with
// QPACK_DECODER_STREAM_ERROR.
var (
	errAckNoSection   = errors.New("qpack: section acknowledgement of a stream with no unacknowledged section")
	errIncrementZero  = errors.New("qpack: insert count increment of 0")
	errIncrementAhead = errors.New("qpack: insert count increment beyond the inserts sent")
)

// dynEncoder is the encoder's dynamic table and what the peer's decoder
// has acknowledged. Its zero value (cap 0) inserts nothing. Sections
// and inserts are made under mu, and the encoder stream bytes written
// before mu is released, so that they reach the stream in the order the
// table changed.
type dynEncoder struct {
	rule     DynamicRule
	capacity CapacityRule
	huffman  HuffmanRule
	// enc codes the strings of the sections and of the encoder stream
	// under huffman (set at first use), through its cache.
	enc encoder

	mu         sync.Mutex
	cap        uint64 // the capacity set; 0 before the peer's SETTINGS
	maxEntries uint64 // the peer's SETTINGS_QPACK_MAX_TABLE_CAPACITY / 32
	maxBlocked int    // the peer's SETTINGS_QPACK_BLOCKED_STREAMS
	size       uint64
	entries    []field // entries[i] has absolute index dropped+i
	dropped    uint64
	inserted   uint64
	// byField and byName hold the newest absolute index of each entry and
	// of each name: eviction takes the oldest first, so when the newest
	// goes, every entry of the name has gone.
	byField map[field]uint64
	byName  map[string]uint64
	known   uint64 // the Known Received Count
	// held is a Set Dynamic Table Capacity not yet written
	// (CapacityAnnounced): the next section writes it first.
	held []byte
	// sections counts the field sections encoded. Under
	// CapacityAnnounced the first is encoded as if no SETTINGS had come:
	// Chromium writes its first request as the handshake completes,
	// before it reads what arrived with it, and in every recording
	// (h3notable, h3dyn, h3dynlate) its first request neither carried the
	// capacity nor used the table, however early the SETTINGS came.
	sections int
	// pending are the unacknowledged sections that use the table, oldest
	// first.
	pending []section
	se      sectionEncoder // reused by begin
}

// section is an unacknowledged field section: its stream, Required
// Insert Count and the smallest absolute index it references.
type section struct {
	id, ric, min uint64
}

// maxPending bounds the unacknowledged sections: past it (a server that
// does not acknowledge) new sections are static-only.
const maxPending = 1024

// setPeer takes the peer's SETTINGS (announced: they carry
// SETTINGS_QPACK_MAX_TABLE_CAPACITY) and sends the Set Dynamic Table
// Capacity instruction as the capacity rule says: with write, under mu,
// so that it precedes every insert, or held for the next section. With
// blocked 0 the capacity is still set, as both browsers did, but nothing
// is inserted.
func (e *dynEncoder) setPeer(announced bool, maxCap, blocked uint64, write func([]byte)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.rule != DynamicNever && maxCap > 0 {
		e.cap = min(maxCap, maxEncoderTable)
		e.maxEntries = maxCap / 32
		e.maxBlocked = int(min(blocked, 1<<16))
	}
	switch {
	case e.capacity == CapacityAnnounced && announced:
		e.held = appendPrefixInt(e.held[:0], 0x20, 5, min(maxCap, maxEncoderTable))
	case e.capacity == CapacityAllowed && e.cap > 0:
		write(appendPrefixInt(nil, 0x20, 5, e.cap))
	}
}

// takeHeld returns the held instruction, if any, and forgets it; with
// mu held.
func (e *dynEncoder) takeHeld() []byte {
	b := e.held
	e.held = nil
	return b
}

// usable reports whether new sections may use the table.
func (e *dynEncoder) usable() bool {
	return e.cap > 0 && e.maxBlocked > 0 && len(e.pending) < maxPending
}

// blocking counts the streams with a section the decoder may not be able
// to decode yet.
func (e *dynEncoder) blocking() int {
	n := 0
	for i, s := range e.pending {
		if s.ric > e.known && !slices.ContainsFunc(e.pending[:i], func(o section) bool { return o.id == s.id && o.ric > e.known }) {
			n++
		}
	}
	return n
}

// sectionEncoder encodes one field section with the dynamic table. One
// is reused under dynEncoder.mu, so its buffers stay allocated.
type sectionEncoder struct {
	e        *dynEncoder
	canBlock bool
	base     uint64 // DynamicInsertNewNames: the insert count at the start
	lines    []line
	buf      []byte // the lines' bytes: static lines, literal values
	ins      []byte // encoder stream instructions
	ric, min uint64
}

// line is one field line before the prefix is known: one encoded already
// (buf[off:end]), or a dynamic reference by absolute index.
type line struct {
	kind     byte   // 's' encoded, 'i' indexed dynamic, 'n' literal with dynamic name
	abs      uint64 // the entry for 'i' and 'n'
	off, end int    // 's': the line; 'n': the value's string literal
}

// begin starts a section; e.mu is held until finish.
func (e *dynEncoder) begin() *sectionEncoder {
	se := &e.se
	*se = sectionEncoder{e: e, canBlock: e.blocking() < e.maxBlocked, base: e.inserted, min: ^uint64(0),
		lines: se.lines[:0], buf: se.buf[:0], ins: se.ins[:0]}
	return se
}

// usable reports whether abs may be referenced now.
// coder is e.enc under e's Huffman rule, with e.mu held.
func (e *dynEncoder) coder() *encoder {
	e.enc.huffman = e.huffman
	return &e.enc
}

func (se *sectionEncoder) usable(abs uint64) bool {
	return abs >= se.e.dropped && abs < se.e.inserted && (abs < se.e.known || se.canBlock)
}

// find returns the newest entry with name (and value, if exact).
func (e *dynEncoder) find(name, value string, exact bool) (uint64, bool) {
	if exact {
		abs, ok := e.byField[field{name, value}]
		return abs, ok
	}
	abs, ok := e.byName[name]
	return abs, ok
}

func (se *sectionEncoder) ref(abs uint64) {
	se.ric = max(se.ric, abs+1)
	se.min = min(se.min, abs)
}

// field adds one field line.
func (se *sectionEncoder) field(name, value string) {
	e := se.e
	st := e.coder()
	idx, exact, sname := staticLookup(name, value)
	if exact {
		off := len(se.buf)
		se.buf = appendPrefixInt(se.buf, 0xc0, 6, idx)
		se.lines = append(se.lines, line{kind: 's', off: off, end: len(se.buf)})
		return
	}
	if abs, ok := e.find(name, value, true); ok && se.usable(abs) {
		se.ref(abs)
		se.lines = append(se.lines, line{kind: 'i', abs: abs})
		return
	}
	dname, dok := e.find(name, "", false)
	dok = dok && se.usable(dname)
	insert := se.canBlock
	if e.rule == DynamicInsertNewNames {
		insert = insert && !sname && !dok
	}
	if insert && se.insert(name, value, idx, sname, dname, dok) {
		abs := e.inserted - 1
		se.ref(abs)
		se.lines = append(se.lines, line{kind: 'i', abs: abs})
		return
	}
	off := len(se.buf)
	kind := byte('s')
	if !sname && dok {
		se.ref(dname)
		kind = 'n'
		se.buf = st.appendString(se.buf, 7, value)
	} else {
		se.buf = st.appendField(se.buf, name, value)
	}
	se.lines = append(se.lines, line{kind: kind, abs: dname, off: off, end: len(se.buf)})
}

// insert adds name: value to the table and its instruction to the
// encoder stream bytes; false if it does not fit without evicting an
// entry still referenced or not yet acknowledged.
func (se *sectionEncoder) insert(name, value string, sidx uint64, sname bool, dname uint64, dok bool) bool {
	e := se.e
	sz := uint64(len(name)) + uint64(len(value)) + 32
	if sz > e.cap {
		return false
	}
	// Entries below floor may be evicted: acknowledged, and referenced by
	// no unacknowledged section (this one included).
	floor := min(e.known, se.min)
	for _, s := range e.pending {
		floor = min(floor, s.min)
	}
	if dok {
		floor = min(floor, dname)
	}
	free, n := e.cap-e.size, 0
	for free < sz {
		if n >= len(e.entries) || e.dropped+uint64(n) >= floor {
			return false
		}
		f := e.entries[n]
		free += uint64(len(f.name)) + uint64(len(f.value)) + 32
		n++
	}
	st := e.coder()
	switch {
	case sname:
		se.ins = appendPrefixInt(se.ins, 0xc0, 6, sidx) // 1 T=1 static index
	case dok:
		se.ins = appendPrefixInt(se.ins, 0x80, 6, e.inserted-1-dname) // 1 T=0 relative index
	default:
		se.ins = st.appendStringFirst(se.ins, 0x40, 5, name, false) // 01 H name
	}
	se.ins = st.appendString(se.ins, 7, value)
	for range n {
		f := e.entries[0]
		e.size -= uint64(len(f.name)) + uint64(len(f.value)) + 32
		if e.byField[f] == e.dropped {
			delete(e.byField, f)
		}
		if e.byName[f.name] == e.dropped {
			delete(e.byName, f.name)
		}
		e.entries[0] = field{}
		e.entries = e.entries[1:]
		e.dropped++
	}
	if e.byField == nil {
		e.byField, e.byName = map[field]uint64{}, map[string]uint64{}
	}
	f := field{name, value}
	e.entries = append(e.entries, f)
	e.byField[f], e.byName[name] = e.inserted, e.inserted
	e.size += sz
	e.inserted++
	return true
}

// finish appends the section (prefix and lines) to b and notes it as
// unacknowledged on stream id when it references the table.
func (se *sectionEncoder) finish(b []byte, id uint64) []byte {
	e := se.e
	base := se.ric
	if e.rule == DynamicInsertNewNames && se.ric > 0 {
		base = se.base
	}
	if se.ric == 0 {
		b = append(b, 0, 0)
	} else {
		b = appendPrefixInt(b, 0, 8, se.ric%(2*e.maxEntries)+1)
		if base >= se.ric {
			b = appendPrefixInt(b, 0, 7, base-se.ric)
		} else {
			b = appendPrefixInt(b, 0x80, 7, se.ric-base-1)
		}
		e.pending = append(e.pending, section{id: id, ric: se.ric, min: se.min})
	}
	for _, l := range se.lines {
		switch {
		case l.kind == 's':
			b = append(b, se.buf[l.off:l.end]...)
		case l.abs < base && l.kind == 'i':
			b = appendPrefixInt(b, 0x80, 6, base-1-l.abs) // 1 T=0 relative
		case l.kind == 'i':
			b = appendPrefixInt(b, 0x10, 4, l.abs-base) // 0001 post-base
		case l.abs < base:
			b = appendPrefixInt(b, 0x40, 4, base-1-l.abs) // 01 N=0 T=0 relative name
			b = append(b, se.buf[l.off:l.end]...)
		default:
			b = appendPrefixInt(b, 0x00, 3, l.abs-base) // 0000 N=0 post-base name
			b = append(b, se.buf[l.off:l.end]...)
		}
	}
	return b
}

// decoderInstruction applies one instruction of the peer's decoder
// stream (RFC 9204 §4.4): kind 'a' Section Acknowledgment, 'c' Stream
// Cancellation, 'i' Insert Count Increment, with its integer.
func (e *dynEncoder) decoderInstruction(kind byte, v uint64) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch kind {
	case 'a':
		i := slices.IndexFunc(e.pending, func(s section) bool { return s.id == v })
		if i < 0 {
			return errAckNoSection
		}
		e.known = max(e.known, e.pending[i].ric)
		e.pending = slices.Delete(e.pending, i, i+1)
	case 'c':
		e.pending = slices.DeleteFunc(e.pending, func(s section) bool { return s.id == v })
	case 'i':
		if v == 0 {
			return errIncrementZero
		}
		if v > e.inserted-e.known {
			return errIncrementAhead
		}
		e.known += v
	}
	return nil
}

// parseDecoderInstruction reads the decoder stream instruction at the
// start of b: its kind ('a', 'c' or 'i'), integer and length.
// errQPACKTruncated means more bytes are needed.
func parseDecoderInstruction(b []byte) (kind byte, v uint64, n int, err error) {
	if len(b) == 0 {
		return 0, 0, 0, errQPACKTruncated
	}
	switch {
	case b[0]&0x80 != 0:
		kind = 'a'
		v, n, err = readPrefixInt(b, 7)
	case b[0]&0x40 != 0:
		kind = 'c'
		v, n, err = readPrefixInt(b, 6)
	default:
		kind = 'i'
		v, n, err = readPrefixInt(b, 6)
	}
	return kind, v, n, err
}
