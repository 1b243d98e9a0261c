//go:build linux && (amd64 || arm64)

package quic

import (
	"bytes"
	"net"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// udpPair returns a client socket connected to a server socket, both on
// loopback, and a Conn over the client with GSO sending set up.
func udpPair(t *testing.T) (*Conn, *net.UDPConn) {
	t.Helper()
	srv, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	cl, err := net.DialUDP("udp", nil, srv.LocalAddr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	c := &Conn{pc: cl, udp: cl, connected: true, raddr: srv.LocalAddr(), rap: srv.LocalAddr().(*net.UDPAddr).AddrPort(), maxSize: 1250}
	c.local.maxUDPPayload = 1500
	c.batch()
	if c.tx == nil {
		t.Skip("the kernel offers no UDP_SEGMENT")
	}
	return c, srv
}

// sendRun queues three 1250-byte datagrams and a 300-byte one, flushes
// them, and checks that srv gets the four as they were sent.
func sendRun(t *testing.T, c *Conn, srv *net.UDPConn) {
	t.Helper()
	var want [][]byte
	for i, n := range []int{1250, 1250, 1250, 300} {
		d := bytes.Repeat([]byte{byte('a' + i)}, n)
		want = append(want, d)
		if err := c.queueDatagram(d); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.flushOut(); err != nil {
		t.Fatal(err)
	}
	srv.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 65536)
	for i, w := range want {
		n, err := srv.Read(buf)
		if err != nil {
			t.Fatalf("datagram %d: %v", i, err)
		}
		if !bytes.Equal(buf[:n], w) {
			t.Fatalf("datagram %d: %d bytes of %q, want %d of %q", i, n, buf[0], len(w), w[0])
		}
	}
}

// TestGSOSend is RELIABILITY Q-60: a run of datagrams of one size (the
// last shorter) leaves in one sendmsg with UDP_SEGMENT and arrives as
// the datagrams queued, in order and unchanged.
func TestGSOSend(t *testing.T) {
	c, srv := udpPair(t)
	sendRun(t, c, srv)
	if c.tx == nil || c.gsoOff || c.tx.sent != 1 {
		t.Fatalf("tx %v, gsoOff %v: want one segmented send", c.tx, c.gsoOff)
	}
}

// TestGSORefusedFallsBack is RELIABILITY Q-61: when the kernel refuses
// segmentation offload on send (here EINVAL, as it does on a socket
// without UDP checksums, SO_NO_CHECK), the run goes one datagram at a
// time, nothing lost, and so does every later send of the connection.
func TestGSORefusedFallsBack(t *testing.T) {
	c, srv := udpPair(t)
	rc, err := c.udp.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var serr error
	rc.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_NO_CHECK, 1) })
	if serr != nil {
		t.Skipf("SO_NO_CHECK: %v", serr)
	}
	tx := c.tx
	sendRun(t, c, srv)
	if tx.sent != 1 || !gsoRefused(tx.err) {
		t.Fatalf("%d segmented sends, last error %v: want one refused with EINVAL or EIO", tx.sent, tx.err)
	}
	if c.tx != nil || !c.gsoOff {
		t.Fatal("GSO still on after the kernel refused it")
	}
	sendRun(t, c, srv) // later runs: one by one from the start
	if tx.sent != 1 {
		t.Fatalf("%d segmented sends after the refusal", tx.sent)
	}
}

// TestBatchedRead is RELIABILITY Q-62: the datagrams queued on the
// socket are read by one recvmmsg, each whole, with its source.
func TestBatchedRead(t *testing.T) {
	c, srv := udpPair(t)
	if c.rx == nil {
		t.Fatal("no batched reads on a UDP socket")
	}
	local := c.udp.LocalAddr().(*net.UDPAddr)
	for i := range 5 {
		if _, err := srv.WriteToUDP(bytes.Repeat([]byte{byte('a' + i)}, 100+i), local); err != nil {
			t.Fatal(err)
		}
	}
	// a datagram larger than the buffers is cut short, and dropped
	if _, err := srv.WriteToUDP(make([]byte, 3000), local); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // all six queued
	c.udp.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, err := c.read()
	if err != nil || n != 6 {
		t.Fatalf("read %d datagrams, %v: want all 6 in one call", n, err)
	}
	for i := range 5 {
		b, ok := c.received(i)
		if !ok || len(b) != 100+i || b[0] != byte('a'+i) {
			t.Fatalf("datagram %d: %d bytes, from the server %v", i, len(b), ok)
		}
	}
	if _, ok := c.received(5); ok {
		t.Fatal("a truncated datagram was taken")
	}
}
