package guise

import (
	"context"
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// cannedConn is an in-memory connection that answers every write with
// resp: guise's own work per request, without the kernel's.
type cannedConn struct {
	mu      sync.Mutex
	pending int
	resp    []byte
	off     int
}

func (c *cannedConn) Read(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pending == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.resp[c.off:])
	c.off += n
	if c.off == len(c.resp) {
		c.off = 0
		c.pending--
	}
	return n, nil
}

func (c *cannedConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	c.pending++
	c.mu.Unlock()
	return len(p), nil
}

func (c *cannedConn) Close() error                     { return nil }
func (c *cannedConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (c *cannedConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (c *cannedConn) SetDeadline(time.Time) error      { return nil }
func (c *cannedConn) SetReadDeadline(time.Time) error  { return nil }
func (c *cannedConn) SetWriteDeadline(time.Time) error { return nil }

// BenchmarkSessionDoNoNetwork measures guise's own CPU per keep-alive GET
// as the bench harness makes it (a new Request per call, a cancellable
// context, the body copied to io.Discard), over a connection that answers
// from memory, so that no syscall or scheduler time hides it.
func BenchmarkSessionDoNoNetwork(b *testing.B) {
	resp := []byte("HTTP/1.1 200 OK\r\nServer: benchserver\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\n" + string(make([]byte, 100)))
	tr := &Transport{DialContext: func(context.Context, string, string) (net.Conn, error) {
		return &cannedConn{resp: resp}, nil
	}}
	defer tr.Close()
	s := &Session{Transport: tr}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b.ReportAllocs()
	for b.Loop() {
		r, err := s.Do(ctx, &Request{Method: "GET", URL: "http://127.0.0.1:8080/small"})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, r.Body); err != nil {
			b.Fatal(err)
		}
		r.Body.Close()
	}
}
