package quic

import (
	"time"

	"github.com/guise-http/guise/internal/quicwire"
	"github.com/guise-http/guise/profile"
)

// builder assembles one datagram of coalesced packets in a buffer the
// connection reuses. A packet is sealed once the one after it has
// frames, or when the datagram ends, so that the last one takes the
// padding; a packet followed by another leaves room for its tag.
type builder struct {
	buf        []byte
	max        int
	open       bool
	cur, prev  pktDesc
	hasPrev    bool
	hasInitial bool
	elicit     bool
}

// pktDesc is where a packet under construction lies in the buffer.
type pktDesc struct {
	sp     int
	start  int // the packet's first byte
	lenOff int // its Length field (long headers), or -1
	pnOff  int
	pnLen  int
	end    int // the payload's end, once another packet follows
	pn     uint64
	keys   *quicwire.Keys
	// zeroRTT: a 0-RTT packet
	zeroRTT bool
}

// room is what frames may still take in the datagram.
func (b *builder) room() int { return b.max - len(b.buf) - quicwire.TagLen }

// add takes the buffer a frame appender returned.
func (b *builder) add(buf []byte) { b.buf = buf }

// startPacket writes the header of a packet of space sp.
func (c *Conn) startPacket(sp int) {
	b := &c.b
	if b.open {
		b.prev, b.hasPrev = b.cur, true
		for len(b.buf)-b.prev.pnOff < 4 {
			b.buf = append(b.buf, 0)
		}
		b.prev.end = len(b.buf)
		b.buf = append(b.buf, make([]byte, quicwire.TagLen)...)
	}
	s := &c.spaces[sp]
	d := &b.cur
	b.open, b.elicit = true, false
	*d = pktDesc{sp: sp, start: len(b.buf), keys: c.seal[sp], pn: s.nextPN}
	d.pnLen = quicwire.PacketNumberLen(d.pn, s.largestAcked)
	if sp == spApp && d.keys == nil {
		// 0-RTT: a long header, in the application packet number space
		// (RFC 9000 §17.2.3).
		d.keys, d.zeroRTT = c.seal0, true
		b.buf = append(b.buf, 0xd0|byte(d.pnLen-1), 0, 0, 0, 1, byte(len(c.dcid)))
		b.buf = append(b.buf, c.dcid...)
		b.buf = append(b.buf, byte(len(c.scid)))
		b.buf = append(b.buf, c.scid...)
		d.lenOff = len(b.buf)
		b.buf = append(b.buf, 0, 0)
	} else if sp == spApp {
		first := byte(0x40) | byte(d.pnLen-1)
		if c.keyPhase {
			first |= 0x04
		}
		b.buf = append(b.buf, first)
		b.buf = append(b.buf, c.dcid...)
		d.lenOff = -1
	} else {
		typ := byte(0x00)
		if sp == spHandshake {
			typ = 0x20
		}
		b.buf = append(b.buf, 0xc0|typ|byte(d.pnLen-1), 0, 0, 0, 1, byte(len(c.dcid)))
		b.buf = append(b.buf, c.dcid...)
		b.buf = append(b.buf, byte(len(c.scid)))
		b.buf = append(b.buf, c.scid...)
		if sp == spInitial {
			b.buf = quicwire.AppendVarint(b.buf, uint64(len(c.token)))
			b.buf = append(b.buf, c.token...)
		}
		d.lenOff = len(b.buf)
		b.buf = append(b.buf, 0, 0)
	}
	d.pnOff = len(b.buf)
	for i := d.pnLen - 1; i >= 0; i-- {
		b.buf = append(b.buf, byte(d.pn>>(8*i)))
	}
}

// dropPacket takes back the open packet, which got no frame.
func (c *Conn) dropPacket() {
	b := &c.b
	b.buf, b.open = b.buf[:b.cur.start], false
	if b.hasPrev {
		b.buf = b.buf[:b.prev.end]
		b.cur, b.hasPrev, b.open = b.prev, false, true
	}
}

