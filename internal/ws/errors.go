package ws

import (
	"errors"
	"strconv"
)

// CloseError is how a WebSocket ended with a close code. Remote is true when
// the peer sent the close frame (Code is its code, or StatusNoStatus for a
// close frame without one), false when this side failed the connection
// because of what the peer sent and told it so with Code (1002, 1007,
// 1009...); Reason is the close frame's reason either way.
type CloseError struct {
	Code   StatusCode
	Reason string
	Remote bool
}

func (e *CloseError) Error() string {
	s := "ws: closed by the peer with " + e.Code.String()
	if !e.Remote {
		s = "ws: failed with " + e.Code.String()
	}
	if e.Reason != "" {
		s += ": " + strconv.Quote(e.Reason)
	}
	return s
}

var (
	// ErrDropped is returned by reads and writes once the connection ended
	// without a close frame (the peer went away, or a read or write failed);
	// the error wraps it with the cause.
	ErrDropped = errors.New("ws: connection dropped without a close frame")
	// ErrPingTimeout is returned once the peer answered nothing (no pong, no
	// frame at all) within the ping deadline; the connection is closed.
	ErrPingTimeout = errors.New("ws: no answer to a ping within the deadline")
	// ErrClosed is returned by calls after Close.
	ErrClosed = errors.New("ws: use of a closed WebSocket")
	// ErrInvalidMessage is returned by a write that cannot go out: a text
	// message that is not UTF-8, a control payload over 125 bytes, an opcode
	// that is not text or binary, a close code that may not be sent.
	ErrInvalidMessage = errors.New("ws: invalid message")
)

// HandshakeError is a handshake response that does not complete a
// WebSocket: a missing or wrong accept value, an extension or parameter that
// was not offered, a bad status.
type HandshakeError struct {
	Reason string
}

func (e *HandshakeError) Error() string { return "ws: handshake: " + e.Reason }
