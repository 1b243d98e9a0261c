package h3wire

import (
	"errors"
	"io"

	"github.com/guise-http/guise/internal/quicwire"
	"github.com/quic-go/qpack"
)

// Field is one decoded field line, in wire order.
type Field struct {
	Name, Value string
}

// FieldSection is a decoded HEADERS payload: its QPACK prefix and fields.
type FieldSection struct {
	// RequiredInsertCount and DeltaBase are the encoded field section
	// prefix (RFC 9204 §4.5.1) as sent: zero for a section that uses no
	// dynamic table.
	RequiredInsertCount, DeltaBase uint64
	Fields                         []Field
}

// DecodeFieldSection decodes the QPACK field section block (a HEADERS
// frame's payload) with the static table. A section that needs the
// dynamic table is ErrQPACK, as it is for a peer that was allowed none; a
// section whose decoded size exceeds max (name + value + 32 per field) is
// ErrFieldSectionTooLarge, checked field by field so a small block cannot
// make decoding allocate much beyond max.
func DecodeFieldSection(block []byte, max int) (*FieldSection, error) {
	fs := &FieldSection{}
	ric, n := prefixInt(block, 8)
	if n == 0 {
		return nil, &Error{What: "field section prefix", Err: ErrQPACK, Cause: io.ErrUnexpectedEOF}
	}
	base, m := prefixInt(block[n:], 7)
	if m == 0 {
		return nil, &Error{What: "field section prefix", Offset: n, Err: ErrQPACK, Cause: io.ErrUnexpectedEOF}
	}
	fs.RequiredInsertCount, fs.DeltaBase = ric, base
	if ric != 0 {
		return fs, &Error{What: "field section prefix", Err: ErrQPACK, Cause: errors.New("refers to the dynamic table")}
	}
	next := qpack.NewDecoder().Decode(block)
	size := 0
	for {
		hf, err := next()
		if err == io.EOF {
			return fs, nil
		}
		if err != nil {
			return fs, &Error{What: "field line", Err: ErrQPACK, Cause: err}
		}
		size += len(hf.Name) + len(hf.Value) + 32
		if size > max {
			return fs, &Error{What: "field section", Err: ErrFieldSectionTooLarge}
		}
		fs.Fields = append(fs.Fields, Field{Name: hf.Name, Value: hf.Value})
	}
}

// prefixInt reads a QPACK prefixed integer (RFC 9204 §4.1.1, HPACK's
// §5.1) whose prefix is the low bits bits of b[0]; n is 0 when b is too
// short or the value overflows 62 bits.
func prefixInt(b []byte, bits uint) (v uint64, n int) {
	if len(b) == 0 {
		return 0, 0
	}
	mask := uint64(1)<<bits - 1
	v = uint64(b[0]) & mask
	if v < mask {
		return v, 1
	}
	var shift uint
	for i := 1; i < len(b); i++ {
		if shift > 56 {
			return 0, 0
		}
		v += uint64(b[i]&0x7f) << shift
		shift += 7
		if b[i]&0x80 == 0 {
			if v > quicwire.MaxVarint {
				return 0, 0
			}
			return v, i + 1
		}
	}
	return 0, 0
}

// staticStatus200 is ":status: 200" in the static table (RFC 9204
// Appendix A).
const staticStatus200 = 25

// AppendResponseSection appends a field section block with :status 200
// and the given fields, encoded without the dynamic table and without
// Huffman coding: indexed :status, then literal names and values. It is
// for test servers and the fingerprint recorder, not a general encoder.
func AppendResponseSection(b []byte, fields ...Field) []byte {
	b = append(b, 0, 0)                 // Required Insert Count 0, Base 0
	b = append(b, 0xc0|staticStatus200) // indexed field line, static
	for _, f := range fields {
		b = appendPrefixInt(b, 0x20, 3, uint64(len(f.Name))) // literal with literal name, N=0, H=0
		b = append(b, f.Name...)
		b = appendPrefixInt(b, 0x00, 7, uint64(len(f.Value)))
		b = append(b, f.Value...)
	}
	return b
}

// appendPrefixInt appends v as a prefixed integer of bits bits after the
// pattern bits in first.
func appendPrefixInt(b []byte, first byte, bits uint, v uint64) []byte {
	mask := uint64(1)<<bits - 1
	if v < mask {
		return append(b, first|byte(v))
	}
	b = append(b, first|byte(mask))
	v -= mask
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}