// keepPacket seals the packet before the open one.
func (c *Conn) keepPacket() {
	b := &c.b
	if b.cur.sp == spInitial {
		b.hasInitial = true
	}
	if b.hasPrev {
		c.seal1(&b.prev, b.buf[b.prev.start:b.prev.end])
		b.hasPrev = false
	}
}

// sealPacket pads the open packet, the datagram's last, with pad
// PADDING bytes (and as many as header protection's sample needs) and
// protects it.
func (c *Conn) sealPacket(pad int) {
	b := &c.b
	b.open = false
	for range pad {
		b.buf = append(b.buf, 0)
	}
	for len(b.buf)-b.cur.pnOff < 4 {
		b.buf = append(b.buf, 0)
	}
	pkt := c.seal1(&b.cur, b.buf[b.cur.start:])
	b.buf = b.buf[:b.cur.start+len(pkt)]
}

func (c *Conn) seal1(d *pktDesc, pkt []byte) []byte {
	if d.lenOff >= 0 {
		n := uint64(len(pkt) - (d.pnOff - d.start) + quicwire.TagLen)
		c.b.buf[d.lenOff] = 0x40 | byte(n>>8)
		c.b.buf[d.lenOff+1] = byte(n)
	}
	c.spaces[d.sp].nextPN++
	return d.keys.SealInPlace(pkt, d.pnOff+d.pnLen-d.start, d.pnLen, d.pn)
}

// send writes every datagram there is to send now, within the
// congestion window.
func (c *Conn) send(now time.Time) {
	for range 1024 {
		if c.closed || !c.buildDatagram(now) {
			break
		}
		if err := c.queueDatagram(c.b.buf); err != nil {
			c.closeLocked(err)
			return
		}
		if c.sentHandshake && !c.spaces[spInitial].discarded {
			c.discard(spInitial) // RFC 9001 §4.9.1
		}
	}
	if err := c.flushOut(); err != nil {
		c.closeLocked(err)
	}
}

// canElicit reports whether an ack-eliciting packet may go in space s.
func (c *Conn) canElicit(s *space) bool {
	return s.probes > 0 || c.inFlight+c.maxSize <= c.cc.cwnd
}

// wants reports whether space sp has something to send now.
func (c *Conn) wants(sp int) bool {
	s := &c.spaces[sp]
	if c.seal[sp] == nil && !(sp == spApp && c.seal0 != nil) || s.discarded {
		return false
	}
	if s.ackNow && s.ackNew {
		return true
	}
	if !c.canElicit(s) {
		return false
	}
	if s.probes > 0 || len(s.cryptoLost) > 0 || s.cryptoNext < uint64(len(s.cryptoSend)) {
		return true
	}
	if sp != spApp || !c.tlsDone && c.seal0 == nil {
		return false
	}
	ss := &c.streams
	if ss.pendingMaxData || ss.pendingMaxStreams || ss.pendingBlocked || len(c.retireQueue) > 0 || len(c.pathResponse) > 0 || c.wantsCID() {
		return true
	}
	credit := ss.sendMax - ss.sentBytes
	for _, st := range ss.sq {
		if st.hasWork(credit) {
			return true
		}
	}
	return false
}

