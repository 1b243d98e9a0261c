package h2

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"testing/synctest"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// fuzzBlock HPACK-encodes name, value pairs with a fresh encoder.
func fuzzBlock(kv ...string) []byte {
	var b bytes.Buffer
	e := hpack.NewEncoder(&b)
	for i := 0; i < len(kv); i += 2 {
		e.WriteField(hpack.HeaderField{Name: kv[i], Value: kv[i+1]})
	}
	return b.Bytes()
}

// FuzzClientConn feeds the server's byte stream, after a valid SETTINGS, to
// a connection with two requests in flight, in reads of sizes the input
// chooses. Every RoundTrip and body read must settle once the stream ends,
// receive windows never go negative, and no goroutine is left.
func FuzzClientConn(f *testing.F) {
	ok := appendHeaders(nil, 1, false, nil, fuzzBlock(":status", "200", "content-length", "2"), 16384)
	ok = appendData(ok, 1, true, []byte("hi"))
	ok = appendHeaders(ok, 3, true, nil, fuzzBlock(":status", "204"), 16384)
	f.Add([]byte{0}, ok)
	f.Add([]byte{3, 200, 1}, ok)
	trailers := appendHeaders(nil, 1, false, nil, fuzzBlock(":status", "200"), 16384)
	trailers = appendData(trailers, 1, false, []byte("body"))
	trailers = appendHeaders(trailers, 1, true, nil, fuzzBlock("x-t", "1"), 16384)
	f.Add([]byte{7}, trailers)
	f.Add([]byte{1}, appendGoAway(appendRSTStream(nil, 3, ErrCodeRefusedStream), 1, ErrCodeNo, "bye"))
	f.Add([]byte{2}, appendPing(appendSettings(appendWindowUpdate(nil, 0, 1000), []Setting{{ID: SettingInitialWindowSize, Val: 10}}), false, [8]byte{1}))
	f.Add([]byte{5}, append(appendFrameHeader(nil, 3, 0x0b, 0, 1), 1, 2, 3))
	cont := appendFrameHeader(nil, 2, FrameHeaders, 0, 1)
	cont = append(cont, 0x88, 0x40)
	cont = append(appendFrameHeader(cont, 3, FrameContinuation, FlagEndHeaders, 1), 0x01, 'x', 0x00)
	f.Add([]byte{9}, cont)
	// A whole-block DATA frame (read straight into a block), then a
	// padded HEADERS with priority ending stream 3.
	block := appendHeaders(nil, 1, false, nil, fuzzBlock(":status", "200"), 16384)
	block = appendData(block, 1, false, make([]byte, 16384))
	block = appendData(block, 1, true, []byte("hi"))
	hb := fuzzBlock(":status", "204")
	padded := appendFrameHeader(nil, 1+5+len(hb)+2, FrameHeaders, FlagPadded|FlagPriority|FlagEndHeaders|FlagEndStream, 3)
	padded = append(append(append(padded, 2, 0, 0, 0, 1, 15), hb...), 0, 0)
	f.Add([]byte{255, 31}, append(block, padded...))
	f.Fuzz(func(t *testing.T, sizes, stream []byte) {
		if len(stream) > 1<<16 {
			return
		}
		synctest.Test(t, func(t *testing.T) { fuzzOne(t, sizes, stream) })
	})
}

