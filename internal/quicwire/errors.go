package quicwire

import (
	"errors"
	"strconv"
)

// Sentinel causes carried by *Error; test them with errors.Is.
var (
	// ErrTruncated means the input ended inside the structure being read.
	ErrTruncated = errors.New("quicwire: input truncated")
	// ErrMalformed means the input breaks the encoding rules of RFC 9000.
	ErrMalformed = errors.New("quicwire: input malformed")
	// ErrVersion means the packet is of a QUIC version this package does
	// not decrypt (only version 1 is), or a Version Negotiation packet.
	ErrVersion = errors.New("quicwire: unsupported quic version")
	// ErrDecrypt means packet protection could not be removed: the AEAD
	// tag did not verify under the keys tried.
	ErrDecrypt = errors.New("quicwire: packet decryption failed")
	// ErrFrameNotAllowed means a frame type that RFC 9000 §12.4 forbids in
	// the packet's number space (or one this package does not know).
	ErrFrameNotAllowed = errors.New("quicwire: frame not allowed in packet")
)

// Error reports what was being read, where, and why it failed. Err is one
// of the sentinels above and is returned by Unwrap.
type Error struct {
	What   string // the structure, e.g. "long header", "CRYPTO frame"
	Offset int    // byte offset in the function's input
	Err    error
}

// Error returns a lowercase message naming the structure and offset.
func (e *Error) Error() string {
	return e.Err.Error() + ": " + e.What + " at offset " + strconv.Itoa(e.Offset)
}

// Unwrap returns the sentinel cause.
func (e *Error) Unwrap() error { return e.Err }

func truncated(what string, off int) error {
	return &Error{What: what, Offset: off, Err: ErrTruncated}
}

func malformed(what string, off int) error {
	return &Error{What: what, Offset: off, Err: ErrMalformed}
}
