package ws

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/klauspost/compress/flate"
)

// The cases of the Autobahn test suite's client side (section numbers in
// the names), against a scripted server: each bad frame fails the
// connection with the close code RFC 6455 gives it, and a *CloseError
// (RELIABILITY WS-01, WS-02, WS-03, WS-04, WS-05, WS-06).
type conformance struct {
	name   string
	cfg    Config
	script func(p *peer)
	want   []string   // the messages read, "text:..." or "binary:N bytes"
	code   StatusCode // the CloseError's code
	remote bool       // ... sent by the peer
	sent   StatusCode // the close frame the client must send (StatusNoStatus: empty)
	check  func(t *testing.T, p *peer)
}

func text(p *peer, fin bool, op Opcode, s string) {
	b0 := byte(op)
	if fin {
		b0 |= 0x80
	}
	p.raw(b0, []byte(s))
}

func conformanceCases() []conformance {
	normal := func(p *peer) { p.raw(0x88, closePayload(StatusNormal, "")) }
	var cs []conformance
	add := func(c conformance) { cs = append(cs, c) }

	// 1: framing, payload lengths at the length-form boundaries.
	for _, n := range []int{0, 125, 126, 127, 65535, 65536, 1 << 20} {
		add(conformance{name: fmt.Sprintf("1.2/binary-%d", n), script: func(p *peer) {
			p.raw(0x82, bytes.Repeat([]byte{0xfe}, n))
			normal(p)
		}, want: []string{fmt.Sprintf("binary:%d bytes", n)}, code: StatusNormal, remote: true, sent: StatusNormal})
	}
	// 2: pings and pongs.
	add(conformance{name: "2.1/ping-then-text", script: func(p *peer) {
		p.raw(0x89, []byte("hello"))
		text(p, true, OpText, "after")
		normal(p)
	}, want: []string{"text:after"}, code: StatusNormal, remote: true, sent: StatusNormal, check: func(t *testing.T, p *peer) {}})
	add(conformance{name: "2.4/ping-125", script: func(p *peer) {
		p.raw(0x89, bytes.Repeat([]byte{'x'}, 125))
		normal(p)
	}, code: StatusNormal, remote: true, sent: StatusNormal})
	add(conformance{name: "2.5/ping-126", script: func(p *peer) {
		p.raw(0x89, bytes.Repeat([]byte{'x'}, 126))
	}, code: StatusProtocolError, sent: StatusProtocolError})
	add(conformance{name: "2.6/unsolicited-pong", script: func(p *peer) {
		p.raw(0x8a, []byte("?"))
		text(p, true, OpText, "x")
		normal(p)
	}, want: []string{"text:x"}, code: StatusNormal, remote: true, sent: StatusNormal})
	// 3: reserved bits.
	for _, rsv := range []byte{4, 2, 1, 7} {
		add(conformance{name: fmt.Sprintf("3/rsv-%d", rsv), script: func(p *peer) {
			p.raw(0x81|rsv<<4, []byte("x"))
		}, code: StatusProtocolError, sent: StatusProtocolError})
	}
	add(conformance{name: "3/rsv-on-ping", script: func(p *peer) { p.raw(0x89|0x40, nil) },
		code: StatusProtocolError, sent: StatusProtocolError})
	// 4: reserved opcodes.
	for _, op := range []byte{3, 4, 5, 6, 7, 0xb, 0xc, 0xd, 0xe, 0xf} {
		add(conformance{name: fmt.Sprintf("4/opcode-%d", op), script: func(p *peer) {
			text(p, true, OpText, "ok")
			p.raw(0x80|op, []byte("x"))
		}, want: []string{"text:ok"}, code: StatusProtocolError, sent: StatusProtocolError})
	}
	// 5: fragmentation.
	add(conformance{name: "5.3/fragmented-text", script: func(p *peer) {
		text(p, false, OpText, "frag")
		text(p, false, OpContinuation, "men")
		text(p, true, OpContinuation, "ted")
		normal(p)
	}, want: []string{"text:fragmented"}, code: StatusNormal, remote: true, sent: StatusNormal})
	add(conformance{name: "5.6/ping-between-fragments", script: func(p *peer) {
		text(p, false, OpText, "a")
		p.raw(0x89, []byte("mid"))
		text(p, true, OpContinuation, "b")
		normal(p)
	}, want: []string{"text:ab"}, code: StatusNormal, remote: true, sent: StatusNormal})
	add(conformance{name: "5.1/fragmented-ping", script: func(p *peer) { p.raw(0x09, []byte("x")) },
		code: StatusProtocolError, sent: StatusProtocolError})
	add(conformance{name: "5.9/continuation-first", script: func(p *peer) { text(p, true, OpContinuation, "x") },
		code: StatusProtocolError, sent: StatusProtocolError})
	add(conformance{name: "5.18/text-inside-fragmented", script: func(p *peer) {
		text(p, false, OpText, "a")
		text(p, true, OpText, "b")
	}, code: StatusProtocolError, sent: StatusProtocolError})
	add(conformance{name: "5/masked-server-frame", script: func(p *peer) {
		p.write([]byte{0x81, 0x81, 1, 2, 3, 4, 'x' ^ 1})
	}, code: StatusProtocolError, sent: StatusProtocolError})
	// 6: UTF-8.
	add(conformance{name: "6.2/utf8-split-inside-a-rune", script: func(p *peer) {
		s := "κόσμε"
		text(p, false, OpText, s[:1])
		text(p, false, OpContinuation, s[1:4])
		text(p, true, OpContinuation, s[4:])
		normal(p)
	}, want: []string{"text:κόσμε"}, code: StatusNormal, remote: true, sent: StatusNormal})
	for i, bad := range []string{"\xff", "\xc0\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80", "ab\xce"} {
		add(conformance{name: fmt.Sprintf("6.3/invalid-utf8-%d", i), script: func(p *peer) {
			text(p, true, OpText, bad)
		}, code: StatusInvalidData, sent: StatusInvalidData})
	}
	add(conformance{name: "6.4/fail-fast-first-fragment", script: func(p *peer) {
		text(p, false, OpText, "ok\xf5") // the rest never comes: the first fragment fails it
	}, code: StatusInvalidData, sent: StatusInvalidData})
	// 7: close handling.
	add(conformance{name: "7.1/close-normal-with-reason", script: func(p *peer) {
		p.raw(0x88, closePayload(StatusNormal, "bye"))
	}, code: StatusNormal, remote: true, sent: StatusNormal})
	add(conformance{name: "7.3.1/close-empty", script: func(p *peer) { p.raw(0x88, nil) },
		code: StatusNoStatus, remote: true, sent: StatusNoStatus})
	add(conformance{name: "7.3.2/close-one-byte", script: func(p *peer) { p.raw(0x88, []byte{3}) },
		code: StatusProtocolError, sent: StatusProtocolError})
	add(conformance{name: "7.5.1/close-reason-not-utf8", script: func(p *peer) {
		p.raw(0x88, closePayload(StatusNormal, "\xce\xba\xe1\xbd\xb9\xcf\x83\xce\xbc\xce\xb5\xed\xa0\x80"))
	}, code: StatusInvalidData, sent: StatusInvalidData})
	for _, code := range []StatusCode{0, 999, 1004, 1005, 1006, 1015, 1016, 1100, 2000, 2999, 5000, 65535} {
		add(conformance{name: fmt.Sprintf("7.9/close-code-%d", code), script: func(p *peer) {
			p.raw(0x88, closePayload(code, ""))
		}, code: StatusProtocolError, sent: StatusProtocolError})
	}
	for _, code := range []StatusCode{1001, 1003, 1007, 1011, 1014, 3000, 3999, 4000, 4999} {
		add(conformance{name: fmt.Sprintf("7.7/close-code-%d", code), script: func(p *peer) {
			p.raw(0x88, closePayload(code, "r"))
		}, code: code, remote: true, sent: code})
	}
	add(conformance{name: "7.1.6/data-after-close", script: func(p *peer) {
		p.raw(0x88, closePayload(StatusNormal, ""))
		text(p, true, OpText, "late")
	}, code: StatusNormal, remote: true, sent: StatusNormal})
	// 9: limits.
	add(conformance{name: "9/message-over-limit", cfg: Config{MaxMessageSize: 1000}, script: func(p *peer) {
		p.raw(0x82, make([]byte, 1000))
		p.raw(0x82, make([]byte, 1001))
	}, want: []string{"binary:1000 bytes"}, code: StatusTooBig, sent: StatusTooBig})
	add(conformance{name: "9/fragments-over-limit", cfg: Config{MaxMessageSize: 1000}, script: func(p *peer) {
		p.raw(0x02, make([]byte, 600))
		p.raw(0x80, make([]byte, 600))
	}, code: StatusTooBig, sent: StatusTooBig})
	add(conformance{name: "9/length-top-bit", script: func(p *peer) {
		p.write([]byte{0x82, 127, 0x80, 0, 0, 0, 0, 0, 0, 1})
	}, code: StatusProtocolError, sent: StatusProtocolError})
	// 12, 13: permessage-deflate.
	pmd := Config{Deflate: Deflate{Enabled: true}}
	add(conformance{name: "12/deflate-context-takeover", cfg: pmd, script: func(p *peer) {
		var out bytes.Buffer
		w, _ := flate.NewWriter(&out, 6)
		for _, m := range []string{"hello hello hello", "hello hello hello", ""} {
			p.raw(0xc1, deflateRaw(p.t, w, &out, []byte(m)))
		}
		text(p, true, OpText, "plain")
		normal(p)
	}, want: []string{"text:hello hello hello", "text:hello hello hello", "text:", "text:plain"}, code: StatusNormal, remote: true, sent: StatusNormal})
	add(conformance{name: "12/deflate-fragmented", cfg: pmd, script: func(p *peer) {
		var out bytes.Buffer
		w, _ := flate.NewWriter(&out, 6)
		b := deflateRaw(p.t, w, &out, []byte(strings.Repeat("abc", 1000)))
		p.raw(0x41, b[:3])
		p.raw(0x80, b[3:])
		normal(p)
	}, want: []string{"text:" + strings.Repeat("abc", 1000)}, code: StatusNormal, remote: true, sent: StatusNormal})
	add(conformance{name: "12/deflate-bomb", cfg: Config{Deflate: Deflate{Enabled: true}, MaxMessageSize: 1 << 16}, script: func(p *peer) {
		var out bytes.Buffer
		w, _ := flate.NewWriter(&out, 9)
		p.raw(0xc2, deflateRaw(p.t, w, &out, make([]byte, 1<<22)))
	}, code: StatusTooBig, sent: StatusTooBig})
	add(conformance{name: "12/deflate-corrupt", cfg: pmd, script: func(p *peer) {
		p.raw(0xc2, []byte{0xff, 0xff, 0xff, 0xff})
	}, code: StatusInvalidData, sent: StatusInvalidData})
	add(conformance{name: "12/deflate-rsv1-on-continuation", cfg: pmd, script: func(p *peer) {
		p.raw(0x01, []byte("a"))
		p.raw(0xc0, []byte("b"))
	}, code: StatusProtocolError, sent: StatusProtocolError})
	add(conformance{name: "12/deflate-text-not-utf8", cfg: pmd, script: func(p *peer) {
		var out bytes.Buffer
		w, _ := flate.NewWriter(&out, 6)
		p.raw(0xc1, deflateRaw(p.t, w, &out, []byte("\xff\xfe")))
	}, code: StatusInvalidData, sent: StatusInvalidData})
	return cs
}

