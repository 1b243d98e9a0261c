package quicwire

import (
	"bytes"
	"encoding/hex"
	"errors"
	"testing"
)

func hx(s string) []byte {
	b, err := hex.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// TestChaCha20ShortHeaderRFC9001 is RELIABILITY Q-25: RFC 9001 §A.5's
// ChaCha20-Poly1305 short-header packet sealed to the byte, opened back,
// and its key update secret.
func TestChaCha20ShortHeaderRFC9001(t *testing.T) {
	secret := hx("9ac312a7f877468ebe69422748ad00a15443f18203a07d6060f688f30f21632b")
	k, err := NewKeys(SuiteChaCha20Poly1305SHA256, secret)
	if err != nil {
		t.Fatal(err)
	}
	pn := uint64(654360564)
	pkt := append(hx("4200bff4"), 0x01)
	pkt = append(pkt, make([]byte, TagLen)...)[:5]
	got := k.SealInPlace(pkt, 4, 3, pn)
	want := hx("4cfe4189655e5cd55c41f69080575d7999c25a5bfb")
	if !bytes.Equal(got, want) {
		t.Fatalf("sealed %x\nwant   %x", got, want)
	}
	o, _ := NewKeys(SuiteChaCha20Poly1305SHA256, secret)
	b := bytes.Clone(want)
	first, pnLen, tpn, err := o.Unprotect(b, 1)
	if err != nil || first != 0x42 || pnLen != 3 || DecodePacketNumber(654360563, tpn, pnLen) != pn {
		t.Fatalf("unprotect: %x %d %d %v", first, pnLen, tpn, err)
	}
	p, err := o.OpenInPlace(b, 4, pn)
	if err != nil || !bytes.Equal(p, []byte{1}) {
		t.Fatalf("open: %x %v", p, err)
	}
	if ku := hx("1223504755036d556342ee9361d253421a826c9ecdf3c7148684b36b714881f9"); !bytes.Equal(k.Next().secret, ku) {
		t.Fatalf("quic ku secret %x", k.Next().secret)
	}
	b = bytes.Clone(want)
	b[len(b)-1] ^= 1
	o.Unprotect(b, 1)
	if _, err := o.OpenInPlace(b, 4, pn); !errors.Is(err, ErrDecrypt) {
		t.Fatalf("flipped tag: %v", err)
	}
}

// TestSuitesRoundTrip is RELIABILITY Q-26: every suite seals and opens
// a packet, a key update's keys open only their own packets, and an
// unknown suite is ErrSuite.
func TestSuitesRoundTrip(t *testing.T) {
	for _, s := range []uint16{SuiteAES128GCMSHA256, SuiteAES256GCMSHA384, SuiteChaCha20Poly1305SHA256} {
		secret := bytes.Repeat([]byte{byte(s)}, 48)
		a, _ := NewKeys(s, secret)
		b, _ := NewKeys(s, secret)
		pkt := append([]byte{0x41, 9, 9, 0, 7}, []byte("payload of a packet")...)
		sealed := bytes.Clone(a.SealInPlace(append(pkt, make([]byte, 16)...)[:len(pkt)], 5, 2, 7))
		x := bytes.Clone(sealed)
		_, pnLen, tpn, _ := b.Unprotect(x, 3)
		if p, err := b.OpenInPlace(x, 3+pnLen, tpn); err != nil || string(p) != "payload of a packet" {
			t.Fatalf("suite %x: %q %v", s, p, err)
		}
		x = bytes.Clone(sealed)
		n := b.Next()
		_, pnLen, tpn, _ = n.Unprotect(x, 3) // same header key
		if _, err := n.OpenInPlace(x, 3+pnLen, tpn); !errors.Is(err, ErrDecrypt) {
			t.Fatalf("suite %x: next phase opened the old phase: %v", s, err)
		}
	}
	if _, err := NewKeys(0x1304, make([]byte, 32)); !errors.Is(err, ErrSuite) {
		t.Fatal(err)
	}
}

// TestPacketNumbers is RELIABILITY Q-27: RFC 9000 §A.3's example and the
// window edges decode; the encoder's lengths follow §A.2.
func TestPacketNumbers(t *testing.T) {
	if got := DecodePacketNumber(0xa82f30ea, 0x9b32, 2); got != 0xa82f9b32 {
		t.Fatalf("RFC example: %x", got)
	}
	if got := DecodePacketNumber(-1, 0, 1); got != 0 {
		t.Fatal(got)
	}
	if got := DecodePacketNumber(255, 1, 1); got != 257 {
		t.Fatal(got)
	}
	if got := DecodePacketNumber(1<<62-2, 0xff, 1); got >= 1<<62 {
		t.Fatalf("beyond 2^62: %x", got)
	}
	if PacketNumberLen(0xac5c02, 0xabe8b3) != 2 || PacketNumberLen(0xace8fe, 0xabe8b3) != 3 || PacketNumberLen(5, -1) != 1 {
		t.Fatal("RFC 9000 A.2 lengths")
	}
}

// TestRetryIntegrity is RELIABILITY Q-28: RFC 9001 §A.4's Retry
// verifies and yields its token; a flipped bit or another original
// connection ID is ErrDecrypt; a cut Retry is ErrTruncated.
func TestRetryIntegrity(t *testing.T) {
	retry := hx("ff000000010008f067a5502a4262b5746f6b656e04a265ba2eff4d829058fb3f0f2496ba")
	odcid := hx("8394c8f03e515708")
	token, scid, err := RetryToken(retry, odcid)
	if err != nil || string(token) != "token" || !bytes.Equal(scid, hx("f067a5502a4262b5")) {
		t.Fatalf("%q %x %v", token, scid, err)
	}
	if got := AppendRetry(nil, nil, scid, odcid, token); !bytes.Equal(got, retry) {
		t.Fatalf("AppendRetry %x", got)
	}
	bad := bytes.Clone(retry)
	bad[len(bad)-3] ^= 1
	if _, _, err := RetryToken(bad, odcid); !errors.Is(err, ErrDecrypt) {
		t.Fatal(err)
	}
	if _, _, err := RetryToken(retry, []byte{1, 2, 3}); !errors.Is(err, ErrDecrypt) {
		t.Fatal(err)
	}
	if _, _, err := RetryToken(retry[:30], odcid); !errors.Is(err, ErrTruncated) {
		t.Fatal(err)
	}
}

// TestParseFrameAllTypes is RELIABILITY Q-29: every frame the client's
// appenders write parses back; every frame type cut at every byte is
// ErrTruncated (a STREAM or DATAGRAM without length runs to the end, so
// it is complete at any cut past its header); ACK ranges walk back down.
func TestParseFrameAllTypes(t *testing.T) {
	frames := [][]byte{
		AppendAckFrame(nil, [][2]uint64{{90, 100}, {50, 60}, {0, 10}}, 7),
		AppendCryptoFrame(nil, 70000, []byte("hello")),
		AppendStreamFrame(nil, 4, 1<<20, []byte("data"), true),
		AppendUintFrame(nil, FrameMaxData, 1<<40),
		AppendUintFrame(nil, FrameMaxStreamsUni, 3),
		AppendStreamUintFrame(nil, FrameMaxStreamData, 8, 99),
		AppendStreamUintFrame(nil, FrameStopSending, 8, 0x10c),
		AppendResetStreamFrame(nil, 8, 0x10c, 12345),
		AppendConnectionCloseFrame(nil, false, 0xa, FrameStream, "bad"),
		AppendConnectionCloseFrame(nil, true, 0x100, 0, "h3"),
		AppendPathResponseFrame(nil, [8]byte{1, 2, 3}),
		AppendUintFrame(nil, FrameRetireConnectionID, 2),
		append([]byte{byte(FrameNewConnectionID), 2, 1, 4, 1, 2, 3, 4}, make([]byte, 16)...),
		{byte(FrameNewToken), 3, 1, 2, 3},
		{byte(FrameHandshakeDone)},
		{byte(FrameDatagramLen), 2, 1, 2},
	}
	for _, b := range frames {
		f, n, err := ParseFrame(b)
		if err != nil || n != len(b) || f.Size != n {
			t.Fatalf("%x: %v %d", b, err, n)
		}
		for cut := 1; cut < len(b); cut++ {
			if _, _, err := ParseFrame(b[:cut]); !errors.Is(err, ErrTruncated) {
				t.Fatalf("%v cut at %d of %d: %v", f.Type, cut, len(b), err)
			}
		}
	}
	f, _, _ := ParseFrame(frames[0])
	var got [][2]uint64
	it := f.AckRangeIter()
	for lo, hi, ok := it.Next(); ok; lo, hi, ok = it.Next() {
		got = append(got, [2]uint64{lo, hi})
	}
	if len(got) != 3 || got[0] != [2]uint64{90, 100} || got[1] != [2]uint64{50, 60} || got[2] != [2]uint64{0, 10} {
		t.Fatalf("ranges %v", got)
	}
	// a range walking below zero is malformed
	under := []byte{byte(FrameAck), 10, 0, 1, 2, 20, 0}
	if _, _, err := ParseFrame(under); !errors.Is(err, ErrMalformed) {
		t.Fatalf("ack below zero: %v", err)
	}
	if _, _, err := ParseFrame([]byte{0x40, 0x77}); !errors.Is(err, ErrFrameNotAllowed) {
		t.Fatalf("unknown type: %v", err)
	}
}

// FuzzParseFrame is RELIABILITY Q-29's fuzz target: any bytes parse to a
// frame within the input or a typed error; ACK ranges walk strictly down
// and stop after the count.
func FuzzParseFrame(f *testing.F) {
	f.Add(AppendAckFrame(nil, [][2]uint64{{90, 100}, {50, 60}}, 7))
	f.Add(AppendStreamFrame(nil, 4, 9, []byte("data"), true))
	f.Add(append([]byte{byte(FrameNewConnectionID), 2, 1, 4, 1, 2, 3, 4}, make([]byte, 16)...))
	f.Add(AppendConnectionCloseFrame(nil, false, 0xa, FrameStream, "bad"))
	f.Add([]byte{0x0c, 4, 1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		fr, n, err := ParseFrame(b)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("untyped %v", err)
			}
			return
		}
		if n <= 0 || n > len(b) || fr.Size != n {
			t.Fatalf("size %d of %d", n, len(b))
		}
		if fr.Type == FrameAck || fr.Type == FrameAckECN {
			it := fr.AckRangeIter()
			prev := fr.LargestAcked + 2
			steps := uint64(0)
			for lo, hi, ok := it.Next(); ok; lo, hi, ok = it.Next() {
				if lo > hi || hi+1 >= prev {
					t.Fatalf("range %d-%d after %d", lo, hi, prev)
				}
				prev = lo
				if steps++; steps > fr.AckRanges+1 {
					t.Fatal("more ranges than counted")
				}
			}
		}
	})
}

// FuzzRetryToken: any datagram checked as a Retry gives a token inside
// it or a typed error.
func FuzzRetryToken(f *testing.F) {
	f.Add(hx("ff000000010008f067a5502a4262b5746f6b656e04a265ba2eff4d829058fb3f0f2496ba"), hx("8394c8f03e515708"))
	f.Fuzz(func(t *testing.T, b, odcid []byte) {
		tok, _, err := RetryToken(b, odcid)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("untyped %v", err)
			}
			return
		}
		if len(tok) > len(b) {
			t.Fatal("token beyond the packet")
		}
	})
}
