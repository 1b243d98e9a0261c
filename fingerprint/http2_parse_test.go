package fingerprint

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"golang.org/x/net/http2/hpack"
)

// h2frame builds one frame.
func h2frame(typ FrameType, flags uint8, sid uint32, payload []byte) []byte {
	n := len(payload)
	b := []byte{byte(n >> 16), byte(n >> 8), byte(n), byte(typ), flags,
		byte(sid >> 24), byte(sid >> 16), byte(sid >> 8), byte(sid)}
	return append(b, payload...)
}

func hpackBlock(t *testing.T, enc *hpack.Encoder, buf *bytes.Buffer, kv ...string) []byte {
	t.Helper()
	buf.Reset()
	for i := 0; i+1 < len(kv); i += 2 {
		if err := enc.WriteField(hpack.HeaderField{Name: kv[i], Value: kv[i+1]}); err != nil {
			t.Fatal(err)
		}
	}
	return bytes.Clone(buf.Bytes())
}

// A stream with PRIORITY frames (as Firefox sent before version 120), no
// connection WINDOW_UPDATE, a padded HEADERS split over a CONTINUATION,
// DATA, RST_STREAM and PING.
func TestHTTP2PriorityContinuationPadding(t *testing.T) {
	var buf bytes.Buffer
	enc := hpack.NewEncoder(&buf)
	block := hpackBlock(t, enc, &buf, ":method", "POST", ":path", "/x", ":authority", "a.test", ":scheme", "https",
		"user-agent", "ua", "content-type", "text/plain")
	in := []byte(http2ClientPreface)
	in = append(in, h2frame(FrameSettings, 0, 0, []byte{0, 1, 0, 0, 0x10, 0, 0, 3, 0, 0, 0, 100})...)
	in = append(in, h2frame(FramePriority, 0, 3, []byte{0, 0, 0, 0, 200})...)
	in = append(in, h2frame(FramePriority, 0, 5, []byte{0x80, 0, 0, 3, 100})...)
	// HEADERS: PADDED|PRIORITY, 3 bytes of padding, first half of the block.
	half := len(block) / 2
	hp := append([]byte{3, 0, 0, 0, 5, 41}, block[:half]...)
	hp = append(hp, 0, 0, 0)
	in = append(in, h2frame(FrameHeaders, flagPadded|flagPriority, 7, hp)...)
	in = append(in, h2frame(FrameContinuation, flagEndHeaders, 7, block[half:])...)
	in = append(in, h2frame(FrameData, flagEndStream|flagPadded, 7, []byte{1, 'h', 'i', 0})...)
	in = append(in, h2frame(FrameRSTStream, 0, 7, []byte{0, 0, 0, 8})...)
	in = append(in, h2frame(FramePing, 0, 0, make([]byte, 8))...)
	in = append(in, h2frame(FrameWindowUpdate, 0, 0, []byte{0, 0, 1, 0})...) // after HEADERS: not the Akamai one

	h, err := ParseHTTP2(in)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := h.Akamai(), "1:4096;3:100|00|3:0:0:201,5:1:3:101|m,p,a,s"; got != want {
		t.Errorf("akamai: got %s, want %s", got, want)
	}
	if len(h.Frames) != 9 || h.Consumed != len(in) {
		t.Errorf("%d frames, consumed %d of %d", len(h.Frames), h.Consumed, len(in))
	}
	if len(h.Requests) != 1 {
		t.Fatalf("%d requests", len(h.Requests))
	}
	req := h.Requests[0]
	if !bytes.Equal(req.HeaderBlock, block) || req.EndStream || req.StreamID != 7 {
		t.Errorf("request: stream %d end %v block equal %v", req.StreamID, req.EndStream, bytes.Equal(req.HeaderBlock, block))
	}
	if *req.Priority != (Priority{Exclusive: false, StreamDep: 5, Weight: 42}) {
		t.Errorf("priority %+v", *req.Priority)
	}
	hr := req.HTTPRequest()
	if hr.Method != "POST" || hr.Target != "/x" || hr.Proto != "HTTP/2" || len(hr.Header) != 2 || hr.Header[1].Name != "content-type" {
		t.Errorf("HTTPRequest: %+v", hr)
	}
	if FrameContinuation.String() != "CONTINUATION" || FrameType(0x20).String() != "UNKNOWN_0x20" ||
		SettingName(4) != "INITIAL_WINDOW_SIZE" || SettingName(0x4242) != "UNKNOWN_SETTING_16962" {
		t.Error("names")
	}
}

// HPACK state carries over between header blocks (the dynamic table), and
// a second HEADERS on a stream is a trailer.
func TestHTTP2HPACKStateAndTrailers(t *testing.T) {
	var buf bytes.Buffer
	enc := hpack.NewEncoder(&buf)
	in := []byte(http2ClientPreface)
	in = append(in, h2frame(FrameSettings, 0, 0, nil)...)
	b1 := hpackBlock(t, enc, &buf, ":method", "GET", ":path", "/", "x-custom", "value-one")
	b2 := hpackBlock(t, enc, &buf, ":method", "GET", ":path", "/", "x-custom", "value-one")
	tr := hpackBlock(t, enc, &buf, "x-trailer", "t")
	if len(b2) >= len(b1) {
		t.Fatal("second block does not use the dynamic table")
	}
	in = append(in, h2frame(FrameHeaders, flagEndHeaders, 1, b1)...)
	in = append(in, h2frame(FrameHeaders, flagEndHeaders, 3, b2)...)
	in = append(in, h2frame(FrameHeaders, flagEndHeaders|flagEndStream, 3, tr)...)
	h, err := ParseHTTP2(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Requests) != 3 || h.Requests[1].Header[2].Value != "value-one" || !h.Requests[2].Trailer || h.Requests[1].Trailer {
		t.Errorf("requests: %+v", h.Requests)
	}
	if got, want := h.Akamai(), "|00|0|m,p"; got != want {
		t.Errorf("akamai: got %q, want %q", got, want)
	}
}

