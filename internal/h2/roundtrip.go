package h2

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"
)

var defaultPseudoOrder = []string{":method", ":authority", ":scheme", ":path"}

// RoundTrip sends req on a new stream and returns the response once its head
// arrived. It waits for a stream slot under the peer's
// MAX_CONCURRENT_STREAMS (or uses one taken by ReserveNewRequest). ctx covers
// the whole exchange, body included: when it ends, the stream is reset with
// CANCEL and ctx's error returned. RoundTrip retries nothing; CanRetry tells
// whether the request may be sent again on another connection.
func (cc *ClientConn) RoundTrip(ctx context.Context, req *Request) (*Response, error) {
	return cc.RoundTripStream(ctx, req, new(Stream))
}

// errNoSlot makes roundTrip wait for a slot again: the limit fell under
// the request between takeSlot and its HEADERS.
var errNoSlot = errors.New("h2: no stream slot")

// errStreamReused is returned for a Stream passed to RoundTripStream twice.
var errStreamReused = errors.New("h2: Stream used for a second request")

// RoundTripStream is RoundTrip with the stream's state in st, a zero Stream
// the caller allocated (typically inside its own per-request state). The
// returned Response lives in st.
func (cc *ClientConn) RoundTripStream(ctx context.Context, req *Request, st *Stream) (*Response, error) {
	return cc.roundTrip(ctx, req, st, nil)
}

func (cc *ClientConn) roundTrip(ctx context.Context, req *Request, st *Stream, ext *Extended) (*Response, error) {
	if err := validRequest(req, ext); err != nil {
		return nil, err
	}
	s := &st.s
	if s.cc != nil {
		return nil, errStreamReused
	}
again:
	if err := cc.takeSlot(ctx, s); err != nil {
		return nil, err
	}
	s.cc = cc
	s.ctx = ctx
	s.ctxDone = ctx.Done()
	s.req = req
	s.idle = req.BodyIdleTimeout
	s.body.s = s
	s.resp.Body = &s.body
	s.tunnel = ext != nil
	s.weight = req.Priority.Weight
	if s.weight == 0 {
		s.weight = 16
	}
	if !cc.lockWrite(ctx) {
		cc.mu.Lock()
		cc.starting--
		cc.wakeSlotsLocked()
		cc.mu.Unlock()
		cc.afterUnlock()
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return nil, notSent{ErrClosed}
	}
	s.seen = cc.framesIn.Load()
	rest, err := cc.writeRequest(s, req, ext)
	cc.unlockWrite()
	if err == errNoSlot {
		cc.afterUnlock()
		s.cc = nil
		goto again
	}
	if err != nil {
		cc.afterUnlock()
		return nil, err
	}
	if rest != nil {
		go cc.writeBody(s, rest) // counted in cc.bodies by writeRequest
	}
	return cc.awaitHead(ctx, s)
}

// takeSlot waits for room under MAX_CONCURRENT_STREAMS, counts the new
// stream s as starting and gives it a notify channel.
func (cc *ClientConn) takeSlot(ctx context.Context, s *stream) error {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	cc.idleNotified = false
	if cc.reserved > 0 {
		// A reservation holds a slot, unless the peer lowered
		// MAX_CONCURRENT_STREAMS since it was made (its first SETTINGS
		// arriving after the reservations made under the initial 100):
		// the reservation is then held (counted apart, so that no other
		// request takes it) and waits, ahead of requests without one,
		// until the streams open are under the new limit (RFC 9113
		// 5.1.2), or the connection ends, or ctx does.
		cc.reserved--
		if uint32(len(cc.streams)+cc.starting) >= cc.maxConcurrent {
			cc.held++
			for uint32(len(cc.streams)+cc.starting) >= cc.maxConcurrent {
				if err := cc.refusalLocked(); err != nil {
					cc.held--
					cc.wakeSlotsLocked()
					return notSent{err}
				}
				ch := cc.slotChanLocked()
				cc.mu.Unlock()
				select {
				case <-ch:
					cc.mu.Lock()
				case <-ctx.Done():
					cc.mu.Lock()
					cc.held--
					cc.wakeSlotsLocked()
					return ctx.Err()
				}
			}
			cc.held--
		}
		cc.starting++
		s.notify = cc.notifyChanLocked()
		return nil
	}
	for {
		if err := cc.refusalLocked(); err != nil {
			return notSent{err}
		}
		if uint32(len(cc.streams)+cc.reserved+cc.held+cc.starting) < cc.maxConcurrent {
			cc.starting++
			s.notify = cc.notifyChanLocked()
			return nil
		}
		ch := cc.slotChanLocked()
		cc.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			cc.mu.Lock()
			return ctx.Err()
		}
		cc.mu.Lock()
	}
}

