package h3wire

// Field is one decoded field line, in wire order.
type Field struct {
	Name, Value string
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