// buildDatagram fills c.b.buf with the next datagram, or returns false
// when there is nothing to send.
func (c *Conn) buildDatagram(now time.Time) bool {
	b := &c.b
	b.buf, b.hasInitial, b.open, b.hasPrev, b.max = b.buf[:0], false, false, false, c.maxSize
	any := false
	heldOut := false
	if c.held != nil {
		if !c.heldFree {
			return false // nothing goes before the hello's end
		}
		b.buf = append(b.buf, c.held...)
		c.held, b.hasInitial, heldOut, any = nil, true, true, true
		// It is the Initial space's latest packet (nothing was sent
		// while it waited): sent now, not when Dial built it, so that
		// its acknowledgment's RTT sample and the PTO leave the hold out.
		s := &c.spaces[spInitial]
		if n := len(s.sent); n > 0 && !s.sent[n-1].done {
			s.sent[n-1].t = now
			s.lastAckEliciting = now
		}
	}
	for sp := range numSpaces {
		if b.room() < 48 {
			break
		}
		if !c.wants(sp) {
			continue
		}
		c.startPacket(sp)
		p := c.newSent(b.cur.pn, now, 0)
		start := len(b.buf)
		c.fillPacket(sp, p, now)
		if len(b.buf) == start {
			c.dropPacket()
			c.pool = append(c.pool, p)
			continue
		}
		c.keepPacket()
		if b.cur.zeroRTT {
			c.sent0RTT++
		}
		any = true
		p.ackEliciting, p.inFlight = b.elicit, b.elicit
		if sp == spHandshake {
			c.sentHandshake = true
		}
		// the packet's size is known once sealed; count it as the
		// space it will take
		p.size = len(b.buf) - b.cur.start + quicwire.TagLen
		if b.elicit {
			if c.spaces[sp].probes > 0 {
				c.spaces[sp].probes--
			}
			c.onSent(sp, p)
		} else {
			c.pool = append(c.pool, p)
		}
		if sp == spApp {
			break
		}
	}
	if !any {
		return false
	}
	if heldOut && (!b.open || c.q.Padding == profile.PaddingAfterPacket) {
		// The flight's datagram: padded after its packets, as the rest
		// of the flight.
		if b.open {
			c.sealPacket(0)
		}
		for len(b.buf) < max(c.q.DatagramSize, 1200) {
			b.buf = append(b.buf, 0)
		}
		return true
	}
	pad := 0
	if b.hasInitial {
		pad = max(c.q.DatagramSize, 1200) - quicwire.TagLen - len(b.buf)
	}
	c.sealPacket(max(pad, 0))
	return true
}

// fillPacket adds sp's frames to the open packet.
func (c *Conn) fillPacket(sp int, p *sentPacket, now time.Time) {
	b := &c.b
	s := &c.spaces[sp]
	if s.ackNew && c.seal[sp] != nil { // never an ACK in 0-RTT
		c.appendAck(sp, now)
	}
	if !c.canElicit(s) {
		return
	}
	// CRYPTO: lost ranges, then new data
	for len(s.cryptoLost) > 0 && b.room() > 16 {
		lo := s.cryptoLost[0].lo
		room := uint64(b.room() - 1 - quicwire.VarintLen(lo) - 2)
		lo, hi, _ := s.cryptoLost.popFront(room)
		b.add(quicwire.AppendCryptoFrame(b.buf, lo, s.cryptoSend[lo:hi]))
		p.frames = append(p.frames, sentFrame{kind: sfCrypto, off: lo, n: int(hi - lo)})
		b.elicit = true
	}
	for s.cryptoNext < uint64(len(s.cryptoSend)) && b.room() > 16 {
		lo := s.cryptoNext
		hi := min(uint64(len(s.cryptoSend)), lo+uint64(b.room()-1-quicwire.VarintLen(lo)-2))
		b.add(quicwire.AppendCryptoFrame(b.buf, lo, s.cryptoSend[lo:hi]))
		p.frames = append(p.frames, sentFrame{kind: sfCrypto, off: lo, n: int(hi - lo)})
		s.cryptoNext = hi
		b.elicit = true
	}
	if sp == spApp && (c.tlsDone || c.seal0 != nil) {
		c.appendAppFrames(p)
	}
	if s.probes > 0 && !b.elicit {
		b.buf = append(b.buf, byte(quicwire.FramePing))
		b.elicit = true
	}
}

// appendAck adds an ACK frame of sp's received packets.
func (c *Conn) appendAck(sp int, now time.Time) {
	b := &c.b
	s := &c.spaces[sp]
	if len(s.recv) == 0 {
		return
	}
	r := c.ackRanges[:0]
	for i := len(s.recv) - 1; i >= 0; i-- {
		r = append(r, [2]uint64{s.recv[i].lo, s.recv[i].hi - 1})
	}
	c.ackRanges = r
	delay := uint64(now.Sub(s.largestTime).Microseconds()) >> c.local.ackDelayExponent
	if 16+len(r)*16 > b.room() {
		r = r[:max(1, b.room()/16-1)]
	}
	b.add(quicwire.AppendAckFrame(b.buf, r, delay))
	s.ackNew, s.ackNow, s.unackedElic, s.ackDeadline, s.lastAck = false, false, 0, time.Time{}, now
}

