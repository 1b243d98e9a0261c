package ws

import (
	"testing"
	"unicode/utf8"
)

// FuzzValidPrefix checks validPrefix (with its eight-byte ASCII path)
// against unicode/utf8: a whole valid text is all valid prefix, a valid
// prefix is valid UTF-8 and leaves at most 3 bytes of a possible character,
// and the text is valid exactly when the prefix is all of it.
func FuzzValidPrefix(f *testing.F) {
	for _, s := range []string{"", "hello, world", "0123456789abcdef\xc3", "ascii then é and 日本 and 🎉", "\xed\xa0\x80", "12345678\xf4\x90", "1234567\xe2\x82"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		n, ok := validPrefix(b)
		if n < 0 || n > len(b) {
			t.Fatalf("prefix %d of %d bytes", n, len(b))
		}
		if utf8.Valid(b) != (ok && n == len(b)) {
			t.Fatalf("%q: validPrefix %d %v, utf8.Valid %v", b, n, ok, utf8.Valid(b))
		}
		if ok && (!utf8.Valid(b[:n]) || len(b)-n > 3) {
			t.Fatalf("%q: validPrefix %d %v", b, n, ok)
		}
	})
}
