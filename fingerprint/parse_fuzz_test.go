package fingerprint

import (
	"errors"
	"strings"
	"testing"
)

func FuzzParseClientHello(f *testing.F) {
	for _, r := range loadRecordings(f) {
		f.Add(r.hello)
		f.Add(records(r.hello[5:], 512))
	}
	f.Add(specHello(true).record())
	f.Add(helloSpec{ciphers: []uint16{0x002f}, noExts: true}.record())
	f.Fuzz(func(t *testing.T, in []byte) {
		ch, err := ParseClientHello(in)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Err == nil || ch != nil {
				t.Fatalf("error %v is not a *ParseError", err)
			}
			return
		}
		ja4 := ch.JA4()
		if len(ja4) != 36 || ja4[10] != '_' || ja4[23] != '_' {
			t.Fatalf("JA4 %q has the wrong shape", ja4)
		}
		if !strings.HasPrefix(ch.JA4R(), ja4[:11]) || !strings.HasPrefix(ch.JA4RO(), ja4[:11]) || ch.JA4O()[:11] != ja4[:11] {
			t.Fatal("JA4 variants disagree on section a")
		}
		if len(ch.JA3Hash()) != 32 || len(ch.JA3NHash()) != 32 || len(ch.JA3()) != len(ch.JA3N()) {
			t.Fatal("JA3 shape")
		}
		// The same message in one-byte records parses to the same hello.
		msg := make([]byte, 0, 4+ch.HandshakeLength)
		msg = append(msg, handshakeClientHello, byte(ch.HandshakeLength>>16), byte(ch.HandshakeLength>>8), byte(ch.HandshakeLength))
		ch2, err := ParseClientHelloMessage(append(msg, reassembled(in, ch.HandshakeLength)...))
		if err != nil || ch2.JA4RO() != ch.JA4RO() || ch2.JA3() != ch.JA3() {
			t.Fatalf("reparse of the handshake message: %v", err)
		}
	})
}

// reassembled returns the first n handshake body bytes carried by the
// records in, after the 4-byte handshake header.
func reassembled(in []byte, n int) []byte {
	var msg []byte
	for len(in) >= 5 && len(msg) < 4+n {
		l := int(in[3])<<8 | int(in[4])
		msg = append(msg, in[5:5+l]...)
		in = in[5+l:]
	}
	return msg[4 : 4+n]
}

func FuzzParseHTTP2(f *testing.F) {
	for _, r := range loadRecordings(f) {
		f.Add(r.stream)
	}
	f.Add([]byte(http2ClientPreface))
	f.Fuzz(func(t *testing.T, in []byte) {
		h, err := ParseHTTP2(in)
		if h == nil {
			t.Fatal("nil result")
		}
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *ParseError", err)
			}
		}
		if h.Consumed > len(in) {
			t.Fatalf("consumed %d of %d", h.Consumed, len(in))
		}
		_ = h.Akamai()
		for i := range h.Requests {
			_ = h.Requests[i].HTTPRequest().JA4H()
		}
		if err == nil {
			// Parsing only the consumed bytes yields the same frames.
			h2, err := ParseHTTP2(in[:h.Consumed])
			if err != nil || len(h2.Frames) != len(h.Frames) || h2.Akamai() != h.Akamai() {
				t.Fatalf("reparse of the consumed prefix: %v", err)
			}
		}
	})
}

func FuzzParseHTTP1Request(f *testing.F) {
	f.Add([]byte(foxioJA4HHead))
	f.Add([]byte("GET / HTTP/1.0\nA: b\n\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		r, err := ParseHTTP1Request(in)
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || r != nil {
				t.Fatalf("error %v is not a *ParseError", err)
			}
			return
		}
		if j := r.JA4H(); len(j) != 51 {
			t.Fatalf("JA4H %q has the wrong shape", j)
		}
	})
}
