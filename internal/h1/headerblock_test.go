package h1

import (
	"context"
	"testing"

	"github.com/guise-http/guise/fields"
)

// TestHeaderBlock: pre-rendered field lines go out right after Header's
// fields and before the framing RoundTrip adds.
func TestHeaderBlock(t *testing.T) {
	sc := &scriptConn{in: []byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"), chunk: 1 << 10}
	c := NewConn(sc, nil)
	c.SetRelease(func(*Conn, bool) {})
	req := &Request{Method: "POST", Target: "/", Header: fields.Header{{Name: "Host", Value: "h"}},
		HeaderBlock: []byte("A: 1\r\nb: 2\r\n"), BodyBytes: []byte("xyz")}
	var resp Response
	if err := c.RoundTrip(context.Background(), req, &resp); err != nil {
		t.Fatal(err)
	}
	want := "POST / HTTP/1.1\r\nHost: h\r\nA: 1\r\nb: 2\r\nContent-Length: 3\r\n\r\nxyz"
	if got := sc.out.String(); got != want {
		t.Fatalf("wrote %q, want %q", got, want)
	}
}