// appendAppFrames adds the 1-RTT control and stream frames.
func (c *Conn) appendAppFrames(p *sentPacket) {
	b := &c.b
	ss := &c.streams
	for len(c.pathResponse) > 0 && b.room() >= 9 {
		b.add(quicwire.AppendPathResponseFrame(b.buf, c.pathResponse[0]))
		c.pathResponse = c.pathResponse[1:]
		b.elicit = true
	}
	for len(c.retireQueue) > 0 && b.room() >= 9 {
		seq := c.retireQueue[0]
		c.retireQueue = c.retireQueue[1:]
		b.add(quicwire.AppendUintFrame(b.buf, quicwire.FrameRetireConnectionID, seq))
		p.frames = append(p.frames, sentFrame{kind: sfRetireCID, id: seq})
		b.elicit = true
	}
	if ss.pendingMaxData && b.room() >= 9 {
		b.add(quicwire.AppendUintFrame(b.buf, quicwire.FrameMaxData, ss.recvMax))
		p.frames = append(p.frames, sentFrame{kind: sfMaxData})
		ss.pendingMaxData = false
		b.elicit = true
	}
	if ss.pendingMaxStreams && b.room() >= 9 {
		b.add(quicwire.AppendUintFrame(b.buf, quicwire.FrameMaxStreamsUni, ss.maxPeerUni))
		p.frames = append(p.frames, sentFrame{kind: sfMaxStreamsUni})
		ss.pendingMaxStreams = false
		b.elicit = true
	}
	if ss.pendingBlocked && b.room() >= 9 {
		b.add(quicwire.AppendUintFrame(b.buf, quicwire.FrameDataBlocked, ss.sendMax))
		ss.pendingBlocked = false
		b.elicit = true
	}
	c.appendNewCIDs(p)
	// streams in turn; the ones left with work go to the back
	n := len(ss.sq)
	i := 0
	for ; i < n && b.room() > 8; i++ {
		s := ss.sq[i]
		before := len(b.buf)
		done := s.appendFrames(b, p)
		if len(b.buf) != before {
			b.elicit = true
		}
		if done {
			s.queued = false
		} else {
			ss.sq = append(ss.sq, s)
		}
	}
	rest := copy(ss.sq, ss.sq[i:])
	clear(ss.sq[rest:])
	ss.sq = ss.sq[:rest]
}

// sendClose sends a CONNECTION_CLOSE at the highest level there are
// keys for (RFC 9000 §10.2.3: before 1-RTT, an application close is
// APPLICATION_ERROR without a reason).
func (c *Conn) sendClose(app bool, code uint64, ft quicwire.FrameType, reason string) {
	sp := spApp
	for sp >= 0 && (c.seal[sp] == nil || c.spaces[sp].discarded || sp == spApp && !c.tlsDone) {
		sp--
	}
	if sp < 0 {
		return
	}
	if app && sp != spApp {
		app, code, reason = false, uint64(ApplicationError), ""
	}
	b := &c.b
	b.buf, b.hasInitial, b.open, b.hasPrev, b.max = b.buf[:0], false, false, false, c.maxSize
	c.startPacket(sp)
	b.hasInitial = sp == spInitial
	if len(reason) > 256 {
		reason = reason[:256]
	}
	b.add(quicwire.AppendConnectionCloseFrame(b.buf, app, code, ft, reason))
	pad := 0
	if b.hasInitial {
		pad = max(c.q.DatagramSize, 1200) - quicwire.TagLen - len(b.buf)
	}
	c.sealPacket(max(pad, 0))
	c.writeDatagram(b.buf)
}
