package h2

import (
	"errors"
	"strings"
	"unsafe"

	"golang.org/x/net/http2/hpack"
)

// hdecoder decodes the header blocks of one connection (RFC 7541). It
// behaves as x/net's hpack.Decoder given the same table size and string
// limit (FuzzHPACKDecoder compares the two), but where that decoder
// allocates a string per literal, this one decodes a block's literals into
// one buffer, and the dynamic table's copies into buffers the table shares
// (see decode); Huffman codes are decoded with tables (decodeHuffman). A
// server that sends its response fields as literals (nginx does, in every
// response) would otherwise cost an allocation per field per response.
type hdecoder struct {
	// The dynamic table is dyn[head:], oldest first. Evicting advances
	// head; adding to a full backing array first moves the entries down,
	// so that a table that keeps its size allocates nothing.
	dyn     []hpack.HeaderField
	head    int
	size    uint32 // the table's size as RFC 7541 4.1 counts it
	max     uint32 // its maximum size, after size updates
	allowed uint32 // the most a size update may ask for
	maxStr  int    // longest string accepted, 0 for no limit

	// arena holds the current block's literal strings (see str), tab the
	// dynamic table's (see keep). The strings handed out point into them:
	// bytes are only ever appended, never changed, and a buffer that
	// outgrows its capacity is replaced, the old one left to its strings.
	arena []byte
	tab   []byte

	// memo holds the literal fields of the last block, by their place
	// among its literals: each one's encoded bytes and its decoded name
	// and value, copied into the table's buffers. A server that sends the
	// same fields as literals in every response (nginx sends server,
	// content-type, etag, last-modified... so, Huffman-coded) then costs a
	// comparison per field instead of a decoding and a copy. Only literals
	// whose bytes say all they hold are kept: a name by static index or
	// spelled out, at most memoMax bytes, not never-indexed (sensitive).
	// The entries keep at most 16 table buffers alive beyond the table's
	// own (64 KiB, when every entry was stored in another buffer).
	//
	// The memo is made for the second block: a connection that carries
	// one response (a visit per Session) holds none, and the 768 bytes
	// and table buffer it would hold while idle.
	memo   *[16]memoEntry
	blocks int // blocks decoded, up to 2
}

// memoEntry is one remembered literal field; see hdecoder.memo.
type memoEntry struct {
	enc         string // its representation, from the first byte to the value's end
	name, value string
}

// memoMax is the longest literal field representation the memo keeps.
const memoMax = 96

// The memo's strings are decoded into the table's buffers (tabStr).
var _ [tabChunk/4 - memoMax*8/5]struct{}

// tabChunk is the largest size of the buffers the dynamic table's strings
// are copied into; a longer string gets an allocation of its own. The
// first buffer is tabFirst bytes, each next one twice the last, so that a
// connection whose server keeps a few fields in the table holds a small
// buffer (an idle connection is mostly its buffers).
const (
	tabChunk = 4 << 10
	tabFirst = 256
)

// room makes sure the table buffer has n bytes free, replacing a full one
// by a larger one (see tabChunk).
func (d *hdecoder) room(n int) {
	if len(d.tab)+n <= cap(d.tab) {
		return
	}
	c := min(max(2*cap(d.tab), tabFirst), tabChunk)
	d.tab = make([]byte, 0, max(c, n))
}

// newHDecoder returns a decoder whose table holds up to tableSize bytes,
// the SETTINGS_HEADER_TABLE_SIZE we announce, and whose strings are at
// most maxStr bytes (0: no limit).
func newHDecoder(tableSize uint32, maxStr int) *hdecoder {
	return &hdecoder{max: tableSize, allowed: tableSize, maxStr: maxStr}
}

// Decoding errors, as x/net's decoder reports them where it has a value
// for them.
var (
	errHPACKTruncated    = hpack.DecodingError{Err: errors.New("truncated headers")}
	errHPACKVarint       = hpack.DecodingError{Err: errors.New("varint integer overflow")}
	errHPACKSizeLate     = hpack.DecodingError{Err: errors.New("dynamic table size update MUST occur at the beginning of a header block")}
	errHPACKSizeTooLarge = hpack.DecodingError{Err: errors.New("dynamic table size update too large")}
)

