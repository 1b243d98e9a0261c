package quic

import (
	"bytes"
	"testing"
	"time"

	"github.com/guise-http/guise/internal/quicwire"
)

// sentFrames builds c's next datagram, a 1-RTT packet to the server, and
// returns its frames, decrypted with the client's 1-RTT key (the
// established test connection's secret).
func sentFrames(t *testing.T, c *Conn) []quicwire.Frame {
	t.Helper()
	if !c.buildDatagram(time.Now()) {
		t.Fatal("nothing to send")
	}
	k, _ := quicwire.NewKeys(quicwire.SuiteAES128GCMSHA256, bytes.Repeat([]byte{8}, 32))
	pkt := bytes.Clone(c.b.buf)
	hdr := 1 + len(c.dcid)
	_, pnLen, tpn, err := k.Unprotect(pkt, hdr)
	if err != nil {
		t.Fatal(err)
	}
	pn := quicwire.DecodePacketNumber(int64(c.spaces[spApp].nextPN)-2, tpn, pnLen)
	payload, err := k.OpenInPlace(pkt, hdr+pnLen, pn)
	if err != nil {
		t.Fatal(err)
	}
	var out []quicwire.Frame
	for len(payload) > 0 {
		f, n, err := quicwire.ParseFrame(payload)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, f)
		payload = payload[n:]
	}
	return out
}

func newCIDFrames(fs []quicwire.Frame) (out []quicwire.Frame) {
	for _, f := range fs {
		if f.Type == quicwire.FrameNewConnectionID {
			out = append(out, f)
		}
	}
	return out
}

// TestIssuedConnectionIDs is RELIABILITY Q-74: a Firefox-profile connection issues
// connection IDs as neqo does: one while the server's limit is unknown
// (the default 2, its first 0-RTT packet's NEW_CONNECTION_ID), then up to
// the server's active_connection_id_limit, at most 8, each of its 3-byte
// length with its own reset token; one the server retires is replaced and
// no longer accepted, and packets to any active one are read. A retire of
// a sequence number never issued is a PROTOCOL_VIOLATION (TestConnProtocolErrors).
func TestIssuedConnectionIDs(t *testing.T) {
	c, server := establishedConn(t)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.peerSet = false
	fs := newCIDFrames(sentFrames(t, c))
	if len(fs) != 1 || fs[0].Seq != 1 || len(fs[0].ConnID) != len(c.scid) {
		t.Fatalf("before the server's limit: %+v, want one NEW_CONNECTION_ID, sequence 1", fs)
	}
	if fs[0].Size != 23 {
		t.Errorf("the NEW_CONNECTION_ID frame sent is %d bytes, the recorded 0-RTT packets' extra 23", fs[0].Size)
	}
	c.peerSet, c.peer.cidLimit = true, 20
	fs = newCIDFrames(sentFrames(t, c))
	if len(fs) != maxIssuedCIDs-2 || fs[0].Seq != 2 || fs[len(fs)-1].Seq != maxIssuedCIDs-1 {
		t.Fatalf("with a limit of 20: %d frames, want %d (up to 8 active)", len(fs), maxIssuedCIDs-2)
	}
	seen := map[string]bool{string(c.scid): true}
	tokens := map[[16]byte]bool{}
	for _, f := range fs {
		if seen[string(f.ConnID)] || tokens[[16]byte(f.ResetToken)] || f.RetirePriorTo != 0 {
			t.Errorf("frame %d: a repeated id or token, or retire_prior_to %d", f.Seq, f.RetirePriorTo)
		}
		seen[string(f.ConnID)], tokens[[16]byte(f.ResetToken)] = true, true
	}
	if c.buildDatagram(time.Now()) {
		if fs := newCIDFrames(sentFrames(t, c)); len(fs) > 0 {
			t.Errorf("more connection IDs than the limit: %+v", fs)
		}
	}

	// A packet to an issued ID is read (it is acknowledged); then the
	// server retires sequence 3: a new one (8) replaces it.
	id3 := bytes.Clone(c.localCIDs[3].id)
	pkt := shortPacketTo(id3, server, 20, quicwire.AppendUintFrame(nil, quicwire.FrameRetireConnectionID, 3))
	before := c.spaces[spApp].largestRecv
	c.handleDatagram(pkt, time.Now())
	if c.closed || c.spaces[spApp].largestRecv == before {
		t.Fatalf("a packet to issued ID 3 was not read (closed %t: %v)", c.closed, c.err)
	}
	if c.isLocalCID(id3) {
		t.Error("a retired ID is still accepted")
	}
	fs = newCIDFrames(sentFrames(t, c))
	if len(fs) != 1 || fs[0].Seq != maxIssuedCIDs {
		t.Errorf("after a retire: %+v, want one NEW_CONNECTION_ID, sequence %d", fs, maxIssuedCIDs)
	}
	pkt = shortPacketTo(id3, server, 21, []byte{byte(quicwire.FramePing)})
	before = c.spaces[spApp].largestRecv
	c.handleDatagram(pkt, time.Now())
	if c.spaces[spApp].largestRecv != before {
		t.Error("a packet to the retired ID was read")
	}
}
