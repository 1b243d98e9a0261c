package h2

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// The typed errors of errors.go, each provoked over the wire by a scripted
// peer and checked with errors.Is and errors.As, field by field.

// wantPrefix checks that err's text has the package prefix.
func wantPrefix(t testing.TB, err error) {
	t.Helper()
	if !strings.HasPrefix(err.Error(), "h2: ") {
		t.Errorf("error %q lacks the h2: prefix", err)
	}
}

// wantGoAwaySent checks that the client closed the connection with GOAWAY
// carrying code.
func wantGoAwaySent(t testing.TB, p *peer, code ErrCode) {
	t.Helper()
	got, sent := p.closedWith()
	if !sent || got != code {
		t.Errorf("client's GOAWAY: %v (sent %v), want %v", got, sent, code)
	}
}

func TestErrorStreamResetByPeer(t *testing.T) {
	for _, c := range []struct {
		code    ErrCode
		refused bool
	}{{ErrCodeRefusedStream, true}, {ErrCodeInternal, false}, {ErrCodeCancel, false}} {
		t.Run(c.code.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cc, p := ready(t, plainConfig())
				ch := goRoundTrip(context.Background(), cc, get("/"))
				h := p.nextOf(FrameHeaders)
				p.write(appendRSTStream(nil, h.StreamID, c.code))
				err := (<-ch).err
				var se StreamError
				if !errors.As(err, &se) {
					t.Fatalf("got %v (%T), want a StreamError", err, err)
				}
				if se.StreamID != h.StreamID || se.Code != c.code || se.Cause != nil {
					t.Fatalf("got %+v, want StreamError{%d, %v, nil}", se, h.StreamID, c.code)
				}
				if errors.Is(err, ErrRefusedStream) != c.refused {
					t.Fatalf("errors.Is(%v, ErrRefusedStream) = %v", err, !c.refused)
				}
				if CanRetry(err) != c.refused {
					t.Fatalf("CanRetry(%v) = %v", err, !c.refused)
				}
				var ce ConnectionError
				if errors.As(err, &ce) {
					t.Fatalf("a stream reset reads as a connection error: %v", err)
				}
				wantPrefix(t, err)
				roundTripOK(t, cc, p) // the connection stays usable
			})
		})
	}
}

func TestErrorStreamResetMidBody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cc, p := ready(t, plainConfig())
		ch := goRoundTrip(context.Background(), cc, get("/"))
		h := p.nextOf(FrameHeaders)
		p.writeHeaders(h.StreamID, false, ":status", "200")
		r := <-ch
		if r.err != nil {
			t.Fatal(r.err)
		}
		p.writeData(h.StreamID, false, []byte("part"))
		p.write(appendRSTStream(nil, h.StreamID, ErrCodeRefusedStream))
		_, err := io.ReadAll(r.resp.Body) // the reset may drop the part
		r.resp.Body.Close()
		var se StreamError
		if !errors.As(err, &se) || se.StreamID != h.StreamID || se.Code != ErrCodeRefusedStream {
			t.Fatalf("got %v, want StreamError REFUSED_STREAM", err)
		}
		// Refused after the head came: matches ErrRefusedStream, yet the
		// server did process the request.
		if !errors.Is(err, ErrRefusedStream) || CanRetry(err) {
			t.Fatalf("%v: Is(ErrRefusedStream)=%v CanRetry=%v", err, errors.Is(err, ErrRefusedStream), CanRetry(err))
		}
	})
}

func TestErrorStreamResetByUs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cc, p := ready(t, plainConfig())
		ch := goRoundTrip(context.Background(), cc, get("/"))
		h := p.nextOf(FrameHeaders)
		p.writeHeaders(h.StreamID, true, "x-no-status", "1")
		err := (<-ch).err
		var se StreamError
		if !errors.As(err, &se) || se.StreamID != h.StreamID || se.Code != ErrCodeProtocol || se.Cause == nil {
			t.Fatalf("got %v, want StreamError{%d, PROTOCOL_ERROR, cause}", err, h.StreamID)
		}
		if errors.Is(err, ErrRefusedStream) || CanRetry(err) {
			t.Fatalf("%v: refused or retryable", err)
		}
		rst := p.nextOf(FrameRSTStream)
		if rst.StreamID != h.StreamID || ErrCode(binary.BigEndian.Uint32(rst.payload)) != ErrCodeProtocol {
			t.Fatalf("client sent RST_STREAM %d %x, want %d PROTOCOL_ERROR", rst.StreamID, rst.payload, h.StreamID)
		}
		wantPrefix(t, err)
	})
}