// decode decodes block, a whole header block, calling emit for each field
// in order. Fields are emitted as they are decoded, so after an error some
// may have been. The strings of literal fields point into one buffer
// allocated for the block (when it has literals), which the fields keep
// alive; the block itself is not retained. A literal that goes into the
// dynamic table is copied there (keep): nginx, for one, adds several of
// its fields to the table with every response and never refers to them,
// which would otherwise cost allocations per response, or let the table
// keep responses' buffers alive. A literal the memo holds from the last
// block, byte for byte, is not decoded again (see hdecoder.memo).
func (d *hdecoder) decode(block []byte, emit func(hpack.HeaderField)) error {
	d.arena = nil // the last block's strings keep its buffer
	if d.blocks < 2 {
		if d.blocks++; d.blocks == 2 {
			d.memo = new([16]memoEntry)
		}
	}
	first := true
	lits := 0 // literal fields so far
	for len(block) > 0 {
		b := block[0]
		var err error
		switch {
		case b&0x80 != 0: // indexed field
			var i uint64
			if i, block, err = varint(7, block); err != nil {
				return err
			}
			hf, ok := d.at(i)
			if !ok {
				return hpack.DecodingError{Err: hpack.InvalidIndexError(i)}
			}
			if err := d.check(hf); err != nil {
				return err
			}
			emit(hpack.HeaderField{Name: hf.Name, Value: hf.Value})
		case b&0xe0 == 0x20: // dynamic table size update
			if !first && d.size > 0 {
				return errHPACKSizeLate
			}
			var n uint64
			if n, block, err = varint(5, block); err != nil {
				return err
			}
			if n > uint64(d.allowed) {
				return errHPACKSizeTooLarge
			}
			d.max = uint32(n)
			d.evict()
		default: // a literal: with incremental indexing, without, never indexed
			start := block
			prefix, indexed := byte(4), b&0xc0 == 0x40
			if indexed {
				prefix = 6
			}
			var i uint64
			if i, block, err = varint(prefix, block); err != nil {
				return err
			}
			var hf hpack.HeaderField
			var name, value []byte
			var nameHuff, valueHuff bool
			if i > 0 {
				ihf, ok := d.at(i)
				if !ok {
					return hpack.DecodingError{Err: hpack.InvalidIndexError(i)}
				}
				hf.Name = ihf.Name
			} else if name, nameHuff, block, err = d.readString(block); err != nil {
				return err
			}
			if value, valueHuff, block, err = d.readString(block); err != nil {
				return err
			}
			var m *memoEntry
			hit := false
			enc := start[:len(start)-len(block)]
			if d.memo != nil && lits < len(d.memo) && i <= uint64(len(staticTable)) && b&0xf0 != 0x10 && len(enc) <= memoMax {
				m = &d.memo[lits]
				if hit = m.enc == string(enc); hit {
					hf.Name, hf.Value = m.name, m.value
				}
			}
			lits++
			switch {
			case hit:
			case m != nil:
				// Decoded into the table's buffers, the strings serve
				// the dynamic table too.
				if i == 0 {
					if hf.Name, err = d.tabStr(name, nameHuff); err != nil {
						return err
					}
				}
				if hf.Value, err = d.tabStr(value, valueHuff); err != nil {
					return err
				}
				m.enc, m.name, m.value = d.keep(unsafe.String(unsafe.SliceData(enc), len(enc))), hf.Name, hf.Value
			default:
				if i == 0 {
					if hf.Name, err = d.str(name, nameHuff, len(name)+len(value)+len(block)); err != nil {
						return err
					}
				}
				if hf.Value, err = d.str(value, valueHuff, len(value)+len(block)); err != nil {
					return err
				}
			}
			if indexed {
				e := hpack.HeaderField{Name: hf.Name, Value: hf.Value}
				if m == nil {
					e.Value = d.keep(hf.Value)
					if i == 0 || i > uint64(len(staticTable)) {
						e.Name = d.keep(hf.Name)
					}
				}
				d.add(e)
			}
			hf.Sensitive = b&0xf0 == 0x10
			if err := d.check(hf); err != nil {
				return err
			}
			emit(hf)
		}
		first = false
	}
	return nil
}

// check applies the string limit to a decoded field, as x/net does before
// emitting it.
func (d *hdecoder) check(hf hpack.HeaderField) error {
	if d.maxStr != 0 && (len(hf.Name) > d.maxStr || len(hf.Value) > d.maxStr) {
		return hpack.ErrStringLength
	}
	return nil
}

// readString reads a string literal's header and returns its encoded bytes.
func (d *hdecoder) readString(p []byte) (s []byte, huff bool, rest []byte, err error) {
	if len(p) == 0 {
		return nil, false, nil, errHPACKTruncated
	}
	huff = p[0]&0x80 != 0
	n, p, err := varint(7, p)
	if err != nil {
		return nil, false, nil, err
	}
	if d.maxStr != 0 && n > uint64(d.maxStr) {
		return nil, false, nil, hpack.ErrStringLength
	}
	if uint64(len(p)) < n {
		return nil, false, nil, errHPACKTruncated
	}
	return p[:n], huff, p[n:], nil
}

