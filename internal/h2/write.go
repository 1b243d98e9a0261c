package h2

import (
	"context"
	"fmt"
	"runtime"
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
	p := http2.HeadersFrameParam{StreamID: id, BlockFragment: first, EndStream: end, EndHeaders: len(block) == 0}
	switch {
	case prio == nil:
		cc.wrote(cc.fr.WriteHeaders(p))
	case prio.IsZero():
		// WriteHeaders sends a zero priority (weight 1 on stream 0, not
		// exclusive) as none; the browser sends the PRIORITY flag.
		flags := http2.FlagHeadersPriority
		if p.EndStream {
			flags |= http2.FlagHeadersEndStream
		}
		if p.EndHeaders {
			flags |= http2.FlagHeadersEndHeaders
		}
		payload := append(make([]byte, 5, 5+len(first)), first...)
		cc.wrote(cc.fr.WriteRawFrame(FrameHeaders, flags, id, payload))
	default:
		p.Priority = *prio
		cc.wrote(cc.fr.WriteHeaders(p))
	}
	for len(block) > 0 {
		frag := block[:min(len(block), maxFrame)]
		block = block[len(frag):]
		cc.wrote(cc.fr.WriteContinuation(id, len(block) == 0, frag))
	}
}

// lockWrite takes the write lock, giving up when ctx (nil: never) or the
// connection ends. It reports whether the lock is held.
func (cc *ClientConn) lockWrite(ctx context.Context) bool {
	select {
	case cc.wlock <- struct{}{}:
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
