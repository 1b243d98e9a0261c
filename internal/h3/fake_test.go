package h3

import (
	"bytes"
	"context"
	"errors"
	"io"
	"slices"
	"sync"
	"time"
)

// fakeConn is an in-memory QUIC connection whose server side is scripted
// bytes: each request stream reads resp, and the server's unidirectional
// streams are uni, accepted in order. Writes are discarded.
type fakeConn struct {
	resp []byte
	uni  [][]byte

	mu     sync.Mutex
	next   uint64
	nextUp uint64
	done   chan struct{}
	closed bool
	// logWrites keeps every client write, in order, in writes.
	logWrites bool
	// holdUni keeps the server's unidirectional streams open after their
	// bytes, until the connection closes.
	holdUni bool
	// uniLimit, if positive, is how many unidirectional streams the
	// client may open: OpenUniStream waits past it until ctx ends.
	uniLimit int
	writes   []fakeWrite
}

// fakeWrite is one Write on a client stream.
type fakeWrite struct {
	id uint64
	b  []byte
}

// written returns the writes so far.
func (c *fakeConn) written() []fakeWrite {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.writes)
}

func newFakeConn(resp []byte, uni ...[]byte) *fakeConn {
	return &fakeConn{resp: resp, uni: uni, nextUp: 2, done: make(chan struct{})}
}

func (c *fakeConn) OpenStream(ctx context.Context) (Stream, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, &CloseError{Code: ErrCodeNoError}
	}
	id := c.next
	c.next += 4
	return &fakeStream{id: id, r: bytes.NewReader(c.resp), c: c}, nil
}

func (c *fakeConn) OpenUniStream(ctx context.Context) (SendStream, error) {
	c.mu.Lock()
	if c.uniLimit > 0 && c.nextUp >= uint64(4*c.uniLimit) {
		c.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.done:
			return nil, &CloseError{Code: ErrCodeNoError}
		}
	}
	defer c.mu.Unlock()
	id := c.nextUp
	c.nextUp += 4
	return &fakeStream{id: id, c: c}, nil
}

func (c *fakeConn) AcceptUniStream(ctx context.Context) (ReceiveStream, error) {
	c.mu.Lock()
	if len(c.uni) > 0 {
		b := c.uni[0]
		c.uni = c.uni[1:]
		c.mu.Unlock()
		return &fakeStream{id: 3, r: bytes.NewReader(b), c: c, hold: c.holdUni}, nil
	}
	c.mu.Unlock()
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-c.done:
		return nil, &CloseError{Code: ErrCodeNoError}
	}
}

func (c *fakeConn) CloseWithError(code uint64, reason string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed {
		c.closed = true
		close(c.done)
	}
	return nil
}

func (c *fakeConn) Done() <-chan struct{} { return c.done }

func (c *fakeConn) Err() error {
	select {
	case <-c.done:
		return &CloseError{Code: ErrCodeNoError}
	default:
		return nil
	}
}

// fakeStream reads r to its end (then io.EOF, as a FIN), or blocks
// until cancelled or the connection closes when r is nil.
type fakeStream struct {
	id        uint64
	r         *bytes.Reader
	c         *fakeConn
	hold      bool // after r, block until the connection closes
	mu        sync.Mutex
	cancelled bool
}

var errFakeCancelled = errors.New("fake: stream cancelled")

func (s *fakeStream) Read(p []byte) (int, error) {
	s.mu.Lock()
	cancelled := s.cancelled
	s.mu.Unlock()
	if cancelled {
		return 0, errFakeCancelled
	}
	if s.r == nil || s.hold && s.r.Len() == 0 {
		<-s.c.done
		return 0, &CloseError{Code: ErrCodeNoError}
	}
	return s.r.Read(p)
}

func (s *fakeStream) Write(p []byte) (int, error) {
	select {
	case <-s.c.done:
		return 0, &CloseError{Code: ErrCodeNoError}
	default:
	}
	s.c.mu.Lock()
	if s.c.logWrites {
		s.c.writes = append(s.c.writes, fakeWrite{s.id, slices.Clone(p)})
	}
	s.c.mu.Unlock()
	return len(p), nil
}

func (s *fakeStream) Close() error { return nil }
func (s *fakeStream) CancelRead(uint64) {
	s.mu.Lock()
	s.cancelled = true
	s.mu.Unlock()
}
func (s *fakeStream) CancelWrite(uint64)               {}
func (s *fakeStream) ID() uint64                       { return s.id }
func (s *fakeStream) SetReadDeadline(time.Time) error  { return nil }
func (s *fakeStream) SetWriteDeadline(time.Time) error { return nil }

var _ Conn = (*fakeConn)(nil)
var _ io.Reader = (*fakeStream)(nil)
