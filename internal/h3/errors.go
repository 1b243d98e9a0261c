package h3

import (
	"errors"
	"fmt"
	"os"
	"strconv"
)

// ErrCode is an HTTP/3 (RFC 9114 §8.1) or QPACK (RFC 9204 §6) error code,
// as carried by CONNECTION_CLOSE, RESET_STREAM and STOP_SENDING.
type ErrCode uint64

// Error codes.
const (
	ErrCodeNoError              ErrCode = 0x100
	ErrCodeGeneralProtocol      ErrCode = 0x101
	ErrCodeInternal             ErrCode = 0x102
	ErrCodeStreamCreation       ErrCode = 0x103
	ErrCodeClosedCriticalStream ErrCode = 0x104
	ErrCodeFrameUnexpected      ErrCode = 0x105
	ErrCodeFrame                ErrCode = 0x106
	ErrCodeExcessiveLoad        ErrCode = 0x107
	ErrCodeID                   ErrCode = 0x108
	ErrCodeSettings             ErrCode = 0x109
	ErrCodeMissingSettings      ErrCode = 0x10a
	ErrCodeRequestRejected      ErrCode = 0x10b
	ErrCodeRequestCancelled     ErrCode = 0x10c
	ErrCodeRequestIncomplete    ErrCode = 0x10d
	ErrCodeMessage              ErrCode = 0x10e
	ErrCodeConnect              ErrCode = 0x10f
	ErrCodeVersionFallback      ErrCode = 0x110

	ErrCodeQPACKDecompressionFailed ErrCode = 0x200
	ErrCodeQPACKEncoderStream       ErrCode = 0x201
	ErrCodeQPACKDecoderStream       ErrCode = 0x202
)

var errCodeNames = map[ErrCode]string{
	ErrCodeNoError:                  "H3_NO_ERROR",
	ErrCodeGeneralProtocol:          "H3_GENERAL_PROTOCOL_ERROR",
	ErrCodeInternal:                 "H3_INTERNAL_ERROR",
	ErrCodeStreamCreation:           "H3_STREAM_CREATION_ERROR",
	ErrCodeClosedCriticalStream:     "H3_CLOSED_CRITICAL_STREAM",
	ErrCodeFrameUnexpected:          "H3_FRAME_UNEXPECTED",
	ErrCodeFrame:                    "H3_FRAME_ERROR",
	ErrCodeExcessiveLoad:            "H3_EXCESSIVE_LOAD",
	ErrCodeID:                       "H3_ID_ERROR",
	ErrCodeSettings:                 "H3_SETTINGS_ERROR",
	ErrCodeMissingSettings:          "H3_MISSING_SETTINGS",
	ErrCodeRequestRejected:          "H3_REQUEST_REJECTED",
	ErrCodeRequestCancelled:         "H3_REQUEST_CANCELLED",
	ErrCodeRequestIncomplete:        "H3_REQUEST_INCOMPLETE",
	ErrCodeMessage:                  "H3_MESSAGE_ERROR",
	ErrCodeConnect:                  "H3_CONNECT_ERROR",
	ErrCodeVersionFallback:          "H3_VERSION_FALLBACK",
	ErrCodeQPACKDecompressionFailed: "QPACK_DECOMPRESSION_FAILED",
	ErrCodeQPACKEncoderStream:       "QPACK_ENCODER_STREAM_ERROR",
	ErrCodeQPACKDecoderStream:       "QPACK_DECODER_STREAM_ERROR",
}

// String returns the code's name, or its value in hex.
func (c ErrCode) String() string {
	if s, ok := errCodeNames[c]; ok {
		return s
	}
	return "0x" + strconv.FormatUint(uint64(c), 16)
}

// ConnectionError is a connection-level error: either one we detected in
// what the peer sent (Remote false; the connection is closed with Code)
// or the peer's CONNECTION_CLOSE (Remote true). Every request on the
// connection fails with it. Cause, when set, is a sentinel it also
// matches with errors.Is (ErrDynamicTableRefused, ErrFieldSectionTooLarge).
type ConnectionError struct {
	Code   ErrCode
	Remote bool
	Reason string
	Cause  error
}

func (e *ConnectionError) Error() string {
	who := "connection error"
	if e.Remote {
		who = "connection closed by peer"
	}
	s := "h3: " + who + ": " + e.Code.String()
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	if e.Cause != nil {
		s += ": " + e.Cause.Error()
	}
	return s
}

// Unwrap returns the cause.
func (e *ConnectionError) Unwrap() error { return e.Cause }

// StreamError is an error on one request stream; the connection stays
// usable. Remote reports the peer's RESET_STREAM or STOP_SENDING with
// Code; otherwise we reset the stream with Code because of Cause. A
// StreamError with H3_REQUEST_REJECTED matches ErrRequestRejected and
// ErrRetryable.
type StreamError struct {
	StreamID uint64
	Code     ErrCode
	Remote   bool
	Cause    error
}

