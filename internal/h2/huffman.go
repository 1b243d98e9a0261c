package h2

import (
	"slices"
	"strings"
	"sync"

	"golang.org/x/net/http2/hpack"
)

// A Huffman decoder for HPACK string literals (RFC 7541 5.2, Appendix B),
// table-driven where x/net's walks a tree bit by bit and writes each byte
// through a bytes.Buffer: decoding a response's literals was a sixth of the
// CPU guise spent on a small HTTP/2 request to nginx.
//
// The code is canonical: ordered by length, then by symbol, each code is
// the one before it plus one, shifted left by the difference in length.
// So a code of more than 8 bits is found from its length alone (first
// code, count and first symbol per length); codes of up to 8 bits, the
// common characters, come from a table indexed by the next 8 bits. The
// codes are read off x/net's encoder (hpackHuffman checks that they are
// canonical, and decodeHuffman falls back to x/net's decoder if they were
// not); FuzzHPACKDecoder compares the results with x/net's decoder.

// huffTables are the decoding tables.
type huffTables struct {
	ok    bool // the code is canonical; tables filled
	short [256]struct {
		sym  byte
		bits uint8 // 0: no code of at most 8 bits starts with this byte
	}
	first [31]uint32 // per length: the first code
	count [31]uint32 // per length: the number of codes
	start [31]uint16 // per length: the index in syms of the first code's symbol
	syms  []uint16   // symbols by length, then value; 256 is EOS
}

// hpackHuffman builds the tables once, from x/net's encoder: eight copies
// of a byte encode to exactly 8 times its code's length in bits, with no
// padding.
var hpackHuffman = sync.OnceValue(func() *huffTables {
	t := &huffTables{}
	var code [257]uint32
	var bits [257]uint8
	for s := range 256 {
		in := strings.Repeat(string([]byte{byte(s)}), 8)
		n := hpack.HuffmanEncodeLength(in) // bytes: 8 codes of n bits
		enc := hpack.AppendHuffmanString(nil, in)
		if n < 5 || n > 30 || uint64(len(enc)) != n {
			return t
		}
		var c uint64
		for i := range 4 { // the first n bits, from at most 4 bytes
			c <<= 8
			if i < len(enc) {
				c |= uint64(enc[i])
			}
		}
		code[s], bits[s] = uint32(c>>(32-n)), uint8(n)
	}
	code[256], bits[256] = 1<<30-1, 30 // EOS (RFC 7541 Appendix B)
	t.syms = make([]uint16, 257)
	for i := range t.syms {
		t.syms[i] = uint16(i)
	}
	slices.SortStableFunc(t.syms, func(a, b uint16) int { return int(bits[a]) - int(bits[b]) })
	var next uint32
	prev := bits[t.syms[0]]
	for i, s := range t.syms {
		n := bits[s]
		next <<= n - prev
		prev = n
		if code[s] != next {
			return t // not canonical: decodeHuffman uses x/net's decoder
		}
		if t.count[n] == 0 {
			t.first[n], t.start[n] = next, uint16(i)
		}
		t.count[n]++
		next++
		if n <= 8 {
			for j := range 1 << (8 - n) {
				e := &t.short[int(code[s])<<(8-n)|j]
				e.sym, e.bits = byte(s), n
			}
		}
	}
	t.ok = true
	return t
})

// decodeHuffman appends the decoding of src to dst. Its errors are x/net's
// for the same input (hpack.ErrInvalidHuffman): a code that is not one,
// EOS, or padding longer than 7 bits or not all ones.
func decodeHuffman(dst, src []byte) ([]byte, error) {
	t := hpackHuffman()
	if !t.ok {
		v, err := hpack.HuffmanDecodeToString(src)
		return append(dst, v...), err
	}
	var acc uint64 // the next nbits bits, from bit 63 down
	var nbits uint
	i := 0
	for {
		for nbits <= 56 && i < len(src) {
			acc |= uint64(src[i]) << (56 - nbits)
			i++
			nbits += 8
		}
		if nbits == 0 {
			return dst, nil
		}
		if e := t.short[acc>>56]; e.bits != 0 && uint(e.bits) <= nbits {
			dst = append(dst, e.sym)
			acc <<= e.bits
			nbits -= uint(e.bits)
			continue
		}
		found := false
		for n := uint(9); n <= 30 && n <= nbits; n++ {
			c := uint32(acc >> (64 - n))
			if k := c - t.first[n]; c >= t.first[n] && k < t.count[n] {
				s := t.syms[uint32(t.start[n])+k]
				if s == 256 {
					return dst, hpack.ErrInvalidHuffman // EOS in a string
				}
				dst = append(dst, byte(s))
				acc <<= n
				nbits -= n
				found = true
				break
			}
		}
		if found {
			continue
		}
		// What is left must be the padding: at most 7 bits, all ones. With
		// more bits than any code has, it is no code at all.
		if i < len(src) || nbits > 7 || acc>>(64-nbits) != 1<<nbits-1 {
			return dst, hpack.ErrInvalidHuffman
		}
		return dst, nil
	}
}
