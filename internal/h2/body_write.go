package h2

import (
	"context"
	"errors"
	"io"
)

// writeBody sends the rest of a request body under flow control, then the
// trailers or END_STREAM. It runs in its own goroutine, counted in cc.bodies.
func (cc *ClientConn) writeBody(s *stream, src *bodySource) {
	defer cc.bodies.Done()
	req := s.req
	var buf *[chunkSize]byte
	if src.reader != nil {
		buf = chunkPool.Get().(*[chunkSize]byte)
		defer chunkPool.Put(buf)
	}
	var sent int64
	if req.Body == nil {
		sent = int64(len(req.BodyBytes) - len(src.bytes))
	}
	var pending []byte
	eof := false
	empty := 0
	for {
		if len(pending) == 0 && !eof {
			if src.reader != nil {
				n, err := src.reader.Read(buf[:])
				pending = buf[:n]
				if err == io.EOF {
					eof = true
				} else if err != nil {
					cc.abortBody(s, err)
					return
				}
			} else {
				pending, src.bytes = src.bytes, nil
				eof = true
			}
			sent += int64(len(pending))
			if req.ContentLength > 0 && req.Body != nil && (sent > req.ContentLength || eof && sent != req.ContentLength) {
				cc.abortBody(s, ErrBodyLengthMismatch)
				return
			}
		}
		if len(pending) == 0 && eof {
			break
		}
		if len(pending) == 0 {
			if empty++; empty > 100 {
				cc.abortBody(s, io.ErrNoProgress)
				return
			}
			continue
		}
		empty = 0
		n, ok := cc.awaitWindow(s, len(pending))
		if !ok {
			return
		}
		if !cc.lockWrite(s.ctx) {
			cc.abortBody(s, errCtx(s))
			return
		}
		cc.mu.Lock()
		gone := s.reset
		cc.mu.Unlock()
		if gone {
			cc.unlockWrite()
			cc.closeBody(s)
			return
		}
		last := eof && n == len(pending) && len(req.Trailer) == 0
		cc.wrote(cc.fr.WriteData(s.id, last, pending[:n]))
		if last {
			cc.markSent(s)
		}
		cc.unlockWrite()
		pending = pending[n:]
		if last {
			cc.afterUnlock()
			return
		}
	}
	if !cc.lockWrite(s.ctx) {
		cc.abortBody(s, errCtx(s))
		return
	}
	cc.mu.Lock()
	maxFrame := int(cc.peerMaxFrame)
	gone := s.reset
	cc.mu.Unlock()
	if !gone {
		if len(req.Trailer) > 0 {
			cc.writeTrailers(s.id, req, maxFrame)
		} else {
			cc.wrote(cc.fr.WriteData(s.id, true, nil))
		}
		cc.markSent(s)
	}
	cc.unlockWrite()
	cc.afterUnlock()
}

func (cc *ClientConn) markSent(s *stream) {
	cc.mu.Lock()
	s.sentEnd = true
	cc.forgetLocked(s)
	cc.mu.Unlock()
}

// awaitWindow waits until s may send some of want bytes and takes up to
// want (and one frame) of the windows. It reports false when the stream
// ended meanwhile.
func (cc *ClientConn) awaitWindow(s *stream, want int) (int, bool) {
	cc.mu.Lock()
	for {
		if s.reset || cc.closed {
			cc.mu.Unlock()
			cc.closeBody(s)
			return 0, false
		}
		n := min(int64(want), cc.sendWindow, s.sendWindow, int64(cc.peerMaxFrame))
		if n > 0 {
			cc.sendWindow -= n
			s.sendWindow -= n
			cc.mu.Unlock()
			return int(n), true
		}
		ch := cc.windowChanLocked()
		cc.mu.Unlock()
		select {
		case <-ch:
		case <-s.ctxDone:
			cc.abortBody(s, errCtx(s))
			return 0, false
		}
		cc.mu.Lock()
	}
}

// abortBody resets the stream because its body could not be sent.
func (cc *ClientConn) abortBody(s *stream, err error) {
	code := ErrCodeCancel
	if errors.Is(err, ErrBodyLengthMismatch) {
		code = ErrCodeInternal
	}
	cc.cancelCode(s, code, err)
	cc.closeBody(s)
}

func (cc *ClientConn) closeBody(s *stream) {
	if c, ok := s.req.Body.(io.Closer); ok {
		c.Close()
	}
}

// cancelCode resets s with code and fails it with err.
func (cc *ClientConn) cancelCode(s *stream, code ErrCode, err error) {
	cc.mu.Lock()
	ok := true
	if !s.removed {
		cc.retireIfSilentLocked(s, err)
		ok = cc.resetLocked(s, code, err)
	} else if s.err == nil {
		s.failLocked(err)
	}
	cc.mu.Unlock()
	if !ok {
		cc.fail(errCalm)
	}
	cc.afterUnlock()
}

// retireIfSilentLocked puts the connection in doubt when s, not yet done,
// ends by a deadline (the request's context or a phase timeout) and no
// frame at all has arrived on the connection since s was sent or last
// received one: the peer or the path may be dead, so the connection takes
// no new stream and closes once the streams in flight end, as after
// CloseWhenIdle but without a GOAWAY (on a dead path it would not arrive,
// and a live peer learns of the end from the close). A connection that goes
// on receiving frames keeps its other streams and takes new ones: only the
// late stream is reset. A cancelled context is the caller's choice and
// says nothing about the peer. cc.mu is held.
func (cc *ClientConn) retireIfSilentLocked(s *stream, err error) {
	if s.recvEnd || cc.framesIn.Load() != s.seen {
		return
	}
	var te *TimeoutError
	if errors.As(err, &te) || errors.Is(err, context.DeadlineExceeded) {
		cc.closing = true
	}
}