func TestErrorGoAway(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cc, p := ready(t, plainConfig())
		low := goRoundTrip(context.Background(), cc, get("/low"))
		lowID := p.nextOf(FrameHeaders).StreamID
		high := goRoundTrip(context.Background(), cc, get("/high"))
		highID := p.nextOf(FrameHeaders).StreamID
		p.write(appendGoAway(nil, lowID, ErrCodeEnhanceYourCalm, "too busy"))
		want := GoAwayError{LastStreamID: lowID, Code: ErrCodeEnhanceYourCalm, DebugData: "too busy"}

		// Above the last stream: not processed, retryable.
		err := (<-high).err
		var ga GoAwayError
		if !errors.As(err, &ga) || ga != want || !CanRetry(err) {
			t.Fatalf("stream %d above the last: %v (retry %v), want retryable %+v", highID, err, CanRetry(err), want)
		}
		wantPrefix(t, err)
		// New requests: refused, retryable.
		if _, err := cc.RoundTrip(context.Background(), get("/new")); !errors.As(err, &ga) || ga != want || !CanRetry(err) {
			t.Fatalf("new request after GOAWAY: %v", err)
		}
		// At or below the last stream, then the connection ends: the
		// server may have processed it.
		p.nc.Close()
		err = (<-low).err
		if !errors.As(err, &ga) || ga != want || CanRetry(err) {
			t.Fatalf("stream %d at the last: %v (retry %v), want non-retryable %+v", lowID, err, CanRetry(err), want)
		}
	})
}

func TestErrorFrameTooLarge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cc, p := ready(t, plainConfig())
		ch := goRoundTrip(context.Background(), cc, get("/"))
		h := p.nextOf(FrameHeaders)
		p.nc.Write(appendData(nil, h.StreamID, false, make([]byte, 16385))) // our MAX_FRAME_SIZE is 16384
		err := (<-ch).err
		var ce ConnectionError
		if !errors.As(err, &ce) || ce.Code != ErrCodeFrameSize || !errors.Is(err, ErrFrameTooLarge) {
			t.Fatalf("got %v, want ConnectionError FRAME_SIZE_ERROR matching ErrFrameTooLarge", err)
		}
		if errors.Is(err, ErrHeaderListTooLarge) {
			t.Fatalf("%v matches ErrHeaderListTooLarge", err)
		}
		wantGoAwaySent(t, p, ErrCodeFrameSize)
	})
}

func TestErrorShortFrameIsNotTooLarge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cc, p := ready(t, plainConfig())
		p.write(appendFrameHeader(nil, 3, FrameRSTStream, 0, 1)) // RST_STREAM is 4 bytes
		p.write([]byte{0, 0, 0})
		synctest.Wait()
		err := cc.Err()
		wantConnError(t, err, ErrCodeFrameSize)
		if errors.Is(err, ErrFrameTooLarge) {
			t.Fatalf("a short frame matches ErrFrameTooLarge: %v", err)
		}
	})
}

