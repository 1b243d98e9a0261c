package quic

import (
	"context"
	"io"
	"time"

	"github.com/guise-http/guise/internal/quicwire"
)

// sendBufLimit bounds the bytes a stream holds written and not yet
// acknowledged: Write blocks past it, so a server that stops reading
// (its flow control closed) costs at most this much per stream.
const sendBufLimit = 1 << 20

// streams is the connection's stream state, under Conn.mu.
type streams struct {
	c  *Conn
	m  map[uint64]*stream
	sq []*stream // streams with frames to send, in turn

	nextBidi, nextUni  uint64 // how many of each the client opened
	maxBidi, maxUni    uint64 // the server's limits
	peerUni            uint64 // server uni streams opened
	peerUniClosed      uint64
	maxPeerUni         uint64 // our limit on them
	pendingMaxStreams  bool
	accept             []*stream
	acceptCh, openCh   chan struct{}
	sendMax, sentBytes uint64 // connection flow control, sending
	blockedAt          uint64
	pendingBlocked     bool
	recvMax, window    uint64    // connection flow control, receiving
	connBlocked        []*stream // streams waiting for MAX_DATA
	freeBufs           [][]byte  // buffers of finished streams, for the next ones
	freeSmall          [][]byte  // those of smallBuf bytes, kept in larger numbers
	recvHighest        uint64
	consumed           uint64
	pendingMaxData     bool
}

func (ss *streams) init(c *Conn) {
	ss.c = c
	ss.m = map[uint64]*stream{}
	ss.acceptCh, ss.openCh = make(chan struct{}, 1), make(chan struct{}, 1)
	ss.recvMax, ss.window = c.local.maxData, c.local.maxData
	ss.maxPeerUni = c.local.maxStreamsUni
}

func (ss *streams) applyPeer(p *params) {
	ss.sendMax = p.maxData
	ss.maxBidi, ss.maxUni = p.maxStreamsBidi, p.maxStreamsUni
}

// rejectedLimits applies the server's new limits p after it declined
// 0-RTT (RFC 9000 §7.4.1: they replace the remembered ones), and returns
// ErrEarlyLimits if 0-RTT already sent more than they allow: that data is
// to be sent again and cannot be.
func (ss *streams) rejectedLimits(p *params) error {
	if ss.sentBytes > p.maxData {
		return ErrEarlyLimits
	}
	ss.sendMax = p.maxData
	for id, s := range ss.m {
		if id&1 != 0 {
			continue
		}
		lim := p.bidiRemote
		if id&2 != 0 {
			lim = p.uni
		}
		if s.sendNext > lim {
			return ErrEarlyLimits
		}
		s.peerMax = lim
	}
	return nil
}

