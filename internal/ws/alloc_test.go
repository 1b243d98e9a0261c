package ws

import (
	"bytes"
	"testing"
)

// loopStream turns each client frame written into the server's unmasked
// echo, read back: a peer that allocates nothing, so that AllocsPerRun
// counts the client's framing alone.
type loopStream struct {
	in  []byte
	pos int
}

func (s *loopStream) Write(p []byte) (int, error) {
	h, n, _ := ParseHeader(p)
	payload := p[n:]
	if s.pos == len(s.in) {
		s.in, s.pos = s.in[:0], 0
	}
	s.in = AppendHeader(s.in, Header{Fin: true, Op: h.Op, PayloadLen: h.PayloadLen})
	start := len(s.in)
	s.in = append(s.in, payload...)
	Mask(h.Mask, 0, s.in[start:])
	return len(p), nil
}

func (s *loopStream) Read(p []byte) (int, error) {
	n := copy(p, s.in[s.pos:])
	s.pos += n
	return n, nil
}

func (s *loopStream) Close() error { return nil }

// TestAllocsPerMessage: an echo of a 1 KiB text message (write, then read
// the answer) allocates nothing once the buffers have grown.
func TestAllocsPerMessage(t *testing.T) {
	c := NewConn(&loopStream{}, &Config{PingInterval: -1})
	defer c.fail(ErrClosed)
	msg := bytes.Repeat([]byte("x"), 1024)
	n := testing.AllocsPerRun(1000, func() {
		if err := c.WriteMessage(bg, OpText, msg); err != nil {
			t.Fatal(err)
		}
		if _, p, err := c.ReadMessage(bg); err != nil || len(p) != len(msg) {
			t.Fatalf("read %d bytes, %v", len(p), err)
		}
	})
	if n > 0 {
		t.Fatalf("%.1f allocations per echo, want 0", n)
	}
}
