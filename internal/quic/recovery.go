package quic

import (
	"math"
	"sort"
	"time"

	"github.com/guise-http/guise/internal/quicwire"
)

// Loss recovery (RFC 9002) and NewReno congestion control.

// sentFrame kinds: what a packet carried that must be sent again if it
// is lost, or noted when it is acknowledged.
const (
	sfCrypto = iota
	sfStream
	sfMaxData
	sfMaxStreamData
	sfMaxStreamsBidi
	sfMaxStreamsUni
	sfResetStream
	sfStopSending
	sfRetireCID
	sfNewCID
)

type sentFrame struct {
	kind uint8
	fin  bool
	id   uint64
	off  uint64
	n    int
}

// sentPacket is one packet sent and not yet acknowledged or lost.
type sentPacket struct {
	pn           uint64
	t            time.Time
	size         int
	ackEliciting bool
	inFlight     bool
	done         bool // acknowledged, lost or forgotten
	frames       []sentFrame
}

func (c *Conn) newSent(pn uint64, t time.Time, size int) *sentPacket {
	var p *sentPacket
	if n := len(c.pool); n > 0 {
		p = c.pool[n-1]
		c.pool = c.pool[:n-1]
		*p = sentPacket{frames: p.frames[:0]}
	} else {
		p = &sentPacket{}
	}
	p.pn, p.t, p.size = pn, t, size
	p.ackEliciting, p.inFlight = true, true
	return p
}

// onSent records p as sent in space sp.
func (c *Conn) onSent(sp int, p *sentPacket) {
	s := &c.spaces[sp]
	s.sent = append(s.sent, p)
	if p.inFlight {
		c.inFlight += p.size
	}
	if p.ackEliciting {
		if c.lastElic.Before(c.lastRecv) || c.lastElic.IsZero() {
			c.idleStart = p.t // the first ack-eliciting packet after a receive restarts the idle timer
		}
		s.ackElicitingInFlight++
		s.lastAckEliciting = p.t
		c.lastElic = p.t
	}
}

// forget takes p out of flight without acknowledging or losing it (its
// keys were discarded, or a Retry restarted the Initials).
func (c *Conn) forget(sp int, p *sentPacket) {
	p.done = true
	if p.inFlight {
		c.inFlight -= p.size
	}
	if p.ackEliciting {
		c.spaces[sp].ackElicitingInFlight--
	}
	c.pool = append(c.pool, p)
}

// onAck processes an ACK frame received in space sp.
func (c *Conn) onAck(sp int, f *quicwire.Frame, now time.Time) {
	s := &c.spaces[sp]
	if f.LargestAcked >= s.nextPN {
		c.fail(ProtocolViolation, f.Type, "ACK of a packet never sent", nil)
		return
	}
	var largestNew *sentPacket
	newElic := false
	it := f.AckRangeIter()
	for lo, hi, ok := it.Next(); ok; lo, hi, ok = it.Next() {
		i := sort.Search(len(s.sent), func(i int) bool { return s.sent[i].pn >= lo })
		for ; i < len(s.sent) && s.sent[i].pn <= hi; i++ {
			p := s.sent[i]
			if p.done {
				continue
			}
			if largestNew == nil || p.pn > largestNew.pn {
				largestNew = p
			}
			if p.ackEliciting {
				newElic = true
			}
			c.onPacketAcked(sp, p)
		}
	}
	if largestNew == nil {
		return
	}
	if int64(f.LargestAcked) > s.largestAcked {
		s.largestAcked = int64(f.LargestAcked)
	}
	if largestNew.pn == f.LargestAcked && newElic {
		delay := time.Duration(f.AckDelay<<c.peer.ackDelayExponent) * time.Microsecond
		if sp != spApp {
			delay = 0
		} else if c.confirmed {
			delay = min(delay, c.peer.maxAckDelay)
		}
		c.rtt.update(now.Sub(largestNew.t), delay)
	}
	c.detectLost(sp, now)
	c.ptoCount = 0
	c.compact(sp)
}

