package tlsfp

import (
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"
)

// TestHostRead checks the read that waits in the kernel on the calling
// thread (hostRead) against a loopback TCP peer: bytes there at once and
// bytes arriving after its poll(2) gave up (the runtime's poller then
// waits), a read deadline passing while it waits, the peer's FIN as io.EOF
// and a reset as an error, and a close from another goroutine ending a
// read in flight. A connection that is not a socket is not its to read.
func TestHostRead(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dial := func() (client, server net.Conn) {
		t.Helper()
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		s, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close(); s.Close() })
		return c, s
	}
	buf := make([]byte, 64)
	read := func(c net.Conn) (string, error) {
		n, err, ok := hostRead(c, buf)
		if !ok {
			t.Fatal("hostRead did not apply to a TCP connection")
		}
		return string(buf[:n]), err
	}

	c, s := dial()
	s.Write([]byte("now"))
	time.Sleep(10 * time.Millisecond)
	if got, err := read(c); got != "now" || err != nil {
		t.Fatalf("bytes there at once: %q, %v", got, err)
	}
	go func() { time.Sleep(20 * time.Millisecond); s.Write([]byte("later")) }()
	if got, err := read(c); got != "later" || err != nil {
		t.Fatalf("bytes after the poll: %q, %v", got, err)
	}
	c.SetReadDeadline(time.Now().Add(30 * time.Millisecond))
	start := time.Now()
	if _, err := read(c); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("deadline: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("the deadline ended the read after %v", d)
	}
	c.SetReadDeadline(time.Time{})
	s.Close()
	if _, err := read(c); err != io.EOF {
		t.Fatalf("FIN: %v, want io.EOF", err)
	}

	c, s = dial()
	s.(*net.TCPConn).SetLinger(0)
	s.Close() // RST
	time.Sleep(10 * time.Millisecond)
	if _, err := read(c); err == nil || err == io.EOF {
		t.Fatalf("reset: %v, want an error", err)
	}

	c, _ = dial()
	go func() { time.Sleep(20 * time.Millisecond); c.Close() }()
	if _, err := read(c); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("closed during the read: %v", err)
	}

	p1, p2 := net.Pipe()
	defer p1.Close()
	defer p2.Close()
	if _, _, ok := hostRead(p1, buf); ok {
		t.Fatal("hostRead applied to a pipe")
	}
}
