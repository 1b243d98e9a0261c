package fingerprint

// byteReader is a bounds-checked cursor over a byte slice. base is the
// offset of b[0] in the parser's input, for error offsets. Every read checks
// the remaining length first, so no read can go out of range.
type byteReader struct {
	b    []byte
	pos  int
	base int
}

func (r *byteReader) off() int    { return r.base + r.pos }
func (r *byteReader) left() int   { return len(r.b) - r.pos }
func (r *byteReader) empty() bool { return r.pos >= len(r.b) }

func (r *byteReader) u8() (byte, bool) {
	if r.left() < 1 {
		return 0, false
	}
	v := r.b[r.pos]
	r.pos++
	return v, true
}

func (r *byteReader) u16() (uint16, bool) {
	if r.left() < 2 {
		return 0, false
	}
	v := uint16(r.b[r.pos])<<8 | uint16(r.b[r.pos+1])
	r.pos += 2
	return v, true
}

func (r *byteReader) u24() (int, bool) {
	if r.left() < 3 {
		return 0, false
	}
	v := int(r.b[r.pos])<<16 | int(r.b[r.pos+1])<<8 | int(r.b[r.pos+2])
	r.pos += 3
	return v, true
}

func (r *byteReader) bytes(n int) ([]byte, bool) {
	if n < 0 || r.left() < n {
		return nil, false
	}
	v := r.b[r.pos : r.pos+n : r.pos+n]
	r.pos += n
	return v, true
}

// vec8 reads a vector with a one-byte length prefix and returns a reader
// over its contents.
func (r *byteReader) vec8() (byteReader, bool) {
	start := r.off() + 1
	n, ok := r.u8()
	if !ok {
		return byteReader{}, false
	}
	b, ok := r.bytes(int(n))
	return byteReader{b: b, base: start}, ok
}

// vec16 reads a vector with a two-byte length prefix.
func (r *byteReader) vec16() (byteReader, bool) {
	start := r.off() + 2
	n, ok := r.u16()
	if !ok {
		return byteReader{}, false
	}
	b, ok := r.bytes(int(n))
	return byteReader{b: b, base: start}, ok
}

// u16s reads the rest of r as big-endian uint16 values. It fails on an odd
// length.
func (r *byteReader) u16s() ([]uint16, bool) {
	if r.left()%2 != 0 {
		return nil, false
	}
	out := make([]uint16, 0, r.left()/2)
	for !r.empty() {
		v, _ := r.u16()
		out = append(out, v)
	}
	return out, true
}
