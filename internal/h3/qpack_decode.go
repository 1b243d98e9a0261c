package h3

import (
	"errors"
	"sync"

	"github.com/guise-http/guise/internal/quicwire"
	"golang.org/x/net/http2/hpack"
)

// Decoding failures. They are wrapped in a ConnectionError with
// QPACK_DECOMPRESSION_FAILED (field sections) or QPACK_ENCODER_STREAM_ERROR
// (encoder stream instructions), except errSectionBlocked.
var (
	errQPACKTruncated = errors.New("qpack: truncated")
	errQPACKInteger   = errors.New("qpack: integer overflow")
	errQPACKHuffman   = errors.New("qpack: invalid huffman string")
	errQPACKIndex     = errors.New("qpack: reference to a missing table entry")
	errQPACKPrefix    = errors.New("qpack: invalid field section prefix")
	errQPACKCapacity  = errors.New("qpack: dynamic table capacity above the advertised maximum")
	errQPACKEntry     = errors.New("qpack: entry larger than the dynamic table")
	errQPACKBlocked   = errors.New("qpack: more blocked streams than advertised")
	errQPACKLongInstr = errors.New("qpack: encoder instruction too long")
)

// decoder is the QPACK decoder of one connection: the dynamic table the
// peer's encoder stream fills, within maxCap (our
// SETTINGS_QPACK_MAX_TABLE_CAPACITY), and the field sections of the
// request streams. It is safe for concurrent use: the encoder stream's
// reader inserts while request streams decode.
type decoder struct {
	maxCap     uint64
	maxBlocked int

	mu       sync.Mutex
	cap      uint64
	size     uint64
	entries  []field // entries[i] has absolute index dropped+i
	dropped  uint64
	inserted uint64 // the insert count
	acked    uint64 // the known received count we told the encoder
	blocked  int
	changed  chan struct{} // closed and replaced at every insert
	pending  []byte        // a partial encoder stream instruction

	// traceInstr, when set (QPACKDecoder, for the echo server and
	// recordings), sees each encoder instruction as sent.
	traceInstr func(QPACKInstruction)
	// strs caches the strings decodeLines decoded, by their coded bytes:
	// a server sends the same content-type, server and cache fields on
	// every response, and a lookup by a byte slice neither decodes nor
	// allocates. Bounded by strsEntries, then cleared.
	strs map[string]string
}

// The decoded-string cache holds strings coded in strsMin to strsMax
// bytes, at most strsEntries of them.
const (
	strsMin     = 4
	strsMax     = 256
	strsEntries = 64
)

// readString is readString through the cache for field values (a 7-bit
// length prefix, the H bit above it: the first byte is all prefix, so
// equal coded bytes are equal strings), with d.mu held.
func (d *decoder) readString(b []byte, bits uint, max uint64) (string, int, error) {
	if bits != 7 || len(b) == 0 {
		return readString(b, bits, max)
	}
	l, n, err := readPrefixInt(b, bits)
	if err != nil || l < strsMin || l > strsMax || l > uint64(len(b)-n) {
		return readString(b, bits, max)
	}
	huff := b[0]&0x80 != 0
	if !huff && l > max || huff && l*8/5 > max+8 {
		return readString(b, bits, max) // its error
	}
	end := n + int(l)
	coded := b[:end]
	if v, ok := d.strs[string(coded)]; ok {
		return v, end, nil
	}
	v, m, err := readString(b, bits, max)
	if err != nil {
		return v, m, err
	}
	if d.strs == nil || len(d.strs) >= strsEntries {
		d.strs = make(map[string]string, 16)
	}
	d.strs[string(coded)] = v
	return v, m, nil
}

func newDecoder(maxCap uint64, maxBlocked int) *decoder {
	return &decoder{maxCap: maxCap, maxBlocked: maxBlocked, changed: make(chan struct{})}
}

// feed reads encoder stream bytes. It returns the Insert Count Increment
// to send on the decoder stream (0 for none).
func (d *decoder) feed(b []byte) (increment uint64, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	buf := b
	if len(d.pending) > 0 {
		d.pending = append(d.pending, b...)
		buf = d.pending
	}
	before := d.inserted
	for len(buf) > 0 {
		n, err := d.instruction(buf)
		if errors.Is(err, errQPACKTruncated) {
			// An instruction never needs more than the largest entry
			// Huffman-coded (30 bits a byte at worst) plus its integers.
			if uint64(len(buf)) > 4*d.maxCap+64 {
				return 0, errQPACKLongInstr
			}
			d.pending = append(d.pending[:0], buf...)
			break
		}
		if err != nil {
			return 0, err
		}
		buf = buf[n:]
		if len(buf) == 0 {
			d.pending = d.pending[:0]
		}
	}
	if d.inserted != before {
		close(d.changed)
		d.changed = make(chan struct{})
		increment = d.inserted - d.acked
		d.acked = d.inserted
	}
	return increment, nil
}

