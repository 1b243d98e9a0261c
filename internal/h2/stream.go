package h2

import (
	"context"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/guise-http/guise/fields"
)

// Stream holds the state of one request on a ClientConn. A caller with
// per-request state of its own can embed a Stream in it and pass it to
// RoundTripStream, so that both take one allocation. The zero value is
// ready for one use. A Stream must not be copied, and must not be passed to
// RoundTripStream again: the connection may refer to it until the response
// body is closed.
type Stream struct{ s stream }

// stream is one request/response exchange. Fields after mu-guarded are
// guarded by cc.mu.
type stream struct {
	cc      *ClientConn
	id      uint32
	weight  uint16
	notify  chan struct{}   // cap 1: head, data, end or error arrived
	ctx     context.Context // the request's; read only for Err
	ctxDone <-chan struct{}
	req     *Request
	idle    time.Duration

	// guarded by cc.mu
	resp    Response
	body    body
	hdr     [inlineFields]fields.Field // backs resp.Header for small heads
	waiting bool                       // the owner waits on notify
	writer  bool                       // a body writer goroutine runs for it
	gotHead bool
	// seen is cc.framesIn when the stream was sent or last received a
	// frame; 32 bits, beside n1xx, keep the stream in its size class (a
	// multiple of 2^32 frames in between would read as silence).
	seen          uint32
	n1xx          int32
	err           error
	recvEnd       bool
	sentEnd       bool
	reset         bool
	bodyClosed    bool
	removed       bool
	tunnel        bool // an extended CONNECT's (RFC 8441)
	recvWindow    int64
	unacked       int64
	sendWindow    int64
	received      int64
	data          chunks
	contentLength int64
}

// inlineFields is the number of response fields a stream holds without an
// allocation of their own.
const inlineFields = 16

// maxSpareChans bounds the notify channels a connection keeps for reuse.
const maxSpareChans = 256

// notifyChanLocked returns a notify channel for a new stream: a spare one
// of an earlier stream, or a new one. cc.mu is held.
func (cc *ClientConn) notifyChanLocked() chan struct{} {
	if n := len(cc.spareChans); n > 0 {
		ch := cc.spareChans[n-1]
		cc.spareChans[n-1] = nil
		cc.spareChans = cc.spareChans[:n-1]
		return ch
	}
	return make(chan struct{}, 1)
}

// recycleLocked keeps s's notify channel for a later stream when nothing
// can use it any more: the owner closed the body and waits on nothing, the
// stream is gone from the connection (so the read loop cannot signal it)
// and no body writer could fail it. A pending signal is drained. cc.mu is
// held.
func (cc *ClientConn) recycleLocked(s *stream) {
	if s.notify == nil || s.waiting || s.writer || !(s.removed || cc.closed) || len(cc.spareChans) >= maxSpareChans {
		return
	}
	select {
	case <-s.notify:
	default:
	}
	cc.spareChans = append(cc.spareChans, s.notify)
	s.notify = nil
}

