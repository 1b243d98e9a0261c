package ws

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/klauspost/compress/flate"
)

// TestWriteMasksWithFreshKeys: every client frame is masked, with a key of
// its own from Rand (RELIABILITY WS-07).
func TestWriteMasksWithFreshKeys(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, p := newPair(t, nil)
		keys := map[[4]byte]bool{}
		for i := range 50 {
			msg := strings.Repeat("m", i*37)
			if err := c.WriteMessage(bg, OpText, []byte(msg)); err != nil {
				t.Fatal(err)
			}
			f, _ := p.next()
			if !f.h.Masked || f.h.Op != OpText || !f.h.Fin || string(f.p) != msg {
				t.Fatalf("frame %d: masked=%v op=%v fin=%v payload ok=%v", i, f.h.Masked, f.h.Op, f.h.Fin, string(f.p) == msg)
			}
			keys[f.h.Mask] = true
		}
		if len(keys) < 49 {
			t.Errorf("%d distinct mask keys in 50 frames", len(keys))
		}
	})
}

// TestWriteRefusesInvalid: what may not go on the wire is refused before a
// byte is written.
func TestWriteRefusesInvalid(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := newPair(t, nil)
		for _, tc := range []struct {
			op Opcode
			p  string
		}{{OpText, "\xff"}, {OpPing, ""}, {OpClose, ""}, {Opcode(3), ""}} {
			if err := c.WriteMessage(bg, tc.op, []byte(tc.p)); !errors.Is(err, ErrInvalidMessage) {
				t.Errorf("%v %q: %v, want ErrInvalidMessage", tc.op, tc.p, err)
			}
		}
		for _, code := range []StatusCode{1005, 1006, 999, 5000} {
			if err := c.Close(code, ""); !errors.Is(err, ErrInvalidMessage) {
				t.Errorf("Close(%v): %v", code, err)
			}
		}
		if err := c.Close(StatusNormal, strings.Repeat("r", 124)); !errors.Is(err, ErrInvalidMessage) {
			t.Errorf("Close with a 124-byte reason: %v", err)
		}
		if c.Err() != nil {
			t.Errorf("refused calls ended the connection: %v", c.Err())
		}
	})
}

// TestDeflateRoundTrip: with context takeover on both sides, what the
// client compresses inflates on the peer as one stream, and the client's
// window bits are honoured (RELIABILITY WS-08).
func TestDeflateRoundTrip(t *testing.T) {
	for _, d := range []Deflate{
		{Enabled: true},
		{Enabled: true, ClientNoContextTakeover: true},
		{Enabled: true, ClientMaxWindowBits: 9},
	} {
		synctest.Test(t, func(t *testing.T) {
			c, p := newPair(t, &Config{Deflate: d})
			var stream []byte
			msgs := []string{"", strings.Repeat("compress me ", 300), "compress me", "x"}
			for _, m := range msgs {
				if err := c.WriteMessage(bg, OpText, []byte(m)); err != nil {
					t.Fatal(err)
				}
				f, _ := p.next()
				if f.h.RSV != 4 {
					t.Fatalf("%+v: RSV %d, want RSV1", d, f.h.RSV)
				}
				var got []byte
				if d.ClientNoContextTakeover {
					got, _ = io.ReadAll(flate.NewReader(bytes.NewReader(append(f.p, tail...))))
				} else {
					stream = append(stream, f.p...)
					stream = append(stream, tail[:4]...)
					r := flate.NewReader(bytes.NewReader(append(append([]byte(nil), stream...), tail[4:]...)))
					all, _ := io.ReadAll(r)
					got = all[len(all)-len(m):]
				}
				if string(got) != m {
					t.Fatalf("%+v: peer inflated %d bytes, want %d", d, len(got), len(m))
				}
			}
		})
	}
}

// TestCloseHandshake: Close sends the code and reason, waits for the
// peer's close and returns nil; later calls get ErrClosed (RELIABILITY
// WS-09).
func TestCloseHandshake(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, p := newPair(t, nil)
		done := make(chan error)
		go func() { done <- c.Close(StatusGoingAway, "done") }()
		f, _ := p.next()
		if f.h.Op != OpClose || string(f.p) != string(closePayload(StatusGoingAway, "done")) {
			t.Fatalf("close frame %v %q", f.h.Op, f.p)
		}
		text(p, true, OpText, "in flight")
		p.raw(0x88, closePayload(StatusGoingAway, ""))
		if err := <-done; err != nil {
			t.Fatalf("Close: %v", err)
		}
		if _, _, err := c.ReadMessage(bg); !errors.Is(err, ErrClosed) {
			t.Errorf("read after Close: %v", err)
		}
	})
}

