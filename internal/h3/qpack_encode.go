package h3

import (
	"sync"

	"golang.org/x/net/http2/hpack"
)

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
// never set. Its only state beyond its rule is a cache of the strings it
// Huffman-coded: a browser sends the same field values on every request
// of a connection (user-agent, accept, sec-ch-ua), and looking one up
// costs less than coding it again.
type encoder struct {
	huffman HuffmanRule

	mu    sync.Mutex
	coded map[string]codedString
}

// codedString is a cached string's coding: its Huffman code, or raw.
type codedString struct {
	h   string
	huf bool
}

// The cache holds strings of codedMin to codedMax bytes, at most
// codedEntries of them (then it is cleared): shorter ones cost nothing to
// code, longer ones are rare.
const (
	codedMin     = 8
	codedMax     = 1024
	codedEntries = 128
)

// appendPrefix appends the encoded field section prefix for a section
// that uses no dynamic table.
func (e *encoder) appendPrefix(b []byte) []byte { return append(b, 0, 0) }

// appendField appends one field line.
func (e *encoder) appendField(b []byte, name, value string) []byte {
	return e.appendFieldCache(b, name, value, true)
}

// appendFieldCache is appendField, its strings cached when cache is set
// (not for a value that changes with every request, such as :path).
func (e *encoder) appendFieldCache(b []byte, name, value string, cache bool) []byte {
	idx, exact, ok := staticLookup(name, value)
	switch {
	case exact:
		return appendPrefixInt(b, 0xc0, 6, idx) // 1 T=1 index
	case ok:
		b = appendPrefixInt(b, 0x50, 4, idx) // 01 N=0 T=1 index
		return e.appendStringFirst(b, 0, 7, value, cache)
	}
	b = e.appendStringFirst(b, 0x20, 3, name, cache) // 001 N=0 H name
	return e.appendStringFirst(b, 0, 7, value, cache)
}

// appendString appends a string literal with a bits-bit length prefix
// whose H flag is the bit just above it, and nothing else in the byte,
// coded now (not through the cache).
func (e *encoder) appendString(b []byte, bits uint, s string) []byte {
	return e.appendStringFirst(b, 0, bits, s, false)
}

// appendStringFirst appends a string literal with a bits-bit length
// prefix whose H flag is the bit just above it, after first's bits.
func (e *encoder) appendStringFirst(b []byte, first byte, bits uint, s string, cache bool) []byte {
	if cache && len(s) >= codedMin && len(s) <= codedMax {
		c := e.code(s)
		if c.huf {
			b = appendPrefixInt(b, first|1<<bits, bits, uint64(len(c.h)))
			return append(b, c.h...)
		}
		b = appendPrefixInt(b, first, bits, uint64(len(s)))
		return append(b, s...)
	}
	if e.useHuffman(s) {
		b = appendPrefixInt(b, first|1<<bits, bits, hpack.HuffmanEncodeLength(s))
		return hpack.AppendHuffmanString(b, s)
	}
	b = appendPrefixInt(b, first, bits, uint64(len(s)))
	return append(b, s...)
}

// code returns s's coding under the rule, from the cache or coded now and
// cached.
func (e *encoder) code(s string) codedString {
	e.mu.Lock()
	defer e.mu.Unlock()
	if c, ok := e.coded[s]; ok {
		return c
	}
	var c codedString
	if e.useHuffman(s) {
		c = codedString{h: string(hpack.AppendHuffmanString(nil, s)), huf: true}
	}
	if e.coded == nil || len(e.coded) >= codedEntries {
		e.coded = make(map[string]codedString, 16)
	}
	e.coded[s] = c
	return c
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
