package quic

import (
	"bytes"
	"crypto/rand"

	"github.com/guise-http/guise/internal/quicwire"
	"github.com/guise-http/guise/profile"
)

// Connection IDs the client issues (RFC 9000 §5.1.1). A client with
// zero-length connection IDs (Chromium's) issues none. neqo (the
// sni-slice layout's stack) keeps as many active as the server's
// active_connection_id_limit allows, at most 8, and 2 until the server's
// transport parameters arrive: its first 0-RTT packet carries one
// NEW_CONNECTION_ID frame (23 bytes with Firefox's 3-byte IDs, what the
// recorded 0-RTT packets hold beyond their streams' frames).

// maxIssuedCIDs is neqo's ConnectionIdManager::ACTIVE_LIMIT.
const maxIssuedCIDs = 8

// localCID is a connection ID the client issued: seq 0 is the first
// Initial's Source Connection ID.
type localCID struct {
	seq   uint64
	id    []byte
	token [16]byte
	// resend: the NEW_CONNECTION_ID frame that carried it was lost.
	resend bool
}

// issuesCIDs reports whether the connection issues connection IDs beyond
// its first.
func (c *Conn) issuesCIDs() bool {
	return len(c.scid) > 0 && c.q != nil && c.q.Layout == profile.LayoutSNISlice
}

// cidTarget is how many connection IDs the client keeps active.
func (c *Conn) cidTarget() int {
	if !c.peerSet {
		return 2 // the default limit (RFC 9000 §18.2)
	}
	return int(min(c.peer.cidLimit, maxIssuedCIDs))
}

// initLocalCIDs starts the list of issued IDs with the first one, the
// first Initial's Source Connection ID (sequence 0).
func (c *Conn) initLocalCIDs() {
	if c.localCIDs == nil {
		c.localCIDs = append(c.localCIDs, localCID{seq: 0, id: c.scid})
		c.nextCIDSeq = 1
	}
}

// wantsCID reports whether a NEW_CONNECTION_ID frame is due.
func (c *Conn) wantsCID() bool {
	if !c.issuesCIDs() {
		return false
	}
	if len(c.localCIDs) < c.cidTarget() {
		return true
	}
	for _, l := range c.localCIDs {
		if l.resend {
			return true
		}
	}
	return false
}

// isLocalCID reports whether id is one of the connection IDs the client
// issued and the server has not retired, or its first (which long
// headers keep using).
func (c *Conn) isLocalCID(id []byte) bool {
	if bytes.Equal(id, c.scid) {
		return true
	}
	for _, l := range c.localCIDs {
		if bytes.Equal(id, l.id) {
			return true
		}
	}
	return false
}

// appendNewCIDs adds the NEW_CONNECTION_ID frames due to the open packet:
// lost ones again, then new ones up to cidTarget, each while the packet
// has room for the longest (as neqo: 47 bytes).
func (c *Conn) appendNewCIDs(p *sentPacket) {
	if !c.issuesCIDs() {
		return
	}
	b := &c.b
	c.initLocalCIDs()
	for i := range c.localCIDs {
		if l := &c.localCIDs[i]; l.resend && b.room() >= 47 {
			b.add(quicwire.AppendNewConnectionIDFrame(b.buf, l.seq, 0, l.id, l.token))
			p.frames = append(p.frames, sentFrame{kind: sfNewCID, id: l.seq})
			l.resend = false
			b.elicit = true
		}
	}
	for len(c.localCIDs) < c.cidTarget() && b.room() >= 47 {
		l := localCID{seq: c.nextCIDSeq, id: make([]byte, len(c.scid))}
		g := &rng{r: c.cfg.Rand}
		if g.r == nil {
			g.r = rand.Reader // a Conn made without Dial (tests)
		}
		g.read(l.id)
		g.read(l.token[:])
		if g.err != nil {
			return
		}
		c.nextCIDSeq++
		c.localCIDs = append(c.localCIDs, l)
		b.add(quicwire.AppendNewConnectionIDFrame(b.buf, l.seq, 0, l.id, l.token))
		p.frames = append(p.frames, sentFrame{kind: sfNewCID, id: l.seq})
		b.elicit = true
	}
}

// onCIDLost queues a lost NEW_CONNECTION_ID frame again, unless the
// server retired that ID since.
func (c *Conn) onCIDLost(seq uint64) {
	for i := range c.localCIDs {
		if c.localCIDs[i].seq == seq {
			c.localCIDs[i].resend = true
		}
	}
}

// onRetireCID handles the server's RETIRE_CONNECTION_ID: the ID is no
// longer used, and a new one takes its place. A sequence number never
// issued is a PROTOCOL_VIOLATION (RFC 9000 §19.16).
func (c *Conn) onRetireCID(seq uint64) {
	if !c.issuesCIDs() || seq >= max(c.nextCIDSeq, 1) {
		c.fail(ProtocolViolation, quicwire.FrameRetireConnectionID, "retire of a connection id never issued", nil)
		return
	}
	c.initLocalCIDs()
	for i, l := range c.localCIDs {
		if l.seq == seq {
			c.localCIDs = append(c.localCIDs[:i], c.localCIDs[i+1:]...)
			return
		}
	}
}
