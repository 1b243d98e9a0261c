package h2

import (
	"errors"
	"fmt"
	"os"
)

// ConnectionError is a connection-level HTTP/2 error that we detected in
// what the peer sent: the connection is closed with GOAWAY carrying Code
// (PROTOCOL_ERROR, FLOW_CONTROL_ERROR, FRAME_SIZE_ERROR, COMPRESSION_ERROR,
// ENHANCE_YOUR_CALM for a flood of frames, ...), and every request on it
// fails with this error. Reason describes what the peer did wrong, for
// people; branch on Code. Cause, when set, is a sentinel the error also
// matches with errors.Is: ErrFrameTooLarge or ErrHeaderListTooLarge.
type ConnectionError struct {
	Code   ErrCode
	Reason string
	Cause  error
}

func (e ConnectionError) Error() string {
	if e.Reason == "" {
		return "h2: connection error: " + e.Code.String()
	}
	return fmt.Sprintf("h2: connection error: %v: %s", e.Code, e.Reason)
}

// Unwrap returns the cause, if any.
func (e ConnectionError) Unwrap() error { return e.Cause }

// StreamError is an error on one stream, which is reset; the connection
// stays usable. Cause is nil when the peer reset the stream (RST_STREAM
// with Code); otherwise we reset it, with Code, because of Cause (a
// malformed response such as a missing :status, or ErrHeaderListTooLarge).
// A StreamError with REFUSED_STREAM matches ErrRefusedStream with
// errors.Is.
type StreamError struct {
	StreamID uint32
	Code     ErrCode
	Cause    error
}

func (e StreamError) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("h2: stream %d: %v: %v", e.StreamID, e.Code, e.Cause)
	}
	return fmt.Sprintf("h2: stream %d reset by peer: %v", e.StreamID, e.Code)
}

// Unwrap returns the cause.
func (e StreamError) Unwrap() error { return e.Cause }

// Is reports whether target is ErrRefusedStream and the code REFUSED_STREAM.
func (e StreamError) Is(target error) bool {
	return target == ErrRefusedStream && e.Code == ErrCodeRefusedStream
}

// GoAwayError is the GOAWAY the peer sent, returned for streams that did not
// complete because of it: those above LastStreamID, which the server did not
// process (CanRetry reports true for them), and those at or below it when
// the connection then ended before they did. Code is the peer's error code
// (NO_ERROR for a graceful shutdown) and DebugData its opaque debug data.
type GoAwayError struct {
	LastStreamID uint32
	Code         ErrCode
	DebugData    string
}

func (e GoAwayError) Error() string {
	return fmt.Sprintf("h2: server sent GOAWAY (last stream %d, %v, debug %q)", e.LastStreamID, e.Code, e.DebugData)
}

// Phase names the wait a TimeoutError expired in.
type Phase uint8

const (
	// PhaseHead is the wait for the response head, bounded by
	// Request.HeadTimeout.
	PhaseHead Phase = iota + 1
	// PhaseBodyIdle is a body read that got no bytes within
	// Request.BodyIdleTimeout.
	PhaseBodyIdle
	// PhasePing is the wait for the acknowledgement of a health-check PING
	// (Config.ReadIdleTimeout, Config.PingTimeout); its expiry fails the
	// whole connection.
	PhasePing
)

var phaseNames = [...]string{"", "response head", "body idle", "ping ack"}

// String returns the phase's name, e.g. "response head".
func (p Phase) String() string {
	if int(p) < len(phaseNames) && p != 0 {
		return phaseNames[p]
	}
	return "unknown phase"
}

// TimeoutError reports a deadline that passed, in Phase. It wraps
// os.ErrDeadlineExceeded. The stream (for PhasePing, the connection) has
// been reset.
type TimeoutError struct{ Phase Phase }

func (e *TimeoutError) Error() string { return "h2: timeout waiting for " + e.Phase.String() }

// Timeout reports true.
func (e *TimeoutError) Timeout() bool { return true }

// Unwrap returns os.ErrDeadlineExceeded.
func (e *TimeoutError) Unwrap() error { return os.ErrDeadlineExceeded }

var (
	// ErrRefusedToSend is returned, before anything is written, for a request
	// that cannot be sent as given (connection-specific fields, invalid names
	// or values, bad pseudo-header values).
	ErrRefusedToSend = errors.New("h2: refused to send request")
	// ErrHeaderListTooLarge is matched (errors.Is) by the error of a
	// response whose header list is larger than our MAX_HEADER_LIST_SIZE: a
	// StreamError (CANCEL) when the block decoded too large, a
	// ConnectionError (PROTOCOL_ERROR) when its encoded bytes alone were
	// too many to read.
	ErrHeaderListTooLarge = errors.New("h2: response header list larger than advertised limit")
	// ErrTooMany1xx is the Cause of the StreamError of a response that
	// sent more informational (1xx) heads than a client waits through.
	ErrTooMany1xx = errors.New("h2: too many 1xx responses")
	// ErrFrameTooLarge is matched (errors.Is) by the ConnectionError
	// (FRAME_SIZE_ERROR) of a frame larger than our MAX_FRAME_SIZE.
	ErrFrameTooLarge = errors.New("h2: frame larger than advertised limit")
	// ErrRefusedStream is matched (errors.Is) by a StreamError with
	// REFUSED_STREAM: the server reset the stream without processing it.
	// Before the response head, CanRetry reports true for it.
	ErrRefusedStream = errors.New("h2: stream refused by server")
	// ErrRetryable is matched (errors.Is) by errors for requests that never
	// reached the server: REFUSED_STREAM, a stream above GOAWAY's last stream
	// id, a connection that was closed or going away before the request was
	// sent (these also match ErrNotSent). The caller may send such a
	// request again, on this connection while Usable, else another.
	ErrRetryable = errors.New("h2: request not processed by server")
	// ErrClosed is returned by RoundTrip on a closed connection. It matches
	// ErrRetryable.
	ErrClosed = retryable{errors.New("h2: connection closed")}
	// ErrBodyLengthMismatch is returned when a request body is longer or
	// shorter than its ContentLength.
	ErrBodyLengthMismatch = errors.New("h2: request body length does not match content length")
	// ErrBodyClosed is returned by Read after Close.
	ErrBodyClosed = errors.New("h2: read on closed body")
)

// ErrNotSent is matched (errors.Is) by the errors of requests that were
// never written: they waited for a stream, or were about to be written,
// when the connection stopped taking requests (GOAWAY, a failure, Close).
// Nothing of such a request, its body included, was read or sent, so it may
// go on another connection as it is, streamed body or not. These errors
// match ErrRetryable too.
var ErrNotSent = errors.New("h2: request not sent")

// notSent marks err as the error of a request never written.
type notSent struct{ err error }

func (e notSent) Error() string        { return e.err.Error() }
func (e notSent) Unwrap() error        { return e.err }
func (e notSent) Is(target error) bool { return target == ErrNotSent || target == ErrRetryable }

// retryable marks err as retryable (errors.Is(_, ErrRetryable)) while keeping
// its own identity.
type retryable struct{ err error }

func (r retryable) Error() string        { return r.err.Error() }
func (r retryable) Unwrap() error        { return r.err }
func (r retryable) Is(target error) bool { return target == ErrRetryable }

// CanRetry reports whether err says the request never reached the server, so
// that it may be sent again (see ErrRetryable and ErrNotSent).
func CanRetry(err error) bool { return errors.Is(err, ErrRetryable) }

func refusedf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrRefusedToSend}, args...)...)
}
