package h2

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"

	"golang.org/x/net/http2"
)

// frameBuf is the writer of the connection's Framer: it collects the frames
// of one batch, which unlockWrite then sends with one Write.
type frameBuf struct{ b []byte }

// Write appends p; it never fails.
func (w *frameBuf) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// reset empties the buffer, dropping its memory when a large body made it
// grow past 1 MiB.
func (w *frameBuf) reset() {
	if cap(w.b) > 1<<20 {
		w.b = nil
	} else {
		w.b = w.b[:0]
	}
}

// idleBufs holds the write buffers idle connections gave back (*[]byte,
// empty): an idle connection holds none of its own (10,000 idle Sessions
// would hold tens of MiB), and a busy one takes them back, or others',
// without allocating.
var idleBufs = sync.Pool{New: func() any { return new([]byte) }}

// maxIdleBuf is the largest write buffer given to idleBufs; a larger one
// (a body's batch) is dropped.
const maxIdleBuf = 64 << 10

// bufs returns the write buffers an idle connection gives back: the batch
// being built, the spare batch and the header block scratch.
func (cc *ClientConn) bufs() [3]*[]byte { return [3]*[]byte{&cc.wb.b, &cc.spare, &cc.hbuf} }

// releaseBuffers gives the write buffers of a connection that just became
// idle to idleBufs. It takes the write lock only if it is free: a writer
// holding it (a control frame, a new request) is not done with them.
func (cc *ClientConn) releaseBuffers() {
	select {
	case cc.wlock <- struct{}{}:
	default:
		return
	}
	if !cc.flushing && len(cc.wb.b) == 0 {
		for i, b := range cc.bufs() {
			if cap(*b) == 0 || cap(*b) > maxIdleBuf {
				*b = nil
				continue
			}
			box := cc.boxes[i]
			if box == nil {
				box = new([]byte)
			}
			cc.boxes[i] = nil
			*box, *b = (*b)[:0], nil
			idleBufs.Put(box)
		}
	}
	<-cc.wlock
}

// takeBuffers gives the connection write buffers again after
// releaseBuffers, from idleBufs. The write lock is held; spare is left
// alone while a batch is being sent (the sender puts its buffer there).
func (cc *ClientConn) takeBuffers() {
	for i, b := range cc.bufs() {
		if *b != nil || i == 1 && cc.flushing {
			continue
		}
		box := idleBufs.Get().(*[]byte)
		*b, *box = (*box)[:0], nil
		cc.boxes[i] = box
	}
}

// ctrlFrame is a control frame we owe the peer: a SETTINGS ACK, a PING, an
// RST_STREAM or a WINDOW_UPDATE. It is queued under cc.mu and written by
// whoever next holds the write lock.
type ctrlFrame struct {
	typ  FrameType
	ack  bool    // PING
	id   uint32  // RST_STREAM, WINDOW_UPDATE
	val  uint32  // RST_STREAM code, WINDOW_UPDATE increment
	data [8]byte // PING
}

// wrote records the first error of a frame write. Write errors are refused
// frames (the buffer itself cannot fail), so they mean a bug in h2;
// unlockWrite ends the connection with INTERNAL_ERROR. The write lock is
// held.
func (cc *ClientConn) wrote(err error) {
	if err != nil && cc.werr == nil {
		cc.werr = err
	}
}

// writeCtrl writes f. The write lock and cc.mu are held.
func (cc *ClientConn) writeCtrl(f ctrlFrame) error {
	switch f.typ {
	case FrameSettings:
		return cc.fr.WriteSettingsAck()
	case FramePing:
		return cc.fr.WritePing(f.ack, f.data)
	case FrameRSTStream:
		return cc.fr.WriteRSTStream(f.id, ErrCode(f.val))
	case FrameWindowUpdate:
		return cc.fr.WriteWindowUpdate(f.id, f.val)
	}
	return fmt.Errorf("h2: no control frame of type %v", f.typ)
}

