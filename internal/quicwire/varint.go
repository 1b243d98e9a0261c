package quicwire

// MaxVarint is the largest value a QUIC variable-length integer holds.
const MaxVarint = 1<<62 - 1

// Varint reads the variable-length integer (RFC 9000 §16) at the start of
// b and returns it with the number of bytes it took; n is 0 when b is
// shorter than the encoding says.
func Varint(b []byte) (v uint64, n int) {
	if len(b) == 0 {
		return 0, 0
	}
	n = 1 << (b[0] >> 6)
	if len(b) < n {
		return 0, 0
	}
	v = uint64(b[0] & 0x3f)
	for _, c := range b[1:n] {
		v = v<<8 | uint64(c)
	}
	return v, n
}

// VarintLen is the length of the shortest encoding of v (1, 2, 4 or 8).
// v must not exceed MaxVarint.
func VarintLen(v uint64) int {
	switch {
	case v < 1<<6:
		return 1
	case v < 1<<14:
		return 2
	case v < 1<<30:
		return 4
	}
	return 8
}

// AppendVarint appends the shortest encoding of v to b. v must not exceed
// MaxVarint (the caller's invariant: the top two bits would be lost).
func AppendVarint(b []byte, v uint64) []byte {
	return AppendVarintLen(b, v, VarintLen(v))
}

// AppendVarintLen appends v in exactly n bytes (1, 2, 4 or 8), as an
// encoder that mimics a peer's non-minimal lengths must. It panics if v
// does not fit in n bytes or n is not a valid length: both are the
// caller's invariants.
func AppendVarintLen(b []byte, v uint64, n int) []byte {
	var tag byte
	switch n {
	case 1:
		tag = 0
	case 2:
		tag = 0x40
	case 4:
		tag = 0x80
	case 8:
		tag = 0xc0
	default:
		panic("quicwire: varint length not 1, 2, 4 or 8")
	}
	if v >= 1<<(8*n-2) {
		panic("quicwire: varint value does not fit its length")
	}
	for i := n - 1; i >= 0; i-- {
		c := byte(v >> (8 * i))
		if i == n-1 {
			c |= tag
		}
		b = append(b, c)
	}
	return b
}