func TestConformance(t *testing.T) {
	for _, tc := range conformanceCases() {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				c, p := newPair(t, &tc.cfg)
				tc.script(p)
				var got []string
				var err error
				for range 10 {
					var op Opcode
					var b []byte
					op, b, err = c.ReadMessage(bg)
					if err != nil {
						break
					}
					if op == OpText {
						got = append(got, "text:"+string(b))
					} else {
						got = append(got, fmt.Sprintf("binary:%d bytes", len(b)))
					}
				}
				if fmt.Sprint(got) != fmt.Sprint(tc.want) {
					t.Errorf("messages %q, want %q", got, tc.want)
				}
				wantCloseErr(t, err, tc.code, tc.remote)
				p.expectClose(tc.sent)
				// The error is sticky and the connection is gone.
				if _, _, err2 := c.ReadMessage(bg); !errors.Is(err2, err) {
					t.Errorf("second read: %v, want %v", err2, err)
				}
				if err := c.WriteMessage(bg, OpText, []byte("x")); err == nil {
					t.Error("write after the end succeeded")
				}
			})
		})
	}
}

// TestPingAnswered: each ping is answered with a pong carrying its payload,
// between the fragments of a message too (Autobahn 2.2, 5.6).
func TestPingAnswered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, p := newPair(t, nil)
		text(p, false, OpText, "a")
		p.raw(0x89, []byte("payload"))
		text(p, true, OpContinuation, "b")
		if _, b, err := c.ReadMessage(bg); err != nil || string(b) != "ab" {
			t.Fatalf("read %q, %v", b, err)
		}
		f, _ := p.next()
		if f.h.Op != OpPong || string(f.p) != "payload" || !f.h.Masked {
			t.Fatalf("answer %v %q masked=%v, want a masked pong \"payload\"", f.h.Op, f.p, f.h.Masked)
		}
	})
}
