package h2

import (
	"bytes"
	"context"
	"io"
	"net"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/guise-http/guise/fields"
)

// Tests of the write side on golang.org/x/net/http2's Framer.

// TestRequestContinuation: a header block larger than the peer's
// MAX_FRAME_SIZE goes out as HEADERS and CONTINUATION frames of at most that
// size, END_HEADERS on the last only, and decodes to the request's fields.
func TestRequestContinuation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cc, p := ready(t, plainConfig())
		var big strings.Builder
		for i := range 40000 {
			big.WriteByte("!#$%&'*+-.^_`|~0123456789"[i*7%25])
		}
		req := get("/")
		req.Header = fields.Header{{Name: "x-big", Value: big.String()}, {Name: "x-after", Value: "1"}}
		req.Priority = Priority{Send: true, Weight: 256, Exclusive: true}
		ch := goRoundTrip(context.Background(), cc, req)
		h := p.nextOf(FrameHeaders)
		if h.Flags&FlagEndHeaders != 0 || h.Flags&FlagPriority == 0 || len(h.payload) != 16384 {
			t.Fatalf("HEADERS flags %#x, %d bytes", h.Flags, len(h.payload))
		}
		blk := bytes.Clone(h.payload[5:])
		for i := 0; ; i++ {
			c := p.next()
			if c.Type != FrameContinuation || c.StreamID != h.StreamID || len(c.payload) > 16384 || i > 3 {
				t.Fatalf("frame %d: %v on %d, %d bytes", i, c.Type, c.StreamID, len(c.payload))
			}
			blk = append(blk, c.payload...)
			if c.Flags&FlagEndHeaders != 0 {
				break
			}
			if len(c.payload) != 16384 {
				t.Fatalf("short CONTINUATION without END_HEADERS: %d bytes", len(c.payload))
			}
		}
		fs, err := p.dec.DecodeFull(blk)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(fs); n != 6 || fs[4].Value != big.String() || fs[5].Name != "x-after" {
			t.Fatalf("%d fields decoded", n)
		}
		p.writeHeaders(h.StreamID, true, ":status", "204")
		if r := <-ch; r.err != nil {
			t.Fatal(r.err)
		}
	})
}

// TestZeroPriorityFlag: weight 1 on stream 0, not exclusive, is all zero on
// the wire; the HEADERS still carries the PRIORITY flag and its five bytes.
func TestZeroPriorityFlag(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cc, p := ready(t, plainConfig())
		req := get("/")
		req.Priority = Priority{Send: true, Weight: 1, Dep: DepRoot}
		ch := goRoundTrip(context.Background(), cc, req)
		h := p.nextOf(FrameHeaders)
		if h.Flags != FlagPriority|FlagEndHeaders|FlagEndStream || !bytes.Equal(h.payload[:5], make([]byte, 5)) {
			t.Fatalf("flags %#x, payload % x", h.Flags, h.payload[:5])
		}
		if fs := p.decode(h); len(fs) != 4 || fs[3].Value != "/" {
			t.Fatalf("fields %v", fs)
		}
		p.writeHeaders(h.StreamID, true, ":status", "204")
		if r := <-ch; r.err != nil {
			t.Fatal(r.err)
		}
	})
}

// TestInvalidPreface: a Config whose preface the Framer refuses to write
// fails NewClientConn, which closes the connection and writes nothing.
func TestInvalidPreface(t *testing.T) {
	for name, cfg := range map[string]*Config{
		"priority-stream-0": {PriorityFrames: []PriorityFrame{{StreamID: 0, PriorityParam: PriorityParam{Weight: 1}}}},
		"window-too-large":  {ConnWindowUpdate: 1 << 31},
	} {
		t.Run(name, func(t *testing.T) {
			c, s := net.Pipe()
			defer s.Close()
			if _, err := NewClientConn(c, cfg); err == nil {
				t.Fatal("no error")
			}
			if n, err := s.Read(make([]byte, 1)); err != io.EOF {
				t.Fatalf("read %d, %v: connection not closed", n, err)
			}
		})
	}
}
