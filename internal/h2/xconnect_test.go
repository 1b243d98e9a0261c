package h2

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/guise-http/guise/fields"
)

// TestExtendedConnect: ExtendedConnect reports the peer's
// SETTINGS_ENABLE_CONNECT_PROTOCOL once its SETTINGS came; a CONNECT with
// :protocol carries :scheme and :path in the request's pseudo order, and
// its stream is full duplex: request body bytes go out as they are
// written, response bytes come in before either side ends (RFC 8441).
func TestExtendedConnect(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, enable := range []uint32{0, 1} {
		cc, p := newPeer(t, plainConfig())
		p.nextOf(FrameSettings)
		p.writeSettings(Setting{ID: SettingEnableConnectProtocol, Val: enable})
		ok, err := cc.ExtendedConnect(ctx)
		if err != nil || ok != (enable == 1) {
			t.Fatalf("ENABLE_CONNECT_PROTOCOL %d: ExtendedConnect %v, %v", enable, ok, err)
		}
		if enable == 0 {
			continue
		}
		pr, pw := io.Pipe()
		req := &Request{Method: "CONNECT", Scheme: "https", Authority: "peer.test",
			Path: "/chat", Header: fields.Header{{Name: "sec-websocket-version", Value: "13"}}, Body: pr, ContentLength: -1}
		ext := &Extended{Protocol: "websocket", PseudoOrder: []string{":method", ":authority", ":scheme", ":path", ":protocol"}}
		ch := make(chan result, 1)
		go func() {
			resp, err := cc.RoundTripExtended(ctx, req, ext)
			ch <- result{resp, err}
		}()
		h := p.nextOf(FrameHeaders)
		if h.Flags&FlagEndStream != 0 {
			t.Fatal("CONNECT HEADERS ended the stream")
		}
		got := fmt.Sprint(p.decode(h))
		want := `[header field ":method" = "CONNECT" header field ":authority" = "peer.test" header field ":scheme" = "https" header field ":path" = "/chat" header field ":protocol" = "websocket" header field "sec-websocket-version" = "13"]`
		if got != want {
			t.Fatalf("fields\n%s\nwant\n%s", got, want)
		}
		p.writeHeaders(h.StreamID, false, ":status", "200")
		r := <-ch
		if r.err != nil || r.resp.StatusCode != 200 {
			t.Fatalf("CONNECT: %v", r.err)
		}
		for i := range 3 {
			msg := fmt.Sprintf("up %d", i)
			go pw.Write([]byte(msg))
			if d := p.nextOf(FrameData); string(d.payload) != msg || d.Flags&FlagEndStream != 0 {
				t.Fatalf("DATA %q flags %v, want %q", d.payload, d.Flags, msg)
			}
			p.writeData(h.StreamID, false, []byte(fmt.Sprintf("down %d", i)))
			buf := make([]byte, 64)
			n, err := r.resp.Body.Read(buf)
			if err != nil || string(buf[:n]) != fmt.Sprintf("down %d", i) {
				t.Fatalf("read %q, %v", buf[:n], err)
			}
		}
		pw.Close()
		if d := p.nextOf(FrameData); d.Flags&FlagEndStream == 0 {
			t.Fatal("closing the body did not end the stream")
		}
		p.writeData(h.StreamID, true, nil)
		if _, err := io.ReadAll(r.resp.Body); err != nil {
			t.Fatal(err)
		}
		r.resp.Body.Close()
	}
}

// TestExtendedConnectRefused: :protocol on anything but CONNECT is refused
// before a byte goes out, and ExtendedConnect on a connection that ends
// before the peer's SETTINGS returns an error.
func TestExtendedConnectRefused(t *testing.T) {
	cc, p := ready(t, plainConfig())
	_, err := cc.RoundTripExtended(context.Background(), &Request{Method: "GET", Scheme: "https", Authority: "a", Path: "/"}, &Extended{Protocol: "websocket"})
	if !errors.Is(err, ErrRefusedToSend) {
		t.Fatalf("GET with :protocol: %v", err)
	}
	roundTripOK(t, cc, p)
	cc2, p2 := newPeer(t, plainConfig())
	p2.nextOf(FrameSettings)
	p2.nc.Close()
	if ok, err := cc2.ExtendedConnect(context.Background()); ok || err == nil {
		t.Fatalf("ExtendedConnect on a dead connection: %v, %v", ok, err)
	}
}

// TestExtendedConnectDataBeforeReset: DATA that came on an extended
// CONNECT's stream before the peer reset it is read before the reset's
// StreamError: it is the tunnel's (haproxy 2.6 sends a WebSocket's close
// frame, then RST_STREAM(CANCEL)). It was dropped, and the WebSocket's
// close handshake failed as a dropped connection (RELIABILITY WS-17). The
// connection's credit comes back as the bytes are read.
func TestExtendedConnectDataBeforeReset(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cc, p := newPeer(t, plainConfig())
	p.nextOf(FrameSettings)
	p.writeSettings(Setting{ID: SettingEnableConnectProtocol, Val: 1})
	if ok, err := cc.ExtendedConnect(ctx); !ok || err != nil {
		t.Fatalf("ExtendedConnect %v, %v", ok, err)
	}
	pr, pw := io.Pipe()
	defer pw.Close()
	req := &Request{Method: "CONNECT", Scheme: "https", Authority: "peer.test", Path: "/ws", Body: pr, ContentLength: -1}
	ch := make(chan result, 1)
	go func() {
		resp, err := cc.RoundTripExtended(ctx, req, &Extended{Protocol: "websocket"})
		ch <- result{resp, err}
	}()
	h := p.nextOf(FrameHeaders)
	p.writeHeaders(h.StreamID, false, ":status", "200")
	r := <-ch
	if r.err != nil {
		t.Fatal(r.err)
	}
	p.writeData(h.StreamID, false, []byte("\x88\x02\x03\xe8"))
	p.write(appendRSTStream(nil, h.StreamID, ErrCodeCancel))
	// The reset is seen once the read loop handled it: a round trip on
	// another stream comes after it.
	roundTripOK(t, cc, p)
	b, err := io.ReadAll(r.resp.Body)
	var se StreamError
	if string(b) != "\x88\x02\x03\xe8" || !errors.As(err, &se) || se.Code != ErrCodeCancel {
		t.Fatalf("read %q, %v; want the close frame, then the reset", b, err)
	}
	r.resp.Body.Close()
}