// instruction applies the encoder instruction at the start of b.
func (d *decoder) instruction(b []byte) (int, error) {
	switch {
	case b[0]&0x80 != 0: // Insert With Name Reference
		idx, n, err := readPrefixInt(b, 6)
		if err != nil {
			return 0, err
		}
		var name string
		if b[0]&0x40 != 0 {
			if idx >= uint64(len(staticTable)) {
				return 0, errQPACKIndex
			}
			name = staticTable[idx].name
		} else {
			if idx >= d.inserted {
				return 0, errQPACKIndex
			}
			f, ok := d.entry(d.inserted - 1 - idx)
			if !ok {
				return 0, errQPACKIndex
			}
			name = f.name
		}
		if n >= len(b) {
			return 0, errQPACKTruncated
		}
		vh := b[n]&0x80 != 0
		value, m, err := readString(b[n:], 7, d.maxCap)
		if err != nil {
			return 0, err
		}
		return n + m, d.traced(d.insert(name, value), QPACKInstruction{Kind: InsertWithNameRef,
			Static: b[0]&0x40 != 0, Index: idx, Name: name, Value: value, ValueHuffman: vh})
	case b[0]&0x40 != 0: // Insert With Literal Name
		name, n, err := readString(b, 5, d.maxCap)
		if err != nil {
			return 0, err
		}
		if n >= len(b) {
			return 0, errQPACKTruncated
		}
		vh := b[n]&0x80 != 0
		value, m, err := readString(b[n:], 7, d.maxCap)
		if err != nil {
			return 0, err
		}
		return n + m, d.traced(d.insert(name, value), QPACKInstruction{Kind: InsertWithLiteralName,
			Name: name, Value: value, NameHuffman: b[0]&0x20 != 0, ValueHuffman: vh})
	case b[0]&0x20 != 0: // Set Dynamic Table Capacity
		c, n, err := readPrefixInt(b, 5)
		if err != nil {
			return 0, err
		}
		if c > d.maxCap {
			return 0, errQPACKCapacity
		}
		d.cap = c
		d.evict(0)
		return n, d.traced(nil, QPACKInstruction{Kind: SetCapacity, Index: c})
	default: // Duplicate
		idx, n, err := readPrefixInt(b, 5)
		if err != nil {
			return 0, err
		}
		if idx >= d.inserted {
			return 0, errQPACKIndex
		}
		f, ok := d.entry(d.inserted - 1 - idx)
		if !ok {
			return 0, errQPACKIndex
		}
		return n, d.traced(d.insert(f.name, f.value), QPACKInstruction{Kind: Duplicate, Index: idx,
			Name: f.name, Value: f.value})
	}
}

// traced passes an instruction that applied (err nil) to traceInstr.
func (d *decoder) traced(err error, in QPACKInstruction) error {
	if err == nil && d.traceInstr != nil {
		in.InsertCount = d.inserted
		d.traceInstr(in)
	}
	return err
}

func (d *decoder) entry(abs uint64) (field, bool) {
	if abs < d.dropped || abs >= d.inserted {
		return field{}, false
	}
	return d.entries[abs-d.dropped], true
}

func (d *decoder) insert(name, value string) error {
	sz := uint64(len(name)) + uint64(len(value)) + 32
	if sz > d.cap {
		return errQPACKEntry
	}
	d.evict(sz)
	d.entries = append(d.entries, field{name, value})
	d.size += sz
	d.inserted++
	return nil
}

// evict drops the oldest entries until room more bytes fit.
func (d *decoder) evict(room uint64) {
	for d.size+room > d.cap && len(d.entries) > 0 {
		f := d.entries[0]
		d.size -= uint64(len(f.name)) + uint64(len(f.value)) + 32
		d.entries[0] = field{}
		d.entries = d.entries[1:]
		d.dropped++
	}
	if len(d.entries) == 0 {
		d.entries = nil
	}
}