func (s *stream) signal() {
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// failLocked ends the stream with err, dropping buffered data (whose credit
// the caller settles). cc.mu is held.
func (s *stream) failLocked(err error) {
	if s.err == nil {
		s.err = err
	}
	s.reset = true
	s.data.release()
	s.signal()
}

// resetLocked fails the stream with err, owes RST_STREAM(code) unless the
// stream already ended, returns buffered credit and forgets the stream. It
// reports false when the control queue overflowed (the caller must fail the
// connection). cc.mu is held.
func (cc *ClientConn) resetLocked(s *stream, code ErrCode, err error) bool {
	ok := true
	if !s.reset && !(s.recvEnd && s.sentEnd) {
		id := s.id
		ok = cc.queueLocked(ctrlFrame{typ: FrameRSTStream, id: id, val: uint32(code)})
	}
	cc.creditLocked(int64(s.data.len()))
	s.failLocked(err)
	cc.forgetLocked(s)
	return ok
}

// creditLocked gives n consumed bytes back to the connection window,
// sending WINDOW_UPDATE once half the window is owed. cc.mu is held.
func (cc *ClientConn) creditLocked(n int64) bool {
	if n <= 0 {
		return true
	}
	cc.connUnacked += n
	if cc.connUnacked < cc.recvMax/2 {
		return true
	}
	inc := uint32(cc.connUnacked)
	cc.recvWindow += cc.connUnacked
	cc.connUnacked = 0
	return cc.queueLocked(ctrlFrame{typ: FrameWindowUpdate, val: inc})
}

// forgetLocked removes s from the connection if both sides are done. It
// reports whether the connection became idle. cc.mu is held.
func (cc *ClientConn) forgetLocked(s *stream) {
	if s.removed || !(s.reset || (s.recvEnd && s.sentEnd)) {
		return
	}
	s.removed = true
	delete(cc.streams, s.id)
	if cc.batcher == s {
		cc.batcher = nil
	}
	if i := slices.Index(cc.open, s); i >= 0 {
		// Delete clears the vacated slot: the backing array must not keep
		// the last stream (and its Response) alive on an idle connection.
		cc.open = slices.Delete(cc.open, i, i+1)
	}
	cc.wakeSlotsLocked()
	cc.wakeWindowsLocked()
}

// afterUnlock runs what must happen outside cc.mu after stream bookkeeping:
// the idle hook, closing after GOAWAY, waking the control writer.
func (cc *ClientConn) afterUnlock() {
	cc.mu.Lock()
	idle := len(cc.streams)+cc.starting+cc.reserved+cc.held == 0 && !cc.closed
	hook := cc.onIdle
	became := idle && !cc.idleNotified
	if !became {
		hook = nil
	}
	cc.idleNotified = cc.idleNotified || idle
	closeNow := idle && (cc.goAway != nil || cc.closing)
	owed := len(cc.ctrl) > 0
	cc.mu.Unlock()
	if owed || (idle && cc.writerOn.Load()) {
		cc.kick() // an idle connection's writer exits
	}
	if closeNow {
		cc.fail(ErrClosed)
		return
	}
	if became {
		cc.releaseBuffers()
	}
	if idle && hook != nil {
		hook(cc)
	}
}

// body is a response body.
type body struct{ s *stream }

// Read reads response body bytes. It returns io.EOF after the last byte
// (Trailer is then set), a StreamError when the server reset the stream, the
// request context's error when it ended, or *TimeoutError{PhaseBodyIdle}.
func (b *body) Read(p []byte) (int, error) {
	s := b.s
	cc := s.cc
	var timer *time.Timer
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		cc.mu.Lock()
		s.waiting = false
		if s.bodyClosed {
			cc.mu.Unlock()
			return 0, ErrBodyClosed
		}
		if s.data.len() > 0 {
			if len(p) == 0 {
				cc.mu.Unlock()
				return 0, nil
			}
			n := s.data.read(p)
			cc.consumedUnlock(s, n)
			return n, nil
		}
		if err := s.endLocked(); err != nil {
			cc.mu.Unlock()
			return 0, err
		}
		cc.waitUnlock(s, &timer)
	}
}

// batchBlocks is how many blocks (1 MiB) a lone download's WriteTo lets
// queue before it is woken. Waking the reader is most of what the read
// loop spends on a block besides reading and decrypting it (a futex call
// to start a thread for it, when the other core is idle); the reader's own
// work per block is small. 64 rather than 16: in five alternated runs of
// h2compare's 8 MiB download (docs/BENCHMARKS-h2.md) guise's median CPU per
// download went from 11.2 to 10.1 ms. The windows bound what queues: a
// batch is awaited only when they let it all arrive (holdLocked).
const batchBlocks = 64

// batchLocked decides, before s's owner waits in WriteTo, whether it may
// be woken only once batchBlocks blocks are queued: when s is the
// connection's only stream, its body has a known length with at least that
// much to come, and no idle timeout is watching for each frame. The read
// loop wakes it earlier when the rest cannot arrive within the windows,
// when the body ends or fails, and when another stream opens or receives
// data (wakeBatcherLocked). cc.mu is held.
func (cc *ClientConn) batchLocked(s *stream) {
	if len(cc.streams) != 1 || s.idle > 0 || s.contentLength < 0 || s.contentLength-s.received < batchBlocks*chunkSize {
		return
	}
	cc.batcher = s
}