// TestSendCloseKeepsReading (WS-18): after SendClose the messages the peer sent
// before its close frame are still read, in order, then its close; a write
// is ErrClosed. (Close, with no reader waiting, would read and drop them.)
func TestSendCloseKeepsReading(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, p := newPair(t, nil)
		if err := c.SendClose(StatusNormal, ""); err != nil {
			t.Fatal(err)
		}
		if f, _ := p.next(); f.h.Op != OpClose || string(f.p) != string(closePayload(StatusNormal, "")) {
			t.Fatalf("close frame %v %q", f.h.Op, f.p)
		}
		if err := c.WriteMessage(bg, OpText, []byte("late")); !errors.Is(err, ErrClosed) {
			t.Errorf("write after SendClose: %v, want ErrClosed", err)
		}
		text(p, true, OpText, "one")
		text(p, true, OpText, "two")
		p.raw(0x88, closePayload(StatusNormal, ""))
		for _, want := range []string{"one", "two"} {
			if _, b, err := c.ReadMessage(bg); err != nil || string(b) != want {
				t.Fatalf("read %q, %v; want %q", b, err, want)
			}
		}
		_, _, err := c.ReadMessage(bg)
		wantCloseErr(t, err, StatusNormal, true)
		if err := c.SendClose(1, ""); !errors.Is(err, ErrInvalidMessage) {
			t.Errorf("SendClose(1): %v, want ErrInvalidMessage", err)
		}
	})
}

// TestCloseWithReaderWaiting: a Read in another goroutine receives the
// peer's answer, and Close returns once it has.
func TestCloseWithReaderWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, p := newPair(t, nil)
		rerr := make(chan error)
		go func() {
			_, _, err := c.ReadMessage(bg)
			rerr <- err
		}()
		synctest.Wait()
		done := make(chan error)
		go func() { done <- c.Close(StatusNormal, "") }()
		p.next()
		p.raw(0x88, closePayload(StatusNormal, ""))
		wantCloseErr(t, <-rerr, StatusNormal, true)
		if err := <-done; err != nil {
			t.Fatalf("Close: %v", err)
		}
	})
}

// TestCloseSilentPeer: a peer that never answers the close frame is cut
// off after CloseTimeout.
func TestCloseSilentPeer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := newPair(t, &Config{CloseTimeout: 3 * time.Second})
		start := time.Now()
		err := c.Close(StatusNormal, "")
		if !errors.Is(err, ErrDropped) || time.Since(start) != 3*time.Second {
			t.Fatalf("Close: %v after %v, want ErrDropped after 3s", err, time.Since(start))
		}
	})
}

// TestPingDeadline: a Read waiting on a silent peer pings after
// PingInterval and fails with ErrPingTimeout PingTimeout later; a peer
// that answers keeps the connection (RELIABILITY WS-10).
func TestPingDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, p := newPair(t, &Config{PingInterval: 10 * time.Second, PingTimeout: 5 * time.Second})
		start := time.Now()
		_, _, err := c.ReadMessage(bg)
		if !errors.Is(err, ErrPingTimeout) || time.Since(start) < 15*time.Second || time.Since(start) > 25*time.Second {
			t.Fatalf("read: %v after %v, want ErrPingTimeout after 15-25s", err, time.Since(start))
		}
		f, _ := p.next()
		if f.h.Op != OpPing {
			t.Fatalf("first frame %v, want a ping", f.h.Op)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		c, p := newPair(t, &Config{PingInterval: 10 * time.Second, PingTimeout: 5 * time.Second})
		go func() {
			for f := range p.frames {
				if f.h.Op == OpPing {
					p.raw(0x8a, f.p)
				}
			}
		}()
		go func() {
			time.Sleep(time.Minute)
			text(p, true, OpText, "late but alive")
		}()
		if _, b, err := c.ReadMessage(bg); err != nil || string(b) != "late but alive" {
			t.Fatalf("read %q, %v", b, err)
		}
	})
}

