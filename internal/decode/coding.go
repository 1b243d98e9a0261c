package decode

import "strconv"

// Coding is one content coding this package can undo. The zero value is not a
// valid coding.
type Coding uint8

// The content codings understood by NewReader. As in browsers, bytes after the end of
// a complete gzip or deflate stream are ignored (for gzip, unless they start another
// member, which is then decoded and must be valid); after a br or zstd stream they
// are an error.
const (
	Gzip    Coding = iota + 1 // "gzip" or "x-gzip" (RFC 1952), one or more members
	Deflate                   // "deflate": zlib (RFC 1950), or raw deflate (RFC 1951) as some servers send
	Brotli                    // "br" (RFC 7932)
	Zstd                      // "zstd" (RFC 8878), window at most MaxZstdWindow
)

// MaxCodings is the largest number of codings Chain accepts for one response, counted
// over all Content-Encoding lines together (curl CVE-2022-32206 and CVE-2023-23916).
const MaxCodings = 5

var codingNames = [...]string{Gzip: "gzip", Deflate: "deflate", Brotli: "br", Zstd: "zstd"}

// String returns the coding's token as it appears in Content-Encoding ("gzip",
// "deflate", "br", "zstd"), or "Coding(N)" for a value that is not a coding.
func (c Coding) String() string {
	if c.valid() {
		return codingNames[c]
	}
	return "Coding(" + strconv.Itoa(int(c)) + ")"
}

func (c Coding) valid() bool { return c >= Gzip && c <= Zstd }

// singles holds one-element chains so that Chain does not allocate for the usual
// response with a single coding. Slices of it are handed out read-only.
var singles = [...]Coding{Gzip, Deflate, Brotli, Zstd}

// Chain parses every Content-Encoding field value of a response (values holds the
// field lines, in order) into the codings in the order they were applied.
//
// Each line is a comma-separated list; tokens are compared case-insensitively,
// surrounding spaces and tabs are ignored, empty list members and "identity" are
// skipped, and "x-gzip" means gzip. More than MaxCodings codings in total, over all
// lines together and known or not, return ErrTooManyEncodings. If any coding is
// unknown, Chain returns ok == false and no error: the caller should then pass the
// body through undecoded and keep Content-Encoding (RFC 9110 allows no partial
// decoding). A response without codings gives (nil, true, nil).
//
// The returned slice may be shared between calls and must not be modified; use
// AppendChain to fill a buffer of the caller's own.
func Chain(values []string) (codings []Coding, ok bool, err error) {
	var buf [MaxCodings]Coding
	n, ok, err := parse(&buf, values)
	if err != nil || !ok || n == 0 {
		return nil, ok, err
	}
	if n == 1 {
		i := int(buf[0] - Gzip)
		return singles[i : i+1 : i+1], true, nil
	}
	return append([]Coding(nil), buf[:n]...), true, nil
}

// AppendChain is Chain appending to dst: it returns dst extended by the codings of
// values. It does not allocate when dst has room for them. On an error or an unknown
// coding it returns dst unchanged.
func AppendChain(dst []Coding, values []string) (codings []Coding, ok bool, err error) {
	var buf [MaxCodings]Coding
	n, ok, err := parse(&buf, values)
	if err != nil || !ok {
		return dst, ok, err
	}
	return append(dst, buf[:n]...), true, nil
}

// parse stores the codings of values in buf and returns how many there are.
func parse(buf *[MaxCodings]Coding, values []string) (n int, ok bool, err error) {
	count := 0 // codings counted, known or unknown
	ok = true
	for _, v := range values {
		for len(v) > 0 {
			var tok string
			if i := indexComma(v); i >= 0 {
				tok, v = v[:i], v[i+1:]
			} else {
				tok, v = v, ""
			}
			tok = trimOWS(tok)
			if tok == "" || equalFold(tok, "identity") {
				continue
			}
			count++
			if count > MaxCodings {
				return 0, false, ErrTooManyEncodings
			}
			c := lookup(tok)
			if c == 0 {
				ok = false
				continue
			}
			buf[n] = c
			n++
		}
	}
	if !ok {
		return 0, false, nil
	}
	return n, true, nil
}

func lookup(tok string) Coding {
	switch {
	case equalFold(tok, "gzip"), equalFold(tok, "x-gzip"):
		return Gzip
	case equalFold(tok, "br"):
		return Brotli
	case equalFold(tok, "zstd"):
		return Zstd
	case equalFold(tok, "deflate"):
		return Deflate
	}
	return 0
}

func indexComma(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] == ',' {
			return i
		}
	}
	return -1
}

func trimOWS(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}

// equalFold reports whether s equals the lower-case ASCII token t, ignoring ASCII case.
func equalFold(s, t string) bool {
	if len(s) != len(t) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != t[i] {
			return false
		}
	}
	return true
}
