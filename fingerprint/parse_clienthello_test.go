package fingerprint

import (
	"bytes"
	"errors"
	"testing"
)

// A hello split over several records (as a large post-quantum hello or a
// deliberate splitter sends it) parses to the same fingerprints.
func TestClientHelloFragmented(t *testing.T) {
	for _, r := range loadRecordings(t) {
		one, err := ParseClientHello(r.hello)
		if err != nil {
			t.Fatal(err)
		}
		msg := r.hello[5:]
		for _, size := range []int{len(msg)/2 + 1, 1000, 3, 1} {
			split := records(msg, size)
			ch, err := ParseClientHello(split)
			if err != nil {
				t.Fatalf("%s: %d-byte records: %v", r.name, size, err)
			}
			if want := (len(msg) + size - 1) / size; ch.RecordCount != want {
				t.Errorf("%s: %d-byte records: RecordCount %d, want %d", r.name, size, ch.RecordCount, want)
			}
			if ch.JA4() != one.JA4() || ch.JA3() != one.JA3() || ch.JA4RO() != one.JA4RO() ||
				ch.ServerName != one.ServerName || !bytes.Equal(ch.Random, one.Random) {
				t.Errorf("%s: %d-byte records: fingerprints differ from the one-record hello", r.name, size)
			}
		}
	}
}

func TestClientHelloTrailingBytesIgnored(t *testing.T) {
	r := loadRecordings(t)[0]
	in := append(bytes.Clone(r.hello), 0x14, 0x03, 0x03, 0x00, 0x01, 0x01) // a ChangeCipherSpec after it
	ch, err := ParseClientHello(in)
	if err != nil {
		t.Fatal(err)
	}
	if ch.JA4() != r.rec.TLS.JA4 {
		t.Errorf("got %s, want %s", ch.JA4(), r.rec.TLS.JA4)
	}
}

// Every proper prefix of a hello is ErrTruncated, never a panic or a
// different error: the echo server reads until the hello is complete.
func TestClientHelloTruncated(t *testing.T) {
	for _, r := range loadRecordings(t) {
		split := records(r.hello[5:], 700)
		for _, in := range [][]byte{r.hello, split} {
			for n := 0; n < len(in); n++ {
				_, err := ParseClientHello(in[:n])
				var pe *ParseError
				if !errors.Is(err, ErrTruncated) || !errors.As(err, &pe) || pe.Proto != "tls" {
					t.Fatalf("%s: prefix %d of %d: got %v, want a truncated *ParseError", r.name, n, len(in), err)
				}
			}
		}
	}
}

func TestClientHelloMalformed(t *testing.T) {
	good := specHello(true).record()
	mutate := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	// Offsets into good: 0 record type, 3-4 record length, 5 handshake
	// type, 6-8 handshake length, 9-10 version, 11-42 random, 43 session
	// id length, 44-75 session id, 76-77 cipher suites length.
	for _, c := range []struct {
		name string
		in   []byte
		want error
		what string
	}{
		{"http request", []byte("GET / HTTP/1.1\r\nHost: a\r\n\r\n"), ErrNotClientHello, "record type"},
		{"alert record", []byte{21, 3, 3, 0, 2, 2, 40}, ErrNotClientHello, "record type"},
		{"server hello", mutate(func(b []byte) []byte { b[5] = 2; return b }), ErrNotClientHello, "handshake type"},
		{"zero record length", []byte{22, 3, 1, 0, 0}, ErrMalformed, "record length"},
		{"oversized record", []byte{22, 3, 1, 0xff, 0xff}, ErrMalformed, "record length"},
		{"session id too long", mutate(func(b []byte) []byte { b[43] = 33; return b }), ErrMalformed, "session_id"},
		{"odd cipher length", mutate(func(b []byte) []byte { b[77]--; return b }), ErrMalformed, "cipher_suites"},
		{"extensions overrun", mutate(func(b []byte) []byte {
			n := len(b)
			b[3], b[4] = byte((n-5+1)>>8), byte(n-5+1) // record one byte longer
			b[7], b[8] = byte((n-9+1)>>8), byte(n-9+1)
			return append(b, 0)
		}), ErrMalformed, "extensions"},
		{"bad alpn", func() []byte {
			s := helloSpec{ciphers: []uint16{0x1301}, extensions: []Extension{{Type: extALPN, Data: []byte{0, 3, 5, 'h', '2'}}}}
			return s.record()
		}(), ErrMalformed, "extension 16 (application_layer_protocol_negotiation)"},
		{"bad key share", func() []byte {
			s := helloSpec{ciphers: []uint16{0x1301}, extensions: []Extension{{Type: extKeyShare, Data: []byte{0, 4, 0, 0x1d, 0, 9}}}}
			return s.record()
		}(), ErrMalformed, "extension 51 (key_share)"},
		{"non-handshake record in the middle", func() []byte {
			b := records(specHello(true).handshake(), 50)
			b[55] = 23
			return b
		}(), ErrMalformed, "record type inside fragmented hello"},
	} {
		_, err := ParseClientHello(c.in)
		var pe *ParseError
		if !errors.Is(err, c.want) || !errors.As(err, &pe) || pe.What != c.what {
			t.Errorf("%s: got %v, want %v for %q", c.name, err, c.want, c.what)
		}
	}
}

func TestParseErrorMessage(t *testing.T) {
	_, err := ParseClientHello([]byte{22, 3, 1, 0})
	if got, want := err.Error(), "fingerprint: tls: truncated record header at offset 4"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// ParseClientHelloMessage takes the handshake message alone, as QUIC
// carries it in CRYPTO frames.
func TestParseClientHelloMessage(t *testing.T) {
	r := loadRecordings(t)[3]
	ch, err := ParseClientHelloMessage(r.hello[5:])
	if err != nil {
		t.Fatal(err)
	}
	if ch.JA4() != r.rec.TLS.JA4 || ch.RecordCount != 0 {
		t.Errorf("got %s (records %d), want %s", ch.JA4(), ch.RecordCount, r.rec.TLS.JA4)
	}
	if got := ch.JA4WithTransport('q'); got != "q"+r.rec.TLS.JA4[1:] {
		t.Errorf("quic: got %s", got)
	}
	if _, err := ParseClientHelloMessage(r.hello[5:100]); !errors.Is(err, ErrTruncated) {
		t.Errorf("short message: got %v, want ErrTruncated", err)
	}
	if _, err := ParseClientHelloMessage([]byte{2, 0, 0, 0}); !errors.Is(err, ErrNotClientHello) {
		t.Errorf("server hello: got %v, want ErrNotClientHello", err)
	}
}

func TestClientHelloAccessors(t *testing.T) {
	ch, err := ParseClientHello(specHello(true).record())
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := ch.Extension(extServerName); !ok || len(d) == 0 || ch.ServerName != "example.com" {
		t.Errorf("server_name: %v %x %q", ok, d, ch.ServerName)
	}
	if ch.HasExtension(extECH) {
		t.Error("HasExtension(ECH) = true")
	}
	if ExtensionName(0x0a0a) != "GREASE" || ExtensionName(17613) != "application_settings" || ExtensionName(0x1234) != "4660" {
		t.Error("ExtensionName")
	}
}