// wakeBatcherLocked wakes the batching stream's owner, if any, and ends its
// batching. cc.mu is held.
func (cc *ClientConn) wakeBatcherLocked() {
	if b := cc.batcher; b != nil {
		cc.batcher = nil
		b.signal()
	}
}

// holdLocked reports whether the data just queued on s may wait for more
// before its owner is woken: s batches, the body goes on, fewer than
// batchBlocks blocks are queued, the body has that much more to come, and
// the windows let the server send it without a WINDOW_UPDATE (which only
// consuming would send). cc.mu is held.
func (cc *ClientConn) holdLocked(s *stream, end bool) bool {
	if cc.batcher != s || end {
		return false
	}
	const want = batchBlocks * chunkSize
	queued := int64(s.data.len())
	return queued < want && queued+min(s.recvWindow, cc.recvWindow, s.contentLength-s.received) >= want
}

// WriteTo writes the body to w until its end, handing w the received blocks
// themselves where it can rather than a copy. The body of a lone stream
// with a known length and no idle timeout reaches w in batches of up to
// batchBlocks blocks (see batchLocked). Its errors are Read's, or w's; at
// the end it returns nil.
func (b *body) WriteTo(w io.Writer) (int64, error) {
	s := b.s
	cc := s.cc
	var timer *time.Timer
	var scratch *[chunkSize]byte
	defer func() {
		if timer != nil {
			timer.Stop()
		}
		if scratch != nil {
			chunkPool.Put(scratch)
		}
	}()
	var total int64
	for {
		cc.mu.Lock()
		s.waiting = false
		if cc.batcher == s {
			cc.batcher = nil
		}
		if s.bodyClosed {
			cc.mu.Unlock()
			return total, ErrBodyClosed
		}
		if s.data.len() > 0 {
			blk, p := s.data.take()
			if blk == nil {
				if scratch == nil {
					scratch = chunkPool.Get().(*[chunkSize]byte)
				}
				p = scratch[:s.data.read(scratch[:])]
			}
			cc.consumedUnlock(s, len(p))
			n, err := w.Write(p)
			total += int64(n)
			if blk != nil {
				chunkPool.Put(blk)
			}
			if err == nil && n < len(p) {
				err = io.ErrShortWrite
			}
			if err != nil {
				return total, err
			}
			continue
		}
		if err := s.endLocked(); err != nil {
			cc.mu.Unlock()
			if err == io.EOF {
				err = nil
			}
			return total, err
		}
		cc.batchLocked(s)
		cc.waitUnlock(s, &timer)
	}
}

// endLocked returns why no more body bytes will come (io.EOF at the end),
// or nil. cc.mu is held.
func (s *stream) endLocked() error {
	if s.err != nil {
		return s.err
	}
	if s.recvEnd {
		return io.EOF
	}
	return nil
}

// consumedUnlock gives back the flow-control credit of n body bytes the
// caller took, owing WINDOW_UPDATEs as the browser sends them, and
// releases cc.mu.
func (cc *ClientConn) consumedUnlock(s *stream, n int) {
	ok := true
	if !s.recvEnd && !s.reset {
		s.unacked += int64(n)
		if s.unacked >= int64(cc.streamRecvInit)/2 {
			inc, id := uint32(s.unacked), s.id
			s.recvWindow += s.unacked
			s.unacked = 0
			ok = cc.queueLocked(ctrlFrame{typ: FrameWindowUpdate, id: id, val: inc})
		}
	}
	ok = cc.creditLocked(int64(n)) && ok
	owed := len(cc.ctrl) > 0
	cc.mu.Unlock()
	if !ok {
		cc.fail(errCalm)
	} else if owed {
		cc.kick()
	}
}

// waitUnlock releases cc.mu and waits for news of s: a signal, the end of
// its context (which cancels it) or, with an idle timeout, that long
// without any (which cancels it too). *timer is reused across waits.
func (cc *ClientConn) waitUnlock(s *stream, timer **time.Timer) {
	s.waiting = true
	notify := s.notify
	cc.mu.Unlock()
	var timeout <-chan time.Time
	if s.idle > 0 {
		if *timer == nil {
			*timer = time.NewTimer(s.idle)
		} else {
			(*timer).Reset(s.idle)
		}
		timeout = (*timer).C
	}
	select {
	case <-notify:
	case <-s.ctxDone:
		cc.cancel(s, errCtx(s))
	case <-timeout:
		cc.cancel(s, &TimeoutError{Phase: PhaseBodyIdle})
	}
}

