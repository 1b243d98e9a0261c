package h2

import (
	"slices"
	"strings"

	"golang.org/x/net/http2/hpack"
)

const (
	defaultTableSize = 4096
	defaultMaxTable  = 65536
	entryOverhead    = 32
)

type tableEntry struct{ name, value string }

// encoder is an HPACK encoder that makes the representation choices of one
// browser (HPACKStyle). It is not safe for concurrent use: the connection
// uses it under its write lock, in the order header blocks go on the wire.
type encoder struct {
	style *HPACKStyle
	dyn   []tableEntry // oldest first; index 62 is the last element
	size  uint32       // sum of entry sizes in dyn
	max   uint32       // table size the peer's decoder assumes

	update    bool   // a size update is owed at the next block start
	minUpdate uint32 // smallest size set since the last update
	gen       uint64 // counts changes of the table and of owed updates

	// The last header block whose encoding changed nothing: the same
	// fields at the same gen encode to the same bytes.
	memoOK     bool
	memoGen    uint64
	memoFields []tableEntry
	memoBlock  []byte
}

// block appends the header block of fs. A block like the one before
// encodes like it when that one changed no table state: its bytes are
// reused then.
func (e *encoder) block(dst []byte, fs []tableEntry) []byte {
	if out, ok := e.cached(dst, fs); ok {
		return out
	}
	gen := e.gen
	start := len(dst)
	dst = e.begin(dst)
	for _, f := range fs {
		dst = e.field(dst, f.name, f.value)
	}
	e.remember(fs, dst[start:], gen)
	return dst
}

// cached appends to dst the block last encoded for fs if encoding fs now
// would give the same bytes: the same fields, with the table unchanged
// since, and by, that encoding. It reports whether it did.
func (e *encoder) cached(dst []byte, fs []tableEntry) ([]byte, bool) {
	if !e.memoOK || e.memoGen != e.gen || len(fs) != len(e.memoFields) {
		return dst, false
	}
	for i, f := range fs {
		if m := e.memoFields[i]; f.name != m.name || f.value != m.value {
			return dst, false
		}
	}
	return append(dst, e.memoBlock...), true
}

// remember keeps block, the encoding of fs begun at gen, for cached when
// it changed nothing.
func (e *encoder) remember(fs []tableEntry, block []byte, gen uint64) {
	if e.gen != gen {
		e.memoOK = false
		return
	}
	e.memoOK, e.memoGen = true, gen
	e.memoFields = append(e.memoFields[:0], fs...)
	e.memoBlock = append(e.memoBlock[:0], block...)
}

func newEncoder(style *HPACKStyle) *encoder {
	return &encoder{style: style, max: defaultTableSize, minUpdate: defaultTableSize}
}

// setPeerTableSize applies the peer's SETTINGS_HEADER_TABLE_SIZE.
func (e *encoder) setPeerTableSize(v uint32) {
	limit := e.style.MaxTableSize
	if limit == 0 {
		limit = defaultMaxTable
	}
	v = min(v, limit)
	if v == e.max && e.style.SizeUpdate == SizeUpdateOnChange {
		return
	}
	if !e.update {
		e.minUpdate = v
	} else {
		e.minUpdate = min(e.minUpdate, v)
	}
	e.update = true
	e.max = v
	e.gen++
	e.evict(0)
}

// begin starts a header block, appending any owed size updates.
func (e *encoder) begin(dst []byte) []byte {
	if !e.update {
		return dst
	}
	e.update = false
	e.gen++
	if e.minUpdate < e.max {
		dst = appendVarInt(dst, 5, 0x20, uint64(e.minUpdate))
	}
	dst = appendVarInt(dst, 5, 0x20, uint64(e.max))
	e.minUpdate = e.max
	return dst
}

// field appends one header field; it splits cookies into crumbs when the
// style says so.
func (e *encoder) field(dst []byte, name, value string) []byte {
	if name == "cookie" && e.style.CookieCrumbs && strings.IndexByte(value, ';') >= 0 {
		for value != "" {
			crumb := value
			if i := strings.IndexByte(value, ';'); i >= 0 {
				crumb, value = value[:i], value[i+1:]
				value = strings.TrimLeft(value, " \t")
			} else {
				value = ""
			}
			dst = e.one(dst, name, crumb)
		}
		return dst
	}
	return e.one(dst, name, value)
}

