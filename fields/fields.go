// Package fields holds ordered HTTP header fields as they go on the wire.
// guise.Header and guise.Field are this package's Header and Field; profile
// and fingerprint use them too, so one header list passes between all three
// without conversion.
//
// A header list is a slice of (name, value) pairs kept in the order and case the
// caller gave: on the wire both are part of a browser's fingerprint, so nothing
// here canonicalises a name or sorts a list. Lookups are linear; header lists
// are short and a linear scan beats a map at that size.
package fields

import "strings"

// Field is one header field. Name keeps its case as given.
type Field struct {
	Name  string
	Value string
}

// Header is an ordered list of header fields. The zero value is an empty list.
// Methods that look up a name compare case-insensitively (ASCII).
type Header []Field

// Get returns the value of the first field named name, or "".
func (h Header) Get(name string) string {
	for i := range h {
		if EqualFold(h[i].Name, name) {
			return h[i].Value
		}
	}
	return ""
}

// Lookup returns the value of the first field named name and whether one exists.
func (h Header) Lookup(name string) (string, bool) {
	for i := range h {
		if EqualFold(h[i].Name, name) {
			return h[i].Value, true
		}
	}
	return "", false
}

// Values returns the values of every field named name, in order.
func (h Header) Values(name string) []string {
	var vs []string
	for i := range h {
		if EqualFold(h[i].Name, name) {
			vs = append(vs, h[i].Value)
		}
	}
	return vs
}

// Has reports whether a field named name exists.
func (h Header) Has(name string) bool {
	_, ok := h.Lookup(name)
	return ok
}

// Add appends a field.
func (h *Header) Add(name, value string) { *h = append(*h, Field{name, value}) }

// Set replaces the value of the first field named name, keeping its position
// and case, and removes any later fields of that name. It appends the field if
// none exists.
func (h *Header) Set(name, value string) {
	l := *h
	for i := range l {
		if EqualFold(l[i].Name, name) {
			l[i].Value = value
			*h = append(l[:i+1], l[i+1:].Del(name)...)
			return
		}
	}
	*h = append(l, Field{name, value})
}

// Del removes every field named name and returns the shortened list. It
// reuses h's backing array.
func (h Header) Del(name string) Header {
	out := h[:0]
	for _, f := range h {
		if !EqualFold(f.Name, name) {
			out = append(out, f)
		}
	}
	clear(h[len(out):])
	return out
}

// Clone returns a copy of h that shares no backing array with it.
func (h Header) Clone() Header {
	if h == nil {
		return nil
	}
	return append(Header(nil), h...)
}

// EqualFold reports whether a and b are equal under ASCII case folding. It does
// no Unicode folding: header names are ASCII tokens.
func EqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if x == y {
			continue
		}
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// Merge appends to dst the fields of defaults in their order, with a
// caller's field replacing the default of the same name in place (keeping the
// caller's case and value), followed by the caller's fields that have no
// default, in the caller's order. Merge allocates nothing when dst has room.
func Merge(dst Header, defaults, user Header) Header {
	for _, d := range defaults {
		if i := user.index(d.Name); i >= 0 {
			// Several user fields of one name all go where the default stood.
			for _, u := range user[i:] {
				if EqualFold(u.Name, d.Name) {
					dst = append(dst, u)
				}
			}
			continue
		}
		dst = append(dst, d)
	}
	for _, u := range user {
		if defaults.index(u.Name) < 0 {
			dst = append(dst, u)
		}
	}
	return dst
}

func (h Header) index(name string) int {
	for i := range h {
		if EqualFold(h[i].Name, name) {
			return i
		}
	}
	return -1
}

// ValidName reports whether name is a non-empty RFC 9110 token.
func ValidName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		if !IsTokenByte(name[i]) {
			return false
		}
	}
	return true
}

// ValidValue reports whether value may be sent as a field value: no CR, LF
// or NUL, no other control byte but HTAB, and no leading or trailing
// whitespace (which a peer would strip, changing what was sent).
func ValidValue(value string) bool {
	for i := 0; i < len(value); i++ {
		c := value[i]
		if c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return len(value) == 0 || (value[0] != ' ' && value[0] != '\t' &&
		value[len(value)-1] != ' ' && value[len(value)-1] != '\t')
}

// IsTokenByte reports whether c may appear in an RFC 9110 token.
func IsTokenByte(c byte) bool { return c < 0x80 && tokenTable[c] }

var tokenTable = [128]bool{
	'!': true, '#': true, '$': true, '%': true, '&': true, '\'': true, '*': true,
	'+': true, '-': true, '.': true, '^': true, '_': true, '`': true, '|': true, '~': true,
	'0': true, '1': true, '2': true, '3': true, '4': true, '5': true, '6': true, '7': true, '8': true, '9': true,
	'A': true, 'B': true, 'C': true, 'D': true, 'E': true, 'F': true, 'G': true, 'H': true, 'I': true,
	'J': true, 'K': true, 'L': true, 'M': true, 'N': true, 'O': true, 'P': true, 'Q': true, 'R': true,
	'S': true, 'T': true, 'U': true, 'V': true, 'W': true, 'X': true, 'Y': true, 'Z': true,
	'a': true, 'b': true, 'c': true, 'd': true, 'e': true, 'f': true, 'g': true, 'h': true, 'i': true,
	'j': true, 'k': true, 'l': true, 'm': true, 'n': true, 'o': true, 'p': true, 'q': true, 'r': true,
	's': true, 't': true, 'u': true, 'v': true, 'w': true, 'x': true, 'y': true, 'z': true,
}

// HasToken reports whether the comma-separated list v contains token t,
// compared case-insensitively, ignoring optional whitespace.
func HasToken(v, t string) bool {
	for v != "" {
		var part string
		part, v, _ = strings.Cut(v, ",")
		if EqualFold(strings.Trim(part, " \t"), t) {
			return true
		}
	}
	return false
}
