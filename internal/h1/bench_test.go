package h1

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/guise-http/guise/internal/fields"
)

// cannedServer answers every request head (bodies are skipped by
// Content-Length or chunked framing, roughly) with resp, allocating nothing
// per request.
func cannedServer(tb testing.TB, resp []byte) *server {
	return newServer(tb, func(c net.Conn) {
		buf := make([]byte, 256<<10)
		state := 0 // matched bytes of "\r\n\r\n"
		for {
			n, err := c.Read(buf)
			for _, b := range buf[:n] {
				switch {
				case b == '\r' && state%2 == 0, b == '\n' && state%2 == 1:
					state++
				case b == '\r':
					state = 1
				default:
					state = 0
				}
				if state == 4 {
					state = 0
					if _, err := c.Write(resp); err != nil {
						return
					}
				}
			}
			if err != nil {
				return
			}
		}
	})
}

var smallResp = []byte("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nDate: Sun, 29 Nov 2026 21:00:00 GMT\r\nServer: test\r\nContent-Length: 13\r\n\r\nhello, world!")

func TestRoundTripAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("alloc budget measured in full runs")
	}
	s := cannedServer(t, smallResp)
	c := s.dial(t, nil)
	c.SetRelease(func(*Conn, bool) {})
	req := &Request{Method: "GET", Target: "/index.html", Header: fields.Header{
		{Name: "Host", Value: "example.com"}, {Name: "User-Agent", Value: "guise"}, {Name: "Accept", Value: "*/*"}}}
	var inline [16]fields.Field
	resp := &Response{Header: inline[:0]}
	buf := make([]byte, 512)
	ctx := context.Background()
	run := func() {
		if err := c.RoundTrip(ctx, req, resp); err != nil {
			t.Fatal(err)
		}
		for {
			_, err := resp.Body.Read(buf)
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	run()
	if n := testing.AllocsPerRun(200, run); n > 1 {
		t.Fatalf("%.1f allocations per keep-alive GET, want <= 1", n)
	}
	if c.Requests() < 200 {
		t.Fatal("connection was not reused", c.Requests())
	}
}

func BenchmarkRoundTrip(b *testing.B) {
	s := cannedServer(b, smallResp)
	c := s.dial(b, nil)
	req := &Request{Method: "GET", Target: "/", Header: fields.Header{{Name: "Host", Value: "example.com"}}}
	var inline [16]fields.Field
	resp := &Response{Header: inline[:0]}
	buf := make([]byte, 512)
	b.ReportAllocs()
	for b.Loop() {
		if err := c.RoundTrip(context.Background(), req, resp); err != nil {
			b.Fatal(err)
		}
		for {
			if _, err := resp.Body.Read(buf); err != nil {
				break
			}
		}
	}
}

func BenchmarkChunkedDownload(b *testing.B) {
	const size = 8 << 20
	var body bytes.Buffer
	chunk := bytes.Repeat([]byte("x"), 32<<10)
	for body.Len() < size {
		body.WriteString(strconv.FormatInt(int64(len(chunk)), 16) + "\r\n")
		body.Write(chunk)
		body.WriteString("\r\n")
	}
	body.WriteString("0\r\n\r\n")
	resp := append([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"), body.Bytes()...)
	s := cannedServer(b, resp)
	c := s.dial(b, nil)
	req := &Request{Method: "GET", Target: "/"}
	var r Response
	buf := make([]byte, 64<<10)
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		if err := c.RoundTrip(context.Background(), req, &r); err != nil {
			b.Fatal(err)
		}
		n, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{&r.Body}, buf)
		if err != nil || n != size {
			b.Fatal(n, err)
		}
	}
}

// sinkServer reads request bodies of the given length and answers each.
func sinkServer(tb testing.TB, size int64) *server {
	resp := []byte("HTTP/1.1 204 No Content\r\n\r\n")
	return newServer(tb, func(c net.Conn) {
		buf := make([]byte, 256<<10)
		for {
			// Head: up to the blank line; body: size bytes (plain length).
			var head []byte
			for !bytes.Contains(head, []byte("\r\n\r\n")) {
				n, err := c.Read(buf[:1])
				if err != nil {
					return
				}
				head = append(head, buf[:n]...)
			}
			if _, err := io.CopyBuffer(io.Discard, io.LimitReader(c, size), buf); err != nil {
				return
			}
			if _, err := c.Write(resp); err != nil {
				return
			}
		}
	})
}

func benchUpload(b *testing.B, size int64) {
	s := sinkServer(b, size)
	c := s.dial(b, nil)
	var r Response
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		req := &Request{Method: "POST", Target: "/", Body: io.LimitReader(zeros{}, size), ContentLength: size}
		if err := c.RoundTrip(context.Background(), req, &r); err != nil {
			b.Fatal(err)
		}
		r.Body.Close()
	}
}

func BenchmarkUpload32MiB(b *testing.B) { benchUpload(b, 32<<20) }
func BenchmarkUpload64MiB(b *testing.B) { benchUpload(b, 64<<20) }

// TestUploadLinear holds the no-O(n^2) promise: a 64 MiB upload takes at
// most 2.2 times a 32 MiB one (best of seven each).
func TestUploadLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("timing test")
	}
	type peer struct {
		c    *Conn
		size int64
		best time.Duration
	}
	peers := []*peer{{size: 32 << 20}, {size: 64 << 20}}
	for _, p := range peers {
		p.c = sinkServer(t, p.size).dial(t, nil)
		p.best = time.Duration(1 << 62)
	}
	// Interleaved best-of-seven, so load from other processes hits both.
	for range 7 {
		for _, p := range peers {
			var r Response
			start := time.Now()
			req := &Request{Method: "POST", Target: "/", Body: io.LimitReader(zeros{}, p.size), ContentLength: p.size}
			if err := p.c.RoundTrip(context.Background(), req, &r); err != nil {
				t.Fatal(err)
			}
			r.Body.Close()
			p.best = min(p.best, time.Since(start))
		}
	}
	d32, d64 := peers[0].best, peers[1].best
	if float64(d64) > 2.2*float64(d32) {
		t.Fatalf("64 MiB upload took %v, 32 MiB %v: ratio %.2f > 2.2", d64, d32, float64(d64)/float64(d32))
	}
	t.Logf("32 MiB %v, 64 MiB %v, ratio %.2f", d32, d64, float64(d64)/float64(d32))
}

func TestUploadFile(t *testing.T) {
	data := bytes.Repeat([]byte("file-data-"), 100000) // 1 MB
	path := t.TempDir() + "/f"
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, known := range []bool{true, false} {
		got := make(chan []byte, 1)
		s := newServer(t, func(c net.Conn) {
			br := bufio.NewReader(c)
			raw, _ := readRequest(br)
			got <- raw
			io.WriteString(c, "HTTP/1.1 204 No Content\r\n\r\n")
			io.Copy(io.Discard, br)
		})
		c := s.dial(t, nil)
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		req := &Request{Method: "PUT", Target: "/f", Body: f, ContentLength: -1}
		if known {
			req.ContentLength = int64(len(data))
		}
		var r Response
		err = c.RoundTrip(testCtx(t), req, &r)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		raw := <-got
		_, body, _ := bytes.Cut(raw, []byte("\r\n\r\n"))
		if known && !bytes.Equal(body, data) {
			t.Fatalf("known length: got %d bytes", len(body))
		}
		if !known && !bytes.HasSuffix(body, []byte("0\r\n\r\n")) {
			t.Fatalf("chunked: got %d bytes", len(body))
		}
	}
}