// sectionPrefix decodes a field section's prefix into its Required
// Insert Count and Base (RFC 9204 §4.5.1).
func (d *decoder) sectionPrefix(b []byte) (ric, base uint64, n int, err error) {
	enc, n, err := readPrefixInt(b, 8)
	if err != nil {
		return 0, 0, 0, err
	}
	if n >= len(b) {
		return 0, 0, 0, errQPACKTruncated
	}
	sign := b[n]&0x80 != 0
	delta, m, err := readPrefixInt(b[n:], 7)
	if err != nil {
		return 0, 0, 0, err
	}
	n += m
	if enc == 0 {
		if sign || delta != 0 {
			return 0, 0, 0, errQPACKPrefix
		}
		return 0, 0, n, nil
	}
	if d.maxCap == 0 {
		return 0, 0, 0, ErrDynamicTableRefused
	}
	maxEntries := d.maxCap / 32
	full := 2 * maxEntries
	if enc > full {
		return 0, 0, 0, errQPACKPrefix
	}
	d.mu.Lock()
	total := d.inserted
	d.mu.Unlock()
	maxValue := total + maxEntries
	ric = maxValue/full*full + enc - 1
	if ric > maxValue {
		if ric <= full {
			return 0, 0, 0, errQPACKPrefix
		}
		ric -= full
	}
	if ric == 0 {
		return 0, 0, 0, errQPACKPrefix
	}
	if sign {
		if delta+1 > ric {
			return 0, 0, 0, errQPACKPrefix
		}
		base = ric - delta - 1
	} else {
		base = ric + delta
		if base < ric {
			return 0, 0, 0, errQPACKPrefix
		}
	}
	return ric, base, n, nil
}

// waitInsert returns a channel closed at the next insert and whether ric
// entries are in the table now. A caller that must wait counts itself
// blocked with block.
func (d *decoder) waitInsert(ric uint64) (<-chan struct{}, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.changed, d.inserted >= ric
}

// block counts a blocked stream; it fails past maxBlocked.
func (d *decoder) block(delta int) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if delta > 0 && d.blocked+delta > d.maxBlocked {
		return errQPACKBlocked
	}
	d.blocked += delta
	return nil
}

// decodeLines decodes the field lines after the prefix, calling emit for
// each. size counts name + value + 32 per field and fails with
// ErrFieldSectionTooLarge past max before anything of the field is
// copied: a small section of references to large entries (a decoder
// bomb) costs at most max.
func (d *decoder) decodeLines(b []byte, ric, base uint64, max int, emit func(name, value string)) error {
	return d.decodeLinesTraced(b, ric, base, max, emit, nil)
}

// decodeLinesTraced is decodeLines that also passes each line, as it
// was sent, to trace if set; emit may be nil.
func (d *decoder) decodeLinesTraced(b []byte, ric, base uint64, max int, emit func(name, value string), trace func(QPACKLine)) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	size := 0
	add := func(name, value string) error {
		size += len(name) + len(value) + 32
		if size > max {
			return ErrFieldSectionTooLarge
		}
		if emit != nil {
			emit(name, value)
		}
		return nil
	}
	dyn := func(abs uint64) (field, error) {
		if abs >= ric {
			return field{}, errQPACKIndex
		}
		f, ok := d.entry(abs)
		if !ok {
			return field{}, errQPACKIndex
		}
		return f, nil
	}
	// rel and post resolve a relative or post-base index (RFC 9204
	// §3.2.5, §3.2.6); the absolute index is base-1-idx or base+idx.
	rel := func(idx uint64) (field, error) {
		if idx >= base {
			return field{}, errQPACKIndex
		}
		return dyn(base - 1 - idx)
	}
	post := func(idx uint64) (field, error) {
		if base+idx < base {
			return field{}, errQPACKIndex
		}
		return dyn(base + idx)
	}
	for len(b) > 0 {
		c := b[0]
		var f field
		var l QPACKLine // what the line was, for traceLine
		switch {
		case c&0x80 != 0: // indexed
			idx, n, err := readPrefixInt(b, 6)
			if err != nil {
				return err
			}
			l = QPACKLine{Kind: LineIndexed, Static: c&0x40 != 0, Index: idx}
			if l.Static {
				if idx >= uint64(len(staticTable)) {
					return errQPACKIndex
				}
				f = staticTable[idx]
			} else if f, err = rel(idx); err != nil {
				return err
			}
			b = b[n:]
		case c&0x40 != 0: // literal with name reference
			idx, n, err := readPrefixInt(b, 4)
			if err != nil {
				return err
			}
			l = QPACKLine{Kind: LineLiteralNameRef, Static: c&0x10 != 0, Index: idx, NeverIndexed: c&0x20 != 0}
			if l.Static {
				if idx >= uint64(len(staticTable)) {
					return errQPACKIndex
				}
				f.name = staticTable[idx].name
			} else {
				r, err := rel(idx)
				if err != nil {
					return err
				}
				f.name = r.name
			}
			if size+len(f.name)+32 > max {
				return ErrFieldSectionTooLarge
			}
			if n < len(b) {
				l.ValueHuffman = b[n]&0x80 != 0
			}
			v, m, err := d.readString(b[n:], 7, uint64(max))
			if err != nil {
				return err
			}
			f.value = v
			b = b[n+m:]
		case c&0x20 != 0: // literal with literal name
			name, n, err := d.readString(b, 3, uint64(max))
			if err != nil {
				return err
			}
			l = QPACKLine{Kind: LineLiteralName, NeverIndexed: c&0x10 != 0, NameHuffman: c&0x08 != 0}
			if n < len(b) {
				l.ValueHuffman = b[n]&0x80 != 0
			}
			v, m, err := d.readString(b[n:], 7, uint64(max))
			if err != nil {
				return err
			}
			f = field{name, v}
			b = b[n+m:]
		case c&0x10 != 0: // indexed post-base
			idx, n, err := readPrefixInt(b, 4)
			if err != nil {
				return err
			}
			l = QPACKLine{Kind: LineIndexedPostBase, Index: idx}
			if f, err = post(idx); err != nil {
				return err
			}
			b = b[n:]
		default: // literal with post-base name reference
			idx, n, err := readPrefixInt(b, 3)
			if err != nil {
				return err
			}
			l = QPACKLine{Kind: LineLiteralPostBaseNameRef, Index: idx, NeverIndexed: c&0x08 != 0}
			r, err := post(idx)
			if err != nil {
				return err
			}
			if n < len(b) {
				l.ValueHuffman = b[n]&0x80 != 0
			}
			v, m, err := d.readString(b[n:], 7, uint64(max))
			if err != nil {
				return err
			}
			f = field{r.name, v}
			b = b[n+m:]
		}
		if err := add(f.name, f.value); err != nil {
			return err
		}
		if trace != nil {
			l.Name, l.Value = f.name, f.value
			trace(l)
		}
	}
	return nil
}

