package h1

import (
	"io"
	"testing"

	"github.com/guise-http/guise/fields"
)

func hdr(kv ...string) fields.Header {
	var h fields.Header
	for i := 0; i+1 < len(kv); i += 2 {
		h = append(h, fields.Field{Name: kv[i], Value: kv[i+1]})
	}
	return h
}

func TestBasicKeepAlive(t *testing.T) {
	s := newServer(t, respond(
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A: b\r\n\r\nhello",
		"HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nT: v\r\n\r\n",
		"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nrest",
	))
	c := s.dial(t, nil)
	var rel []bool
	c.SetRelease(func(_ *Conn, r bool) { rel = append(rel, r) })
	req := &Request{Method: "GET", Target: "/", Header: hdr("Host", "x")}
	var resp Response
	want := []struct {
		code     int
		body     string
		trailer  string
		reusable bool
	}{{200, "hello", "", true}, {201, "abc", "v", true}, {200, "rest", "", false}}
	for i, w := range want {
		if err := c.RoundTrip(testCtx(t), req, &resp); err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		b, err := io.ReadAll(&resp.Body)
		if err != nil || string(b) != w.body || resp.StatusCode != w.code {
			t.Fatalf("%d: %d %q %v", i, resp.StatusCode, b, err)
		}
		resp.Body.Close()
		if resp.Trailer.Get("T") != w.trailer {
			t.Fatalf("%d: trailer %v", i, resp.Trailer)
		}
		if len(rel) != i+1 || rel[i] != w.reusable {
			t.Fatalf("%d: release %v", i, rel)
		}
	}
	if c.Requests() != 3 {
		t.Fatal(c.Requests())
	}
}
