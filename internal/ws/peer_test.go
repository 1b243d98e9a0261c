package ws

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/klauspost/compress/flate"
)

// peer is a scripted server on the other end of an in-memory connection:
// it writes raw frames and collects the client's (unmasked) in frames.
type peer struct {
	t      *testing.T
	nc     net.Conn
	frames chan frame
	out    chan []byte
}

type frame struct {
	h Header
	p []byte
}

// newPair returns a client Conn over an in-memory pipe and its peer. The
// peer's reader runs until the pipe closes; Cleanup closes both ends.
func newPair(t *testing.T, cfg *Config) (*Conn, *peer) {
	t.Helper()
	a, b := net.Pipe()
	p := &peer{t: t, nc: b, frames: make(chan frame, 64), out: make(chan []byte, 64)}
	go p.readLoop()
	go p.writeLoop()
	c := NewConn(a, cfg)
	t.Cleanup(func() {
		c.fail(ErrClosed)
		b.Close()
		close(p.out)
	})
	return c, p
}

func (p *peer) readLoop() {
	defer close(p.frames)
	var buf []byte
	tmp := make([]byte, 4096)
	for {
		for {
			h, n, err := ParseHeader(buf)
			if err != nil || n == 0 || int64(len(buf)-n) < h.PayloadLen {
				break
			}
			pl := append([]byte(nil), buf[n:n+int(h.PayloadLen)]...)
			if h.Masked {
				maskBytes(h.Mask, 0, pl)
			}
			buf = buf[n+int(h.PayloadLen):]
			p.frames <- frame{h, pl}
		}
		n, err := p.nc.Read(tmp)
		buf = append(buf, tmp[:n]...)
		if err != nil {
			return
		}
	}
}

// raw writes a frame: b0 is the first byte (FIN, RSV, opcode), payload
// unmasked.
func (p *peer) raw(b0 byte, payload []byte) {
	p.t.Helper()
	b := []byte{b0}
	switch l := len(payload); {
	case l <= 125:
		b = append(b, byte(l))
	case l <= 0xffff:
		b = append(b, 126, byte(l>>8), byte(l))
	default:
		b = append(b, 127)
		b = binary.BigEndian.AppendUint64(b, uint64(l))
	}
	p.write(append(b, payload...))
}

// write queues b; the writer goes on in order, and stops writing (but
// keeps draining) once the client stopped reading.
func (p *peer) write(b []byte) { p.out <- b }

func (p *peer) writeLoop() {
	var err error
	for b := range p.out {
		if err == nil {
			_, err = p.nc.Write(b)
		}
	}
}

func (p *peer) next() (frame, bool) {
	select {
	case f, ok := <-p.frames:
		return f, ok
	case <-time.After(10 * time.Second):
		p.t.Fatal("no frame from the client")
		return frame{}, false
	}
}

// expectClose reads client frames up to a close frame and checks its code
// (StatusNoStatus: an empty close frame).
func (p *peer) expectClose(code StatusCode) {
	p.t.Helper()
	for {
		f, ok := p.next()
		if !ok {
			p.t.Fatalf("client sent no close frame; want %v", code)
		}
		if f.h.Op != OpClose {
			continue
		}
		got := StatusNoStatus
		if len(f.p) >= 2 {
			got = StatusCode(binary.BigEndian.Uint16(f.p))
		}
		if got != code {
			p.t.Fatalf("client closed with %v, want %v", got, code)
		}
		if !f.h.Masked {
			p.t.Fatal("client close frame unmasked")
		}
		return
	}
}

func closePayload(code StatusCode, reason string) []byte {
	return append(binary.BigEndian.AppendUint16(nil, uint16(code)), reason...)
}

func deflateRaw(t *testing.T, w *flate.Writer, out *bytes.Buffer, p []byte) []byte {
	t.Helper()
	out.Reset()
	w.Write(p)
	w.Flush()
	b := out.Bytes()
	return append([]byte(nil), b[:len(b)-4]...)
}

var bg = context.Background()

func wantCloseErr(t *testing.T, err error, code StatusCode, remote bool) {
	t.Helper()
	var ce *CloseError
	if !errors.As(err, &ce) || ce.Code != code || ce.Remote != remote {
		t.Fatalf("error %v (%T), want a CloseError %v remote=%v", err, err, code, remote)
	}
}

var _ io.Reader = (*net.TCPConn)(nil)
