package h3

import (
	"context"
	"io"
	"time"
)

// Conn is the QUIC connection HTTP/3 runs on, already handshaken with
// ALPN h3. guise's own QUIC client fits it through an adapter, and so
// does quic-go's in tests. Its methods are safe for concurrent use.
//
// Errors a stream returns after the peer reset it (RESET_STREAM) or
// asked it to stop (STOP_SENDING) must be a *ResetError, and errors after
// the peer closed the connection with an application error a
// *CloseError, so that h3 can tell H3_REQUEST_REJECTED and H3_NO_ERROR
// from the rest; adapters translate their stack's types.
type Conn interface {
	// OpenStream opens a bidirectional stream, waiting while the peer's
	// stream limit is reached, until ctx ends.
	OpenStream(ctx context.Context) (Stream, error)
	// OpenUniStream opens a unidirectional stream.
	OpenUniStream(ctx context.Context) (SendStream, error)
	// AcceptUniStream waits for the peer's next unidirectional stream.
	AcceptUniStream(ctx context.Context) (ReceiveStream, error)
	// CloseWithError closes the connection with an application error.
	CloseWithError(code uint64, reason string) error
	// Done is closed when the connection is closed, by either side.
	Done() <-chan struct{}
	// Err is why the connection closed, nil while it is open.
	Err() error
}

// FlightReleaser is a Conn that may hold back part of its first flight
// until the caller has written what its first 0-RTT packet carries (as
// Firefox's QUIC stack sends its first request in the hello's last
// datagram). ClientConn calls ReleaseFlight once its first request is
// written, and whoever waits on the handshake before writing calls it
// first.
type FlightReleaser interface {
	ReleaseFlight()
}

// SendStream is the sending half of a stream.
type SendStream interface {
	io.Writer
	// Close ends the stream with a FIN.
	Close() error
	// CancelWrite resets the stream (RESET_STREAM) with code.
	CancelWrite(code uint64)
	ID() uint64
	SetWriteDeadline(time.Time) error
}

// ReceiveStream is the receiving half of a stream.
type ReceiveStream interface {
	io.Reader
	// CancelRead asks the peer to stop sending (STOP_SENDING) with code.
	CancelRead(code uint64)
	ID() uint64
	SetReadDeadline(time.Time) error
}

// Stream is a bidirectional stream.
type Stream interface {
	SendStream
	io.Reader
	CancelRead(code uint64)
	SetReadDeadline(time.Time) error
}

// ResetError is a stream error the peer caused: Code is its RESET_STREAM
// or STOP_SENDING code.
type ResetError struct {
	Code ErrCode
}

func (e *ResetError) Error() string { return "h3: stream reset by peer: " + e.Code.String() }

// CloseError is the peer's CONNECTION_CLOSE with an application error
// code (Remote) or, with Remote false, the reason our side closed it.
type CloseError struct {
	Code   ErrCode
	Remote bool
	Reason string
}

func (e *CloseError) Error() string {
	if e.Remote {
		return "h3: connection closed by peer: " + e.Code.String() + " " + e.Reason
	}
	return "h3: connection closed: " + e.Code.String() + " " + e.Reason
}