// writeHeaders writes a HEADERS frame carrying block, split into
// CONTINUATION frames of at most maxFrame bytes. The write lock is held.
func (cc *ClientConn) writeHeaders(id uint32, end bool, prio *PriorityParam, block []byte, maxFrame int) {
	room := maxFrame
	if prio != nil {
		room -= 5
	}
	first := block[:min(len(block), room)]
	block = block[len(first):]
	// The frames go straight into the batch, not through the Framer,
	// whose own buffer would keep a copy of the largest header block an
	// idle connection ever sent. The bytes are the Framer's.
	flags := uint8(0)
	if end {
		flags |= uint8(http2.FlagHeadersEndStream)
	}
	if len(block) == 0 {
		flags |= uint8(http2.FlagHeadersEndHeaders)
	}
	n := len(first)
	if prio != nil {
		// Always with the PRIORITY flag, a zero priority (weight 1 on
		// stream 0, not exclusive) included: the browser sends it, where
		// the Framer's WriteHeaders would send none.
		flags |= uint8(http2.FlagHeadersPriority)
		n += 5
	}
	b := appendFrameHeader(cc.wb.b, n, FrameHeaders, flags, id)
	if prio != nil {
		dep := prio.StreamDep
		if prio.Exclusive {
			dep |= 1 << 31
		}
		b = append(b, byte(dep>>24), byte(dep>>16), byte(dep>>8), byte(dep), prio.Weight)
	}
	b = append(b, first...)
	for len(block) > 0 {
		frag := block[:min(len(block), maxFrame)]
		block = block[len(frag):]
		flags = 0
		if len(block) == 0 {
			flags = uint8(http2.FlagContinuationEndHeaders)
		}
		b = appendFrameHeader(b, len(frag), FrameContinuation, flags, id)
		b = append(b, frag...)
	}
	cc.wb.b = b
}

// appendFrameHeader appends the 9-byte header of a frame of length n (the
// tests write frames with it too, a reserved bit set included).
func appendFrameHeader(b []byte, n int, typ FrameType, flags uint8, id uint32) []byte {
	return append(b, byte(n>>16), byte(n>>8), byte(n), byte(typ), flags,
		byte(id>>24), byte(id>>16), byte(id>>8), byte(id))
}

// lockWrite takes the write lock, giving up when ctx (nil: never) or the
// connection ends. It reports whether the lock is held.
func (cc *ClientConn) lockWrite(ctx context.Context) bool {
	select {
	case cc.wlock <- struct{}{}:
		cc.takeBuffers()
		return true
	default:
	}
	var ctxDone <-chan struct{}
	if ctx != nil {
		ctxDone = ctx.Done()
	}
	cc.wwait.Add(1)
	select {
	case cc.wlock <- struct{}{}:
		cc.wwait.Add(-1)
		cc.takeBuffers()
		return true
	case <-ctxDone:
	case <-cc.done:
	}
	cc.wwait.Add(-1)
	// The holder may have left its batch for us to flush.
	cc.kick()
	return false
}

// maxFlushRounds bounds the batches one unlockWrite writes for others
// before it leaves the rest to the control writer.
const maxFlushRounds = 4

