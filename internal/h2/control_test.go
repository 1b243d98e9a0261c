package h2

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/guise-http/guise/fields"
)

// How the connection answers the peer's control of it: PUSH_PROMISE,
// GOAWAY, refused and reset streams, a low concurrency limit, PING health
// checks, control-frame floods, unknown frames, padding, request checks and
// write timeouts. Each TestH2_nn is a row of RELIABILITY.md (H2-12 ..
// H2-22), named after it.

func TestH2_12PushPromise(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cc, p := ready(t, chromeConfig())
		ch := goRoundTrip(context.Background(), cc, get("/"))
		h := p.nextOf(FrameHeaders)
		blk := p.block(":method", "GET", ":path", "/pushed", ":scheme", "https", ":authority", "peer.test")
		pp := append(appendFrameHeader(nil, 4+len(blk), FramePushPromise, FlagEndHeaders, h.StreamID), 0, 0, 0, 2)
		p.write(append(pp, blk...))
		wantConnError(t, (<-ch).err, ErrCodeProtocol)
	})
}

// RELIABILITY S-9.
func TestH2_13GoAway(t *testing.T) {
	t.Run("graceful", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			cc, p := ready(t, plainConfig())
			var chs []<-chan result
			var ids []uint32
			for i := range 5 {
				chs = append(chs, goRoundTrip(context.Background(), cc, get("/"+string(rune('a'+i)))))
				ids = append(ids, p.nextOf(FrameHeaders).StreamID)
			}
			p.write(appendGoAway(nil, ids[2], ErrCodeNo, ""))
			for _, ch := range chs[3:] {
				r := <-ch
				var ga GoAwayError
				if !CanRetry(r.err) || !errors.As(r.err, &ga) || ga.LastStreamID != ids[2] {
					t.Fatalf("stream above last: %v", r.err)
				}
			}
			if _, err := cc.RoundTrip(context.Background(), get("/new")); !CanRetry(err) {
				t.Fatalf("new request after GOAWAY: %v", err)
			}
			if cc.CanTakeNewRequest() {
				t.Fatal("CanTakeNewRequest after GOAWAY")
			}
			for i, ch := range chs[:3] {
				p.writeHeaders(ids[i], true, ":status", "200")
				if r := <-ch; r.err != nil {
					t.Fatalf("stream %d: %v", ids[i], r.err)
				} else {
					r.resp.Body.Close()
				}
			}
			synctest.Wait()
			if cc.Err() == nil {
				t.Fatal("connection not closed after the last stream")
			}
		})
	})
	t.Run("error-debug-data", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			cc, p := ready(t, plainConfig())
			ch := goRoundTrip(context.Background(), cc, get("/"))
			h := p.nextOf(FrameHeaders)
			p.write(appendGoAway(nil, h.StreamID, ErrCodeEnhanceYourCalm, "slow down"))
			p.nc.Close()
			r := <-ch
			var ga GoAwayError
			if !errors.As(r.err, &ga) || ga.Code != ErrCodeEnhanceYourCalm || ga.DebugData != "slow down" {
				t.Fatalf("got %v", r.err)
			}
		})
	})
}

// RELIABILITY S-9.
func TestH2_14RefusalStorm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for range 20 {
			cc, p := newPeer(t, plainConfig())
			p.writeSettings()
			p.write(appendGoAway(nil, 0, ErrCodeNo, ""))
			_, err := cc.RoundTrip(context.Background(), get("/"))
			if !CanRetry(err) {
				t.Fatalf("got %v, want retryable", err)
			}
			cc.Close()
		}
	})
}

func TestH2_15RefusedStream(t *testing.T) {
	for _, c := range []struct {
		code      ErrCode
		afterHead bool
		retry     bool
	}{{ErrCodeRefusedStream, false, true}, {ErrCodeProtocol, false, false}, {ErrCodeRefusedStream, true, false}} {
		synctest.Test(t, func(t *testing.T) {
			cc, p := ready(t, plainConfig())
			ch := goRoundTrip(context.Background(), cc, get("/"))
			h := p.nextOf(FrameHeaders)
			var err error
			if c.afterHead {
				p.writeHeaders(h.StreamID, false, ":status", "200")
				r := <-ch
				p.write(appendRSTStream(nil, h.StreamID, c.code))
				_, err = io.ReadAll(r.resp.Body)
				r.resp.Body.Close()
			} else {
				p.write(appendRSTStream(nil, h.StreamID, c.code))
				err = (<-ch).err
			}
			wantStreamError(t, err, c.code)
			if CanRetry(err) != c.retry {
				t.Fatalf("%v after head=%v: CanRetry=%v", c.code, c.afterHead, !c.retry)
			}
		})
	}
}

