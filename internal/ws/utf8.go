package ws

import (
	"encoding/binary"
	"unicode/utf8"
)

// validPrefix checks b as the start of a UTF-8 text that may go on. It
// returns how many bytes of b are whole valid characters, and false when b
// holds an invalid sequence; up to 3 bytes at the end that may still become
// a character are left for the next call.
func validPrefix(b []byte) (int, bool) {
	i := 0
	for i < len(b) {
		// ASCII eight bytes at a time, as unicode/utf8.Valid does: most
		// text messages are mostly ASCII.
		for len(b)-i >= 8 && binary.LittleEndian.Uint64(b[i:])&0x8080808080808080 == 0 {
			i += 8
		}
		if i == len(b) {
			break
		}
		if b[i] < utf8.RuneSelf {
			i++
			continue
		}
		if !utf8.FullRune(b[i:]) {
			return i, possibleStart(b[i:])
		}
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i, false
		}
		i += n
	}
	return i, true
}

// possibleStart reports whether b, shorter than its character, can still
// become a valid one: a lead byte with the continuation bytes it allows so
// far (RFC 3629's table, surrogates and values past U+10FFFF excluded).
func possibleStart(b []byte) bool {
	lo, hi := byte(0x80), byte(0xbf)
	switch c := b[0]; {
	case c >= 0xc2 && c <= 0xdf, c >= 0xe1 && c <= 0xec, c == 0xee, c == 0xef, c >= 0xf1 && c <= 0xf3:
	case c == 0xe0:
		lo = 0xa0
	case c == 0xed:
		hi = 0x9f
	case c == 0xf0:
		lo = 0x90
	case c == 0xf4:
		hi = 0x8f
	default:
		return false
	}
	for i, c := range b[1:] {
		if i == 0 && (c < lo || c > hi) || i > 0 && (c < 0x80 || c > 0xbf) {
			return false
		}
	}
	return true
}