// refusalLocked returns the retryable error a new stream gets, or nil.
func (cc *ClientConn) refusalLocked() error {
	switch {
	case cc.closed:
		if cc.err != nil && cc.err != ErrClosed {
			return retryable{cc.err}
		}
		return ErrClosed
	case cc.goAway != nil:
		return retryable{*cc.goAway}
	case cc.closing:
		return ErrClosed
	case cc.nextID > maxStreamID:
		return retryable{errors.New("h2: stream ids exhausted")}
	}
	return nil
}

// bodySource is what remains to send of a request body after the first
// write.
type bodySource struct {
	bytes  []byte
	reader io.Reader
}

// writeRequest writes HEADERS, the stream WINDOW_UPDATE and as much of a
// byte body as the windows allow into the batch. The write lock is held. It
// returns what remains of the body, if anything.
func (cc *ClientConn) writeRequest(s *stream, req *Request, ext *Extended) (*bodySource, error) {
	listSize := uint64(len(req.Method)+len(req.Scheme)+len(req.Authority)+len(req.Path)) + 4*entryOverhead
	if ext != nil {
		listSize += uint64(len(":protocol")+len(ext.Protocol)) + entryOverhead
	}
	for _, f := range req.Header {
		listSize += uint64(len(f.Name)+len(f.Value)) + entryOverhead
	}
	cc.mu.Lock()
	cc.starting--
	var err error
	if e := cc.refusalLocked(); e != nil {
		err = notSent{e}
	} else if uint32(len(cc.streams)) >= cc.maxConcurrent {
		// The server's SETTINGS lowered the limit between takeSlot and
		// now: this stream would open past it, which a server that has
		// seen its SETTINGS acknowledged answers with PROTOCOL_ERROR.
		// Wait for a slot again (H2-25).
		cc.wakeSlotsLocked()
		cc.mu.Unlock()
		return nil, errNoSlot
	}
	if err == nil && cc.peerMaxList > 0 && listSize > uint64(cc.peerMaxList) {
		err = refusedf("header list of %d bytes exceeds the peer's limit of %d", listSize, cc.peerMaxList)
	}
	if err != nil {
		cc.wakeSlotsLocked()
		cc.mu.Unlock()
		return nil, err
	}
	s.id = cc.nextID
	cc.nextID += 2
	var prio *PriorityParam
	var pp PriorityParam
	if req.Priority.Send {
		pp = PriorityParam{Exclusive: req.Priority.Exclusive, Weight: uint8(s.weight - 1)}
		switch req.Priority.Dep {
		case DepPrevious:
			pp.StreamDep = cc.lastID
		case DepLatestOpen:
			for i := len(cc.open) - 1; i >= 0; i-- {
				if cc.open[i].weight >= s.weight {
					pp.StreamDep = cc.open[i].id
					break
				}
			}
		}
		prio = &pp
	}
	cc.lastID = s.id
	s.recvWindow = int64(cc.streamRecvInit)
	s.sendWindow = int64(cc.peerWindow)
	s.contentLength = -1
	cc.streams[s.id] = s
	cc.open = append(cc.open, s)
	cc.wakeBatcherLocked() // a lone download is alone no more
	if cc.peerTableSet {
		cc.peerTableSet = false
		cc.enc.setPeerTableSize(cc.peerTable)
	}
	maxFrame := int(cc.peerMaxFrame)
	body := req.BodyBytes
	hasBody := req.Body != nil || len(body) > 0
	var inline []byte
	if req.Body == nil && len(body) > 0 {
		n := min(int64(len(body)), cc.sendWindow, s.sendWindow)
		if n > 0 {
			inline = body[:n]
			cc.sendWindow -= n
			s.sendWindow -= n
		}
	}
	done := hasBody && req.Body == nil && len(inline) == len(body)
	s.sentEnd = (!hasBody || done) && len(req.Trailer) == 0
	if !hasBody && len(req.Trailer) == 0 {
		s.sentEnd = true
	}
	if hasBody && !done {
		// Counted while cc.mu shows the connection open, so that Close's
		// Wait cannot start before this Add.
		cc.bodies.Add(1)
		s.writer = true
	}
	// An RST_STREAM owed goes before this HEADERS, not after it as the
	// other control frames do: the reset stream's slot may be the one this
	// stream took, and a server that read the HEADERS first would count
	// one stream too many and answer PROTOCOL_ERROR (H2-25).
	if len(cc.ctrl) > 0 {
		kept := cc.ctrl[:0]
		for _, f := range cc.ctrl {
			if f.typ == FrameRSTStream {
				cc.wrote(cc.writeCtrl(f))
			} else {
				kept = append(kept, f)
			}
		}
		clear(cc.ctrl[len(kept):])
		cc.ctrl = kept
	}
	cc.mu.Unlock()

	scratch := reqFieldsPool.Get().(*[]tableEntry)
	fs := appendPseudo((*scratch)[:0], req, ext, cc.cfg.PseudoOrder)
	for _, f := range req.Header {
		fs = append(fs, tableEntry{f.Name, f.Value})
	}
	hb := cc.enc.block(cc.hbuf[:0], fs)
	clear(fs)
	if cap(fs) <= maxPooledFields {
		*scratch = fs[:0]
		reqFieldsPool.Put(scratch)
	}
	cc.hbuf = hb
	cc.writeHeaders(s.id, !hasBody && len(req.Trailer) == 0, prio, hb, maxFrame)
	if cc.cfg.StreamWindowUpdate > 0 {
		cc.wrote(cc.fr.WriteWindowUpdate(s.id, cc.cfg.StreamWindowUpdate))
	}
	sent := len(inline)
	for len(inline) > 0 {
		chunk := inline[:min(len(inline), maxFrame)]
		inline = inline[len(chunk):]
		cc.wrote(cc.fr.WriteData(s.id, len(inline) == 0 && done && len(req.Trailer) == 0, chunk))
	}
	if done && len(req.Trailer) > 0 {
		cc.writeTrailers(s.id, req, maxFrame)
		cc.mu.Lock()
		s.sentEnd = true
		cc.mu.Unlock()
	}
	switch {
	case !hasBody || done:
		return nil, nil
	case req.Body != nil:
		return &bodySource{reader: req.Body}, nil
	}
	return &bodySource{bytes: body[sent:]}, nil
}