func TestH2_16ResetMidBody(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cc, p := ready(t, plainConfig())
		ch := goRoundTrip(context.Background(), cc, get("/"))
		h := p.nextOf(FrameHeaders)
		p.writeHeaders(h.StreamID, false, ":status", "200")
		p.writeData(h.StreamID, false, []byte("part"))
		r := <-ch
		p.write(appendRSTStream(nil, h.StreamID, ErrCodeInternal))
		synctest.Wait()
		_, err := io.ReadAll(r.resp.Body)
		wantStreamError(t, err, ErrCodeInternal)
		r.resp.Body.Close()
		roundTripOK(t, cc, p)
	})
}

func TestH2_17LowConcurrencyLimit(t *testing.T) {
	for _, limit := range []uint32{0, 1} {
		synctest.Test(t, func(t *testing.T) {
			cc, p := ready(t, plainConfig(), Setting{ID: SettingMaxConcurrentStreams, Val: limit})
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			var chs []<-chan result
			for range 50 {
				chs = append(chs, goRoundTrip(ctx, cc, get("/")))
			}
			synctest.Wait()
			if cc.CanTakeNewRequest() {
				t.Fatal("CanTakeNewRequest at the limit")
			}
			start := time.Now()
			timedOut := 0
			for _, ch := range chs {
				if r := <-ch; errors.Is(r.err, context.DeadlineExceeded) {
					timedOut++
				}
			}
			if timedOut != 50 || time.Since(start) > time.Second {
				t.Fatalf("%d of 50 timed out after %v", timedOut, time.Since(start))
			}
			if limit == 1 {
				// The one that got a stream met its deadline on a
				// connection silent since it was sent (H2-24): the
				// connection is retired and, idle, closes (its
				// RST_STREAM(CANCEL) written first or not at all).
				synctest.Wait()
				if cc.Err() == nil {
					t.Fatal("the connection silent since the stream that timed out is still open")
				}
				for f := range p.frames {
					if f.Type == FrameRSTStream && f.StreamID == 0 {
						t.Fatal("RST_STREAM on stream 0")
					}
				}
			}
		})
	}
}

// RELIABILITY S-10.
func TestH2_18PingHealthCheck(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cfg := plainConfig()
		cfg.ReadIdleTimeout = 10 * time.Second
		cfg.PingTimeout = 5 * time.Second
		cc, p := ready(t, cfg)
		ch := goRoundTrip(context.Background(), cc, get("/"))
		p.nextOf(FrameHeaders)
		// An answered PING keeps the connection.
		time.Sleep(10 * time.Second)
		ping := p.nextOf(FramePing)
		p.write(appendPing(nil, true, [8]byte(ping.payload)))
		time.Sleep(4 * time.Second)
		synctest.Wait()
		if cc.Err() != nil {
			t.Fatalf("closed after answered ping: %v", cc.Err())
		}
		// An unanswered one closes it, after exactly one PING.
		time.Sleep(20 * time.Second)
		r := <-ch
		var te *TimeoutError
		if !errors.As(r.err, &te) || te.Phase != PhasePing {
			t.Fatalf("got %v", r.err)
		}
		pings := 0
		for f := range p.frames {
			if f.Type == FramePing {
				pings++
			}
		}
		if pings != 1 {
			t.Fatalf("%d PINGs for one silence", pings)
		}
	})
}

// TestH2_19ControlFlood floods frames each owed an answer (PINGs, and
// SETTINGS, each owed an ACK) at a client whose writes are stuck (the peer
// never reads): the owed answers are bounded.
func TestH2_19ControlFlood(t *testing.T) {
	for _, flood := range []struct {
		name  string
		frame []byte
	}{
		{"ping", appendPing(nil, false, [8]byte{1})},
		{"settings", appendSettings(nil, []Setting{{ID: SettingInitialWindowSize, Val: 65535}})},
	} {
		t.Run(flood.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c, s := net.Pipe()
				defer s.Close()
				go io.CopyN(io.Discard, s, int64(len(preface)+9+6+13)) // preface, SETTINGS, then nothing
				cfg := &Config{Settings: []Setting{{ID: SettingEnablePush, Val: 0}}, ConnWindowUpdate: 1, MaxControlQueue: 64}
				cc, err := NewClientConn(c, cfg)
				if err != nil {
					t.Fatal(err)
				}
				defer cc.Close()
				s.Write(appendSettings(nil, nil))
				for i := 0; i < 10000; i++ {
					if _, err := s.Write(flood.frame); err != nil {
						break
					}
				}
				synctest.Wait()
				wantConnError(t, cc.Err(), ErrCodeEnhanceYourCalm)
			})
		})
	}
	t.Run("empty-data", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			cc, p := ready(t, plainConfig())
			ch := goRoundTrip(context.Background(), cc, get("/"))
			h := p.nextOf(FrameHeaders)
			p.writeHeaders(h.StreamID, false, ":status", "200")
			r := <-ch
			for i := 0; i < 2000; i++ {
				if _, err := p.nc.Write(appendData(nil, h.StreamID, false, nil)); err != nil {
					break
				}
			}
			_, err := io.ReadAll(r.resp.Body)
			wantConnError(t, err, ErrCodeEnhanceYourCalm)
			r.resp.Body.Close()
		})
	})
}

