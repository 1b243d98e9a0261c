package h2

import (
	"errors"
	"fmt"
)

// ConnectionError is a connection-level HTTP/2 error: the connection is
// closed (with GOAWAY carrying Code when we detected it).
type ConnectionError struct {
	Code   ErrCode
	Reason string
}

func (e ConnectionError) Error() string {
	if e.Reason == "" {
		return "h2: connection error: " + e.Code.String()
	}
	return fmt.Sprintf("h2: connection error: %v: %s", e.Code, e.Reason)
}

// StreamError is an error on one stream; the connection stays usable.
type StreamError struct {
	StreamID uint32
	Code     ErrCode
	Cause    error
}

func (e StreamError) Error() string {
	if e.Cause != nil {
		return fmt.Sprintf("h2: stream %d: %v: %v", e.StreamID, e.Code, e.Cause)
	}
	return fmt.Sprintf("h2: stream %d: %v", e.StreamID, e.Code)
}

// Unwrap returns the cause.
func (e StreamError) Unwrap() error { return e.Cause }

// GoAwayError is the GOAWAY the peer sent, returned for streams that did not
// complete because of it.
type GoAwayError struct {
	LastStreamID uint32
	Code         ErrCode
	DebugData    string
}

func (e GoAwayError) Error() string {
	return fmt.Sprintf("h2: server sent GOAWAY (last stream %d, %v, debug %q)", e.LastStreamID, e.Code, e.DebugData)
}

// TimeoutError reports a deadline that passed. Phase is "head" (waiting for
// the response head), "body-idle" (no body bytes for BodyIdleTimeout) or
// "ping" (a health-check PING went unanswered).
type TimeoutError struct{ Phase string }

func (e *TimeoutError) Error() string { return "h2: timeout: " + e.Phase }

// Timeout reports true.
func (e *TimeoutError) Timeout() bool { return true }

var (
	// ErrRefusedToSend is returned, before anything is written, for a request
	// that cannot be sent as given (connection-specific fields, invalid names
	// or values, bad pseudo-header values).
	ErrRefusedToSend = errors.New("h2: refused to send request")
	// ErrHeaderListTooLarge is returned when the response header list is
	// larger than our MAX_HEADER_LIST_SIZE.
	ErrHeaderListTooLarge = errors.New("h2: response header list larger than advertised limit")
	// ErrRetryable is matched (errors.Is) by errors for requests that never
	// reached the server: REFUSED_STREAM, a stream above GOAWAY's last stream
	// id, a connection that was closed or going away before the request was
	// sent. The caller may retry such a request once on a new connection.
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

// retryable marks err as retryable (errors.Is(_, ErrRetryable)) while keeping
// its own identity.
type retryable struct{ err error }

func (r retryable) Error() string        { return r.err.Error() }
func (r retryable) Unwrap() error        { return r.err }
func (r retryable) Is(target error) bool { return target == ErrRetryable }

// CanRetry reports whether err says the request never reached the server, so
// that it may be sent again on a new connection.
func CanRetry(err error) bool { return errors.Is(err, ErrRetryable) }

func refusedf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrRefusedToSend}, args...)...)
}