func TestHTTP2Errors(t *testing.T) {
	pre := []byte(http2ClientPreface)
	with := func(frames ...[]byte) []byte {
		b := bytes.Clone(pre)
		for _, f := range frames {
			b = append(b, f...)
		}
		return b
	}
	for _, c := range []struct {
		name string
		in   []byte
		want error
		what string
	}{
		{"empty", nil, ErrTruncated, "connection preface"},
		{"short preface", pre[:10], ErrTruncated, "connection preface"},
		{"http1", []byte("GET / HTTP/1.1\r\n\r\n"), ErrMalformed, "connection preface"},
		{"settings length", with(h2frame(FrameSettings, 0, 0, make([]byte, 5))), ErrMalformed, "SETTINGS frame"},
		{"settings ack with payload", with(h2frame(FrameSettings, flagAck, 0, make([]byte, 6))), ErrMalformed, "SETTINGS frame"},
		{"settings on a stream", with(h2frame(FrameSettings, 0, 1, nil)), ErrMalformed, "SETTINGS frame"},
		{"window update length", with(h2frame(FrameWindowUpdate, 0, 0, make([]byte, 3))), ErrMalformed, "WINDOW_UPDATE frame"},
		{"priority length", with(h2frame(FramePriority, 0, 1, make([]byte, 4))), ErrMalformed, "PRIORITY frame"},
		{"ping on stream", with(h2frame(FramePing, 0, 1, make([]byte, 8))), ErrMalformed, "PING frame"},
		{"goaway short", with(h2frame(FrameGoAway, 0, 0, make([]byte, 7))), ErrMalformed, "GOAWAY frame"},
		{"rst on stream 0", with(h2frame(FrameRSTStream, 0, 0, make([]byte, 4))), ErrMalformed, "RST_STREAM frame"},
		{"data on stream 0", with(h2frame(FrameData, 0, 0, nil)), ErrMalformed, "DATA frame"},
		{"data padding", with(h2frame(FrameData, flagPadded, 1, []byte{5, 1})), ErrMalformed, "DATA frame padding"},
		{"headers padding", with(h2frame(FrameHeaders, flagPadded|flagEndHeaders, 1, []byte{9})), ErrMalformed, "HEADERS frame padding"},
		{"headers priority", with(h2frame(FrameHeaders, flagPriority|flagEndHeaders, 1, []byte{0, 0})), ErrMalformed, "HEADERS frame priority"},
		{"bad hpack", with(h2frame(FrameHeaders, flagEndHeaders, 1, []byte{0xff, 0xff, 0xff, 0xff})), ErrMalformed, "hpack header block"},
		{"lone continuation", with(h2frame(FrameContinuation, flagEndHeaders, 1, nil)), ErrMalformed, "CONTINUATION without HEADERS"},
		{"interleaved", with(h2frame(FrameHeaders, 0, 1, []byte{0x82}), h2frame(FramePing, 0, 0, make([]byte, 8))),
			ErrMalformed, "frame interleaved in a header block"},
	} {
		h, err := ParseHTTP2(c.in)
		var pe *ParseError
		if !errors.Is(err, c.want) || !errors.As(err, &pe) || pe.What != c.what || pe.Proto != "h2" || h == nil {
			t.Errorf("%s: got %v, want %v for %q", c.name, err, c.want, c.what)
		}
	}
	// A header block still waiting for its CONTINUATION is not an error,
	// and not a request yet.
	h, err := ParseHTTP2(with(h2frame(FrameHeaders, 0, 1, []byte{0x82})))
	if err != nil || len(h.Requests) != 0 || len(h.Frames) != 1 {
		t.Errorf("open header block: %v, %d requests", err, len(h.Requests))
	}
}

func ExampleParseHTTP2() {
	// A client preface: SETTINGS, a connection WINDOW_UPDATE, then a GET.
	in := []byte(http2ClientPreface)
	in = append(in, h2frame(FrameSettings, 0, 0, []byte{0, 2, 0, 0, 0, 0, 0, 4, 0, 0x60, 0, 0})...)
	in = append(in, h2frame(FrameWindowUpdate, 0, 0, []byte{0, 0xef, 0, 1})...)
	// HPACK: :method GET, :authority "a", :scheme https, :path / (indexed and literal).
	in = append(in, h2frame(FrameHeaders, flagEndHeaders|flagEndStream, 1, []byte{0x82, 0x41, 0x01, 'a', 0x87, 0x84})...)
	h, err := ParseHTTP2(in)
	if err != nil {
		panic(err)
	}
	fmt.Println(h.Akamai())
	fmt.Println(h.Requests[0].PseudoOrder)
	// Output:
	// 2:0;4:6291456|15663105|0|m,a,s,p
	// [:method :authority :scheme :path]
}