// onPacketAcked releases what p carried.
func (c *Conn) onPacketAcked(sp int, p *sentPacket) {
	s := &c.spaces[sp]
	p.done = true
	if p.inFlight {
		c.inFlight -= p.size
		c.cc.onAck(p)
	}
	if p.ackEliciting {
		s.ackElicitingInFlight--
	}
	for _, fr := range p.frames {
		switch fr.kind {
		case sfCrypto:
			s.cryptoAcked.add(fr.off, fr.off+uint64(fr.n))
		default:
			c.streams.onFrameAcked(&fr)
		}
	}
}

// onPacketLost sends again what p carried.
func (c *Conn) onPacketLost(sp int, p *sentPacket) {
	s := &c.spaces[sp]
	p.done = true
	c.lostPackets++
	if p.inFlight {
		c.inFlight -= p.size
		c.cc.onLoss(p.t)
	}
	if p.ackEliciting {
		s.ackElicitingInFlight--
	}
	c.requeue(sp, p)
}

// requeue queues p's frames to be sent again.
func (c *Conn) requeue(sp int, p *sentPacket) {
	s := &c.spaces[sp]
	for _, fr := range p.frames {
		switch fr.kind {
		case sfCrypto:
			s.cryptoLost.add(fr.off, fr.off+uint64(fr.n))
		default:
			c.streams.onFrameLost(&fr)
		}
	}
}

// compact drops the done packets at the front of sp's list.
func (c *Conn) compact(sp int) {
	s := &c.spaces[sp]
	i := 0
	for i < len(s.sent) && s.sent[i].done {
		if s.sent[i] != nil {
			c.pool = append(c.pool, s.sent[i])
		}
		s.sent[i] = nil
		i++
	}
	if i == 0 {
		return
	}
	if i == len(s.sent) {
		s.sent = s.sent[:0]
		return
	}
	// copy down only when it pays: keeps the slice from creeping
	if i > len(s.sent)/2 {
		n := copy(s.sent, s.sent[i:])
		clear(s.sent[n:])
		s.sent = s.sent[:n]
	} else {
		s.sent = s.sent[i:]
	}
}

// detectLost declares lost the packets of sp that the packet or time
// threshold says are (RFC 9002 §6.1).
func (c *Conn) detectLost(sp int, now time.Time) {
	s := &c.spaces[sp]
	s.lossTime = time.Time{}
	if s.largestAcked < 0 {
		return
	}
	delay := max(9*max(c.rtt.latest, c.rtt.smoothed)/8, time.Millisecond)
	lostBefore := now.Add(-delay)
	la := uint64(s.largestAcked)
	for _, p := range s.sent {
		if p.pn > la {
			break
		}
		if p.done {
			continue
		}
		if !p.t.After(lostBefore) || la >= p.pn+3 {
			c.onPacketLost(sp, p)
		} else if t := p.t.Add(delay); s.lossTime.IsZero() || t.Before(s.lossTime) {
			s.lossTime = t
		}
	}
}

// lossTimer returns when the loss or PTO timer fires and in which space.
func (c *Conn) lossTimer() (time.Time, int) {
	var t time.Time
	sp := -1
	for i := range c.spaces {
		s := &c.spaces[i]
		if !s.lossTime.IsZero() && (t.IsZero() || s.lossTime.Before(t)) {
			t, sp = s.lossTime, i
		}
	}
	if !t.IsZero() {
		return t, sp
	}
	backoff := time.Duration(1) << min(c.ptoCount, 16)
	inFlight := false
	for i := range c.spaces {
		s := &c.spaces[i]
		if s.ackElicitingInFlight == 0 || s.discarded {
			continue
		}
		inFlight = true
		if i == spApp && !c.confirmed {
			continue
		}
		x := s.lastAckEliciting.Add(c.rtt.pto(c.ackDelayFor(i)) * backoff)
		if t.IsZero() || x.Before(t) {
			t, sp = x, i
		}
	}
	if !inFlight && !c.confirmed && !c.closed {
		// anti-deadlock: the client probes until the handshake is confirmed
		sp = spInitial
		if c.seal[spHandshake] != nil {
			sp = spHandshake
		}
		return c.lastElic.Add(c.rtt.pto(0) * backoff), sp
	}
	return t, sp
}

