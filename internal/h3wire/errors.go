package h3wire

import (
	"errors"
	"strconv"
)

// Sentinel causes carried by *Error; test them with errors.Is.
var (
	// ErrTruncated means the input ended inside the structure being read:
	// more stream bytes may complete it.
	ErrTruncated = errors.New("h3wire: input truncated")
	// ErrMalformed means a frame or field violates RFC 9114's encoding
	// (H3_FRAME_ERROR, H3_SETTINGS_ERROR).
	ErrMalformed = errors.New("h3wire: input malformed")
	// ErrReservedFrame means an HTTP/2 frame type RFC 9114 §7.2.8 reserves
	// (H3_FRAME_UNEXPECTED).
	ErrReservedFrame = errors.New("h3wire: reserved http/2 frame type")
	// ErrQPACK means a field section could not be decoded
	// (QPACK_DECOMPRESSION_FAILED), including one that refers to a dynamic
	// table.
	ErrQPACK = errors.New("h3wire: qpack decompression failed")
	// ErrFieldSectionTooLarge means a decoded field section exceeds the
	// caller's limit (counted as RFC 9114 §4.2.2 does: name, value and 32
	// bytes per field).
	ErrFieldSectionTooLarge = errors.New("h3wire: field section too large")
)

// Error reports what was being read, where, and why it failed.
type Error struct {
	What   string
	Offset int
	Err    error // one of the sentinels
	// Cause is the underlying decoder's error for ErrQPACK, else nil. It
	// is not part of the contract beyond its message.
	Cause error
}

// Error returns a lowercase message.
func (e *Error) Error() string {
	s := e.Err.Error() + ": " + e.What + " at offset " + strconv.Itoa(e.Offset)
	if e.Cause != nil {
		s += ": " + e.Cause.Error()
	}
	return s
}

// Unwrap returns the sentinel.
func (e *Error) Unwrap() error { return e.Err }

func truncated(what string, off int) error { return &Error{What: what, Offset: off, Err: ErrTruncated} }
func malformed(what string, off int) error { return &Error{What: what, Offset: off, Err: ErrMalformed} }
