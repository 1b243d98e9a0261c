package h3

import "errors"

// This file exports the connection's QPACK decoder for the other side of
// a connection: the echo server (fingerprint), which must decode what a
// browser's encoder sends when the server allows a dynamic table, and
// record how it was sent. The client itself uses the unexported decoder.

// QPACKInstructionKind names an encoder stream instruction (RFC 9204
// §4.3).
type QPACKInstructionKind uint8

const (
	SetCapacity QPACKInstructionKind = iota + 1
	InsertWithNameRef
	InsertWithLiteralName
	Duplicate
)

func (k QPACKInstructionKind) String() string {
	switch k {
	case SetCapacity:
		return "set_dynamic_table_capacity"
	case InsertWithNameRef:
		return "insert_with_name_reference"
	case InsertWithLiteralName:
		return "insert_with_literal_name"
	case Duplicate:
		return "duplicate"
	}
	return "unknown"
}

// QPACKInstruction is one encoder stream instruction as it was sent.
type QPACKInstruction struct {
	Kind QPACKInstructionKind
	// Static is set for an Insert With Name Reference into the static
	// table.
	Static bool
	// Index is the wire index: the static index, or the relative one
	// (RFC 9204 §3.2.4) for a dynamic name reference and Duplicate; the
	// capacity for SetCapacity.
	Index uint64
	// Name and Value are the inserted entry's.
	Name, Value               string
	NameHuffman, ValueHuffman bool
	// InsertCount is the table's insert count after the instruction.
	InsertCount uint64
}

// QPACKLineKind names a field line representation (RFC 9204 §4.5).
type QPACKLineKind uint8

const (
	LineIndexed QPACKLineKind = iota + 1
	LineIndexedPostBase
	LineLiteralNameRef
	LineLiteralPostBaseNameRef
	LineLiteralName
)

func (k QPACKLineKind) String() string {
	switch k {
	case LineIndexed:
		return "indexed"
	case LineIndexedPostBase:
		return "indexed_post_base"
	case LineLiteralNameRef:
		return "literal_name_reference"
	case LineLiteralPostBaseNameRef:
		return "literal_post_base_name_reference"
	case LineLiteralName:
		return "literal_literal_name"
	}
	return "unknown"
}

// QPACKLine is one field line as it was sent.
type QPACKLine struct {
	Kind QPACKLineKind
	// Static is set for a reference into the static table (indexed or
	// name reference).
	Static bool
	// Index is the wire index: static, relative to the Base, or
	// post-base.
	Index uint64
	// NeverIndexed is the N bit of a literal.
	NeverIndexed bool
	// NameHuffman and ValueHuffman say which literals were Huffman-coded.
	NameHuffman, ValueHuffman bool
	Name, Value               string
}

// ErrSectionBlocked is returned by QPACKDecoder.Decode for a section
// whose Required Insert Count is above the inserts received so far.
var ErrSectionBlocked = errors.New("qpack: field section needs inserts not yet received")

// QPACKDecoder is a QPACK decoder with a dynamic table of at most maxCap
// bytes (the SETTINGS_QPACK_MAX_TABLE_CAPACITY its side advertised). It
// is safe for concurrent use.
type QPACKDecoder struct {
	d      *decoder
	instrs []QPACKInstruction // guarded by d.mu, during Feed
}

// NewQPACKDecoder returns a decoder that allows a table of maxCap bytes
// and maxBlocked blocked streams.
func NewQPACKDecoder(maxCap uint64, maxBlocked int) *QPACKDecoder {
	q := &QPACKDecoder{d: newDecoder(maxCap, maxBlocked)}
	q.d.traceInstr = func(in QPACKInstruction) { q.instrs = append(q.instrs, in) }
	return q
}

// Feed applies encoder stream bytes (split anywhere) and returns the
// instructions they completed, and the Insert Count Increment the decoder
// stream should carry (0 for none).
func (q *QPACKDecoder) Feed(b []byte) ([]QPACKInstruction, uint64, error) {
	inc, err := q.d.feed(b)
	q.d.mu.Lock()
	out := q.instrs
	q.instrs = nil
	q.d.mu.Unlock()
	return out, inc, err
}

// Ready returns whether ric inserts have been received, and a channel
// closed at the next insert.
func (q *QPACKDecoder) Ready(ric uint64) (<-chan struct{}, bool) {
	return q.d.waitInsert(ric)
}

// Prefix decodes a field section's prefix: its Required Insert Count and
// Base.
func (q *QPACKDecoder) Prefix(section []byte) (ric, base uint64, err error) {
	ric, base, _, err = q.d.sectionPrefix(section)
	return ric, base, err
}

// Decode decodes a field section of at most max decoded bytes into its
// lines, with the Required Insert Count and Base of its prefix. A
// section whose inserts have not all arrived fails with
// ErrSectionBlocked (wait with Ready).
func (q *QPACKDecoder) Decode(section []byte, max int) (ric, base uint64, lines []QPACKLine, err error) {
	ric, base, n, err := q.d.sectionPrefix(section)
	if err != nil {
		return 0, 0, nil, err
	}
	if _, ok := q.d.waitInsert(ric); !ok {
		return ric, base, nil, ErrSectionBlocked
	}
	err = q.d.decodeLinesTraced(section[n:], ric, base, max, nil, func(l QPACKLine) { lines = append(lines, l) })
	return ric, base, lines, err
}

// AppendSectionAck, AppendInsertCountIncrement and AppendStreamCancel
// append a decoder stream instruction (RFC 9204 §4.4), for a server
// decoding what QPACKDecoder decodes.
func AppendSectionAck(b []byte, streamID uint64) []byte { return appendSectionAck(b, streamID) }

func AppendInsertCountIncrement(b []byte, n uint64) []byte { return appendInsertCountIncrement(b, n) }

func AppendStreamCancel(b []byte, streamID uint64) []byte { return appendStreamCancel(b, streamID) }
