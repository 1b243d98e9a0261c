package quicwire

import (
	"bytes"
	"crypto/aes"
	"encoding/hex"
	"errors"
	"slices"
	"testing"
)

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// RFC 9001 Appendix A.1: the keys of DCID 0x8394c8f03e515708.
func TestInitialKeysRFC9001(t *testing.T) {
	dcid := unhex(t, "8394c8f03e515708")
	for _, c := range []struct {
		label       string
		key, iv, hp string
	}{
		{"client in", "1f369613dd76d5467730efcbe3b1a22d", "fa044b2f42a3fd3b46fb255c", "9f50449e04a0e810283a1e9933adedd2"},
		{"server in", "cf3a5331653c364c88f0f379b6067e37", "0ac1493ca1905853b0bba03e", "c206b8d9b9f0f37644430b490eeaa314"},
	} {
		k := initialKeys(dcid, c.label)
		if got := hex.EncodeToString(k.iv[:]); got != c.iv {
			t.Errorf("%s iv %s, want %s", c.label, got, c.iv)
		}
		// The hp key is checked through its effect: encrypting a block
		// with it and with the expected key gives the same bytes.
		want, _ := aes.NewCipher(unhex(t, c.hp))
		var a, b [16]byte
		k.hp.Encrypt(a[:], make([]byte, 16))
		want.Encrypt(b[:], make([]byte, 16))
		if a != b {
			t.Errorf("%s hp key differs from %s", c.label, c.hp)
		}
	}
	// A.2's header protection: this sample gives the mask 437b9aec36.
	k := ClientInitialKeys(dcid)
	var mask [16]byte
	k.hp.Encrypt(mask[:], unhex(t, "d1b1c98dd7689fb8ec11d242b123dc9b"))
	if got := hex.EncodeToString(mask[:5]); got != "437b9aec36" {
		t.Errorf("mask %s, want 437b9aec36", got)
	}
}

// initialPacket builds a client Initial carrying payload, padded to size
// bytes, as a browser would.
func initialPacket(t testing.TB, dcid, scid, token []byte, pn uint64, pnLen int, payload []byte, size int) []byte {
	t.Helper()
	hdr := []byte{0xc0 | byte(pnLen-1), 0, 0, 0, 1, byte(len(dcid))}
	hdr = append(hdr, dcid...)
	hdr = append(hdr, byte(len(scid)))
	hdr = append(hdr, scid...)
	hdr = AppendVarint(hdr, uint64(len(token)))
	hdr = append(hdr, token...)
	if pad := size - (len(hdr) + 2 + pnLen + len(payload) + 16); pad > 0 {
		payload = append(slices.Clone(payload), make([]byte, pad)...)
	}
	hdr = AppendVarintLen(hdr, uint64(pnLen+len(payload)+16), 2)
	for i := pnLen - 1; i >= 0; i-- {
		hdr = append(hdr, byte(pn>>(8*i)))
	}
	return ClientInitialKeys(dcid).Seal(nil, hdr, pn, pnLen, payload)
}

