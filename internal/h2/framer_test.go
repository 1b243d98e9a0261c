package h2

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/synctest"
)

// Tests of the read side on golang.org/x/net/http2's Framer: header blocks
// in CONTINUATION frames (assembled by the connection, onContinuation), and
// how the Framer's errors map to h2's.

// writeSplit writes blk as a HEADERS frame and CONTINUATION frames of at
// most n bytes each.
func (p *peer) writeSplit(id uint32, end bool, blk []byte, n int) {
	p.t.Helper()
	var flags uint8
	if end {
		flags = FlagEndStream
	}
	first := blk[:min(n, len(blk))]
	blk = blk[len(first):]
	if len(blk) == 0 {
		flags |= FlagEndHeaders
	}
	p.write(append(appendFrameHeader(nil, len(first), FrameHeaders, flags, id), first...))
	for len(blk) > 0 {
		frag := blk[:min(n, len(blk))]
		blk = blk[len(frag):]
		var cf uint8
		if len(blk) == 0 {
			cf = FlagEndHeaders
		}
		p.write(append(appendFrameHeader(nil, len(frag), FrameContinuation, cf, id), frag...))
	}
}

func TestContinuationResponse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cc, p := ready(t, plainConfig())
		for range 2 { // the second block uses the dynamic table the first filled
			ch := goRoundTrip(context.Background(), cc, get("/"))
			h := p.nextOf(FrameHeaders)
			p.writeSplit(h.StreamID, true, p.block(":status", "200", "x-one", strings.Repeat("a", 40),
				"x-two", "2", "content-type", "text/plain"), 7)
			r := <-ch
			if r.err != nil {
				t.Fatal(r.err)
			}
			hd := r.resp.Header
			if r.resp.StatusCode != 200 || len(hd) != 3 || hd[0].Name != "x-one" || hd[1].Value != "2" ||
				hd.Get("content-type") != "text/plain" {
				t.Fatalf("got %d %v", r.resp.StatusCode, hd)
			}
			r.resp.Body.Close()
		}
		roundTripOK(t, cc, p)
	})
}

func TestContinuationInvalidField(t *testing.T) {
	for name, kv := range map[string][]string{
		"upper-case":     {":status", "200", "X-A", "1"},
		"binary-value":   {":status", "200", "x-a", "a\x00b"},
		"pseudo-late":    {":status", "200", "x-a", "1", ":status", "204"},
		"unknown-pseudo": {":status", "200", ":path", "/"},
		"no-status":      {"x-a", "1"},
	} {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cc, p := ready(t, plainConfig())
				ch := goRoundTrip(context.Background(), cc, get("/"))
				h := p.nextOf(FrameHeaders)
				blk := p.block(kv...)
				// The invalid field sits in the last fragment: the block is
				// decoded to its end and only the stream fails.
				p.writeSplit(h.StreamID, false, blk, len(blk)-1)
				wantStreamError(t, (<-ch).err, ErrCodeProtocol)
				if f := p.nextOf(FrameRSTStream); f.StreamID != h.StreamID {
					t.Fatalf("RST on %d", f.StreamID)
				}
				roundTripOK(t, cc, p)
			})
		})
	}
}

// TestContinuationListTooLarge: a header list over our limit that ends in
// its last CONTINUATION fails the stream only; HPACK state stays intact.
func TestContinuationListTooLarge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := plainConfig()
		cfg.MaxHeaderListSize = 4096
		cc, p := ready(t, cfg)
		ch := goRoundTrip(context.Background(), cc, get("/"))
		h := p.nextOf(FrameHeaders)
		kv := []string{":status", "200"}
		for range 6 {
			kv = append(kv, "x-big", strings.Repeat("v", 1000))
		}
		blk := p.block(kv...)
		p.writeSplit(h.StreamID, true, blk, 16)
		if r := <-ch; !errors.Is(r.err, ErrHeaderListTooLarge) {
			t.Fatalf("got %v, want ErrHeaderListTooLarge", r.err)
		}
		roundTripOK(t, cc, p)
	})
}

