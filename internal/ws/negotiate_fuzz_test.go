package ws

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

// FuzzNegotiate reads arbitrary Sec-WebSocket-Extensions answers (peer
// bytes) against the offers guise sends: Chromium's and Firefox's, and
// none. Invariants: no panic; an error is a *HandshakeError; nothing is
// enabled that was not offered; window bits are 0 or 8 to 15, the client's
// only when offered; an agreement written back as an answer negotiates to
// itself.
func FuzzNegotiate(f *testing.F) {
	for _, s := range []string{
		"permessage-deflate",
		"permessage-deflate; client_max_window_bits=15",
		"permessage-deflate; server_no_context_takeover; client_no_context_takeover",
		"permessage-deflate; server_max_window_bits=\"10\"",
		"permessage-deflate; server_max_window_bits=08",
		"permessage-deflate, permessage-deflate",
		"x-webkit-deflate-frame",
		"permessage-deflate; client_max_window_bits",
		"permessage-deflate;;; ,",
		"PerMessage-Deflate; SERVER_NO_CONTEXT_TAKEOVER",
	} {
		for o := range uint8(3) {
			f.Add(o, s)
		}
	}
	offers := []string{"permessage-deflate; client_max_window_bits", "permessage-deflate", ""}
	f.Fuzz(func(t *testing.T, o uint8, answer string) {
		offer := offers[int(o)%len(offers)]
		d, err := Negotiate(offer, answer)
		if err != nil {
			var he *HandshakeError
			if !errors.As(err, &he) {
				t.Fatalf("%q: error %v (%T)", answer, err, err)
			}
			if d != (Deflate{}) {
				t.Fatalf("%q: an error with an agreement %+v", answer, d)
			}
			return
		}
		if !d.Enabled {
			if d != (Deflate{}) {
				t.Fatalf("%q: parameters %+v without the extension", answer, d)
			}
			return
		}
		if offer == "" {
			t.Fatalf("%q: enabled %+v with nothing offered", answer, d)
		}
		for _, bits := range []int{d.ServerMaxWindowBits, d.ClientMaxWindowBits} {
			if bits != 0 && (bits < 8 || bits > 15) {
				t.Fatalf("%q: window bits %d", answer, bits)
			}
		}
		if d.ClientMaxWindowBits != 0 && !strings.Contains(offer, "client_max_window_bits") {
			t.Fatalf("%q: client window bits %d not offered", answer, d.ClientMaxWindowBits)
		}
		again, err := Negotiate(offer, formatDeflate(d))
		if err != nil || again != d {
			t.Fatalf("%q: %+v written as %q negotiates to %+v, %v", answer, d, formatDeflate(d), again, err)
		}
	})
}

// formatDeflate writes d as a server's answer.
func formatDeflate(d Deflate) string {
	s := "permessage-deflate"
	if d.ServerNoContextTakeover {
		s += "; server_no_context_takeover"
	}
	if d.ClientNoContextTakeover {
		s += "; client_no_context_takeover"
	}
	if d.ServerMaxWindowBits != 0 {
		s += "; server_max_window_bits=" + strconv.Itoa(d.ServerMaxWindowBits)
	}
	if d.ClientMaxWindowBits != 0 {
		s += "; client_max_window_bits=" + strconv.Itoa(d.ClientMaxWindowBits)
	}
	return s
}
