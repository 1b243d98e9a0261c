package fingerprint

import (
	"errors"
	"strconv"
)

// Sentinel causes carried by *ParseError; test them with errors.Is.
var (
	// ErrTruncated means the input ended before the structure being parsed
	// was complete. More bytes from the peer may complete it.
	ErrTruncated = errors.New("fingerprint: input truncated")
	// ErrMalformed means the input violates the protocol's framing; more
	// bytes cannot fix it.
	ErrMalformed = errors.New("fingerprint: input malformed")
	// ErrNotClientHello means the bytes are not a TLS handshake record
	// carrying a ClientHello (for example a plain HTTP request on a TLS port).
	ErrNotClientHello = errors.New("fingerprint: not a tls clienthello")
)

// ParseError reports where and why a parser gave up. Err is one of
// ErrTruncated, ErrMalformed or ErrNotClientHello, and Unwrap returns it, so
// callers branch with errors.Is(err, ErrTruncated) and read the details with
// errors.As.
type ParseError struct {
	Proto string // "tls", "h2" or "h1"
	What  string // the structure being parsed, e.g. "cipher_suites"
	// Offset is the byte offset in the parser's input where the problem
	// starts; inside a ClientHello that spans several records, it counts in
	// the reassembled handshake message instead.
	Offset int
	Err    error // ErrTruncated, ErrMalformed or ErrNotClientHello
}

// Error returns a lowercase message naming the protocol, the structure and
// the offset.
func (e *ParseError) Error() string {
	kind := "malformed"
	switch e.Err {
	case ErrTruncated:
		kind = "truncated"
	case ErrNotClientHello:
		kind = "not a clienthello:"
	}
	return "fingerprint: " + e.Proto + ": " + kind + " " + e.What + " at offset " + strconv.Itoa(e.Offset)
}

// Unwrap returns the sentinel cause.
func (e *ParseError) Unwrap() error { return e.Err }

func truncated(proto, what string, off int) error {
	return &ParseError{Proto: proto, What: what, Offset: off, Err: ErrTruncated}
}

func malformed(proto, what string, off int) error {
	return &ParseError{Proto: proto, What: what, Offset: off, Err: ErrMalformed}
}
