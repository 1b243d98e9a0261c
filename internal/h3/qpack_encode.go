package h3

import "golang.org/x/net/http2/hpack"

// HuffmanRule says when a QPACK string literal is Huffman-coded.
type HuffmanRule uint8

const (
	// HuffmanShorter codes a string only when that is strictly shorter
	// (Chromium: "?0" and "?1" go raw in its recordings).
	HuffmanShorter HuffmanRule = iota
	// HuffmanNotLonger codes a string unless that is longer (Firefox:
	// "u=4" is coded at the same length in its recordings).
	HuffmanNotLonger
	// HuffmanNever sends every string raw.
	HuffmanNever
)

// encoder writes request field sections as the recorded browsers do when
// the server allows no dynamic table (Required Insert Count 0 in every
// recording): an indexed static line for an exact static match, a literal
// with a static name reference for a name match (the lowest index
// carrying the name), else a literal with a literal name; the N bit is
// never set. It holds no state beyond its rule.
type encoder struct {
	huffman HuffmanRule
}

// appendPrefix appends the encoded field section prefix for a section
// that uses no dynamic table.
func (e *encoder) appendPrefix(b []byte) []byte { return append(b, 0, 0) }

// appendField appends one field line.
func (e *encoder) appendField(b []byte, name, value string) []byte {
	idx, exact, ok := staticLookup(name, value)
	switch {
	case exact:
		return appendPrefixInt(b, 0xc0, 6, idx) // 1 T=1 index
	case ok:
		b = appendPrefixInt(b, 0x50, 4, idx) // 01 N=0 T=1 index
		return e.appendString(b, 7, value)
	}
	b = e.appendStringFirst(b, 0x20, 3, name) // 001 N=0 H name
	return e.appendString(b, 7, value)
}

// appendString appends a string literal with a bits-bit length prefix
// whose H flag is the bit just above it, and nothing else in the byte.
func (e *encoder) appendString(b []byte, bits uint, s string) []byte {
	return e.appendStringFirst(b, 0, bits, s)
}

func (e *encoder) appendStringFirst(b []byte, first byte, bits uint, s string) []byte {
	if e.useHuffman(s) {
		b = appendPrefixInt(b, first|1<<bits, bits, hpack.HuffmanEncodeLength(s))
		return hpack.AppendHuffmanString(b, s)
	}
	b = appendPrefixInt(b, first, bits, uint64(len(s)))
	return append(b, s...)
}

func (e *encoder) useHuffman(s string) bool {
	switch e.huffman {
	case HuffmanNotLonger:
		return hpack.HuffmanEncodeLength(s) <= uint64(len(s))
	case HuffmanNever:
		return false
	}
	return hpack.HuffmanEncodeLength(s) < uint64(len(s))
}

// appendPrefixInt appends v as a prefixed integer (RFC 9204 §4.1.1) of
// bits bits after the pattern bits in first.
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