// unlockWrite writes owed control frames into the batch, releases the lock
// and sends the batch, unless another writer is about to add to it or a
// write is already under way (whose writer then sends it: frames that
// arrive during a write go out together in the next one). The write itself
// happens outside the lock, so that other requests add their frames
// meanwhile instead of waiting.
func (cc *ClientConn) unlockWrite() {
	cc.mu.Lock()
	for _, f := range cc.ctrl {
		cc.wrote(cc.writeCtrl(f))
	}
	clear(cc.ctrl)
	cc.ctrl = cc.ctrl[:0]
	busy := len(cc.streams)+cc.starting+cc.reserved+cc.held > 1
	cc.mu.Unlock()
	if cc.werr != nil {
		err := ConnectionError{Code: ErrCodeInternal, Reason: "writing a frame: " + cc.werr.Error()}
		cc.wb.reset()
		<-cc.wlock
		cc.fail(err)
		return
	}
	for round := range maxFlushRounds {
		if len(cc.wb.b) == 0 || cc.flushing || cc.wwait.Load() > 0 {
			break
		}
		cc.flushing = true
		if round == 0 && busy {
			// With other requests in flight, let the goroutines ready to
			// run add their frames first (responses just woke them, and
			// they are about to send their next requests): one write then
			// carries them all, as a browser writes what one turn of its
			// network loop produced. With nothing else to run this returns
			// at once; a lone request never waits.
			<-cc.wlock
			runtime.Gosched()
			cc.wlock <- struct{}{}
		}
		out := cc.wb.b
		cc.wb.b, cc.spare = cc.spare[:0], nil
		<-cc.wlock
		cc.nclock <- struct{}{} // held by fail for a GOAWAY, briefly
		if cc.cfg.WriteTimeout > 0 {
			cc.nc.SetWriteDeadline(time.Now().Add(cc.cfg.WriteTimeout))
		}
		_, err := cc.nc.Write(out)
		<-cc.nclock
		cc.wlock <- struct{}{} // held only briefly by others
		cc.flushing = false
		if cap(out) <= 1<<20 {
			cc.spare = out[:0]
		}
		if err != nil {
			cc.wb.reset()
			<-cc.wlock
			cc.fail(err)
			return
		}
	}
	pending := len(cc.wb.b) > 0 && !cc.flushing
	<-cc.wlock
	if pending && cc.wwait.Load() == 0 {
		cc.kick()
	}
	if !pending && !busy {
		// The stream may have ended while this batch was being sent, when
		// afterUnlock found the write lock taken.
		cc.mu.Lock()
		idle := len(cc.streams)+cc.starting+cc.reserved == 0
		cc.mu.Unlock()
		if idle {
			cc.releaseBuffers()
		}
	}
}

// kick wakes the control writer, starting one when none runs.
func (cc *ClientConn) kick() {
	select {
	case cc.wake <- struct{}{}:
	default:
	}
	if !cc.writerOn.Load() {
		cc.startWriter()
	}
}

// startWriter starts the control writer unless one runs or the connection
// has been closed. The writer runs while the connection has streams and
// exits once it is idle (an idle connection then holds one goroutine, its
// read loop); kick starts it again.
func (cc *ClientConn) startWriter() {
	cc.wmu.Lock()
	defer cc.wmu.Unlock()
	if cc.writerOn.Load() || cc.wstopped {
		return
	}
	cc.writerOn.Store(true)
	cc.writers.Add(1)
	go cc.controlWriter()
}

// controlWriter writes owed control frames and batches nobody else
// flushed, until the connection ends or has no stream left after a flush.
// It is woken through cc.wake; a wake-up that comes as it exits starts a
// new writer (kick reads writerOn after its send, and the exiting writer
// looks at cc.wake after clearing writerOn, so one of them sees the other).
func (cc *ClientConn) controlWriter() {
	defer cc.writers.Done()
	for {
		select {
		case <-cc.wake:
		case <-cc.done:
			return
		}
		if !cc.lockWrite(nil) {
			return
		}
		cc.unlockWrite()
		if len(cc.wake) > 0 || !cc.Idle() {
			continue
		}
		cc.writerOn.Store(false)
		if len(cc.wake) > 0 {
			cc.startWriter()
		}
		return
	}
}

// queueLocked adds a control frame we owe. Past Config.MaxControlQueue
// frames not yet written, the connection ends with ENHANCE_YOUR_CALM (the
// caller must call fail when it returns false). cc.mu is held.
func (cc *ClientConn) queueLocked(f ctrlFrame) bool {
	limit := cc.cfg.MaxControlQueue
	if limit <= 0 {
		limit = defaultMaxControlQueue
	}
	if len(cc.ctrl) >= limit {
		return false
	}
	cc.ctrl = append(cc.ctrl, f)
	return true
}
