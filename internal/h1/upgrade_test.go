package h1

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/guise-http/guise/fields"
)

// TestUpgrade: with Upgrade a 101 is the final response, the connection is
// handed over with the bytes past the head and neither released nor
// closed; without it a 101 is a ProtocolError.
func TestUpgrade(t *testing.T) {
	for _, upgrade := range []bool{true, false} {
		a, b := net.Pipe()
		go func() {
			buf := make([]byte, 4096)
			b.Read(buf)
			io.WriteString(b, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n\x81\x02hi")
		}()
		c := NewConn(a, nil)
		released := false
		c.SetRelease(func(*Conn, bool) { released = true })
		req := &Request{Method: "GET", Target: "/ws", Upgrade: upgrade, Header: fields.Header{{Name: "Host", Value: "x"}, {Name: "Upgrade", Value: "websocket"}}}
		resp, err := c.RoundTripNew(context.Background(), req)
		if !upgrade {
			var pe *ProtocolError
			if !errors.As(err, &pe) {
				t.Fatalf("101 without Upgrade: %v", err)
			}
			b.Close()
			continue
		}
		if err != nil || resp.StatusCode != 101 || released {
			t.Fatalf("101: %v, status %v, released %v", err, resp, released)
		}
		nc, rest := c.Detach()
		if string(rest) != "\x81\x02hi" {
			t.Fatalf("bytes past the head %q", rest)
		}
		go b.Write([]byte("more"))
		buf := make([]byte, 4)
		if _, err := io.ReadFull(nc, buf); err != nil || string(buf) != "more" {
			t.Fatalf("detached conn read %q, %v", buf, err)
		}
		if _, err := c.RoundTripNew(context.Background(), &Request{Method: "GET", Target: "/", Header: fields.Header{{Name: "Host", Value: "x"}}}); err == nil || !strings.Contains(err.Error(), "h1:") {
			t.Fatalf("RoundTrip after Detach: %v", err)
		}
		nc.Close()
		b.Close()
	}
}