// str decodes s. A raw string of one byte is converted, which costs no
// allocation (Go keeps those); any other is appended to the arena and
// points into it. The arena is made for the block's first such string,
// large enough for every literal from there on, rest bytes of the block,
// so that it is not outgrown: a decoded string is at most 8/5 of its
// Huffman code (the codes are at least 5 bits long), a raw one as long.
func (d *hdecoder) str(s []byte, huff bool, rest int) (string, error) {
	if !huff && len(s) <= 1 {
		return string(s), nil
	}
	if d.arena == nil {
		d.arena = make([]byte, 0, rest+rest*3/5+8)
	}
	start := len(d.arena)
	if huff {
		var err error
		if d.arena, err = decodeHuffman(d.arena, s); err != nil {
			return "", err
		}
	} else {
		d.arena = append(d.arena, s...)
	}
	if len(d.arena) == start {
		return "", nil
	}
	return unsafe.String(&d.arena[start], len(d.arena)-start), nil
}

// tabStr decodes s, a string of a literal the memo keeps (so at most
// memoMax bytes), into the table's buffers.
func (d *hdecoder) tabStr(s []byte, huff bool) (string, error) {
	n := len(s)
	if huff {
		n += n*3/5 + 1 // a decoded string is at most 8/5 of its code
	}
	d.room(n)
	start := len(d.tab)
	if huff {
		var err error
		if d.tab, err = decodeHuffman(d.tab, s); err != nil {
			d.tab = d.tab[:start]
			return "", err
		}
	} else {
		d.tab = append(d.tab, s...)
	}
	if len(d.tab) == start {
		return "", nil
	}
	return unsafe.String(&d.tab[start], len(d.tab)-start), nil
}

// keep returns a copy of s for the dynamic table, in the current table
// buffer (a new one when it is full). A buffer lives while an entry in it
// does, so the table holds at most its size plus a buffer's.
func (d *hdecoder) keep(s string) string {
	switch {
	case len(s) == 0:
		return ""
	case len(s) == 1:
		return string([]byte{s[0]}) // Go's own one-byte string, not the arena's
	}
	if len(s) > tabChunk/4 {
		return strings.Clone(s)
	}
	d.room(len(s))
	start := len(d.tab)
	d.tab = append(d.tab, s...)
	return unsafe.String(&d.tab[start], len(s))
}

// varint reads an integer with an n-bit prefix (RFC 7541 5.1), with
// x/net's bound on its length.
func varint(n byte, p []byte) (uint64, []byte, error) {
	if len(p) == 0 {
		return 0, nil, errHPACKTruncated
	}
	i := uint64(p[0])
	if n < 8 {
		i &= 1<<n - 1
	}
	if i < 1<<n-1 {
		return i, p[1:], nil
	}
	p = p[1:]
	var m uint
	for len(p) > 0 {
		b := p[0]
		p = p[1:]
		i += uint64(b&0x7f) << m
		if b&0x80 == 0 {
			return i, p, nil
		}
		m += 7
		if m >= 63 {
			return 0, nil, errHPACKVarint
		}
	}
	return 0, nil, errHPACKTruncated
}

// at returns the field at index i of the static and dynamic tables
// (RFC 7541 2.3.3).
func (d *hdecoder) at(i uint64) (hpack.HeaderField, bool) {
	if i == 0 {
		return hpack.HeaderField{}, false
	}
	if i <= uint64(len(staticTable)) {
		e := &staticTable[i-1]
		return hpack.HeaderField{Name: e[0], Value: e[1]}, true
	}
	j := i - uint64(len(staticTable))
	if j > uint64(len(d.dyn)-d.head) {
		return hpack.HeaderField{}, false
	}
	return d.dyn[len(d.dyn)-int(j)], true
}

// add puts hf into the dynamic table, evicting as it must; a field larger
// than the table empties it.
func (d *hdecoder) add(hf hpack.HeaderField) {
	if len(d.dyn) == cap(d.dyn) && d.head > 0 {
		n := copy(d.dyn, d.dyn[d.head:])
		clear(d.dyn[n:])
		d.dyn, d.head = d.dyn[:n], 0
	}
	d.dyn = append(d.dyn, hpack.HeaderField{Name: hf.Name, Value: hf.Value})
	d.size += hf.Size()
	d.evict()
}

// evict removes the oldest entries until the table fits its maximum.
func (d *hdecoder) evict() {
	for d.size > d.max && d.head < len(d.dyn) {
		d.size -= d.dyn[d.head].Size()
		d.dyn[d.head] = hpack.HeaderField{} // let its strings go
		d.head++
	}
	if d.head == len(d.dyn) {
		d.dyn, d.head = d.dyn[:0], 0
	}
}
