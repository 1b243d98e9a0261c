package quic

import (
	"context"
	"errors"
	"io"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/guise-http/guise/internal/quicwire"
	quicgo "github.com/quic-go/quic-go"
)

// TestServerCloses is RELIABILITY Q-14: an application CONNECTION_CLOSE
// from the server ends the connection with a *ConnectionError (App,
// Remote, its code and reason); open streams fail with it.
func TestServerCloses(t *testing.T) {
	srv := newEchoServer(t, nil)
	c, err := dial(t, "chrome156-linux", srv.addr(), srv.cert, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.OpenStream(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	st.Write([]byte("x"))
	sc := <-srv.conns
	sc.CloseWithError(0x42, "bye")
	select {
	case <-c.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("connection not done 5 s after the server closed it")
	}
	var ce *ConnectionError
	if !errors.As(c.Err(), &ce) || !ce.App || !ce.Remote || ce.Code != 0x42 || ce.Reason != "bye" {
		t.Fatalf("Err() = %#v", c.Err())
	}
	st.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadAll(st); !errors.As(err, &ce) {
		t.Fatalf("read on an open stream: %v", err)
	}
	if _, err := c.OpenStream(t.Context()); !errors.As(err, &ce) {
		t.Fatalf("OpenStream after the close: %v", err)
	}
}

// TestClientCloses is RELIABILITY Q-15: CloseWithError sends an
// application CONNECTION_CLOSE the server reads with the code and
// reason; the connection's goroutine is gone when it returns.
func TestClientCloses(t *testing.T) {
	srv := newEchoServer(t, nil)
	c, err := dial(t, "firefox153-linux", srv.addr(), srv.cert, nil)
	if err != nil {
		t.Fatal(err)
	}
	sc := <-srv.conns
	c.CloseWithError(0x10c, "done here")
	select {
	case <-sc.Context().Done():
	case <-time.After(5 * time.Second):
		t.Fatal("server did not see the close")
	}
	var ae *quicgo.ApplicationError
	if err := context.Cause(sc.Context()); !errors.As(err, &ae) || !ae.Remote || ae.ErrorCode != 0x10c || ae.ErrorMessage != "done here" {
		t.Fatalf("server saw %v", err)
	}
	var ce *ConnectionError
	if !errors.As(c.Err(), &ce) || ce.Remote || ce.Code != 0x10c {
		t.Fatalf("Err() = %v", c.Err())
	}
	select {
	case <-c.loopDone:
	default:
		t.Fatal("goroutine still running after CloseWithError")
	}
}

// TestIdleTimeout is RELIABILITY Q-16: a server that goes silent (every
// datagram dropped) ends the connection with ErrIdleTimeout after the
// configured idle timeout, not before, and a blocked Read returns it.
func TestIdleTimeout(t *testing.T) {
	srv := newEchoServer(t, nil)
	relay := newLossyRelay(t, srv.addr(), 1, 0, 0, 0)
	c, err := dial(t, "chrome156-linux", relay.addr(), srv.cert, func(c *Config) { c.MaxIdleTimeout = 400 * time.Millisecond })
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.OpenStream(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	relay.blackhole.Store(true)
	start := time.Now()
	_, rerr := st.Read(make([]byte, 1))
	el := time.Since(start)
	if !errors.Is(rerr, ErrIdleTimeout) || !errors.Is(c.Err(), ErrIdleTimeout) {
		t.Fatalf("read: %v, Err() %v", rerr, c.Err())
	}
	if el < 300*time.Millisecond || el > 3*time.Second {
		t.Fatalf("idle timeout after %v, want about 400 ms", el)
	}
}

// TestStatelessReset is RELIABILITY Q-17: a datagram that does not
// decrypt is dropped, but one ending in the stateless reset token of
// quic-go's transport parameters ends the connection with
// ErrStatelessReset.
func TestStatelessReset(t *testing.T) {
	key := quicgo.StatelessResetKey{1, 2, 3}
	cert := newEchoServer(t, nil).cert
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	tr := &quicgo.Transport{Conn: udp, StatelessResetKey: &key}
	ln, err := tr.Listen(cert.ServerConfig("h3"), &quicgo.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { ln.Close(); tr.Close(); udp.Close() }()
	relay := newLossyRelay(t, udp.LocalAddr().(*net.UDPAddr), 1, 0, 0, 0)
	c, err := dial(t, "firefox153-linux", relay.addr(), cert, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	token := append([]byte(nil), c.peer.resetToken...)
	client := c.pc.LocalAddr().(*net.UDPAddr)
	c.mu.Unlock()
	if len(token) != 16 {
		t.Fatalf("server sent no stateless reset token (%d bytes)", len(token))
	}
	relay.blackhole.Store(true)
	junk := append([]byte{0x4f}, randomBytes(40, 9)...)
	relay.front.WriteToUDP(junk, client)
	time.Sleep(100 * time.Millisecond)
	if c.Err() != nil {
		t.Fatalf("junk closed the connection: %v", c.Err())
	}
	reset := append([]byte{0x55}, randomBytes(20, 10)...)
	reset = append(reset, token...)
	relay.front.WriteToUDP(reset, client)
	select {
	case <-c.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("stateless reset not seen in 5 s")
	}
	if !errors.Is(c.Err(), ErrStatelessReset) {
		t.Fatalf("Err() = %v", c.Err())
	}
}

// fakeServer answers the client's first datagram with reply(datagram).
func fakeServer(t *testing.T, reply func(d []byte) [][]byte) *net.UDPAddr {
	t.Helper()
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 2048)
		for {
			n, a, err := pc.ReadFromUDP(buf)
			if err != nil {
				return
			}
			for _, r := range reply(buf[:n]) {
				pc.WriteToUDP(r, a)
			}
		}
	}()
	t.Cleanup(func() { pc.Close(); <-done })
	return pc.LocalAddr().(*net.UDPAddr)
}

func versionNegotiation(d []byte, versions ...uint32) []byte {
	h, _ := quicwire.ParseHeader(d)
	b := []byte{0x80 | 0x3a, 0, 0, 0, 0, byte(len(h.SCID))}
	b = append(b, h.SCID...)
	b = append(b, byte(len(h.DCID)))
	b = append(b, h.DCID...)
	for _, v := range versions {
		b = append(b, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
	}
	return b
}

// TestVersionNegotiation is RELIABILITY Q-18: a Version Negotiation
// packet without version 1 fails the dial with ErrVersionNegotiation; one
// that lists version 1, or echoes the wrong connection IDs, is ignored.
func TestVersionNegotiation(t *testing.T) {
	srv := newEchoServer(t, nil)
	addr := fakeServer(t, func(d []byte) [][]byte {
		return [][]byte{versionNegotiation(d, 0x6b3343cf, 0x1a2a3a4a)}
	})
	start := time.Now()
	if _, err := dial(t, "chrome156-linux", addr, srv.cert, nil); !errors.Is(err, ErrVersionNegotiation) {
		t.Fatalf("dial: %v", err)
	}
	if time.Since(start) > 2*time.Second {
		t.Fatalf("took %v", time.Since(start))
	}
	addr = fakeServer(t, func(d []byte) [][]byte {
		bad := versionNegotiation(d, 0x6b3343cf)
		bad[6] ^= 1 // another connection's
		return [][]byte{versionNegotiation(d, 0x6b3343cf, quicwire.Version1), bad}
	})
	if _, err := dial(t, "firefox153-linux", addr, srv.cert, func(c *Config) { c.HandshakeTimeout = 500 * time.Millisecond }); !errors.Is(err, ErrHandshakeTimeout) {
		t.Fatalf("dial with an ignorable version negotiation: %v", err)
	}
}

// TestRetry is RELIABILITY Q-19: a server that demands address
// validation sends a Retry; the client sends its Initial again with the
// token and the new connection ID, checks retry_source_connection_id and
// completes; a Retry with a bad integrity tag is ignored.
func TestRetry(t *testing.T) {
	cert := newEchoServer(t, nil).cert
	udp, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	tr := &quicgo.Transport{Conn: udp, VerifySourceAddress: func(net.Addr) bool { return true }}
	ln, err := tr.Listen(cert.ServerConfig("h3"), &quicgo.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { ln.Close(); tr.Close(); udp.Close() }()
	go func() {
		for {
			sc, err := ln.Accept(context.Background())
			if err != nil {
				return
			}
			go func() {
				st, err := sc.AcceptStream(context.Background())
				if err == nil {
					io.Copy(st, st)
					st.Close()
				}
				<-sc.Context().Done()
			}()
		}
	}()
	for _, name := range profiles {
		c, err := dial(t, name, udp.LocalAddr(), cert, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if c.retrySCID == nil || len(c.token) == 0 {
			t.Fatalf("%s: no retry taken", name)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		if err := echo(ctx, c, randomBytes(3000, 1)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		cancel()
		c.CloseWithError(0, "")
	}
	// a forged Retry (bad tag) is dropped
	srv := newEchoServer(t, nil)
	addr := fakeServer(t, func(d []byte) [][]byte {
		h, _ := quicwire.ParseHeader(d)
		r := quicwire.AppendRetry(nil, h.SCID, []byte{9, 9, 9, 9}, h.DCID, []byte("token"))
		r[len(r)-1] ^= 1
		return [][]byte{r}
	})
	if _, err := dial(t, "chrome156-linux", addr, srv.cert, func(c *Config) { c.HandshakeTimeout = 500 * time.Millisecond }); !errors.Is(err, ErrHandshakeTimeout) {
		t.Fatalf("dial with a forged retry: %v", err)
	}
}

// TestPeerStopsReading is RELIABILITY Q-20: the server never reads a
// stream: the client sends only what flow control allows, Write blocks
// with at most sendBufLimit bytes held and returns at its deadline, and
// the connection keeps serving other streams.
func TestPeerStopsReading(t *testing.T) {
	srv := newEchoServer(t, nil)
	c, err := dial(t, "chrome156-linux", srv.addr(), srv.cert, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.OpenStream(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	st.SetWriteDeadline(time.Now().Add(time.Second))
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	big := make([]byte, 64<<20)
	big[0] = 'N'
	n, err := st.Write(big)
	if !errors.Is(err, ErrDeadline) {
		t.Fatalf("write: %d bytes, %v", n, err)
	}
	c.mu.Lock()
	held, sent, limit := st.s.writeOff-st.s.bufBase, st.s.sendNext, st.s.peerMax
	c.mu.Unlock()
	if held > sendBufLimit || sent > limit || n > sendBufLimit+int(limit) {
		t.Fatalf("wrote %d, held %d, sent %d of a %d window", n, held, sent, limit)
	}
	st.CancelWrite(3)
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := echo(ctx, c, randomBytes(200000, 3)); err != nil {
		t.Fatal(err)
	}
}

// TestStreamResets is RELIABILITY Q-21: the server resets a stream
// (RESET_STREAM 7) and asks the client to stop (STOP_SENDING 8): Read
// returns a *StreamError with 7, Write one with 8, both Remote.
func TestStreamResets(t *testing.T) {
	srv := newEchoServer(t, nil)
	c, err := dial(t, "firefox153-linux", srv.addr(), srv.cert, nil)
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.OpenStream(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	st.SetDeadline(time.Now().Add(5 * time.Second))
	st.Write([]byte("R"))
	var se *StreamError
	if _, err := io.ReadAll(st); !errors.As(err, &se) || se.Code != 7 || !se.Remote || se.StreamID != st.ID() {
		t.Fatalf("read: %v", err)
	}
	var werr error
	for range 100 {
		if _, werr = st.Write(make([]byte, 1000)); werr != nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !errors.As(werr, &se) || se.Code != 8 || !se.Remote {
		t.Fatalf("write after STOP_SENDING: %v", werr)
	}
	// the stream is forgotten once both halves are over
	deadline := time.Now().Add(5 * time.Second)
	for {
		c.mu.Lock()
		_, open := c.streams.m[st.ID()]
		c.mu.Unlock()
		if !open {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("reset stream still held")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