// TestEmptyContinuationFlood: END_HEADERS never comes and the CONTINUATION
// frames are empty, so x/net's rule on fragment sizes never trips; the
// block's byte budget ends the connection after bounded frames.
func TestEmptyContinuationFlood(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := plainConfig()
		cfg.MaxHeaderListSize = 4096
		cc, p := ready(t, cfg)
		ch := goRoundTrip(context.Background(), cc, get("/"))
		h := p.nextOf(FrameHeaders)
		p.write(append(appendFrameHeader(nil, 1, FrameHeaders, 0, h.StreamID), 0x88))
		empty := appendFrameHeader(nil, 0, FrameContinuation, 0, h.StreamID)
		frames := 0
		for range 100000 {
			if _, err := p.nc.Write(empty); err != nil {
				break
			}
			frames++
		}
		// The budget, plus one frame in the connection's read buffer.
		if limit := (2*4096+frameHeaderLen*maxEmptyFrames)/frameHeaderLen + 1; frames > limit {
			t.Fatalf("client read %d empty CONTINUATION frames, limit %d", frames, limit)
		}
		wantConnError(t, (<-ch).err, ErrCodeProtocol)
	})
}

func TestContinuationInterleaved(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cc, p := ready(t, plainConfig())
		ch := goRoundTrip(context.Background(), cc, get("/"))
		h := p.nextOf(FrameHeaders)
		blk := p.block(":status", "200", "x-a", "1")
		p.write(append(appendFrameHeader(nil, 1, FrameHeaders, 0, h.StreamID), blk[0]))
		p.write(appendPing(nil, false, [8]byte{}))
		err := (<-ch).err
		wantConnError(t, err, ErrCodeProtocol)
		if code, sent := p.closedWith(); !sent || code != ErrCodeProtocol {
			t.Fatalf("GOAWAY %v sent=%v", code, sent)
		}
	})
}

// TestFramerErrors checks the mapping of the Framer's errors: connection
// errors keep their code, a frame too short for its fields is a
// FRAME_SIZE_ERROR, and a connection that drops mid-frame is not a protocol
// error.
func TestFramerErrors(t *testing.T) {
	cases := []struct {
		name string
		raw  func(id uint32) []byte
		code ErrCode // 0: a transport error
	}{
		{"headers-bad-padding", func(id uint32) []byte {
			return append(appendFrameHeader(nil, 2, FrameHeaders, FlagEndHeaders|FlagPadded, id), 5, 0x88)
		}, ErrCodeProtocol},
		{"headers-no-pad-length", func(id uint32) []byte {
			return appendFrameHeader(nil, 0, FrameHeaders, FlagEndHeaders|FlagPadded, id)
		}, ErrCodeFrameSize},
		{"headers-short-priority", func(id uint32) []byte {
			return append(appendFrameHeader(nil, 3, FrameHeaders, FlagEndHeaders|FlagPriority, id), 0, 0, 0)
		}, ErrCodeFrameSize},
		{"data-no-pad-length", func(id uint32) []byte {
			return appendFrameHeader(nil, 0, FrameData, FlagPadded, id)
		}, ErrCodeFrameSize},
		{"priority-length", func(id uint32) []byte {
			return append(appendFrameHeader(nil, 4, FramePriority, 0, id), 0, 0, 0, 1)
		}, ErrCodeFrameSize},
		{"rst-stream-0", func(uint32) []byte {
			return appendRSTStream(nil, 0, ErrCodeCancel)
		}, ErrCodeProtocol},
		{"ping-length", func(uint32) []byte {
			return append(appendFrameHeader(nil, 4, FramePing, 0, 0), 1, 2, 3, 4)
		}, ErrCodeFrameSize},
		{"goaway-short", func(uint32) []byte {
			return append(appendFrameHeader(nil, 4, FrameGoAway, 0, 0), 0, 0, 0, 1)
		}, ErrCodeFrameSize},
		{"continuation-alone", func(id uint32) []byte {
			return append(appendFrameHeader(nil, 1, FrameContinuation, FlagEndHeaders, id), 0x88)
		}, ErrCodeProtocol},
		{"truncated", func(id uint32) []byte {
			return append(appendFrameHeader(nil, 100, FrameData, 0, id), 1, 2, 3)
		}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cc, p := ready(t, plainConfig())
				ch := goRoundTrip(context.Background(), cc, get("/"))
				h := p.nextOf(FrameHeaders)
				p.write(c.raw(h.StreamID))
				if c.code == 0 {
					p.nc.Close()
					err := (<-ch).err
					var ce ConnectionError
					if !errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &ce) {
						t.Fatalf("got %v (%T), want io.ErrUnexpectedEOF", err, err)
					}
					return
				}
				wantConnError(t, (<-ch).err, c.code)
				if code, sent := p.closedWith(); !sent || code != c.code {
					t.Fatalf("GOAWAY %v sent=%v", code, sent)
				}
			})
		})
	}
}
