package quic

import (
	"errors"
	"strconv"
)

// TransportErrorCode is a QUIC transport error code (RFC 9000 §20.1).
type TransportErrorCode uint64

// Transport error codes guise sends or branches on.
const (
	NoError                 TransportErrorCode = 0x00
	InternalError           TransportErrorCode = 0x01
	FlowControlError        TransportErrorCode = 0x03
	StreamLimitError        TransportErrorCode = 0x04
	StreamStateError        TransportErrorCode = 0x05
	FinalSizeError          TransportErrorCode = 0x06
	FrameEncodingError      TransportErrorCode = 0x07
	TransportParameterError TransportErrorCode = 0x08
	ConnectionIDLimitError  TransportErrorCode = 0x09
	ProtocolViolation       TransportErrorCode = 0x0a
	ApplicationError        TransportErrorCode = 0x0c
	KeyUpdateError          TransportErrorCode = 0x0e
	CryptoError             TransportErrorCode = 0x100 // plus the TLS alert
)

var transportErrorNames = map[TransportErrorCode]string{
	NoError: "NO_ERROR", InternalError: "INTERNAL_ERROR", FlowControlError: "FLOW_CONTROL_ERROR",
	StreamLimitError: "STREAM_LIMIT_ERROR", StreamStateError: "STREAM_STATE_ERROR",
	FinalSizeError: "FINAL_SIZE_ERROR", FrameEncodingError: "FRAME_ENCODING_ERROR",
	TransportParameterError: "TRANSPORT_PARAMETER_ERROR", ConnectionIDLimitError: "CONNECTION_ID_LIMIT_ERROR",
	ProtocolViolation: "PROTOCOL_VIOLATION", ApplicationError: "APPLICATION_ERROR", KeyUpdateError: "KEY_UPDATE_ERROR",
}

// String returns the RFC's name of the code.
func (c TransportErrorCode) String() string {
	if n, ok := transportErrorNames[c]; ok {
		return n
	}
	if c >= 0x100 && c <= 0x1ff {
		return "CRYPTO_ERROR(alert " + strconv.Itoa(int(c-0x100)) + ")"
	}
	return "0x" + strconv.FormatUint(uint64(c), 16)
}

// ConnectionError is a connection closed with a CONNECTION_CLOSE, sent
// (Remote false) or received (Remote true). App says which kind: an
// application's code (HTTP/3's) or a transport one (TransportErrorCode).
type ConnectionError struct {
	Code      uint64
	App       bool
	Remote    bool
	FrameType uint64 // the frame that caused a transport error, if known
	Reason    string
	// Cause is the local error behind a transport close guise sent
	// (a TLS failure, a parse error), nil otherwise.
	Cause error
}

func (e *ConnectionError) Error() string {
	who := "local"
	if e.Remote {
		who = "peer"
	}
	s := "quic: connection closed by " + who + ": "
	if e.App {
		s += "application error 0x" + strconv.FormatUint(e.Code, 16)
	} else {
		s += TransportErrorCode(e.Code).String()
	}
	if e.Reason != "" {
		s += " (" + e.Reason + ")"
	}
	if e.Cause != nil {
		s += ": " + e.Cause.Error()
	}
	return s
}

// Unwrap returns the local cause.
func (e *ConnectionError) Unwrap() error { return e.Cause }

// StreamError is a stream ended by RESET_STREAM or STOP_SENDING, from the
// peer (Remote) or by this side's CancelRead or CancelWrite.
type StreamError struct {
	StreamID uint64
	Code     uint64
	Remote   bool
}

func (e *StreamError) Error() string {
	who := "locally"
	if e.Remote {
		who = "by the peer"
	}
	return "quic: stream " + strconv.FormatUint(e.StreamID, 10) + " canceled " + who + " with code 0x" + strconv.FormatUint(e.Code, 16)
}

// Sentinel reasons a connection ends without a CONNECTION_CLOSE.
var (
	// ErrIdleTimeout: nothing was received for the idle timeout.
	ErrIdleTimeout = errors.New("quic: idle timeout")
	// ErrHandshakeTimeout: the handshake did not finish in time.
	ErrHandshakeTimeout = errors.New("quic: handshake timeout")
	// ErrStatelessReset: the server sent a stateless reset.
	ErrStatelessReset = errors.New("quic: stateless reset by the peer")
	// ErrVersionNegotiation: the server does not speak QUIC version 1.
	ErrVersionNegotiation = errors.New("quic: server does not support quic version 1")
	// ErrClosed: the connection was closed by this side.
	ErrClosed = errors.New("quic: connection closed")
	// ErrDeadline: a stream deadline passed (it is os.ErrDeadlineExceeded
	// underneath, as net.Conn's is).
	ErrDeadline error = deadlineError{}
	// ErrStreamClosed: Write after Close, or a half that was not opened.
	ErrStreamClosed = errors.New("quic: stream closed")
	// ErrEarlyLimits: the server declined 0-RTT and its new limits are
	// below what 0-RTT sent under the remembered ones, which therefore
	// cannot be sent again (the Cause of the ConnectionError).
	ErrEarlyLimits = errors.New("quic: 0-RTT declined with limits below the data it carried")
)

type deadlineError struct{}

func (deadlineError) Error() string   { return "quic: i/o deadline reached" }
func (deadlineError) Timeout() bool   { return true }
func (deadlineError) Temporary() bool { return true }