func fuzzOne(t *testing.T, sizes, stream []byte) {
	c, s := net.Pipe()
	go io.Copy(io.Discard, s)
	cfg := chromeConfig()
	cfg.MaxHeaderListSize = 1 << 16
	cc, err := NewClientConn(c, cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.Write(appendSettings(nil, nil))
	settled := make(chan struct{}, 2)
	run := func(req *Request) {
		defer func() { settled <- struct{}{} }()
		resp, err := cc.RoundTrip(context.Background(), req)
		if err != nil {
			return
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	go run(get("/"))
	synctest.Wait()
	post := get("/p")
	post.Method = "POST"
	post.BodyBytes = []byte("data")
	post.ContentLength = 4
	go run(post)
	synctest.Wait()
	for i := 0; len(stream) > 0; i++ {
		n := 1 + len(stream)
		if len(sizes) > 0 {
			n = 1 + int(sizes[i%len(sizes)])
		}
		n = min(n, len(stream))
		if _, err := s.Write(stream[:n]); err != nil {
			break
		}
		stream = stream[n:]
	}
	s.Close()
	synctest.Wait()
	for range 2 {
		select {
		case <-settled:
		default:
			t.Fatal("a round trip did not settle after the stream ended")
		}
	}
	cc.mu.Lock()
	neg := cc.recvWindow < 0
	cc.mu.Unlock()
	if neg {
		t.Fatal("negative receive window")
	}
	cc.Close()
}

// FuzzFramer reads arbitrary bytes with the Framer as NewClientConn
// configures it: no panic, no frame above the size limit, and only errors
// that readErr maps (the Framer's connection and stream errors,
// ErrFrameTooLarge, or a short read). Header blocks are the connection's
// (FuzzClientConn, FuzzHPACKDecoder).
func FuzzFramer(f *testing.F) {
	blk := fuzzBlock(":status", "200", "x-a", "1")
	f.Add(uint16(0), appendSettings(nil, []Setting{{ID: SettingEnablePush, Val: 0}}))
	f.Add(uint16(5), appendData(nil, 1, true, make([]byte, 20000)))
	f.Add(uint16(1), append(appendFrameHeader(nil, 4, FrameData, FlagPadded, 1), 9, 1, 2, 3))
	f.Add(uint16(0), appendHeaders(nil, 1, true, &PriorityParam{Weight: 7}, blk, 16384))
	f.Add(uint16(0), appendHeaders(nil, 1, false, nil, blk, 2))
	f.Add(uint16(0), appendGoAway(appendPing(appendRSTStream(appendWindowUpdate(nil, 3, 9), 1, ErrCodeCancel), true, [8]byte{}), 1, ErrCodeNo, "x"))
	f.Fuzz(func(t *testing.T, limit uint16, b []byte) {
		maxFrame := uint32(minMaxFrameSize) + uint32(limit)
		fr := newFramer(nil, bytes.NewReader(b), maxFrame)
		for range 10000 {
			fh, err := fr.ReadFrameHeader()
			if err == nil {
				var frame http2.Frame
				frame, err = fr.ReadFrameForHeader(fh)
				if err == nil {
					if frame.Header().Length > maxFrame {
						t.Fatalf("frame of %d bytes read, limit %d", frame.Header().Length, maxFrame)
					}
					continue
				}
			}
			var ce http2.ConnectionError
			var se http2.StreamError
			switch {
			case errors.As(err, &ce), errors.As(err, &se), errors.Is(err, http2.ErrFrameTooLarge),
				err == io.EOF, err == io.ErrUnexpectedEOF:
			default:
				t.Fatalf("unexpected error %v (%T)", err, err)
			}
			if _, ok := err.(http2.StreamError); !ok {
				return
			}
		}
	})
}

// FuzzEncoder encodes arbitrary fields with each style; x/net's decoder must
// read back the same fields (cookies split into crumbs).
func FuzzEncoder(f *testing.F) {
	f.Add("user-agent", "Mozilla/5.0", ":path", "/", uint16(4096))
	f.Add("cookie", "a=1; b=2", "x", "\xff\x00", uint16(0))
	f.Fuzz(func(t *testing.T, n1, v1, n2, v2 string, table uint16) {
		for _, style := range []HPACKStyle{ChromiumHPACK(), FirefoxHPACK()} {
			e := newEncoder(&style)
			d := hpack.NewDecoder(65536, nil)
			e.setPeerTableSize(uint32(table))
			for range 3 {
				blk := e.begin(nil)
				blk = e.one(blk, n1, v1)
				blk = e.one(blk, n2, v2)
				blk = e.one(blk, n1, v1)
				fs, err := d.DecodeFull(blk)
				if err != nil {
					t.Fatalf("decode: %v", err)
				}
				if len(fs) != 3 || fs[0].Name != n1 || fs[0].Value != v1 || fs[1].Name != n2 ||
					fs[1].Value != v2 || fs[2].Value != v1 {
					t.Fatalf("got %v", fs)
				}
			}
		}
	})
}