func (c *Conn) ackDelayFor(sp int) time.Duration {
	if sp == spApp {
		return c.peer.maxAckDelay
	}
	return 0
}

// onLossTimer runs the loss or PTO timer of space sp.
func (c *Conn) onLossTimer(now time.Time, sp int) {
	if sp < 0 {
		return
	}
	s := &c.spaces[sp]
	if !s.lossTime.IsZero() {
		c.detectLost(sp, now)
		c.compact(sp)
		return
	}
	c.ptoCount++
	c.lastElic = now // the anti-deadlock timer restarts from the probe
	if s.discarded {
		return
	}
	s.probes = 2
	// the probes carry the oldest data in flight, sent again
	n := 0
	for _, p := range s.sent {
		if !p.done && p.ackEliciting {
			c.requeue(sp, p)
			if n++; n == 2 {
				break
			}
		}
	}
}

// rttStats is RFC 9002 §5's estimator.
type rttStats struct {
	latest, smoothed, variance, minRTT time.Duration
	maxAckDelay                        time.Duration
	sampled                            bool
}

const initialRTT = 333 * time.Millisecond

func (r *rttStats) init() {
	r.smoothed, r.variance = initialRTT, initialRTT/2
	r.maxAckDelay = 25 * time.Millisecond
}

func (r *rttStats) update(sample, ackDelay time.Duration) {
	if sample <= 0 {
		sample = time.Microsecond
	}
	r.latest = sample
	if !r.sampled {
		r.sampled = true
		r.minRTT, r.smoothed, r.variance = sample, sample, sample/2
		return
	}
	r.minRTT = min(r.minRTT, sample)
	adjusted := sample
	if sample >= r.minRTT+ackDelay {
		adjusted = sample - ackDelay
	}
	d := r.smoothed - adjusted
	if d < 0 {
		d = -d
	}
	r.variance = (3*r.variance + d) / 4
	r.smoothed = (7*r.smoothed + adjusted) / 8
}

// pto is the probe timeout before backoff, with the peer's max ack
// delay added for the application space.
func (r *rttStats) pto(ackDelay time.Duration) time.Duration {
	return r.smoothed + max(4*r.variance, time.Millisecond) + ackDelay
}

// newReno is RFC 9002 §7's congestion controller.
type newReno struct {
	cwnd, ssthresh, minCwnd, mss int
	recoveryStart                time.Time
	acked                        int // bytes acked in congestion avoidance, toward one mss
}

func (n *newReno) init(mss int) {
	n.mss = mss
	n.cwnd = 10 * mss
	n.minCwnd = 2 * mss
	n.ssthresh = math.MaxInt // infinite until the first loss (RFC 9002 §7.3.1)
}

func (n *newReno) onAck(p *sentPacket) {
	if !p.t.After(n.recoveryStart) && !n.recoveryStart.IsZero() {
		return
	}
	if n.cwnd < n.ssthresh {
		n.cwnd += p.size
		return
	}
	n.acked += p.size
	if n.acked >= n.cwnd {
		n.acked -= n.cwnd
		n.cwnd += n.mss
	}
}

func (n *newReno) onLoss(sent time.Time) {
	if !n.recoveryStart.IsZero() && !sent.After(n.recoveryStart) {
		return
	}
	n.recoveryStart = time.Now()
	n.cwnd = max(n.cwnd/2, n.minCwnd)
	n.ssthresh = n.cwnd
	n.acked = 0
}
