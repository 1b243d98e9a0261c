// Package qpackref decodes QPACK field sections with the static table
// through github.com/quic-go/qpack: an implementation independent of
// guise's own (internal/h3), for the fingerprint recorder and as the
// oracle of internal/h3's tests. The client never imports it, so the
// bench module may build the client against another qpack version.
package qpackref

import (
	"errors"
	"io"

	"github.com/guise-http/guise/internal/h3wire"
	"github.com/guise-http/guise/internal/quicwire"
	"github.com/quic-go/qpack"
)

// FieldSection is a decoded HEADERS payload: its QPACK prefix and fields.
type FieldSection struct {
	// RequiredInsertCount and DeltaBase are the encoded field section
	// prefix (RFC 9204 §4.5.1) as sent: zero for a section that uses no
	// dynamic table.
	RequiredInsertCount, DeltaBase uint64
	Fields                         []h3wire.Field
}

// DecodeFieldSection decodes the QPACK field section block (a HEADERS
// frame's payload) with the static table. A section that needs the
// dynamic table is h3wire.ErrQPACK, as it is for a peer that was allowed none; a
// section whose decoded size exceeds max (name + value + 32 per field) is
// h3wire.ErrFieldSectionTooLarge, checked field by field so a small block cannot
// make decoding allocate much beyond max.
func DecodeFieldSection(block []byte, max int) (*FieldSection, error) {
	fs := &FieldSection{}
	ric, n := prefixInt(block, 8)
	if n == 0 {
		return nil, &h3wire.Error{What: "field section prefix", Err: h3wire.ErrQPACK, Cause: io.ErrUnexpectedEOF}
	}
	base, m := prefixInt(block[n:], 7)
	if m == 0 {
		return nil, &h3wire.Error{What: "field section prefix", Offset: n, Err: h3wire.ErrQPACK, Cause: io.ErrUnexpectedEOF}
	}
	fs.RequiredInsertCount, fs.DeltaBase = ric, base
	if ric != 0 {
		return fs, &h3wire.Error{What: "field section prefix", Err: h3wire.ErrQPACK, Cause: errors.New("refers to the dynamic table")}
	}
	next := qpack.NewDecoder().Decode(block)
	size := 0
	for {
		hf, err := next()
		if err == io.EOF {
			return fs, nil
		}
		if err != nil {
			return fs, &h3wire.Error{What: "field line", Err: h3wire.ErrQPACK, Cause: err}
		}
		size += len(hf.Name) + len(hf.Value) + 32
		if size > max {
			return fs, &h3wire.Error{What: "field section", Err: h3wire.ErrFieldSectionTooLarge}
		}
		fs.Fields = append(fs.Fields, h3wire.Field{Name: hf.Name, Value: hf.Value})
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