func TestInitialRoundTrip(t *testing.T) {
	dcid := unhex(t, "0102030405060708")
	scid := []byte{9, 9, 9}
	crypto := AppendVarint([]byte{byte(FrameCrypto)}, 0)
	crypto = AppendVarint(crypto, 5)
	crypto = append(crypto, "hello"...)
	payload := append([]byte{byte(FramePing)}, crypto...)
	pkt := initialPacket(t, dcid, scid, []byte("tok"), 1, 2, payload, 1200)
	if len(pkt) != 1200 {
		t.Fatalf("packet is %d bytes", len(pkt))
	}
	h, err := ParseHeader(pkt)
	if err != nil {
		t.Fatal(err)
	}
	if h.Type != PacketInitial || !bytes.Equal(h.DCID, dcid) || !bytes.Equal(h.SCID, scid) || string(h.Token) != "tok" || h.Size != 1200 || h.LengthSize != 2 {
		t.Fatalf("header %+v", h)
	}
	before := slices.Clone(pkt)
	p, err := ClientInitialKeys(dcid).Open(pkt, h)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(pkt, before) {
		t.Error("Open modified its input")
	}
	if p.PacketNumber != 1 || p.PNLen != 2 || p.Flags != 0xc1 {
		t.Errorf("pn %d len %d flags %#x", p.PacketNumber, p.PNLen, p.Flags)
	}
	var got []string
	err = ParseFrames(p.Payload, func(f Frame) {
		s := f.Type.String()
		if f.Type == FrameCrypto {
			s += ":" + string(f.Data)
		}
		got = append(got, s)
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"PING", "CRYPTO:hello", "PADDING"}; !slices.Equal(got, want) {
		t.Errorf("frames %q, want %q", got, want)
	}
	// The server's keys do not open it, nor do another DCID's.
	for _, k := range []*Keys{ServerInitialKeys(dcid), ClientInitialKeys([]byte{1})} {
		if _, err := k.Open(pkt, h); !errors.Is(err, ErrDecrypt) {
			t.Errorf("wrong keys: %v, want ErrDecrypt", err)
		}
	}
	// A flipped ciphertext bit fails the tag (RELIABILITY Q-03).
	bad := slices.Clone(pkt)
	bad[len(bad)-20] ^= 1
	if _, err := ClientInitialKeys(dcid).Open(bad, h); !errors.Is(err, ErrDecrypt) {
		t.Errorf("flipped bit: %v, want ErrDecrypt", err)
	}
}

// TestParseHeaderBadInput is RELIABILITY: every truncation
// of a valid Initial is ErrTruncated, other versions are ErrVersion, long
// connection IDs are ErrMalformed; none panics.
func TestParseHeaderBadInput(t *testing.T) {
	dcid := unhex(t, "0102030405060708")
	pkt := initialPacket(t, dcid, nil, nil, 0, 1, []byte{1, 1, 1, 1}, 1200)
	h, _ := ParseHeader(pkt)
	for n := range h.PNOffset {
		if _, err := ParseHeader(pkt[:n]); !errors.Is(err, ErrTruncated) {
			t.Fatalf("%d bytes: %v, want ErrTruncated", n, err)
		}
	}
	for n := h.PNOffset; n < len(pkt); n += 97 {
		if _, err := ParseHeader(pkt[:n]); !errors.Is(err, ErrTruncated) {
			t.Fatalf("%d bytes: %v, want ErrTruncated", n, err)
		}
	}
	v2 := slices.Clone(pkt)
	v2[1], v2[2], v2[3], v2[4] = 0x6b, 0x33, 0x43, 0xcf
	if h, err := ParseHeader(v2); !errors.Is(err, ErrVersion) || h.Type != PacketOtherVersion || !bytes.Equal(h.DCID, dcid) {
		t.Errorf("v2: %v %v", h.Type, err)
	}
	long := slices.Clone(pkt[:5])
	long = append(long, 21)
	long = append(long, make([]byte, 21+1+40)...)
	if _, err := ParseHeader(long); !errors.Is(err, ErrMalformed) {
		t.Errorf("21-byte dcid: %v, want ErrMalformed", err)
	}
	if h, err := ParseHeader([]byte{0x40, 1, 2}); err != nil || h.Type != PacketShort {
		t.Errorf("short header: %v %v", h.Type, err)
	}
	var pe *Error
	if _, err := ParseHeader(pkt[:3]); !errors.As(err, &pe) || pe.What != "long header" {
		t.Errorf("error %v", err)
	}
}

// TestParseFramesBadInput is RELIABILITY Q-04: truncated frames,
// forbidden frame types and impossible ACK ranges are typed errors.
func TestParseFramesBadInput(t *testing.T) {
	for _, c := range []struct {
		name string
		in   []byte
		want error
	}{
		{"crypto truncated", []byte{0x06, 0x00, 0x10, 'a'}, ErrTruncated},
		{"crypto no length", []byte{0x06, 0x00}, ErrTruncated},
		{"stream in initial", []byte{0x08, 0x00}, ErrFrameNotAllowed},
		{"new token in initial", []byte{0x07, 0x00}, ErrFrameNotAllowed},
		{"ack first range above largest", []byte{0x02, 0x01, 0x00, 0x00, 0x05}, ErrMalformed},
		{"ack huge range count", []byte{0x02, 0x05, 0x00, 0x80, 0xff, 0xff, 0xff, 0x00}, ErrTruncated},
		{"close reason truncated", []byte{0x1c, 0x00, 0x00, 0x05, 'x'}, ErrTruncated},
		{"crypto offset overflow", []byte{0x06, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 'a'}, ErrMalformed},
	} {
		err := ParseFrames(c.in, func(Frame) {})
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	var n int
	if err := ParseFrames([]byte{0, 0, 0, 1, 0, 2, 3, 0, 0, 0}, func(f Frame) { n++ }); err != nil || n != 4 {
		t.Errorf("padding, ping, padding, ack: %d frames, %v", n, err)
	}
}

// TestTransportParametersBadInput is RELIABILITY Q-05.
func TestTransportParametersBadInput(t *testing.T) {
	good := AppendTransportParameters(nil, []TransportParameter{
		{ID: ParamMaxIdleTimeout, Value: AppendVarint(nil, 30000)},
		{ID: 27 + 31*5, Value: []byte{1, 2}},
		{ID: ParamInitialSourceConnectionID, Value: []byte{1, 2, 3}},
	})
	ps, err := ParseTransportParameters(good)
	if err != nil || len(ps) != 3 {
		t.Fatalf("%v %v", ps, err)
	}
	if v, ok := ps[0].Uint(); !ok || v != 30000 || !ps[1].ID.IsGREASE() || ps[1].ID.String() != "GREASE" {
		t.Errorf("%v %v %v", v, ok, ps[1].ID)
	}
	// Cutting at the two inner parameter boundaries leaves valid input.
	first := len(AppendTransportParameters(nil, ps[:1]))
	second := len(AppendTransportParameters(nil, ps[:2]))
	for n := 1; n < len(good); n++ {
		if _, err := ParseTransportParameters(good[:n]); err == nil && n != first && n != second {
			t.Errorf("%d bytes: no error", n)
		} else if err != nil && !errors.Is(err, ErrTruncated) {
			t.Errorf("%d bytes: %v, want ErrTruncated", n, err)
		}
	}
	for _, c := range []struct {
		name string
		ps   []TransportParameter
	}{
		{"duplicate", []TransportParameter{{ID: ParamMaxIdleTimeout, Value: []byte{1}}, {ID: ParamMaxIdleTimeout, Value: []byte{1}}}},
		{"integer with two varints", []TransportParameter{{ID: ParamInitialMaxData, Value: []byte{1, 1}}}},
		{"empty integer", []TransportParameter{{ID: ParamInitialMaxData}}},
		{"udp payload below 1200", []TransportParameter{{ID: ParamMaxUDPPayloadSize, Value: AppendVarint(nil, 1199)}}},
		{"ack delay exponent 21", []TransportParameter{{ID: ParamAckDelayExponent, Value: []byte{21}}}},
		{"max ack delay 2^14", []TransportParameter{{ID: ParamMaxAckDelay, Value: AppendVarint(nil, 1<<14)}}},
		{"cid limit 1", []TransportParameter{{ID: ParamActiveConnectionIDLimit, Value: []byte{1}}}},
	} {
		if _, err := ParseTransportParameters(AppendTransportParameters(nil, c.ps)); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", c.name, err)
		}
	}
}

func TestVarint(t *testing.T) {
	for _, c := range []struct {
		in string
		v  uint64
	}{
		// RFC 9000 §A.1's examples.
		{"c2197c5eff14e88c", 151288809941952652},
		{"9d7f3e7d", 494878333},
		{"7bbd", 15293},
		{"25", 37},
		{"4025", 37},
	} {
		b := unhex(t, c.in)
		v, n := Varint(b)
		if v != c.v || n != len(b) {
			t.Errorf("%s: %d (%d bytes), want %d", c.in, v, n, c.v)
		}
		if got := AppendVarintLen(nil, v, len(b)); !bytes.Equal(got, b) {
			t.Errorf("append %d in %d: %x", v, len(b), got)
		}
	}
	if _, n := Varint([]byte{0xc0, 1}); n != 0 {
		t.Error("truncated varint read")
	}
}

// FuzzParseInitial runs arbitrary datagrams through the header parser,
// decryption under the keys of their own DCID, and the frame parser. A
// seed is a real protected Initial.
func FuzzParseInitial(f *testing.F) {
	dcid := []byte{1, 2, 3, 4, 5, 6, 7, 8}
	crypto := AppendVarint([]byte{byte(FrameCrypto)}, 0)
	crypto = AppendVarint(crypto, 3)
	crypto = append(crypto, "abc"...)
	f.Add(initialPacket(f, dcid, []byte{7}, nil, 1, 1, crypto, 1200))
	f.Add([]byte{0xc0, 0, 0, 0, 1, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		for len(b) > 0 {
			h, err := ParseHeader(b)
			if err != nil {
				if !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrVersion) {
					t.Fatalf("untyped error %v", err)
				}
				return
			}
			if h.Size <= 0 || h.Size > len(b) {
				t.Fatalf("size %d of %d", h.Size, len(b))
			}
			if h.Type == PacketInitial {
				if p, err := ClientInitialKeys(h.DCID).Open(b, h); err == nil {
					ParseFrames(p.Payload, func(Frame) {})
				}
			}
			b = b[h.Size:]
		}
	})
}

