package h2

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"

	"golang.org/x/net/http2/hpack"
)

// frame is one frame the scripted peer read.
type frame struct {
	frameHeader
	payload []byte
}

// raw returns the frame's wire bytes.
func (f frame) raw() []byte {
	return append(appendFrameHeader(nil, len(f.payload), f.Type, f.Flags, f.StreamID), f.payload...)
}

// peer is a scripted HTTP/2 server on the far end of a net.Pipe. It reads
// the client's frames in a goroutine (so the client's writes never block on
// the script) and writes what the test says.
type peer struct {
	t      testing.TB
	nc     net.Conn
	frames chan frame
	done   chan struct{}
	enc    *hpack.Encoder
	encBuf bytes.Buffer
	dec    *hpack.Decoder
}

// newPeer returns a client connection with cfg and its scripted peer. The
// peer has read and checked the preface.
func newPeer(t testing.TB, cfg *Config) (*ClientConn, *peer) {
	t.Helper()
	c, s := net.Pipe()
	p := &peer{t: t, nc: s, frames: make(chan frame, 4096), done: make(chan struct{})}
	p.enc = hpack.NewEncoder(&p.encBuf)
	p.dec = hpack.NewDecoder(65536, nil)
	go p.readLoop()
	cc, err := NewClientConn(c, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cc.Close()
		s.Close()
		<-p.done
	})
	return cc, p
}

func (p *peer) readLoop() {
	defer close(p.done)
	defer close(p.frames)
	pre := make([]byte, len(preface))
	if _, err := io.ReadFull(p.nc, pre); err != nil || string(pre) != preface {
		return
	}
	fr := frameReader{r: p.nc, max: 1 << 24}
	for {
		h, b, err := fr.next()
		if err != nil {
			return
		}
		p.frames <- frame{h, bytes.Clone(b)}
	}
}

// next returns the next frame the client sent; it fails the test if the
// client closed the connection.
func (p *peer) next() frame {
	p.t.Helper()
	f, ok := <-p.frames
	if !ok {
		p.t.Fatal("peer: client closed the connection")
	}
	return f
}

// nextOf skips frames until one of type t.
func (p *peer) nextOf(t FrameType) frame {
	p.t.Helper()
	for range 1000 {
		if f := p.next(); f.Type == t {
			return f
		}
	}
	p.t.Fatalf("peer: no %v frame", t)
	return frame{}
}

// closed reports whether the client closed the connection, draining frames;
// it returns the GOAWAY code the client sent, if any.
func (p *peer) closedWith() (ErrCode, bool) {
	code, sent := ErrCode(0), false
	for f := range p.frames {
		if f.Type == FrameGoAway && len(f.payload) >= 8 {
			code, sent = ErrCode(binary.BigEndian.Uint32(f.payload[4:])), true
		}
	}
	return code, sent
}

func (p *peer) write(b []byte) {
	p.t.Helper()
	if _, err := p.nc.Write(b); err != nil {
		p.t.Fatalf("peer write: %v", err)
	}
}

// writeSettings writes a SETTINGS frame.
func (p *peer) writeSettings(s ...Setting) { p.write(appendSettings(nil, s)) }

// block HPACK-encodes fields given as name, value pairs.
func (p *peer) block(kv ...string) []byte {
	p.encBuf.Reset()
	for i := 0; i < len(kv); i += 2 {
		p.enc.WriteField(hpack.HeaderField{Name: kv[i], Value: kv[i+1]})
	}
	return bytes.Clone(p.encBuf.Bytes())
}

// writeHeaders writes a HEADERS frame with the fields kv.
func (p *peer) writeHeaders(id uint32, end bool, kv ...string) {
	p.write(appendHeaders(nil, id, end, nil, p.block(kv...), 16384))
}

func (p *peer) writeData(id uint32, end bool, data []byte) {
	p.write(appendData(nil, id, end, data))
}

// decode decodes a HEADERS frame's block with the peer's decoder.
func (p *peer) decode(f frame) []hpack.HeaderField {
	p.t.Helper()
	b := f.payload
	if f.Flags&FlagPriority != 0 {
		b = b[5:]
	}
	fs, err := p.dec.DecodeFull(b)
	if err != nil {
		p.t.Fatalf("decode: %v", err)
	}
	return fs
}

// handshake reads the client's preface frames and sends the server's
// SETTINGS.
func (p *peer) handshake(s ...Setting) {
	p.t.Helper()
	p.writeSettings(s...)
}

// result is what a RoundTrip returned.
type result struct {
	resp *Response
	err  error
}

// get returns a GET request for path.
func get(path string) *Request {
	return &Request{Method: "GET", Scheme: "https", Authority: "peer.test", Path: path, ContentLength: -1}
}

// goRoundTrip runs RoundTrip in a goroutine.
func goRoundTrip(ctx context.Context, cc *ClientConn, req *Request) <-chan result {
	ch := make(chan result, 1)
	go func() {
		resp, err := cc.RoundTrip(ctx, req)
		ch <- result{resp, err}
	}()
	return ch
}

// plainConfig is a Config without a fingerprint: RFC default windows, so
// flow-control tests stay small.
func plainConfig() *Config {
	return &Config{Settings: []Setting{{ID: SettingEnablePush, Val: 0}}}
}

// ready returns a connection whose peer finished the SETTINGS exchange.
func ready(t testing.TB, cfg *Config, s ...Setting) (*ClientConn, *peer) {
	t.Helper()
	cc, p := newPeer(t, cfg)
	p.nextOf(FrameSettings)
	p.writeSettings(s...)
	for {
		if f := p.next(); f.Type == FrameSettings && f.Flags&FlagAck != 0 {
			break
		}
	}
	return cc, p
}

// wantConnError checks that err is a ConnectionError with code.
func wantConnError(t testing.TB, err error, code ErrCode) {
	t.Helper()
	var ce ConnectionError
	if !errors.As(err, &ce) || ce.Code != code {
		t.Fatalf("got %v (%T), want ConnectionError %v", err, err, code)
	}
}

// wantStreamError checks that err is a StreamError with code.
func wantStreamError(t testing.TB, err error, code ErrCode) {
	t.Helper()
	var se StreamError
	if !errors.As(err, &se) || se.Code != code {
		t.Fatalf("got %v (%T), want StreamError %v", err, err, code)
	}
}

// roundTripOK completes one GET on cc, proving the connection still works.
func roundTripOK(t testing.TB, cc *ClientConn, p *peer) {
	t.Helper()
	ch := goRoundTrip(context.Background(), cc, get("/ok"))
	h := p.nextOf(FrameHeaders)
	p.writeHeaders(h.StreamID, false, ":status", "200")
	p.writeData(h.StreamID, true, []byte("ok"))
	r := <-ch
	if r.err != nil {
		t.Fatalf("round trip: %v", r.err)
	}
	b, err := io.ReadAll(r.resp.Body)
	r.resp.Body.Close()
	if err != nil || string(b) != "ok" {
		t.Fatalf("body %q, %v", b, err)
	}
}