func (e *StreamError) Error() string {
	if e.Remote {
		return fmt.Sprintf("h3: stream %d reset by peer: %v", e.StreamID, e.Code)
	}
	if e.Cause != nil {
		return fmt.Sprintf("h3: stream %d: %v: %v", e.StreamID, e.Code, e.Cause)
	}
	return fmt.Sprintf("h3: stream %d: %v", e.StreamID, e.Code)
}

// Unwrap returns the cause.
func (e *StreamError) Unwrap() error { return e.Cause }

// Is matches ErrRequestRejected and ErrRetryable for H3_REQUEST_REJECTED.
func (e *StreamError) Is(target error) bool {
	return (target == ErrRequestRejected || target == ErrRetryable) && e.Code == ErrCodeRequestRejected && e.Remote
}

// GoAwayError is returned for a request the server's GOAWAY stopped: one
// on a stream at or above StreamID, which the server did not process
// (it matches ErrRetryable), or one asked of the connection after it.
type GoAwayError struct {
	StreamID uint64
}

func (e *GoAwayError) Error() string {
	return "h3: server sent GOAWAY (streams from " + strconv.FormatUint(e.StreamID, 10) + " not processed)"
}

// Is matches ErrRetryable.
func (e *GoAwayError) Is(target error) bool { return target == ErrRetryable }

// Phase names the wait a TimeoutError expired in.
type Phase uint8

const (
	// PhaseHead is the wait for the response head (Request.HeadTimeout).
	PhaseHead Phase = iota + 1
	// PhaseBodyIdle is a body read that got no byte within
	// Request.BodyIdleTimeout.
	PhaseBodyIdle
)

// String returns the phase's name.
func (p Phase) String() string {
	switch p {
	case PhaseHead:
		return "response head"
	case PhaseBodyIdle:
		return "body idle"
	}
	return "unknown phase"
}

// TimeoutError reports a deadline that passed in Phase; the stream has
// been cancelled. It wraps os.ErrDeadlineExceeded.
type TimeoutError struct{ Phase Phase }

func (e *TimeoutError) Error() string { return "h3: timeout waiting for " + e.Phase.String() }

// Timeout reports true.
func (e *TimeoutError) Timeout() bool { return true }

// Unwrap returns os.ErrDeadlineExceeded.
func (e *TimeoutError) Unwrap() error { return os.ErrDeadlineExceeded }

var (
	// ErrRefusedToSend is returned, before anything is written, for a
	// request that cannot be sent as given (connection-specific fields,
	// invalid names or values, a header larger than the peer's
	// SETTINGS_MAX_FIELD_SECTION_SIZE).
	ErrRefusedToSend = errors.New("h3: refused to send request")
	// ErrDynamicTableRefused is the Cause of the ConnectionError
	// (QPACK_DECOMPRESSION_FAILED) of a field section that refers to the
	// dynamic table when the client's SETTINGS allowed none.
	ErrDynamicTableRefused = errors.New("h3: dynamic table reference with no dynamic table allowed")
	// ErrFieldSectionTooLarge is matched by the error of a response whose
	// field section (encoded, or decoded as name + value + 32 per field) is
	// larger than Config.MaxFieldSectionSize.
	ErrFieldSectionTooLarge = errors.New("h3: response field section too large")
	// ErrTooMany1xx is the Cause of the StreamError of a response with
	// more informational heads than a client waits through.
	ErrTooMany1xx = errors.New("h3: too many 1xx responses")
	// ErrRequestRejected is matched by a StreamError with
	// H3_REQUEST_REJECTED: the server did not process the request.
	ErrRequestRejected = errors.New("h3: request rejected by server")
	// ErrRetryable is matched by errors for requests the server provably
	// did not process: H3_REQUEST_REJECTED, a stream GOAWAY excluded, a
	// connection closed or going away before the request was sent.
	ErrRetryable = errors.New("h3: request not processed by server")
	// ErrClosed is returned by RoundTrip on a closed connection. It
	// matches ErrRetryable.
	ErrClosed = retryable{errors.New("h3: connection closed")}
	// ErrBodyLengthMismatch is returned when a request body is longer or
	// shorter than its ContentLength.
	ErrBodyLengthMismatch = errors.New("h3: request body length does not match content length")
	// ErrBodyClosed is returned by Read after Close.
	ErrBodyClosed = errors.New("h3: read on closed body")
)

// retryable marks err as matching ErrRetryable while keeping its identity.
type retryable struct{ err error }

func (r retryable) Error() string        { return r.err.Error() }
func (r retryable) Unwrap() error        { return r.err }
func (r retryable) Is(target error) bool { return target == ErrRetryable }

// CanRetry reports whether err says the request never reached the
// server, so that it may be sent again on a new connection.
func CanRetry(err error) bool { return errors.Is(err, ErrRetryable) }

func refusedf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrRefusedToSend}, args...)...)
}