// FuzzParseFrames checks the frame parser ends with a typed error or
// frames whose sizes add up to the input.
func FuzzParseFrames(f *testing.F) {
	f.Add([]byte{0x06, 0x00, 0x03, 'a', 'b', 'c', 0, 0, 1})
	f.Add([]byte{0x03, 0x05, 0x00, 0x01, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00})
	f.Add([]byte{0x1c, 0x0a, 0x00, 0x02, 'n', 'o'})
	f.Fuzz(func(t *testing.T, b []byte) {
		total := 0
		err := ParseFrames(b, func(fr Frame) { total += fr.Size })
		if err == nil && total != len(b) {
			t.Fatalf("frames cover %d of %d bytes", total, len(b))
		}
		if err != nil && !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrFrameNotAllowed) {
			t.Fatalf("untyped error %v", err)
		}
	})
}

// FuzzTransportParameters checks that what parses re-encodes to the same
// bytes when the input used minimal varints.
func FuzzTransportParameters(f *testing.F) {
	f.Add(AppendTransportParameters(nil, []TransportParameter{
		{ID: ParamMaxIdleTimeout, Value: AppendVarint(nil, 30000)},
		{ID: ParamInitialMaxData, Value: AppendVarint(nil, 15728640)},
		{ID: 0x1a2a3a4a, Value: []byte{0xde, 0xad}},
	}))
	f.Fuzz(func(t *testing.T, b []byte) {
		ps, err := ParseTransportParameters(b)
		if err != nil {
			if !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrMalformed) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if len(AppendTransportParameters(nil, ps)) > len(b) {
			t.Fatalf("re-encoding is longer than the input")
		}
	})
}
