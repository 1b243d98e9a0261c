package decode

import "errors"

// ErrTooManyEncodings is returned by Chain, AppendChain and NewReader when a response
// names more than MaxCodings content codings.
var ErrTooManyEncodings = errors.New("decode: too many content codings")

// ErrDecodeLimit is returned by a decoding reader once the decoded body would exceed
// the limit given to NewReader. The bytes returned before it never exceed the limit.
var ErrDecodeLimit = errors.New("decode: decoded body exceeds limit")

// ErrClosed is returned by Read on a decoding reader after Close.
var ErrClosed = errors.New("decode: read after close")

// Error reports a body that is not a valid encoding for Coding: a bad header, corrupt
// data, a checksum mismatch, or a stream cut short (Err is then io.ErrUnexpectedEOF).
// Err is the decoder's own error and is given for information; callers branch on the
// type and on Coding. Errors of the underlying body reader are not wrapped in Error but
// returned as they are.
type Error struct {
	Coding Coding
	Err    error
}

// Error returns "decode: invalid CODING body: " followed by the decoder's message.
func (e *Error) Error() string {
	if e.Err == nil {
		return "decode: invalid " + e.Coding.String() + " body"
	}
	return "decode: invalid " + e.Coding.String() + " body: " + e.Err.Error()
}

// Unwrap returns e.Err.
func (e *Error) Unwrap() error { return e.Err }