// TestNoPingsByDefault: with no PingInterval the client sends nothing on
// its own, as Chromium and Firefox send no pings: a Read waits on a silent
// peer for as long as its context allows (an hour here), and ends with the
// context's error; the peer saw no frame (RELIABILITY WS-14).
func TestNoPingsByDefault(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, p := newPair(t, nil)
		ctx, cancel := context.WithTimeout(bg, time.Hour)
		defer cancel()
		start := time.Now()
		_, _, err := c.ReadMessage(ctx)
		if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) != time.Hour {
			t.Fatalf("read: %v after %v, want the context's deadline after 1h", err, time.Since(start))
		}
		synctest.Wait()
		select {
		case f, ok := <-p.frames:
			if ok && f.h.Op != OpClose {
				t.Fatalf("the client sent a %v frame unasked", f.h.Op)
			}
		default:
		}
	})
}

// TestPing: Ping returns once a concurrent Read saw the pong.
func TestPing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, p := newPair(t, nil)
		go func() {
			for f := range p.frames {
				if f.h.Op == OpPing {
					p.raw(0x8a, f.p)
				}
			}
		}()
		go c.ReadMessage(bg)
		if err := c.Ping(bg); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(bg, time.Second)
		defer cancel()
		c2, _ := newPair(t, nil) // nobody reads: the pong never arrives
		if err := c2.Ping(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Ping without a reader: %v", err)
		}
	})
}

// TestDropped: a connection that ends without a close frame ends reads
// with ErrDropped, mid-frame too (RELIABILITY WS-11).
func TestDropped(t *testing.T) {
	for _, b := range [][]byte{nil, {0x81}, {0x81, 5, 'a'}} {
		synctest.Test(t, func(t *testing.T) {
			c, p := newPair(t, nil)
			if b != nil {
				p.write(b)
			}
			go func() {
				synctest.Wait()
				p.nc.Close()
			}()
			if _, _, err := c.ReadMessage(bg); !errors.Is(err, ErrDropped) {
				t.Fatalf("after %q: %v, want ErrDropped", b, err)
			}
		})
	}
}

// TestReadContext: a Read whose context ends closes the connection and
// returns the context's error.
func TestReadContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, _ := newPair(t, &Config{PingInterval: -1})
		ctx, cancel := context.WithTimeout(bg, 7*time.Second)
		defer cancel()
		if _, _, err := c.ReadMessage(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("read: %v", err)
		}
		if c.Err() == nil {
			t.Fatal("connection still open")
		}
	})
}

func TestNegotiate(t *testing.T) {
	chrome, firefox := "permessage-deflate; client_max_window_bits", "permessage-deflate"
	for _, tc := range []struct {
		offer, answer string
		want          Deflate
		bad           bool
	}{
		{chrome, "", Deflate{}, false},
		{chrome, "permessage-deflate", Deflate{Enabled: true}, false},
		{chrome, "permessage-deflate; client_max_window_bits=10; server_no_context_takeover", Deflate{Enabled: true, ClientMaxWindowBits: 10, ServerNoContextTakeover: true}, false},
		{chrome, `permessage-deflate; server_max_window_bits="12"; client_no_context_takeover`, Deflate{Enabled: true, ServerMaxWindowBits: 12, ClientNoContextTakeover: true}, false},
		{firefox, "permessage-deflate; client_max_window_bits=10", Deflate{}, true},
		{chrome, "permessage-deflate; client_max_window_bits=7", Deflate{}, true},
		{chrome, "permessage-deflate; client_max_window_bits=16", Deflate{}, true},
		{chrome, "permessage-deflate; client_max_window_bits", Deflate{}, true},
		{chrome, "permessage-deflate; server_no_context_takeover; server_no_context_takeover", Deflate{}, true},
		{chrome, "permessage-deflate; mystery", Deflate{}, true},
		{chrome, "x-webkit-deflate-frame", Deflate{}, true},
		{chrome, "permessage-deflate, permessage-deflate", Deflate{}, true},
		{"", "permessage-deflate", Deflate{}, true},
	} {
		got, err := Negotiate(tc.offer, tc.answer)
		var he *HandshakeError
		if tc.bad != errors.As(err, &he) || got != tc.want {
			t.Errorf("offer %q answer %q: %+v, %v", tc.offer, tc.answer, got, err)
		}
	}
}

// TestAccept: the example of RFC 6455 section 1.3.
func TestAccept(t *testing.T) {
	if got := Accept("dGhlIHNhbXBsZSBub25jZQ=="); got != "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=" {
		t.Fatal(got)
	}
	k1, _ := NewKey(strings.NewReader(strings.Repeat("a", 16)))
	if k1 != "YWFhYWFhYWFhYWFhYWFhYQ==" {
		t.Fatal(k1)
	}
}