// Close ends the body. Before EOF it resets the stream with CANCEL and
// returns the unread flow-control credit to the connection.
func (b *body) Close() error {
	s := b.s
	cc := s.cc
	cc.mu.Lock()
	if s.bodyClosed {
		cc.mu.Unlock()
		return nil
	}
	ok := true
	if !s.recvEnd && !s.reset {
		ok = cc.resetLocked(s, ErrCodeCancel, ErrBodyClosed)
	} else {
		ok = cc.creditLocked(int64(s.data.len()))
		s.data.release()
	}
	s.bodyClosed = true
	cc.recycleLocked(s)
	cc.mu.Unlock()
	if !ok {
		cc.fail(errCalm)
	}
	cc.afterUnlock()
	return nil
}

// cancel resets s with CANCEL and fails it with err.
func (cc *ClientConn) cancel(s *stream, err error) { cc.cancelCode(s, ErrCodeCancel, err) }

// chunks is a queue of received DATA bytes in fixed-size pooled blocks, so
// that a long body is never copied twice and memory goes back as it is read.
// Bytes are either copied into the room of the last block (write) or come
// in a whole block the read loop filled itself (attach). Every block but
// the last is full, or was attached when the one before it was full, so the
// blocks stay densely filled whatever the sizes of the peer's frames.
type chunks struct {
	segs   []seg
	r      int // read offset in segs[0]
	n      int
	inline [2]seg
}

// seg is one block and how many of its bytes hold data.
type seg struct {
	b   *[chunkSize]byte
	end int
}

const chunkSize = 16 << 10

var chunkPool = sync.Pool{New: func() any { return new([chunkSize]byte) }}

func (c *chunks) len() int { return c.n }

// full reports whether the last block has no room left (or there is none),
// so that a whole block may follow without leaving a hole.
func (c *chunks) full() bool {
	return len(c.segs) == 0 || c.segs[len(c.segs)-1].end == chunkSize
}

func (c *chunks) write(p []byte) {
	for len(p) > 0 {
		if c.full() {
			c.push(seg{b: chunkPool.Get().(*[chunkSize]byte)})
		}
		last := &c.segs[len(c.segs)-1]
		n := copy(last.b[last.end:], p)
		last.end += n
		c.n += n
		p = p[n:]
	}
}

// attach appends the block b holding n bytes; the queue owns it from now.
func (c *chunks) attach(b *[chunkSize]byte, n int) {
	c.push(seg{b: b, end: n})
	c.n += n
}

func (c *chunks) push(sg seg) {
	if c.segs == nil {
		c.segs = c.inline[:0]
	}
	c.segs = append(c.segs, sg)
}

// take removes the first block from the queue and returns it with its
// unread bytes, when no more bytes can be written into it (it is not the
// last, or it is full); else nil. The caller owns the block.
func (c *chunks) take() (*[chunkSize]byte, []byte) {
	if c.n == 0 {
		return nil, nil
	}
	first := c.segs[0]
	if len(c.segs) == 1 && first.end != chunkSize {
		return nil, nil
	}
	p := first.b[c.r:first.end]
	c.n -= len(p)
	c.segs[0] = seg{}
	c.segs = c.segs[1:]
	c.r = 0
	if len(c.segs) == 0 {
		c.segs = c.inline[:0]
	}
	return first.b, p
}

func (c *chunks) read(p []byte) int {
	total := 0
	for len(p) > 0 && c.n > 0 {
		first := &c.segs[0]
		n := copy(p, first.b[c.r:first.end])
		c.r += n
		c.n -= n
		total += n
		p = p[n:]
		if c.r == first.end {
			chunkPool.Put(first.b)
			*first = seg{}
			c.segs = c.segs[1:]
			c.r = 0
			if len(c.segs) == 0 {
				c.segs = c.inline[:0]
			}
		}
	}
	return total
}

func (c *chunks) release() {
	for i := range c.segs {
		chunkPool.Put(c.segs[i].b)
		c.segs[i] = seg{}
	}
	c.segs = c.segs[:0]
	c.r, c.n = 0, 0
}