// writeTrailers writes the trailer HEADERS with END_STREAM. The write lock
// is held.
func (cc *ClientConn) writeTrailers(id uint32, req *Request, maxFrame int) {
	hb := cc.enc.begin(cc.hbuf[:0])
	for _, f := range req.Trailer {
		hb = cc.enc.field(hb, f.Name, f.Value)
	}
	cc.hbuf = hb
	cc.writeHeaders(id, true, nil, hb, maxFrame)
}

// awaitHead waits for the response head.
func (cc *ClientConn) awaitHead(ctx context.Context, s *stream) (*Response, error) {
	var timeout <-chan time.Time
	if s.req.HeadTimeout > 0 {
		t := time.NewTimer(s.req.HeadTimeout)
		defer t.Stop()
		timeout = t.C
	}
	for {
		cc.mu.Lock()
		s.waiting = false
		if s.err != nil {
			err := s.err
			cc.mu.Unlock()
			return nil, err
		}
		if s.gotHead {
			cc.mu.Unlock()
			return &s.resp, nil
		}
		s.waiting = true
		notify := s.notify
		cc.mu.Unlock()
		select {
		case <-notify:
		case <-ctx.Done():
			cc.cancel(s, ctx.Err())
		case <-timeout:
			cc.cancel(s, &TimeoutError{Phase: PhaseHead})
		}
	}
}

func errCtx(s *stream) error {
	if err := s.ctx.Err(); err != nil {
		return err
	}
	return context.Canceled
}

// reqFieldsPool holds the scratch a request's fields are gathered in for
// the encoder (pseudo-fields first), used only while one request is encoded:
// pooled rather than kept per connection, as an idle connection holds it
// for nothing. Scratch that grew past maxPooledFields is dropped.
var reqFieldsPool = sync.Pool{New: func() any { fs := make([]tableEntry, 0, 32); return &fs }}

const maxPooledFields = 256
