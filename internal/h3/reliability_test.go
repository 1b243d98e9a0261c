package h3_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/guise-http/guise/internal/h3"
	"github.com/guise-http/guise/internal/h3wire"
	"github.com/guise-http/guise/internal/quicwire"
	"github.com/quic-go/quic-go"
)

// The tests in this file are RELIABILITY rows: a scripted
// server misbehaves and the client answers with a typed error, no hang
// (every wait is bounded) and no leak (goleak in TestMain).

func pint(first byte, bits uint, v uint64) []byte {
	mask := uint64(1)<<bits - 1
	if v < mask {
		return []byte{first | byte(v)}
	}
	b := []byte{first | byte(mask)}
	v -= mask
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// lit is a field line with a literal name and value, no Huffman.
func lit(name, value string) []byte {
	b := pint(0x20, 3, uint64(len(name)))
	b = append(b, name...)
	b = append(b, pint(0, 7, uint64(len(value)))...)
	return append(b, value...)
}

// static is an indexed static field line.
func static(i uint64) []byte { return pint(0xc0, 6, i) }

const status200 = 25

// section is a HEADERS frame with a static-only prefix and lines.
func section(lines ...[]byte) []byte {
	p := []byte{0, 0}
	for _, l := range lines {
		p = append(p, l...)
	}
	return h3wire.AppendFrame(nil, h3wire.FrameHeaders, p)
}

// dynSection is a HEADERS frame whose prefix says Required Insert Count
// ric (encoded for a 65536-byte table) with Base = ric.
func dynSection(ric uint64, lines ...[]byte) []byte {
	p := append(pint(0, 8, ric%(2*65536/32)+1), 0)
	for _, l := range lines {
		p = append(p, l...)
	}
	return h3wire.AppendFrame(nil, h3wire.FrameHeaders, p)
}

// Encoder stream instructions.
func setCapacity(c uint64) []byte { return pint(0x20, 5, c) }
func insert(name, value string) []byte {
	b := pint(0x40, 5, uint64(len(name)))
	b = append(b, name...)
	b = append(b, pint(0, 7, uint64(len(value)))...)
	return append(b, value...)
}

// waitErr waits (boundedly) for the connection to fail.
func waitErr(t *testing.T, cc *h3.ClientConn) error {
	t.Helper()
	for range 500 {
		if err := cc.Err(); err != nil {
			return err
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the connection did not fail within 5 s")
	return nil
}

// respond writes a whole response on s.
func respond(s *quic.Stream, b ...[]byte) {
	for _, x := range b {
		s.Write(x)
	}
	s.Close()
}

// TestGoAway is RELIABILITY Q-40: after GOAWAY(4) the request on stream 0
// completes, those on streams 4 and 8 fail with a GoAwayError that
// CanRetry accepts, a new request fails at once the same way, and the
// connection closes once stream 0 is done.
func TestGoAway(t *testing.T) {
	accepted := make(chan struct{}, 3)
	release := make(chan struct{})
	cc := scripted(t, chromeConfig(), func(p *peer) {
		p.control(settings())
		var ss []*quic.Stream
		for range 3 {
			s := p.request()
			if s == nil {
				return
			}
			ss = append(ss, s)
			accepted <- struct{}{}
		}
		p.ctrl.Write(h3wire.AppendFrame(nil, h3wire.FrameGoAway, quicwire.AppendVarint(nil, 4)))
		<-release
		respond(ss[0], headers(), data("first"))
	})
	type result struct {
		body string
		err  error
	}
	results := make([]chan result, 3)
	for i := range results {
		results[i] = make(chan result, 1)
		go func() {
			_, b, err := roundTrip(cc, 5*time.Second)
			results[i] <- result{string(b), err}
		}()
		select {
		case <-accepted:
		case <-time.After(5 * time.Second):
			t.Fatal("request not accepted")
		}
	}
	for i := 1; i < 3; i++ {
		r := <-results[i]
		var ge *h3.GoAwayError
		if !errors.As(r.err, &ge) || ge.StreamID != 4 || !h3.CanRetry(r.err) {
			t.Errorf("request %d: %v, want a retryable GoAwayError(4)", i, r.err)
		}
	}
	if cc.CanTakeNewRequest() {
		t.Error("CanTakeNewRequest after GOAWAY")
	}
	if _, _, err := roundTrip(cc, time.Second); !h3.CanRetry(err) {
		t.Errorf("new request after GOAWAY: %v", err)
	}
	close(release)
	if r := <-results[0]; r.err != nil || r.body != "first" {
		t.Errorf("stream 0: %q %v", r.body, r.err)
	}
	if err := waitErr(t, cc); !h3.CanRetry(err) {
		t.Errorf("drained connection: %v", err)
	}
}

// TestGoAwayIDIncrease is RELIABILITY Q-54: a second GOAWAY with a larger
// id is H3_ID_ERROR, as is one naming a non-request stream.
func TestGoAwayIDIncrease(t *testing.T) {
	for name, ids := range map[string][]uint64{"increase": {4, 8}, "not a request stream": {2}} {
		t.Run(name, func(t *testing.T) {
			var frames [][]byte
			for _, id := range ids {
				frames = append(frames, h3wire.AppendFrame(nil, h3wire.FrameGoAway, quicwire.AppendVarint(nil, id)))
			}
			cc := scripted(t, chromeConfig(), func(p *peer) {
				p.control(settings())
				p.request() // stream 0 stays open, so the first GOAWAY does not drain the connection
				for _, f := range frames {
					p.ctrl.Write(f)
				}
			})
			_, _, err := roundTrip(cc, 5*time.Second)
			wantConnErr(t, err, h3.ErrCodeID)
		})
	}
}

// TestQPACKBomb is RELIABILITY Q-41: one 4,000-byte dynamic entry
// referenced 100 times in a 110-byte section decodes past the limit: a
// StreamError (H3_EXCESSIVE_LOAD) matching ErrFieldSectionTooLarge, and
// the connection goes on with the table intact.
func TestQPACKBomb(t *testing.T) {
	big := strings.Repeat("v", 4000)
	cc := scripted(t, chromeConfig(), func(p *peer) {
		p.control(settings())
		p.uni(uint64(h3wire.StreamQPACKEncoder), append(setCapacity(65536), insert("x-big", big)...))
		s := p.request()
		if s == nil {
			return
		}
		lines := [][]byte{static(status200)}
		for range 100 {
			lines = append(lines, []byte{0x80}) // dynamic, relative index 0
		}
		respond(s, dynSection(1, lines...))
		s = p.request()
		if s == nil {
			return
		}
		respond(s, dynSection(1, static(status200), []byte{0x80}), data("ok"))
	})
	_, _, err := roundTrip(cc, 5*time.Second)
	wantStreamErr(t, err, h3.ErrCodeExcessiveLoad)
	if !errors.Is(err, h3.ErrFieldSectionTooLarge) {
		t.Errorf("%v does not match ErrFieldSectionTooLarge", err)
	}
	resp, b, err := roundTrip(cc, 5*time.Second)
	if err != nil || string(b) != "ok" || resp.Header.Get("x-big") != big {
		t.Fatalf("after the bomb: %v %q", err, b)
	}
}

// TestDynamicTable is RELIABILITY Q-51: a section that arrives before the
// insert it needs waits (a blocked stream) and decodes when it arrives;
// the client then acknowledges on its decoder stream, opened when first
// needed as Chromium does (Insert Count Increment 1, Section
// Acknowledgment of stream 0). With SETTINGS_QPACK_BLOCKED_STREAMS 0 the
// same blocked section is QPACK_DECOMPRESSION_FAILED.
func TestDynamicTable(t *testing.T) {
	decoderBytes := make(chan []byte, 1)
	cc := scripted(t, chromeConfig(), func(p *peer) {
		p.control(settings())
		s := p.request()
		if s == nil {
			return
		}
		s.Write(dynSection(1, static(status200), []byte{0x80}))
		time.Sleep(50 * time.Millisecond)
		p.uni(uint64(h3wire.StreamQPACKEncoder), append(setCapacity(4096), insert("x-dyn", "value")...))
		respond(s, data("ok"))
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		for {
			rs, err := p.conn.AcceptUniStream(ctx)
			if err != nil {
				return
			}
			b := make([]byte, 64)
			n, _ := io.ReadAtLeast(rs, b, 3)
			if b[0] == byte(h3wire.StreamQPACKDecoder) {
				decoderBytes <- b[:n]
				return
			}
		}
	})
	resp, b, err := roundTrip(cc, 5*time.Second)
	if err != nil || string(b) != "ok" || resp.Header.Get("x-dyn") != "value" {
		t.Fatalf("%v %q %v", err, b, resp)
	}
	select {
	case got := <-decoderBytes:
		// type 0x03; Insert Count Increment 1 (0x01); Section Ack stream 0 (0x80).
		if string(got) != "\x03\x01\x80" {
			t.Errorf("decoder stream %x, want 030180", got)
		}
	case <-time.After(5 * time.Second):
		t.Error("no decoder stream")
	}

	cfg := chromeConfig()
	cfg.Settings = []h3.Setting{{ID: 1, Value: 65536}, {ID: 7, Value: 0}}
	cc = scripted(t, cfg, func(p *peer) {
		p.control(settings())
		if s := p.request(); s != nil {
			s.Write(dynSection(1, static(status200), []byte{0x80}))
		}
	})
	_, _, err = roundTrip(cc, 5*time.Second)
	wantConnErr(t, err, h3.ErrCodeQPACKDecompressionFailed)
}

// TestDynamicTableRefused is RELIABILITY Q-42: with no
// SETTINGS_QPACK_MAX_TABLE_CAPACITY (0), a section with a Required Insert
// Count is a ConnectionError (QPACK_DECOMPRESSION_FAILED) matching
// ErrDynamicTableRefused.
func TestDynamicTableRefused(t *testing.T) {
	cc := scripted(t, &h3.Config{}, func(p *peer) {
		p.control(settings())
		if s := p.request(); s != nil {
			s.Write(dynSection(1, static(status200), []byte{0x80}))
		}
	})
	_, _, err := roundTrip(cc, 5*time.Second)
	wantConnErr(t, err, h3.ErrCodeQPACKDecompressionFailed)
	if !errors.Is(err, h3.ErrDynamicTableRefused) {
		t.Errorf("%v does not match ErrDynamicTableRefused", err)
	}
}

// TestEncoderStreamErrors is RELIABILITY Q-52: a capacity above the
// advertised maximum, an entry larger than the table and a reference to
// an entry never inserted are QPACK_ENCODER_STREAM_ERROR; a second
// encoder stream is H3_STREAM_CREATION_ERROR.
func TestEncoderStreamErrors(t *testing.T) {
	for name, c := range map[string]struct {
		enc   []byte
		twice bool
		code  h3.ErrCode
	}{
		"capacity":      {enc: setCapacity(1 << 20), code: h3.ErrCodeQPACKEncoderStream},
		"entry":         {enc: append(setCapacity(64), insert("a", strings.Repeat("b", 40))...), code: h3.ErrCodeQPACKEncoderStream},
		"missing ref":   {enc: append(setCapacity(4096), 0x85, 0x01, 'x'), code: h3.ErrCodeQPACKEncoderStream},
		"duplicate":     {enc: append(setCapacity(4096), 0x00), code: h3.ErrCodeQPACKEncoderStream},
		"second stream": {enc: setCapacity(4096), twice: true, code: h3.ErrCodeStreamCreation},
	} {
		t.Run(name, func(t *testing.T) {
			cc := scripted(t, chromeConfig(), func(p *peer) {
				p.control(settings())
				p.uni(uint64(h3wire.StreamQPACKEncoder), c.enc)
				if c.twice {
					p.uni(uint64(h3wire.StreamQPACKEncoder), nil)
				}
			})
			wantConnErr(t, waitErr(t, cc), c.code)
		})
	}
}

// TestBadSettings is RELIABILITY Q-43: a duplicate setting, an HTTP/2
// setting id, an H3_DATAGRAM value above 1 (H3_SETTINGS_ERROR), a control
// stream that does not start with SETTINGS (H3_MISSING_SETTINGS) and a
// second SETTINGS (H3_FRAME_UNEXPECTED).
func TestBadSettings(t *testing.T) {
	dup := h3wire.AppendFrame(nil, h3wire.FrameSettings, []byte{0x06, 0x01, 0x06, 0x02})
	for name, c := range map[string]struct {
		frames [][]byte
		code   h3.ErrCode
	}{
		"duplicate":       {[][]byte{dup}, h3.ErrCodeSettings},
		"http/2 id":       {[][]byte{h3wire.AppendFrame(nil, h3wire.FrameSettings, []byte{0x04, 0x01})}, h3.ErrCodeSettings},
		"datagram 2":      {[][]byte{settings(h3wire.Setting{ID: h3wire.SettingH3Datagram, Value: 2})}, h3.ErrCodeSettings},
		"goaway first":    {[][]byte{h3wire.AppendFrame(nil, h3wire.FrameGoAway, []byte{0})}, h3.ErrCodeMissingSettings},
		"second settings": {[][]byte{settings(), settings()}, h3.ErrCodeFrameUnexpected},
		"huge settings":   {[][]byte{h3wire.AppendFrame(nil, h3wire.FrameSettings, make([]byte, 20<<10))}, h3.ErrCodeExcessiveLoad},
	} {
		t.Run(name, func(t *testing.T) {
			cc := scripted(t, chromeConfig(), func(p *peer) { p.control(c.frames...) })
			wantConnErr(t, waitErr(t, cc), c.code)
		})
	}
}

// TestFramesOnWrongStream is RELIABILITY Q-44: DATA, HEADERS, MAX_PUSH_ID
// or an HTTP/2 type on the control stream, and SETTINGS, GOAWAY, an
// HTTP/2 type or DATA before HEADERS on a request stream, are
// H3_FRAME_UNEXPECTED; PUSH_PROMISE and a push stream, with no
// MAX_PUSH_ID sent, are H3_ID_ERROR.
func TestFramesOnWrongStream(t *testing.T) {
	for name, c := range map[string]struct {
		ctrl, req []byte
		push      bool
		code      h3.ErrCode
	}{
		"data on control":        {ctrl: data("x"), code: h3.ErrCodeFrameUnexpected},
		"headers on control":     {ctrl: headers(), code: h3.ErrCodeFrameUnexpected},
		"max_push_id on control": {ctrl: h3wire.AppendFrame(nil, h3wire.FrameMaxPushID, []byte{0}), code: h3.ErrCodeFrameUnexpected},
		"h2 type on control":     {ctrl: h3wire.AppendFrame(nil, 0x06, make([]byte, 8)), code: h3.ErrCodeFrameUnexpected},
		"settings on request":    {req: settings(), code: h3.ErrCodeFrameUnexpected},
		"goaway on request":      {req: h3wire.AppendFrame(nil, h3wire.FrameGoAway, []byte{0}), code: h3.ErrCodeFrameUnexpected},
		"h2 type on request":     {req: h3wire.AppendFrame(nil, 0x02, nil), code: h3.ErrCodeFrameUnexpected},
		"data before headers":    {req: data("x"), code: h3.ErrCodeFrameUnexpected},
		"push_promise":           {req: h3wire.AppendFrame(nil, h3wire.FramePushPromise, []byte{0, 0, 0}), code: h3.ErrCodeID},
		"push stream":            {push: true, code: h3.ErrCodeID},
	} {
		t.Run(name, func(t *testing.T) {
			cc := scripted(t, chromeConfig(), func(p *peer) {
				p.control(settings(), c.ctrl)
				if c.push {
					p.uni(uint64(h3wire.StreamPush), []byte{0})
				}
				if c.req != nil {
					if s := p.request(); s != nil {
						s.Write(c.req)
					}
				}
			})
			if c.req != nil {
				_, _, err := roundTrip(cc, 5*time.Second)
				wantConnErr(t, err, c.code)
			}
			wantConnErr(t, waitErr(t, cc), c.code)
		})
	}
}

// TestRequestRejected is RELIABILITY Q-45: a stream the server resets with
// H3_REQUEST_REJECTED is a remote StreamError matching ErrRequestRejected,
// which CanRetry accepts; one reset with H3_INTERNAL_ERROR is not
// retryable; the connection stays usable.
func TestRequestRejected(t *testing.T) {
	cc := scripted(t, chromeConfig(), func(p *peer) {
		p.control(settings())
		for _, code := range []h3.ErrCode{h3.ErrCodeRequestRejected, h3.ErrCodeInternal} {
			s := p.request()
			if s == nil {
				return
			}
			s.CancelWrite(quic.StreamErrorCode(code))
			s.CancelRead(quic.StreamErrorCode(code))
		}
		if s := p.request(); s != nil {
			respond(s, headers(), data("fine"))
		}
	})
	_, _, err := roundTrip(cc, 5*time.Second)
	if se := wantStreamErr(t, err, h3.ErrCodeRequestRejected); !se.Remote || !errors.Is(err, h3.ErrRequestRejected) || !h3.CanRetry(err) {
		t.Errorf("%v: remote %v, retryable %v", err, se.Remote, h3.CanRetry(err))
	}
	_, _, err = roundTrip(cc, 5*time.Second)
	if wantStreamErr(t, err, h3.ErrCodeInternal); h3.CanRetry(err) {
		t.Errorf("%v is retryable", err)
	}
	if _, b, err := roundTrip(cc, 5*time.Second); err != nil || string(b) != "fine" {
		t.Errorf("after resets: %q %v", b, err)
	}
}

// TestResponseHeaderLimit is RELIABILITY Q-46: a HEADERS frame longer
// than Config.MaxFieldSectionSize is refused unread, and one that decodes
// larger fails while decoding: a StreamError matching
// ErrFieldSectionTooLarge each time, the connection still usable.
func TestResponseHeaderLimit(t *testing.T) {
	cfg := chromeConfig()
	cfg.MaxFieldSectionSize = 1000
	cc := scripted(t, cfg, func(p *peer) {
		p.control(settings())
		if s := p.request(); s != nil {
			respond(s, headers(h3wire.Field{Name: "x-long", Value: strings.Repeat("a", 2000)}))
		}
		if s := p.request(); s != nil {
			// 40 references to a 60-byte static entry: 30 bytes on the
			// wire, 3,600 decoded.
			lines := [][]byte{static(status200)}
			for range 40 {
				lines = append(lines, static(85))
			}
			respond(s, section(lines...))
		}
		if s := p.request(); s != nil {
			respond(s, headers(), data("ok"))
		}
	})
	for range 2 {
		_, _, err := roundTrip(cc, 5*time.Second)
		wantStreamErr(t, err, h3.ErrCodeExcessiveLoad)
		if !errors.Is(err, h3.ErrFieldSectionTooLarge) {
			t.Errorf("%v", err)
		}
	}
	if _, b, err := roundTrip(cc, 5*time.Second); err != nil || string(b) != "ok" {
		t.Errorf("after: %q %v", b, err)
	}
}

// TestCriticalStreams is RELIABILITY Q-47: the control stream ending is
// H3_CLOSED_CRITICAL_STREAM, a second control stream
// H3_STREAM_CREATION_ERROR; a Section Acknowledgement on the QPACK
// decoder stream before any section was sent is QPACK_DECODER_STREAM_ERROR.
func TestCriticalStreams(t *testing.T) {
	t.Run("control ends", func(t *testing.T) {
		cc := scripted(t, chromeConfig(), func(p *peer) {
			p.control(settings())
			p.ctrl.Close()
		})
		wantConnErr(t, waitErr(t, cc), h3.ErrCodeClosedCriticalStream)
	})
	t.Run("second control", func(t *testing.T) {
		cc := scripted(t, chromeConfig(), func(p *peer) {
			p.control(settings())
			p.uni(uint64(h3wire.StreamControl), settings())
		})
		wantConnErr(t, waitErr(t, cc), h3.ErrCodeStreamCreation)
	})
	t.Run("decoder ack", func(t *testing.T) {
		cc := scripted(t, chromeConfig(), func(p *peer) {
			p.control(settings())
			p.uni(uint64(h3wire.StreamQPACKDecoder), []byte{0x80})
		})
		wantConnErr(t, waitErr(t, cc), h3.ErrCodeQPACKDecoderStream)
	})
}

// TestMalformedResponse is RELIABILITY Q-49: an upper-case field name, no
// :status, a pseudo-header after a field, :status 101, two different
// content-lengths, a body longer or shorter than content-length, and
// DATA on a HEAD response are StreamErrors with H3_MESSAGE_ERROR.
func TestMalformedResponse(t *testing.T) {
	for name, resp := range map[string][][]byte{
		"upper case":     {section(static(status200), lit("X-Up", "1"))},
		"no status":      {section(lit("x-a", "1"))},
		"late pseudo":    {section(lit("x-a", "1"), static(status200))},
		"status 101":     {section(lit(":status", "101"))},
		"two lengths":    {section(static(status200), lit("content-length", "1"), lit("content-length", "2"))},
		"longer body":    {section(static(status200), lit("content-length", "2")), data("abc")},
		"shorter body":   {section(static(status200), lit("content-length", "5")), data("abc")},
		"trailer pseudo": {headers(), data("x"), section(static(status200))},
	} {
		t.Run(name, func(t *testing.T) {
			cc := scripted(t, chromeConfig(), func(p *peer) {
				p.control(settings())
				if s := p.request(); s != nil {
					respond(s, resp...)
				}
			})
			_, _, err := roundTrip(cc, 5*time.Second)
			wantStreamErr(t, err, h3.ErrCodeMessage)
			if cc.Err() != nil {
				t.Errorf("connection failed: %v", cc.Err())
			}
		})
	}
}

// TestTooMany1xx is RELIABILITY Q-50: informational heads past the bound
// are ErrTooMany1xx; a few are skipped.
func TestTooMany1xx(t *testing.T) {
	info := section(lit(":status", "103"), lit("link", "</a>"))
	cc := scripted(t, chromeConfig(), func(p *peer) {
		p.control(settings())
		if s := p.request(); s != nil {
			respond(s, info, info, headers(), data("ok"))
		}
		if s := p.request(); s != nil {
			var b [][]byte
			for range 20 {
				b = append(b, info)
			}
			respond(s, b...)
		}
	})
	if _, b, err := roundTrip(cc, 5*time.Second); err != nil || string(b) != "ok" {
		t.Fatalf("%q %v", b, err)
	}
	_, _, err := roundTrip(cc, 5*time.Second)
	if !errors.Is(err, h3.ErrTooMany1xx) {
		t.Errorf("%v", err)
	}
}

// TestIgnoresUnknown is RELIABILITY Q-53: unknown and GREASE frame types
// on the control and request streams and a GREASE unidirectional stream
// are skipped (the stream refused with H3_STREAM_CREATION_ERROR), with
// a large unknown frame skipped without being buffered.
func TestIgnoresUnknown(t *testing.T) {
	grease := h3wire.AppendFrame(nil, 0x21, []byte("grease"))
	big := h3wire.AppendFrame(nil, 0x1f*7+0x21, make([]byte, 200<<10))
	cc := scripted(t, chromeConfig(), func(p *peer) {
		p.control(settings(), grease, big)
		p.uni(0x1f*3+0x21, []byte("ignored"))
		if s := p.request(); s != nil {
			respond(s, grease, headers(), big, data("o"), grease, data("k"), grease)
		}
	})
	if _, b, err := roundTrip(cc, 5*time.Second); err != nil || string(b) != "ok" {
		t.Fatalf("%q %v", b, err)
	}
}

// TestHeadTimeout is RELIABILITY Q-55: a server that never answers is a
// TimeoutError (PhaseHead) after Request.HeadTimeout; the stream is
// cancelled and the connection still serves the next request.
func TestHeadTimeout(t *testing.T) {
	cc := scripted(t, chromeConfig(), func(p *peer) {
		p.control(settings())
		p.request() // never answered
		if s := p.request(); s != nil {
			respond(s, headers(), data("ok"))
		}
	})
	req := get("/")
	req.HeadTimeout = 100 * time.Millisecond
	start := time.Now()
	_, err := cc.RoundTrip(context.Background(), req)
	var te *h3.TimeoutError
	if !errors.As(err, &te) || te.Phase != h3.PhaseHead || time.Since(start) > 3*time.Second {
		t.Fatalf("%v after %v", err, time.Since(start))
	}
	if _, b, err := roundTrip(cc, 5*time.Second); err != nil || string(b) != "ok" {
		t.Fatalf("%q %v", b, err)
	}
}

// TestStreamEndsInsideFrame is RELIABILITY Q-56: a request stream whose
// FIN cuts a DATA frame is H3_FRAME_ERROR.
func TestStreamEndsInsideFrame(t *testing.T) {
	cc := scripted(t, chromeConfig(), func(p *peer) {
		p.control(settings())
		if s := p.request(); s != nil {
			respond(s, headers(), []byte{0x00, 0x0a, 'a', 'b', 'c'})
		}
	})
	_, _, err := roundTrip(cc, 5*time.Second)
	wantConnErr(t, err, h3.ErrCodeFrame)
}

// TestPeerCloses is RELIABILITY Q-48: no request hangs when the server
// closes the connection with streams open; each gets the peer's error.
func TestPeerCloses(t *testing.T) {
	var wg sync.WaitGroup
	cc := scripted(t, chromeConfig(), func(p *peer) {
		p.control(settings())
		for range 4 {
			p.request()
		}
		p.conn.CloseWithError(quic.ApplicationErrorCode(h3.ErrCodeExcessiveLoad), "bye")
	})
	errs := make(chan error, 4)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _, err := roundTrip(cc, 5*time.Second)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		var ce *h3.ConnectionError
		if !errors.As(err, &ce) || !ce.Remote || ce.Code != h3.ErrCodeExcessiveLoad {
			t.Errorf("%v, want the peer's CONNECTION_CLOSE", err)
		}
	}
}