// readPrefixInt reads a prefixed integer whose prefix is the low bits of
// b[0].
func readPrefixInt(b []byte, bits uint) (uint64, int, error) {
	if len(b) == 0 {
		return 0, 0, errQPACKTruncated
	}
	mask := uint64(1)<<bits - 1
	v := uint64(b[0]) & mask
	if v < mask {
		return v, 1, nil
	}
	var shift uint
	for i := 1; i < len(b); i++ {
		if shift > 56 {
			return 0, 0, errQPACKInteger
		}
		v += uint64(b[i]&0x7f) << shift
		shift += 7
		if b[i]&0x80 == 0 {
			if v > quicwire.MaxVarint {
				return 0, 0, errQPACKInteger
			}
			return v, i + 1, nil
		}
	}
	return 0, 0, errQPACKTruncated
}

// readString reads a string literal whose length has a bits-bit prefix
// and whose H flag is the bit above it. A length above max (the decoded
// size a caller accepts; Huffman expands at most 8/5) fails before
// anything is allocated.
func readString(b []byte, bits uint, max uint64) (string, int, error) {
	if len(b) == 0 {
		return "", 0, errQPACKTruncated
	}
	huff := b[0]&(1<<bits) != 0
	l, n, err := readPrefixInt(b, bits)
	if err != nil {
		return "", 0, err
	}
	if l > uint64(len(b)-n) {
		if l > 4*max+64 {
			return "", 0, ErrFieldSectionTooLarge
		}
		return "", 0, errQPACKTruncated
	}
	raw := b[n : n+int(l)]
	if !huff {
		if l > max {
			return "", 0, ErrFieldSectionTooLarge
		}
		return string(raw), n + int(l), nil
	}
	if l*8/5 > max+8 {
		return "", 0, ErrFieldSectionTooLarge
	}
	s, err := hpack.HuffmanDecodeToString(raw)
	if err != nil {
		return "", 0, errQPACKHuffman
	}
	return s, n + int(l), nil
}

// Decoder stream instructions (RFC 9204 §4.4).
func appendSectionAck(b []byte, streamID uint64) []byte {
	return appendPrefixInt(b, 0x80, 7, streamID)
}

func appendStreamCancel(b []byte, streamID uint64) []byte {
	return appendPrefixInt(b, 0x40, 6, streamID)
}

func appendInsertCountIncrement(b []byte, n uint64) []byte {
	return appendPrefixInt(b, 0x00, 6, n)
}