func TestErrorHeaderListTooLarge(t *testing.T) {
	t.Run("decoded", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			cfg := plainConfig()
			cfg.MaxHeaderListSize = 4096
			cc, p := ready(t, cfg)
			ch := goRoundTrip(context.Background(), cc, get("/"))
			h := p.nextOf(FrameHeaders)
			kv := []string{":status", "200"}
			for range 10 { // 10 fields of 1000 bytes, indexed: small on the wire
				kv = append(kv, "x-big", strings.Repeat("v", 1000))
			}
			p.writeHeaders(h.StreamID, true, kv...)
			err := (<-ch).err
			var se StreamError
			if !errors.Is(err, ErrHeaderListTooLarge) || !errors.As(err, &se) || se.StreamID != h.StreamID {
				t.Fatalf("got %v, want a StreamError matching ErrHeaderListTooLarge", err)
			}
			roundTripOK(t, cc, p)
		})
	})
	t.Run("encoded", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			cfg := plainConfig()
			cfg.MaxHeaderListSize = 1000
			cc, p := ready(t, cfg)
			ch := goRoundTrip(context.Background(), cc, get("/"))
			h := p.nextOf(FrameHeaders)
			blk := p.block(":status", "200", "x-big", strings.Repeat("v", 5000))
			p.write(appendHeaders(nil, h.StreamID, true, nil, blk, 16384))
			err := (<-ch).err
			var ce ConnectionError
			if !errors.Is(err, ErrHeaderListTooLarge) || !errors.As(err, &ce) || ce.Code != ErrCodeProtocol {
				t.Fatalf("got %v, want a ConnectionError PROTOCOL_ERROR matching ErrHeaderListTooLarge", err)
			}
			wantGoAwaySent(t, p, ErrCodeProtocol)
		})
	})
}

func TestErrorEnhanceYourCalm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cc, p := ready(t, plainConfig())
		ch := goRoundTrip(context.Background(), cc, get("/"))
		h := p.nextOf(FrameHeaders)
		p.writeHeaders(h.StreamID, false, ":status", "200")
		r := <-ch
		for range 2000 {
			if _, err := p.nc.Write(appendData(nil, h.StreamID, false, nil)); err != nil {
				break
			}
		}
		_, err := io.ReadAll(r.resp.Body)
		r.resp.Body.Close()
		var ce ConnectionError
		if !errors.As(err, &ce) || ce.Code != ErrCodeEnhanceYourCalm {
			t.Fatalf("got %v, want ConnectionError ENHANCE_YOUR_CALM", err)
		}
		wantGoAwaySent(t, p, ErrCodeEnhanceYourCalm)
	})
}

func TestErrorTimeoutPhases(t *testing.T) {
	t.Run("head", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			cc, p := ready(t, plainConfig())
			req := get("/")
			req.HeadTimeout = time.Second
			ch := goRoundTrip(context.Background(), cc, req)
			p.nextOf(FrameHeaders)
			err := (<-ch).err
			wantTimeout(t, err, PhaseHead)
		})
	})
	t.Run("body-idle", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			cc, p := ready(t, plainConfig())
			req := get("/")
			req.BodyIdleTimeout = time.Second
			ch := goRoundTrip(context.Background(), cc, req)
			h := p.nextOf(FrameHeaders)
			p.writeHeaders(h.StreamID, false, ":status", "200")
			r := <-ch
			_, err := io.ReadAll(r.resp.Body)
			r.resp.Body.Close()
			wantTimeout(t, err, PhaseBodyIdle)
		})
	})
	t.Run("ping", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			cfg := plainConfig()
			cfg.ReadIdleTimeout = time.Second
			cfg.PingTimeout = time.Second
			cc, p := ready(t, cfg)
			ch := goRoundTrip(context.Background(), cc, get("/"))
			p.nextOf(FrameHeaders)
			err := (<-ch).err
			wantTimeout(t, err, PhasePing)
		})
	})
}

// wantTimeout checks that err is a *TimeoutError of phase that wraps
// os.ErrDeadlineExceeded.
func wantTimeout(t testing.TB, err error, phase Phase) {
	t.Helper()
	var te *TimeoutError
	if !errors.As(err, &te) || te.Phase != phase {
		t.Fatalf("got %v, want TimeoutError{%v}", err, phase)
	}
	if !errors.Is(err, os.ErrDeadlineExceeded) || !te.Timeout() {
		t.Fatalf("%v does not wrap os.ErrDeadlineExceeded", err)
	}
	if want := "h2: timeout waiting for " + phase.String(); err.Error() != want {
		t.Fatalf("error %q, want %q", err, want)
	}
}

func TestPhaseString(t *testing.T) {
	for p, want := range map[Phase]string{
		PhaseHead: "response head", PhaseBodyIdle: "body idle", PhasePing: "ping ack", 0: "unknown phase", 99: "unknown phase",
	} {
		if got := p.String(); got != want {
			t.Errorf("Phase(%d).String() = %q, want %q", p, got, want)
		}
	}
}