// earlyLimits gives the streams opened under 0-RTT's remembered limits
// the server's new ones (p, from this handshake).
func (ss *streams) earlyLimits(p *params) {
	for id, s := range ss.m {
		if id&1 == 0 { // client-initiated
			if id&2 != 0 {
				s.peerMax = max(s.peerMax, p.uni)
			} else {
				s.peerMax = max(s.peerMax, p.bidiRemote)
			}
		}
	}
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

func (ss *streams) closeAll(err error) {
	for _, s := range ss.m {
		signal(s.readCh)
		signal(s.writeCh)
	}
	signal(ss.acceptCh)
	signal(ss.openCh)
}

// stream is both halves of one stream; a uni stream uses one.
type stream struct {
	id               uint64
	c                *Conn
	hasSend, hasRecv bool
	queued           bool
	readCh, writeCh  chan struct{}
	rdl, wdl         time.Time

	// sending: sendBuf[sendStart:] holds offsets [bufBase, writeOff)
	sendBuf                           []byte
	sendStart                         int
	bufBase, writeOff, sendNext       uint64
	lost, acked                       rangeSet
	peerMax, blockedAt                uint64
	finWanted, finSent, finLost       bool
	finAcked                          bool
	resetCode                         uint64
	resetPending, resetSent, resetAck bool
	sendErr                           error
	blockedPending                    bool

	// receiving
	ra                     reassembly
	recvMax, window        uint64
	highest, finalSize     uint64
	finKnown, eofSeen      bool
	recvErr                error
	discarding             bool
	stopPending            bool
	stopCode               uint64
	maxDataPending         bool
	sendDone, recvDoneFlag bool

	pub Stream // what OpenStream returns
}

func (ss *streams) newStream(id uint64) *stream {
	c := ss.c
	// writeCh is made by the first Write that waits (most never do);
	// signalling a nil channel does nothing
	s := &stream{id: id, c: c, readCh: make(chan struct{}, 1)}
	server, uni := id&1 == 1, id&2 != 0
	s.hasSend = !server || !uni
	s.hasRecv = server || !uni
	switch {
	case !server && !uni:
		s.peerMax = c.peer.bidiRemote
		s.recvMax = c.local.bidiLocal
	case !server && uni:
		s.peerMax = c.peer.uni
	case server && uni:
		s.recvMax = c.local.uni
	default:
		s.peerMax, s.recvMax = c.peer.bidiLocal, c.local.bidiRemote
	}
	s.window = s.recvMax
	s.sendDone, s.recvDoneFlag = !s.hasSend, !s.hasRecv
	ss.m[id] = s
	return s
}

// open opens the next client stream, waiting for the server's limit.
func (c *Conn) openStream(ctx context.Context, uni bool) (*stream, error) {
	for {
		c.mu.Lock()
		if c.closed {
			err := c.err
			c.mu.Unlock()
			return nil, err
		}
		ss := &c.streams
		if uni && ss.nextUni < ss.maxUni {
			s := ss.newStream(ss.nextUni<<2 | 2)
			ss.nextUni++
			c.mu.Unlock()
			return s, nil
		}
		if !uni && ss.nextBidi < ss.maxBidi {
			s := ss.newStream(ss.nextBidi << 2)
			ss.nextBidi++
			c.mu.Unlock()
			return s, nil
		}
		c.mu.Unlock()
		select {
		case <-ss.openCh:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.done:
		}
	}
}

// OpenStream opens a bidirectional stream, waiting while the server's
// stream limit is reached.
func (c *Conn) OpenStream(ctx context.Context) (*Stream, error) {
	s, err := c.openStream(ctx, false)
	if err != nil {
		return nil, err
	}
	s.pub.s = s
	return &s.pub, nil // part of the stream: no allocation of its own
}

// OpenUniStream opens a unidirectional stream.
func (c *Conn) OpenUniStream(ctx context.Context) (*SendStream, error) {
	s, err := c.openStream(ctx, true)
	if err != nil {
		return nil, err
	}
	return &SendStream{s}, nil
}

// AcceptUniStream returns the next unidirectional stream the server
// opened.
func (c *Conn) AcceptUniStream(ctx context.Context) (*ReceiveStream, error) {
	for {
		c.mu.Lock()
		ss := &c.streams
		if len(ss.accept) > 0 {
			s := ss.accept[0]
			ss.accept = ss.accept[1:]
			c.mu.Unlock()
			return &ReceiveStream{s}, nil
		}
		if c.closed {
			err := c.err
			c.mu.Unlock()
			return nil, err
		}
		c.mu.Unlock()
		select {
		case <-ss.acceptCh:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-c.done:
		}
	}
}

// Stream is a bidirectional stream: Read and Write may run at the same
// time in two goroutines; each half is for one goroutine at a time. The
// connection keeps a stream's state until both halves are over: its FIN
// read (Read returned io.EOF), a reset received or CancelRead; and its
// FIN or RESET_STREAM acknowledged. A caller that stops reading before
// io.EOF calls CancelRead.
type Stream struct{ s *stream }

// SendStream is the sending half of a stream.
type SendStream struct{ s *stream }

// ReceiveStream is the receiving half of a stream.
type ReceiveStream struct{ s *stream }

// ID returns the stream ID.
func (s *Stream) ID() uint64 { return s.s.id }

// Read reads what the server sent: io.EOF after its FIN, a
// *StreamError after a reset or CancelRead, the connection's error.
func (s *Stream) Read(p []byte) (int, error) { return s.s.read(p) }

// Write queues p for sending; it blocks while the stream holds
// sendBufLimit bytes unacknowledged.
func (s *Stream) Write(p []byte) (int, error) { return s.s.write(p) }

// Close ends the sending half with a FIN after what was written.
func (s *Stream) Close() error { return s.s.closeSend() }

// CancelRead asks the server to stop sending (STOP_SENDING with code).
func (s *Stream) CancelRead(code uint64) { s.s.cancelRead(code) }

// CancelWrite abandons the sending half (RESET_STREAM with code).
func (s *Stream) CancelWrite(code uint64) { s.s.cancelWrite(code) }

// SetReadDeadline bounds Read; a zero time means none.
func (s *Stream) SetReadDeadline(t time.Time) error { return s.s.setDeadline(t, true) }

// SetWriteDeadline bounds Write; a zero time means none.
func (s *Stream) SetWriteDeadline(t time.Time) error { return s.s.setDeadline(t, false) }

// SetDeadline sets both deadlines.
func (s *Stream) SetDeadline(t time.Time) error {
	s.s.setDeadline(t, true)
	return s.s.setDeadline(t, false)
}

// ID returns the stream ID.
func (s *SendStream) ID() uint64 { return s.s.id }

// Write is Stream.Write.
func (s *SendStream) Write(p []byte) (int, error) { return s.s.write(p) }

// Close is Stream.Close.
func (s *SendStream) Close() error { return s.s.closeSend() }

// CancelWrite is Stream.CancelWrite.
func (s *SendStream) CancelWrite(code uint64) { s.s.cancelWrite(code) }

// SetWriteDeadline is Stream.SetWriteDeadline.
func (s *SendStream) SetWriteDeadline(t time.Time) error { return s.s.setDeadline(t, false) }

// ID returns the stream ID.
func (s *ReceiveStream) ID() uint64 { return s.s.id }

// Read is Stream.Read.
func (s *ReceiveStream) Read(p []byte) (int, error) { return s.s.read(p) }

// CancelRead is Stream.CancelRead.
func (s *ReceiveStream) CancelRead(code uint64) { s.s.cancelRead(code) }

// SetReadDeadline is Stream.SetReadDeadline.
func (s *ReceiveStream) SetReadDeadline(t time.Time) error { return s.s.setDeadline(t, true) }

func (s *stream) setDeadline(t time.Time, read bool) error {
	s.c.mu.Lock()
	if read {
		s.rdl = t
		signal(s.readCh)
	} else {
		s.wdl = t
		signal(s.writeCh)
	}
	s.c.mu.Unlock()
	return nil
}

// wait blocks until ch is signalled, the connection ends or dl passes.
func (s *stream) wait(ch chan struct{}, dl time.Time) error {
	if dl.IsZero() {
		select {
		case <-ch:
		case <-s.c.done:
		}
		return nil
	}
	d := time.Until(dl)
	if d <= 0 {
		return ErrDeadline
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
	case <-s.c.done:
	case <-t.C:
		return ErrDeadline
	}
	return nil
}

func (s *stream) read(p []byte) (int, error) {
	c := s.c
	if !s.hasRecv {
		return 0, ErrStreamClosed
	}
	for {
		c.mu.Lock()
		if s.recvErr != nil {
			err := s.recvErr
			c.mu.Unlock()
			return 0, err
		}
		if s.ra.readable() > 0 {
			n := s.ra.read(p)
			c.onConsumed(s, uint64(n))
			c.mu.Unlock()
			return n, nil
		}
		if s.finKnown && s.ra.readOff == s.finalSize {
			s.eofSeen = true
			c.streams.maybeDone(s)
			c.mu.Unlock()
			return 0, io.EOF
		}
		if c.closed {
			err := c.err
			c.mu.Unlock()
			return 0, err
		}
		if len(p) == 0 {
			c.mu.Unlock()
			return 0, nil
		}
		dl := s.rdl
		c.mu.Unlock()
		if err := s.wait(s.readCh, dl); err != nil {
			return 0, err
		}
	}
}

// onConsumed credits n bytes the application took (or guise dropped)
// and raises the windows when half is used.
func (c *Conn) onConsumed(s *stream, n uint64) {
	ss := &c.streams
	ss.consumed += n
	if ss.recvMax-ss.consumed < ss.window/2 {
		ss.recvMax = ss.consumed + ss.window
		ss.pendingMaxData = true
	}
	if s != nil && !s.finKnown && s.recvMax-s.ra.readOff < s.window/2 {
		s.recvMax = s.ra.readOff + s.window
		s.maxDataPending = true
		ss.queue(s)
	}
	if ss.pendingMaxData || (s != nil && s.maxDataPending) {
		c.flush()
	}
}

func (s *stream) write(p []byte) (int, error) {
	c := s.c
	if !s.hasSend {
		return 0, ErrStreamClosed
	}
	n := 0
	for {
		c.mu.Lock()
		if err := s.writeErr(); err != nil {
			c.mu.Unlock()
			return n, err
		}
		if room := sendBufLimit - int(s.writeOff-s.bufBase); room > 0 && n < len(p) {
			k := min(room, len(p)-n)
			// compact when that frees a quarter of the buffer, else grow:
			// the copies stay a small multiple of the bytes written
			if len(s.sendBuf)+k > cap(s.sendBuf) && s.sendStart >= cap(s.sendBuf)/4 {
				m := copy(s.sendBuf, s.sendBuf[s.sendStart:])
				s.sendBuf, s.sendStart = s.sendBuf[:m], 0
			}
			if s.sendBuf == nil {
				s.sendBuf = c.streams.buffer()
			}
			s.sendBuf = append(s.sendBuf, p[n:n+k]...)
			s.writeOff += uint64(k)
			n += k
			c.streams.queue(s)
			c.flush()
		}
		if n == len(p) {
			c.mu.Unlock()
			return n, nil
		}
		dl := s.wdl
		if s.writeCh == nil {
			s.writeCh = make(chan struct{}, 1)
		}
		ch := s.writeCh
		c.mu.Unlock()
		if err := s.wait(ch, dl); err != nil {
			return n, err
		}
	}
}

func (s *stream) writeErr() error {
	switch {
	case s.sendErr != nil:
		return s.sendErr
	case s.c.closed:
		return s.c.err
	case s.finWanted:
		return ErrStreamClosed
	}
	return nil
}

func (s *stream) closeSend() error {
	c := s.c
	if !s.hasSend {
		return ErrStreamClosed
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if s.sendErr != nil || s.finWanted || c.closed {
		return nil
	}
	s.finWanted = true
	c.streams.queue(s)
	c.flush()
	return nil
}

func (s *stream) cancelWrite(code uint64) {
	c := s.c
	if !s.hasSend {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if s.sendErr != nil || s.finAcked || c.closed {
		return
	}
	s.reset(code, false)
	c.flush()
}

// reset abandons the sending half with a RESET_STREAM.
func (s *stream) reset(code uint64, remote bool) {
	s.sendErr = &StreamError{StreamID: s.id, Code: code, Remote: remote}
	s.resetCode, s.resetPending = code, true
	s.sendBuf, s.sendStart, s.lost = nil, 0, nil
	s.bufBase = s.writeOff
	s.c.streams.queue(s)
	signal(s.writeCh)
}

func (s *stream) cancelRead(code uint64) {
	c := s.c
	if !s.hasRecv {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if s.recvErr != nil || s.eofSeen || c.closed {
		return
	}
	s.recvErr = &StreamError{StreamID: s.id, Code: code}
	if !s.finKnown || s.highest < s.finalSize {
		s.stopPending, s.stopCode = true, code
		c.streams.queue(s)
	}
	s.discardRecv()
	c.streams.maybeDone(s)
	signal(s.readCh)
	c.flush()
}

// discardRecv drops what was received and unread, crediting it.
func (s *stream) discardRecv() {
	if s.discarding {
		return
	}
	s.discarding = true
	n := s.highest - s.ra.readOff
	s.ra.discard()
	s.ra.readOff = s.highest
	s.maxDataPending = false
	ss := &s.c.streams
	ss.consumed += n
	if ss.recvMax-ss.consumed < ss.window/2 {
		ss.recvMax = ss.consumed + ss.window
		ss.pendingMaxData = true
	}
}

// smallBuf is the size of a new stream buffer: a request's head or a
// small response fits, and the buffer goes back to the connection when the
// stream ends, so that concurrent small requests reuse theirs.
const smallBuf = 4096

// maxFreeSmall and maxFreeLarge bound the buffers a connection keeps:
// 64 small ones (256 KiB) for the streams of concurrent requests (two
// buffers each, alive until the FIN is acknowledged), 8
// grown ones (up to 4 MiB each) for downloads and uploads.
const (
	maxFreeSmall = 64
	maxFreeLarge = 8
)

// buffer returns a finished stream's buffer, a grown one first, or a new
// small one.
func (ss *streams) buffer() []byte {
	for _, free := range []*[][]byte{&ss.freeBufs, &ss.freeSmall} {
		if n := len(*free); n > 0 {
			b := (*free)[n-1]
			(*free)[n-1] = nil
			*free = (*free)[:n-1]
			return b
		}
	}
	return make([]byte, 0, smallBuf)
}

// recycle keeps b for the next stream, within the bounds.
func (ss *streams) recycle(b []byte) {
	switch c := cap(b); {
	case c == smallBuf && len(ss.freeSmall) < maxFreeSmall:
		ss.freeSmall = append(ss.freeSmall, b[:0])
	case c > smallBuf && c <= 4*sendBufLimit && len(ss.freeBufs) < maxFreeLarge:
		ss.freeBufs = append(ss.freeBufs, b[:0])
	}
}

// queue puts s in the send rotation.
func (ss *streams) queue(s *stream) {
	if !s.queued {
		s.queued = true
		ss.sq = append(ss.sq, s)
	}
}

// maybeDone forgets s once both halves are over.
func (ss *streams) maybeDone(s *stream) {
	if s.hasSend && !s.sendDone {
		s.sendDone = s.finAcked || s.resetAck
	}
	if s.hasRecv && !s.recvDoneFlag {
		s.recvDoneFlag = s.eofSeen || s.recvErr != nil && (s.discarding || s.finKnown)
	}
	if !s.sendDone || !s.recvDoneFlag || ss.m[s.id] != s {
		return
	}
	delete(ss.m, s.id)
	ss.recycle(s.sendBuf)
	ss.recycle(s.ra.buf)
	s.sendBuf, s.ra.buf = nil, nil
	if s.id&3 == 3 {
		ss.peerUniClosed++
		ss.maxPeerUni = ss.peerUniClosed + ss.c.local.maxStreamsUni
		ss.pendingMaxStreams = true
	}
}

// get returns the stream a frame from the server names, opening server
// streams as they come; nil with no error for a stream already done.
func (ss *streams) get(id uint64, recv bool, ft quicwire.FrameType) *stream {
	if s := ss.m[id]; s != nil {
		if recv && !s.hasRecv || !recv && !s.hasSend {
			ss.c.fail(StreamStateError, ft, "frame for the wrong half of a stream", nil)
			return nil
		}
		return s
	}
	c := ss.c
	idx := id >> 2
	server, uni := id&1 == 1, id&2 != 0
	switch {
	case !server:
		n := ss.nextBidi
		if uni {
			n = ss.nextUni
		}
		if idx >= n || uni && recv {
			c.fail(StreamStateError, ft, "frame for a client stream never opened", nil)
		}
		return nil
	case !uni:
		if idx >= c.local.maxStreamsBidi {
			c.fail(StreamLimitError, ft, "", nil)
		}
		return nil // HTTP/3 servers open no bidirectional streams: their data is dropped
	case !recv:
		c.fail(StreamStateError, ft, "frame for the send half of a server stream", nil)
		return nil
	case idx >= ss.maxPeerUni:
		c.fail(StreamLimitError, ft, "", nil)
		return nil
	case idx < ss.peerUni:
		return nil
	}
	var s *stream
	for ; ss.peerUni <= idx; ss.peerUni++ {
		s = ss.newStream(ss.peerUni<<2 | 3)
		ss.accept = append(ss.accept, s)
	}
	signal(ss.acceptCh)
	return s
}

// handleFrame acts on a stream-related frame.
func (ss *streams) handleFrame(f *quicwire.Frame) {
	c := ss.c
	switch t := f.Type; {
	case t.IsStream():
		s := ss.get(f.StreamID, true, t)
		if s == nil {
			return
		}
		s.onData(f)
	case t == quicwire.FrameResetStream:
		s := ss.get(f.StreamID, true, t)
		if s == nil {
			return
		}
		s.onReset(f)
	case t == quicwire.FrameStopSending:
		s := ss.get(f.StreamID, false, t)
		if s == nil || s.sendErr != nil || s.finAcked {
			return
		}
		s.reset(f.ErrorCode, true)
	case t == quicwire.FrameMaxStreamData:
		s := ss.get(f.StreamID, false, t)
		if s != nil && f.Maximum > s.peerMax {
			s.peerMax = f.Maximum
			ss.queue(s)
		}
	case t == quicwire.FrameStreamDataBlocked:
		ss.get(f.StreamID, true, t)
	case t == quicwire.FrameMaxData:
		if f.Maximum > ss.sendMax {
			ss.sendMax = f.Maximum
			for _, s := range ss.connBlocked {
				ss.queue(s)
			}
			clear(ss.connBlocked)
			ss.connBlocked = ss.connBlocked[:0]
		}
	case t == quicwire.FrameMaxStreamsBidi:
		if f.Maximum > ss.maxBidi {
			ss.maxBidi = f.Maximum
			signal(ss.openCh)
		}
	case t == quicwire.FrameMaxStreamsUni:
		if f.Maximum > ss.maxUni {
			ss.maxUni = f.Maximum
			signal(ss.openCh)
		}
	case t == quicwire.FrameDataBlocked, t == quicwire.FrameStreamsBlockedBidi, t == quicwire.FrameStreamsBlockedUni:
	default:
		c.fail(FrameEncodingError, t, "unknown frame", nil)
	}
}

// checkFinal applies the flow control and final size rules to data
// ending at end (RFC 9000 §4.5).
func (s *stream) checkFinal(end uint64, fin bool, ft quicwire.FrameType) bool {
	c := s.c
	switch {
	case end > s.recvMax:
		c.fail(FlowControlError, ft, "stream data beyond its limit", nil)
		return false
	case s.finKnown && (end > s.finalSize || fin && end != s.finalSize):
		c.fail(FinalSizeError, ft, "", nil)
		return false
	case fin && end < s.highest:
		c.fail(FinalSizeError, ft, "", nil)
		return false
	}
	if end > s.highest {
		ss := &c.streams
		ss.recvHighest += end - s.highest
		if ss.recvHighest > ss.recvMax {
			c.fail(FlowControlError, ft, "data beyond the connection limit", nil)
			return false
		}
		if s.discarding {
			ss.consumed += end - s.highest
		}
		s.highest = end
	}
	if fin {
		s.finKnown, s.finalSize = true, end
	}
	return true
}

func (s *stream) onData(f *quicwire.Frame) {
	end := f.Offset + uint64(len(f.Data))
	if !s.checkFinal(end, f.Fin, f.Type) {
		return
	}
	if s.discarding {
		if s.discarding {
			s.ra.readOff = s.highest
		}
		return
	}
	if s.ra.pendLen > int(s.window)*2 {
		s.c.fail(InternalError, f.Type, "reassembly buffer", nil)
		return
	}
	if s.ra.buf == nil {
		s.ra.buf = s.c.streams.buffer()
	}
	if s.ra.push(f.Offset, f.Data) || f.Fin && s.ra.readOff == s.finalSize {
		signal(s.readCh)
	}
	if f.Fin {
		signal(s.readCh)
	}
}

func (s *stream) onReset(f *quicwire.Frame) {
	if !s.checkFinal(f.FinalSize, true, f.Type) {
		return
	}
	if s.recvErr == nil && !s.eofSeen {
		s.recvErr = &StreamError{StreamID: s.id, Code: f.ErrorCode, Remote: true}
	}
	s.discardRecv()
	s.stopPending = false
	s.c.streams.maybeDone(s)
	signal(s.readCh)
}

// onFrameAcked notes a stream frame the server acknowledged.
func (ss *streams) onFrameAcked(fr *sentFrame) {
	switch fr.kind {
	case sfStream:
		s := ss.m[fr.id]
		if s == nil {
			return
		}
		if fr.fin {
			s.finAcked = true
		}
		if s.sendErr != nil {
			return
		}
		lo, hi := max(fr.off, s.bufBase), fr.off+uint64(fr.n)
		p := max(hi, s.bufBase) // acknowledged in order: no range to keep
		if len(s.acked) > 0 || lo > s.bufBase {
			s.acked.add(lo, hi)
			p = s.acked.prefix(s.bufBase)
		}
		if p > s.bufBase {
			s.sendStart += int(p - s.bufBase)
			s.bufBase = p
			s.acked.removeBelow(p)
			s.lost.removeBelow(p)
			if s.sendStart == len(s.sendBuf) {
				s.sendBuf, s.sendStart = s.sendBuf[:0], 0
			}
			signal(s.writeCh)
		}
		if s.finAcked && s.bufBase == s.writeOff {
			ss.maybeDone(s)
		}
	case sfResetStream:
		if s := ss.m[fr.id]; s != nil {
			s.resetAck = true
			ss.maybeDone(s)
		}
	}
}

// onFrameLost queues a lost stream frame's content again.
func (ss *streams) onFrameLost(fr *sentFrame) {
	switch fr.kind {
	case sfMaxData:
		ss.pendingMaxData = true
	case sfMaxStreamsUni:
		ss.pendingMaxStreams = true
	case sfRetireCID:
		ss.c.retireQueue = append(ss.c.retireQueue, fr.id)
	case sfNewCID:
		ss.c.onCIDLost(fr.id)
		return
	}
	s := ss.m[fr.id]
	if s == nil {
		return
	}
	switch fr.kind {
	case sfStream:
		if s.sendErr != nil {
			return
		}
		if lo := max(fr.off, s.bufBase); lo < fr.off+uint64(fr.n) {
			s.lost.add(lo, fr.off+uint64(fr.n))
		}
		if fr.fin && !s.finAcked {
			s.finLost = true
		}
	case sfMaxStreamData:
		if !s.finKnown && !s.discarding {
			s.maxDataPending = true
		}
	case sfResetStream:
		if !s.resetAck {
			s.resetPending = true
		}
	case sfStopSending:
		if !s.finKnown || s.highest < s.finalSize {
			s.stopPending = true
		}
	default:
		return
	}
	ss.queue(s)
}

// hasWork reports whether s has a frame to send now.
func (s *stream) hasWork(connCredit uint64) bool {
	if s.maxDataPending || s.stopPending || s.resetPending || s.blockedPending {
		return true
	}
	if s.sendErr != nil {
		return false
	}
	if len(s.lost) > 0 || s.finLost {
		return true
	}
	if s.sendNext < s.writeOff && s.sendNext < s.peerMax && connCredit > 0 {
		return true
	}
	return s.finWanted && !s.finSent && s.sendNext == s.writeOff
}

// appendFrames adds s's frames to the packet being built, as many as
// room allows. It returns false when s still has work.
func (s *stream) appendFrames(b *builder, p *sentPacket) bool {
	ss := &s.c.streams
	if s.maxDataPending && b.room() >= 17 {
		b.add(quicwire.AppendStreamUintFrame(b.buf, quicwire.FrameMaxStreamData, s.id, s.recvMax))
		p.frames = append(p.frames, sentFrame{kind: sfMaxStreamData, id: s.id})
		s.maxDataPending = false
	}
	if s.stopPending && b.room() >= 17 {
		b.add(quicwire.AppendStreamUintFrame(b.buf, quicwire.FrameStopSending, s.id, s.stopCode))
		p.frames = append(p.frames, sentFrame{kind: sfStopSending, id: s.id})
		s.stopPending = false
	}
	if s.resetPending && b.room() >= 25 {
		b.add(quicwire.AppendResetStreamFrame(b.buf, s.id, s.resetCode, s.sendNext))
		p.frames = append(p.frames, sentFrame{kind: sfResetStream, id: s.id})
		s.resetPending, s.resetSent = false, true
	}
	if s.blockedPending && b.room() >= 17 {
		b.add(quicwire.AppendStreamUintFrame(b.buf, quicwire.FrameStreamDataBlocked, s.id, s.peerMax))
		s.blockedPending = false
	}
	if s.sendErr != nil {
		return !s.resetPending && !s.maxDataPending && !s.stopPending
	}
	// lost data first: its flow control credit is already spent
	for len(s.lost) > 0 {
		room := b.room() - quicwire.StreamFrameOverhead(s.id, s.lost[0].lo)
		if room < 1 {
			return false
		}
		lo, hi, _ := s.lost.popFront(uint64(min(room, 16383)))
		if hi <= s.bufBase {
			continue // acknowledged since, in another copy
		}
		lo = max(lo, s.bufBase)
		fin := s.finLost && hi == s.writeOff && s.finWanted && len(s.lost) == 0
		data := s.sendBuf[s.sendStart+int(lo-s.bufBase) : s.sendStart+int(hi-s.bufBase)]
		b.add(quicwire.AppendStreamFrame(b.buf, s.id, lo, data, fin))
		p.frames = append(p.frames, sentFrame{kind: sfStream, id: s.id, off: lo, n: int(hi - lo), fin: fin})
		if fin {
			s.finLost = false
		}
	}
	for {
		credit := ss.sendMax - ss.sentBytes
		avail := min(s.writeOff, s.peerMax) - min(s.sendNext, s.peerMax)
		avail = min(avail, credit)
		fin := s.finWanted && !s.finSent && s.sendNext+avail == s.writeOff
		if s.finLost && s.sendNext == s.writeOff && s.finWanted {
			fin = true
		}
		if avail == 0 && !fin {
			break
		}
		room := b.room() - quicwire.StreamFrameOverhead(s.id, s.sendNext)
		if room < 1 && !(fin && avail == 0 && room == 0) {
			return false
		}
		k := min(avail, uint64(max(room, 0)), 16383)
		if k < avail {
			fin = false
		}
		lo := s.sendNext
		data := s.sendBuf[s.sendStart+int(lo-s.bufBase) : s.sendStart+int(lo-s.bufBase)+int(k)]
		b.add(quicwire.AppendStreamFrame(b.buf, s.id, lo, data, fin))
		p.frames = append(p.frames, sentFrame{kind: sfStream, id: s.id, off: lo, n: int(k), fin: fin})
		s.sendNext += k
		ss.sentBytes += k
		if fin {
			s.finSent, s.finLost = true, false
			break
		}
		if k == 0 {
			break
		}
	}
	if s.sendNext < s.writeOff && s.sendNext >= s.peerMax && s.blockedAt != s.peerMax {
		s.blockedAt, s.blockedPending = s.peerMax, true
		return false
	}
	if s.sendNext < s.writeOff && s.sendNext < s.peerMax && ss.sentBytes >= ss.sendMax {
		if ss.blockedAt != ss.sendMax {
			ss.blockedAt, ss.pendingBlocked = ss.sendMax, true
		}
		if !s.hasWork(0) {
			ss.connBlocked = append(ss.connBlocked, s)
		}
	}
	return !s.hasWork(ss.sendMax - ss.sentBytes)
}