func TestH2_20UnknownFrames(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cc, p := ready(t, plainConfig())
		for _, ft := range []byte{0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0xff} {
			p.write(append(appendFrameHeader(nil, 3, FrameType(ft), 0xff, 1), 1, 2, 3))
			p.write(appendFrameHeader(nil, 0, FrameType(ft), 0, 0))
		}
		roundTripOK(t, cc, p)
	})
}

func TestH2_21FrameSizeAndPadding(t *testing.T) {
	t.Run("too-long", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			cc, p := ready(t, plainConfig())
			ch := goRoundTrip(context.Background(), cc, get("/"))
			h := p.nextOf(FrameHeaders)
			p.writeHeaders(h.StreamID, false, ":status", "200")
			r := <-ch
			p.nc.Write(appendData(nil, h.StreamID, false, make([]byte, 16385)))
			_, err := io.ReadAll(r.resp.Body)
			wantConnError(t, err, ErrCodeFrameSize)
			r.resp.Body.Close()
		})
	})
	t.Run("padding", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			cc, p := ready(t, plainConfig())
			ch := goRoundTrip(context.Background(), cc, get("/"))
			h := p.nextOf(FrameHeaders)
			p.writeHeaders(h.StreamID, false, ":status", "200")
			r := <-ch
			p.write(append(appendFrameHeader(nil, 3, FrameData, FlagPadded, h.StreamID), 3, 'a', 'b'))
			_, err := io.ReadAll(r.resp.Body)
			wantConnError(t, err, ErrCodeProtocol)
			r.resp.Body.Close()
		})
	})
}

func TestH2_22RequestChecks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cc, p := ready(t, plainConfig())
		bad := []fields.Header{
			{{Name: "connection", Value: "foo"}},
			{{Name: "upgrade", Value: "h2c"}},
			{{Name: "keep-alive", Value: "1"}},
			{{Name: "proxy-connection", Value: "x"}},
			{{Name: "transfer-encoding", Value: "chunked"}},
			{{Name: "host", Value: "x"}},
			{{Name: "te", Value: "gzip"}},
			{{Name: "X-Upper", Value: "1"}},
			{{Name: "x-a", Value: "a\r\nb"}},
			{{Name: ":path", Value: "/"}},
		}
		for _, h := range bad {
			req := get("/")
			req.Header = h
			if _, err := cc.RoundTrip(context.Background(), req); !errors.Is(err, ErrRefusedToSend) {
				t.Fatalf("%v: got %v", h, err)
			}
		}
		synctest.Wait()
		select {
		case f := <-p.frames:
			t.Fatalf("refused requests wrote %v", f.Type)
		default:
		}
		req := get("/")
		req.Method = "POST"
		req.Body = strings.NewReader("123456")
		req.ContentLength = 3
		ch := goRoundTrip(context.Background(), cc, req)
		p.nextOf(FrameHeaders)
		if r := <-ch; !errors.Is(r.err, ErrBodyLengthMismatch) {
			t.Fatalf("long body: %v", r.err)
		}
		if f := p.nextOf(FrameRSTStream); f.StreamID == 0 {
			t.Fatal("no RST")
		}
		_ = bytes.MinRead
	})
}

func TestPeerHeaderListLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cc, p := ready(t, plainConfig(), Setting{ID: SettingMaxHeaderListSize, Val: 200})
		req := get("/")
		req.Header = fields.Header{{Name: "x-big", Value: strings.Repeat("a", 300)}}
		if _, err := cc.RoundTrip(context.Background(), req); !errors.Is(err, ErrRefusedToSend) {
			t.Fatalf("got %v", err)
		}
		roundTripOK(t, cc, p)
	})
}

// TestWriteTimeout: a peer that stops reading cannot hold a request forever.
func TestWriteTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, s := net.Pipe()
		defer s.Close()
		go io.CopyN(io.Discard, s, int64(len(preface)+9))
		cfg := plainConfig()
		cfg.Settings = nil
		cfg.WriteTimeout = 5 * time.Second
		cc, err := NewClientConn(c, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer cc.Close()
		start := time.Now()
		_, err = cc.RoundTrip(context.Background(), get("/"))
		if err == nil || time.Since(start) != 5*time.Second {
			t.Fatalf("got %v after %v", err, time.Since(start))
		}
	})
}