func (e *encoder) one(dst []byte, name, value string) []byte {
	st := e.style
	never := slices.Contains(st.NeverIndex, name) ||
		(name == "cookie" && st.ShortCrumbNeverIndex > 0 && len(value) < st.ShortCrumbNeverIndex)
	noIdx := slices.Contains(st.NoIndex, name)
	exact, nameRef := e.search(name, value)
	switch {
	case never:
		return e.literal(dst, 0x10, 4, nameRef, name, value)
	case exact != 0 && !(noIdx && st.NoIndexSkipsExact):
		return appendVarInt(dst, 7, 0x80, uint64(exact))
	}
	size := uint32(len(name)+len(value)) + entryOverhead
	if noIdx || (st.HalfTableLiteral && (size > e.max/2 || e.max < 128)) {
		return e.literal(dst, 0x00, 4, nameRef, name, value)
	}
	dst = e.literal(dst, 0x40, 6, nameRef, name, value)
	e.add(name, value)
	return dst
}

// search returns the index of an exact match (0 none) and the index whose
// name a literal should reference (0 none), per the style's rule.
func (e *encoder) search(name, value string) (exact, nameRef uint64) {
	sn, hasStatic := staticName[name]
	if e.style.NameRef == NameRefLastMatch {
		// Scan static upwards, then dynamic newest to oldest; stop at the
		// first exact match.
		if hasStatic {
			if i := staticExactIndex(sn, value); i != 0 {
				return i, i
			}
			nameRef = uint64(sn[1])
		}
		for i := len(e.dyn) - 1; i >= 0; i-- {
			if e.dyn[i].name == name {
				nameRef = uint64(62 + len(e.dyn) - 1 - i)
				if e.dyn[i].value == value {
					return nameRef, nameRef
				}
			}
		}
		return 0, nameRef
	}
	if hasStatic {
		if i := staticExactIndex(sn, value); i != 0 {
			return i, i
		}
		nameRef = uint64(sn[0])
	}
	for i := len(e.dyn) - 1; i >= 0; i-- {
		if e.dyn[i].name == name {
			idx := uint64(62 + len(e.dyn) - 1 - i)
			if nameRef == 0 {
				nameRef = idx
			}
			if e.dyn[i].value == value {
				return idx, nameRef
			}
		}
	}
	return 0, nameRef
}

// staticExactIndex returns the static index of the entry with value among
// those of one name (sn: its lowest and highest index, which are
// contiguous), or 0. An empty value matches only an entry without one.
func staticExactIndex(sn [2]uint8, value string) uint64 {
	for i := sn[0]; i <= sn[1]; i++ {
		if staticTable[i-1][1] == value {
			return uint64(i)
		}
	}
	return 0
}

func (e *encoder) literal(dst []byte, first byte, n uint8, nameRef uint64, name, value string) []byte {
	dst = appendVarInt(dst, n, first, nameRef)
	if nameRef == 0 {
		dst = e.str(dst, name)
	}
	return e.str(dst, value)
}

func (e *encoder) str(dst []byte, s string) []byte {
	huff := false
	switch e.style.Huffman {
	case HuffmanShorter:
		huff = hpack.HuffmanEncodeLength(s) < uint64(len(s))
	case HuffmanNotLonger:
		huff = hpack.HuffmanEncodeLength(s) <= uint64(len(s))
	}
	if huff {
		dst = appendVarInt(dst, 7, 0x80, hpack.HuffmanEncodeLength(s))
		return hpack.AppendHuffmanString(dst, s)
	}
	dst = appendVarInt(dst, 7, 0, uint64(len(s)))
	return append(dst, s...)
}

func (e *encoder) add(name, value string) {
	size := uint32(len(name)+len(value)) + entryOverhead
	if size > e.max {
		e.gen++
		e.dyn = e.dyn[:0]
		e.size = 0
		return
	}
	e.gen++
	e.evict(size)
	e.dyn = append(e.dyn, tableEntry{name, value})
	e.size += size
}

// evict drops the oldest entries until room more bytes fit.
func (e *encoder) evict(room uint32) {
	n := 0
	for e.size+room > e.max && n < len(e.dyn) {
		e.size -= uint32(len(e.dyn[n].name)+len(e.dyn[n].value)) + entryOverhead
		n++
	}
	if n > 0 {
		k := copy(e.dyn, e.dyn[n:])
		clear(e.dyn[k:])
		e.dyn = e.dyn[:k]
	}
}

// appendVarInt appends an HPACK integer with an n-bit prefix; first holds the
// representation's high bits.
func appendVarInt(dst []byte, n uint8, first byte, v uint64) []byte {
	k := uint64(1)<<n - 1
	if v < k {
		return append(dst, first|byte(v))
	}
	dst = append(dst, first|byte(k))
	v -= k
	for v >= 128 {
		dst = append(dst, byte(v&0x7f)|0x80)
		v >>= 7
	}
	return append(dst, byte(v))
}
