package h1

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"sync"
	"testing"
	"unsafe"

	"github.com/guise-http/guise/fields"
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

// countConn is a sink net.Conn: it counts writes and, once want bytes
// arrived, answers reads with resp.
type countConn struct {
	scriptConn
	want, got, writes int64
	full              chan struct{} // closed once want bytes arrived
	once              sync.Once
}

func (c *countConn) Write(p []byte) (int, error) {
	c.writes++
	c.got += int64(len(p))
	if c.got >= c.want {
		c.once.Do(func() { close(c.full) })
	}
	return len(p), nil
}

func (c *countConn) Read(p []byte) (int, error) {
	<-c.full
	return c.scriptConn.Read(p)
}

// TestUploadLinear holds the no-O(n^2) promise deterministically: for 32
// and 64 MiB uploads (known length and chunked) the bytes handed to the
// connection are the body plus framing and the write count doubles at
// most. BenchmarkUpload32MiB/64MiB measure the time.
func TestUploadLinear(t *testing.T) {
	type result struct{ bytes, writes int64 }
	run := func(size int64, chunked bool) result {
		cc := &countConn{scriptConn: scriptConn{in: []byte("HTTP/1.1 204 No Content\r\n\r\n")}, want: size, full: make(chan struct{})}
		c := NewConn(cc, nil)
		req := &Request{Method: "POST", Target: "/", Body: io.LimitReader(zeros{}, size), ContentLength: size}
		if chunked {
			req.ContentLength = -1
		}
		var r Response
		if err := c.RoundTrip(context.Background(), req, &r); err != nil {
			t.Fatal(err)
		}
		return result{cc.got, cc.writes}
	}
	for _, chunked := range []bool{false, true} {
		a, b := run(32<<20, chunked), run(64<<20, chunked)
		if float64(b.writes) > 2.2*float64(a.writes) || float64(b.bytes) > 2.2*float64(a.bytes) {
			t.Fatalf("chunked=%v: 32 MiB %+v, 64 MiB %+v", chunked, a, b)
		}
		if !chunked && (a.bytes-32<<20 > 100 || b.bytes-64<<20 > 100) {
			t.Fatalf("wrote %d and %d bytes", a.bytes, b.bytes)
		}
		t.Logf("chunked=%v: 32 MiB %+v, 64 MiB %+v", chunked, a, b)
	}
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

// BenchmarkNetHTTPRoundTrip is the same keep-alive GET through net/http,
// for comparison.
func BenchmarkNetHTTPRoundTrip(b *testing.B) {
	s := cannedServer(b, smallResp)
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	req, _ := http.NewRequest("GET", "http://"+s.Addr+"/", nil)
	buf := make([]byte, 512)
	b.ReportAllocs()
	for b.Loop() {
		resp, err := tr.RoundTrip(req)
		if err != nil {
			b.Fatal(err)
		}
		for {
			if _, err := resp.Body.Read(buf); err != nil {
				break
			}
		}
		resp.Body.Close()
	}
}

// TestRoundTripNewAllocSize checks that RoundTripNew asks SetAlloc's
// function for a Response once, with the head's number of fields and the
// length of its copy (head and inline body), fills that Response, builds
// the copy in the room offered when it is enough, and that a Response or a
// room without the capacity still gets every field and the body.
func TestRoundTripNewAllocSize(t *testing.T) {
	s := cannedServer(t, smallResp)
	c := s.dial(t, nil)
	c.SetRelease(func(*Conn, bool) {})
	req := &Request{Method: "GET", Target: "/", Header: fields.Header{{Name: "Host", Value: "example.com"}}}
	ctx := context.Background()
	for _, room := range []struct{ fields, bytes int }{{4, len(smallResp)}, {4, len(smallResp) - 1}, {0, 0}} {
		var calls, asked, askedBytes int
		var made *Response
		buf := make([]byte, room.bytes)
		c.SetAlloc(func(n, nb int) (*Response, []byte) {
			calls++
			asked, askedBytes = n, nb
			made = &Response{Header: make(fields.Header, 0, room.fields)}
			return made, buf[:0]
		})
		resp, err := c.RoundTripNew(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if calls != 1 || asked != 4 || askedBytes != len(smallResp) {
			t.Fatalf("room %v: alloc called %d times for %d fields and %d bytes, want once for 4 and %d",
				room, calls, asked, askedBytes, len(smallResp))
		}
		if resp != made {
			t.Fatalf("room %v: RoundTripNew returned a Response other than alloc's", room)
		}
		if len(resp.Header) != 4 || resp.Header[3].Name != "Content-Length" || resp.StatusCode != 200 || resp.Reason != "OK" {
			t.Fatalf("room %v: got status %d %q, header %v", room, resp.StatusCode, resp.Reason, resp.Header)
		}
		if room.fields >= 4 && cap(resp.Header) != room.fields {
			t.Fatalf("room %v: the fields did not go into alloc's array", room)
		}
		inRoom := room.bytes > 0 && unsafe.StringData(resp.Header[0].Name) == &buf[len("HTTP/1.1 200 OK\r\n")]
		if want := room.bytes >= len(smallResp); inRoom != want {
			t.Fatalf("room %v: head copied into the room %v, want %v", room, inRoom, want)
		}
		b, err := io.ReadAll(&resp.Body)
		if err != nil || string(b) != "hello, world!" {
			t.Fatalf("room %v: body %q, %v", room, b, err)
		}
		if inRoom && string(buf) != string(smallResp) {
			t.Fatalf("room %v: room holds %q", room, buf)
		}
	}
	// A failed exchange makes no Response.
	c.SetAlloc(func(int, int) (*Response, []byte) { t.Fatal("alloc called for a failed exchange"); return nil, nil })
	c.Close()
	if _, err := c.RoundTripNew(ctx, req); err == nil {
		t.Fatal("RoundTripNew on a closed connection succeeded")
	}
}
