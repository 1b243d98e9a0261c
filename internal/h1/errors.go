package h1

import (
	"errors"
	"io"
	"os"
)

// ErrRefusedToSend is wrapped by the error RoundTrip returns when the request
// itself is invalid (a method that is not a token, a control byte in the
// target, a field name that is not a token, a field value with CR, LF or NUL,
// conflicting framing). Nothing has been written to the connection.
var ErrRefusedToSend = errors.New("h1: refused to send invalid request")

// ErrChunked matches (with errors.Is) every *ProtocolError about chunked
// transfer coding, including its trailer section.
var ErrChunked = errors.New("h1: malformed chunked encoding")

// ErrHeaderTooLarge is returned when a response head (together with the 1xx
// heads before it) exceeds Config.MaxHeaderBytes, and wrapped in a trailer
// error when a trailer section exceeds Config.MaxTrailerBytes.
var ErrHeaderTooLarge = errors.New("h1: response head too large")

// ErrTooManyHeaders is returned when a response head holds more than
// Config.MaxHeaders fields, and wrapped when a trailer section does.
var ErrTooManyHeaders = errors.New("h1: too many header fields")

// ErrTooMany1xx is returned when more than Config.Max1xx informational
// responses precede the final response.
var ErrTooMany1xx = errors.New("h1: too many 1xx informational responses")

// ErrNoResponse is wrapped when the connection was closed or reset before a
// single byte of the response arrived (this includes failing to write the
// request). On a reused connection (Conn.Requests() > 1) it usually means the
// server closed an idle connection, and an idempotent request may be retried
// once on a new connection.
var ErrNoResponse = errors.New("h1: connection closed before any response byte arrived")

// ErrBodyLength is wrapped when a request body does not match its declared
// length. Part of the request may have been sent; the connection is closed.
var ErrBodyLength = errors.New("h1: request body length does not match Content-Length")

// ErrBodyTruncated is returned by Body.Read when the connection ends before
// the body's framing is complete (short Content-Length body, missing last
// chunk). It wraps io.ErrUnexpectedEOF. The bytes that did arrive were
// delivered before it.
var ErrBodyTruncated error = truncatedError{}

type truncatedError struct{}

func (truncatedError) Error() string { return "h1: response body truncated" }
func (truncatedError) Unwrap() error { return io.ErrUnexpectedEOF }

// ProtocolError reports a malformed response. Kind names what was malformed
// ("status line", "version", "status", "header name", "header value",
// "line ending", "content-length", "transfer-encoding", "chunked", "trailer",
// ...). Detail describes it; any peer bytes in it are quoted with %q, so the
// error string never carries raw control bytes.
type ProtocolError struct {
	Kind   string
	Detail string
	// Err, if set, is a sentinel the error also matches (ErrHeaderTooLarge,
	// ErrTooManyHeaders for oversized trailers).
	Err error
}

func (e *ProtocolError) Error() string {
	return "h1: malformed " + e.Kind + ": " + e.Detail
}

// Unwrap returns e.Err.
func (e *ProtocolError) Unwrap() error { return e.Err }

// Is reports whether target is ErrChunked and e is about chunked coding.
func (e *ProtocolError) Is(target error) bool {
	return target == ErrChunked && (e.Kind == "chunked" || e.Kind == "trailer")
}

// Phase names the wait a TimeoutError expired in.
type Phase uint8

const (
	// PhaseHead is the wait for the response head, bounded by
	// Request.HeadTimeout from the end of the request write.
	PhaseHead Phase = iota + 1
	// PhaseBodyIdle is one body read that made no progress within
	// Request.BodyIdleTimeout.
	PhaseBodyIdle
	// PhaseExpect is the wait for "100 Continue". Its expiry alone is not an
	// error (the body is then sent); the constant exists so the phase can be
	// named in traces.
	PhaseExpect
)

var phaseNames = [...]string{"", "response head", "body idle", "expect 100-continue"}

// String returns the phase's name, e.g. "response head".
func (p Phase) String() string {
	if int(p) < len(phaseNames) && p != 0 {
		return phaseNames[p]
	}
	return "unknown phase"
}

// TimeoutError is returned when a per-phase timeout of Request expires. It
// wraps os.ErrDeadlineExceeded. The connection has been closed.
type TimeoutError struct {
	Phase Phase
}

func (e *TimeoutError) Error() string { return "h1: timeout waiting for " + e.Phase.String() }

// Timeout reports true.
func (e *TimeoutError) Timeout() bool { return true }

// Unwrap returns os.ErrDeadlineExceeded.
func (e *TimeoutError) Unwrap() error { return os.ErrDeadlineExceeded }
