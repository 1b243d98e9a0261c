package h3_test

import (
	"bytes"
	"context"
	"io"
	"testing"
	"time"

	"github.com/guise-http/guise/internal/h3"
	"github.com/guise-http/guise/internal/h3wire"
	"github.com/quic-go/quic-go"
)

// dynChrome is chromeConfig, which has Chromium's dynamic table rule.
func dynChrome() *h3.Config { return chromeConfig() }

// qpackSettings allows a 4096-byte table and blocked streams.
func qpackSettings(blocked uint64) []byte {
	return settings(h3wire.Setting{ID: h3wire.SettingQPACKMaxTableCapacity, Value: 4096},
		h3wire.Setting{ID: h3wire.SettingQPACKBlockedStreams, Value: blocked})
}

// awaitSettings waits (bounded) until cc has the peer's SETTINGS.
func awaitSettings(t *testing.T, cc *h3.ClientConn) {
	t.Helper()
	for range 500 {
		if _, ok := cc.PeerSettings(); ok {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("no SETTINGS within 5 s")
}

// TestDecoderStreamConnErrors is RELIABILITY: on a
// connection whose first request inserted into the server's dynamic
// table, the server's decoder stream carries a Section Acknowledgment of
// a stream that sent no section, an Insert Count Increment beyond
// the inserts or of 0, or an instruction whose integer runs past
// 62 bits (Q-82, the one malformed instruction: every first byte starts
// one of the three kinds): each is a ConnectionError with
// QPACK_DECODER_STREAM_ERROR. The acknowledgement of the real section
// and a matching increment are accepted.
func TestDecoderStreamConnErrors(t *testing.T) {
	for name, bad := range map[string][]byte{
		"Q-80 ack of a stream with no section": {0x84},
		"Q-80 second ack":                      {0x80, 0x80},
		"Q-81 increment beyond the inserts":    {0x3f, 0x10},
		"Q-81 increment of 0":                  {0x00},
		"Q-82 integer overflow":                bytes.Repeat([]byte{0xff}, 12),
	} {
		t.Run(name, func(t *testing.T) {
			got := make(chan []byte, 1)
			cc := scripted(t, dynChrome(), func(p *peer) {
				p.control(qpackSettings(10))
				s := p.request()
				if s == nil {
					return
				}
				p.uni(uint64(h3wire.StreamQPACKDecoder), bad)
				respond(s, headers(), data("ok"))
				got <- nil
			})
			awaitSettings(t, cc)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if resp, err := cc.RoundTrip(ctx, get("/")); err == nil {
				io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			wantConnErr(t, waitErr(t, cc), h3.ErrCodeQPACKDecoderStream)
		})
	}
	t.Run("valid", func(t *testing.T) {
		cc := scripted(t, dynChrome(), func(p *peer) {
			p.control(qpackSettings(10))
			s := p.request()
			if s == nil {
				return
			}
			// get("/") inserts :authority, user-agent and priority
			// (":path /" and "accept */*" are static): acknowledge the
			// section, then nothing more is owed.
			p.uni(uint64(h3wire.StreamQPACKDecoder), []byte{0x80})
			respond(s, headers(), data("ok"))
			if s := p.request(); s != nil {
				respond(s, headers(), data("ok"))
			}
		})
		awaitSettings(t, cc)
		for range 2 {
			if _, b, err := roundTrip(cc, 5*time.Second); err != nil || string(b) != "ok" {
				t.Fatalf("%q %v", b, err)
			}
		}
		time.Sleep(50 * time.Millisecond) // the acknowledgement is read
		if err := cc.Err(); err != nil {
			t.Errorf("connection failed: %v", err)
		}
	})
}

// TestDynamicBlockedStreams is RELIABILITY Q-83: a server that allows
// one blocked stream and never acknowledges. The first request inserts
// and references its new entries (one stream may block); the next,
// sent while that section is unacknowledged, neither inserts nor
// references an unacknowledged entry (Required Insert Count 0). A server
// allowing no blocked stream gets the capacity set and static-only
// sections.
func TestDynamicBlockedStreams(t *testing.T) {
	for _, blocked := range []uint64{1, 0} {
		prefixes := make(chan []byte, 2)
		encoder := make(chan []byte, 1)
		cc := scripted(t, dynChrome(), func(p *peer) {
			p.control(qpackSettings(blocked))
			for range 2 {
				s, block := p.requestSection()
				if s == nil {
					return
				}
				prefixes <- block[:2]
				respond(s, headers(), data("ok"))
			}
			encoder <- p.readEncoder(5 * time.Second)
		})
		awaitSettings(t, cc)
		for i := range 2 {
			if _, b, err := roundTrip(cc, 5*time.Second); err != nil || string(b) != "ok" {
				t.Fatalf("blocked %d: request %d: %q %v", blocked, i, b, err)
			}
		}
		first, second := <-prefixes, <-prefixes
		if blocked == 1 && (first[0] == 0 || second[0] != 0) || blocked == 0 && (first[0] != 0 || second[0] != 0) {
			t.Errorf("blocked %d: prefixes %x %x", blocked, first, second)
		}
		enc := <-encoder
		if len(enc) < 3 || enc[0] != byte(h3wire.StreamQPACKEncoder) || !bytes.HasPrefix(enc[1:], []byte{0x3f, 0xe1, 0x1f}) {
			t.Errorf("blocked %d: encoder stream %x, want the type and Set Dynamic Table Capacity 4096 first", blocked, enc)
		}
		if blocked == 0 && len(enc) != 4 {
			t.Errorf("blocked 0: encoder stream %x: inserts", enc)
		}
	}
}

// requestSection accepts the next request stream and returns it with its
// HEADERS payload.
func (p *peer) requestSection() (*quic.Stream, []byte) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := p.conn.AcceptStream(ctx)
	if err != nil {
		return nil, nil
	}
	s.SetReadDeadline(time.Now().Add(5 * time.Second))
	var buf []byte
	tmp := make([]byte, 4096)
	for {
		if f, err := h3wire.ParseFrame(buf); err == nil && f.Type == h3wire.FrameHeaders {
			return s, f.Payload
		}
		n, err := s.Read(tmp)
		buf = append(buf, tmp[:n]...)
		if f, perr := h3wire.ParseFrame(buf); perr == nil && f.Type == h3wire.FrameHeaders {
			return s, f.Payload
		}
		if err != nil {
			return nil, nil
		}
	}
}

// readEncoder accepts the client's unidirectional streams until its QPACK
// encoder stream, and returns what that carried within d (type included).
func (p *peer) readEncoder(d time.Duration) []byte {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	for {
		u, err := p.conn.AcceptUniStream(ctx)
		if err != nil {
			return nil
		}
		u.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		b, _ := io.ReadAll(u)
		if len(b) > 0 && b[0] == byte(h3wire.StreamQPACKEncoder) {
			return b
		}
	}
}
