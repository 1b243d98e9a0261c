package quic

import (
	"bytes"
	"testing"
	"time"

	"github.com/guise-http/guise/internal/quicwire"
)

// TestPacketPathAllocs is RELIABILITY Q-30: once warm, receiving an
// in-order 1-RTT STREAM packet (header protection, decryption, frame
// parse, reassembly, the ACK queued) and reading it, and sending a
// packet of stream data (build, seal, the sent-packet record, the ACK
// that frees it) allocate nothing.
func TestPacketPathAllocs(t *testing.T) {
	c, server := establishedConn(t)
	s := c.streams.m[0]
	data := bytes.Repeat([]byte{'x'}, 1000)
	buf := make([]byte, 2000)
	pkt := make([]byte, 0, 1500)
	// the payload and packet are built outside what is measured
	var frames [][]byte
	var pkts [][]byte
	for i := range 200 {
		frames = append(frames, quicwire.AppendStreamFrame(nil, 0, uint64(i)*1000, data, false))
	}
	for i := range 200 {
		pkts = append(pkts, shortPacket(c, server, uint64(i+1), frames[i]))
	}
	i := 0
	recvPre := func() {
		p := append(pkt[:0], pkts[i]...)
		i++
		c.mu.Lock()
		c.handleDatagram(p, time.Now())
		s.ra.read(buf)
		c.mu.Unlock()
	}
	for range 20 {
		recvPre()
	}
	if n := testing.AllocsPerRun(100, recvPre); n > 0 {
		t.Errorf("receiving a STREAM packet: %.1f allocations", n)
	}
	if c.closed {
		t.Fatal(c.err)
	}
	if s.ra.readOff != uint64(i)*1000 {
		t.Fatalf("read %d bytes of %d packets", s.ra.readOff, i)
	}

	// sending: write, build, then the server's ACK of it
	ack := make([]byte, 0, 64)
	ranges := make([][2]uint64, 1)
	send := func() {
		c.mu.Lock()
		s.sendBuf = append(s.sendBuf, data...)
		s.writeOff += uint64(len(data))
		c.streams.queue(s)
		now := time.Now()
		c.send(now)
		sp := &c.spaces[spApp]
		largest := sp.nextPN - 1
		ranges[0] = [2]uint64{0, largest}
		ack = quicwire.AppendAckFrame(ack[:0], ranges, 0)
		var f quicwire.Frame
		f, _, _ = quicwire.ParseFrame(ack)
		c.onAck(spApp, &f, now)
		c.mu.Unlock()
	}
	c.peer.maxData, c.streams.sendMax, s.peerMax = 1<<62, 1<<62, 1<<62
	for range 50 {
		send()
	}
	pn0 := c.spaces[spApp].nextPN
	if n := testing.AllocsPerRun(100, send); n > 0 {
		t.Errorf("sending a STREAM packet and its ACK: %.1f allocations", n)
	}
	if sent := c.spaces[spApp].nextPN - pn0; sent < 100 || s.bufBase != s.writeOff {
		t.Fatalf("%d packets sent, %d of %d bytes acknowledged", sent, s.bufBase, s.writeOff)
	}
	if c.closed {
		t.Fatal(c.err)
	}
}
