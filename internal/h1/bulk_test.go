package h1

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
)

// chunkedOf frames body as chunks of size bytes (the last may be shorter).
func chunkedOf(body []byte, size int) []byte {
	var b []byte
	for len(body) > 0 {
		k := min(size, len(body))
		b = strconv.AppendInt(b, int64(k), 16)
		b = append(b, "\r\n"...)
		b = append(b, body[:k]...)
		b = append(b, "\r\n"...)
		body = body[k:]
	}
	return append(b, "0\r\n\r\n"...)
}

// pattern returns n bytes that differ from one offset to the next, so a
// misplaced or repeated piece shows.
func pattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*7 + i>>8)
	}
	return b
}

// readCounter counts the reads that reach a connection.
type readCounter struct {
	net.Conn
	reads int
}

func (r *readCounter) Read(p []byte) (int, error) {
	r.reads++
	return r.Conn.Read(p)
}

// TestWriteToReadsInBulk pins the read pattern of a large chunked body
// copied out with WriteTo: reads of the bulk buffer's size, not the read
// buffer's (16 KiB), and every byte in place.
func TestWriteToReadsInBulk(t *testing.T) {
	const size = 8 << 20
	body := pattern(size)
	resp := append([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"), chunkedOf(body, 32<<10)...)
	rc := &readCounter{Conn: &scriptConn{in: resp}}
	c := NewConn(rc, nil)
	reusable := false
	c.SetRelease(func(_ *Conn, r bool) { reusable = r })
	var r Response
	if err := c.RoundTrip(context.Background(), &Request{Method: "GET", Target: "/"}, &r); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	n, err := r.Body.WriteTo(&got)
	if err != nil || n != size || !bytes.Equal(got.Bytes(), body) {
		t.Fatalf("WriteTo: %d, %v; body equal: %v", n, err, bytes.Equal(got.Bytes(), body))
	}
	if !reusable {
		t.Fatal("connection not reusable after a clean chunked body")
	}
	// 8 MiB plus framing in reads of 128 KiB is 65 reads; 16 KiB reads
	// (the read buffer's size) would be 514.
	if max := len(resp)/bulkRead + 3; rc.reads > max {
		t.Fatalf("%d reads for %d bytes, want <= %d", rc.reads, len(resp), max)
	}
	if len(c.rbuf) != c.lim.readBufferSize || c.r != 0 || c.w != 0 {
		t.Fatalf("read buffer not given back: len %d, r %d, w %d", len(c.rbuf), c.r, c.w)
	}
	t.Logf("%d reads for %d bytes", rc.reads, len(resp))
}

// bodyOutcome is runScript's outcome with the body read by read, plus the
// bytes left unread after it.
func bodyOutcome(response []byte, chunk int, cfg *Config, read func(dst *bytes.Buffer, b *Body) error) (outcome, []byte) {
	sc := &scriptConn{in: response, chunk: chunk}
	c := NewConn(sc, cfg)
	var o outcome
	c.SetRelease(func(_ *Conn, reusable bool) { o.released++; o.reusable = reusable })
	var resp Response
	o.err = c.RoundTrip(context.Background(), &Request{Method: "GET", Target: "/", Header: hdr("Host", "x")}, &resp)
	if o.err != nil {
		return o, nil
	}
	o.status, o.proto, o.reason, o.cl = resp.StatusCode, resp.Proto, resp.Reason, resp.ContentLength
	var sb strings.Builder
	for _, f := range resp.Header {
		sb.WriteString(f.Name + ": " + f.Value + "\n")
	}
	o.header = sb.String()
	var body bytes.Buffer
	o.bodyErr = read(&body, &resp.Body)
	left := append(append([]byte(nil), c.rbuf[c.r:c.w]...), sc.in...)
	resp.Body.Close()
	o.body = body.String()
	sb.Reset()
	for _, f := range resp.Trailer {
		sb.WriteString(f.Name + ": " + f.Value + "\n")
	}
	o.trailer = sb.String()
	return o, left
}

// writeToOutcome reads the body with WriteTo.
func writeToOutcome(response []byte, chunk int, cfg *Config) (outcome, []byte) {
	return bodyOutcome(response, chunk, cfg, func(dst *bytes.Buffer, b *Body) error {
		_, err := b.WriteTo(dst)
		return err
	})
}

// readOutcome reads the body with Read and a large buffer.
func readOutcome(response []byte, chunk int, cfg *Config) (outcome, []byte) {
	return bodyOutcome(response, chunk, cfg, func(dst *bytes.Buffer, b *Body) error {
		_, err := io.CopyBuffer(struct{ io.Writer }{dst}, struct{ io.Reader }{b}, make([]byte, 64<<10))
		return err
	})
}

var bulkSeeds = []string{
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + string(chunkedOf(pattern(100000), 32<<10)),
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + string(chunkedOf(pattern(70000), 3000)) + "extra bytes",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + string(chunkedOf(pattern(70000), 70000)) + strings.Repeat("z", 20000),
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + strings.TrimSuffix(string(chunkedOf(pattern(70000), 9000)), "\r\n") + "T: v\r\n\r\n",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + string(chunkedOf(pattern(70000), 9000))[:50000],
	"HTTP/1.1 200 OK\r\nContent-Length: 90000\r\n\r\n" + string(pattern(90000)),
	"HTTP/1.1 200 OK\r\nContent-Length: 90000\r\n\r\n" + string(pattern(90010)),
	"HTTP/1.1 200 OK\r\nContent-Length: 90000\r\n\r\n" + string(pattern(80000)),
	"HTTP/1.1 200 OK\r\n\r\n" + string(pattern(90000)),
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n8000\r\n" + string(pattern(0x8000)) + "XX8000\r\n",
}

// TestWriteToMatchesRead: WriteTo (bulk reads) and Read observe the same
// response: body, error, trailer, release, and the bytes left unread.
func TestWriteToMatchesRead(t *testing.T) {
	for i, s := range bulkSeeds {
		for _, chunk := range []int{0, 1000, 17000, 40000} {
			a, al := readOutcome([]byte(s), chunk, nil)
			b, bl := writeToOutcome([]byte(s), chunk, nil)
			if len(al) > 0 {
				// Whether stray bytes after the body were read (and the
				// connection called unusable) depends on read sizes.
				b.reusable = a.reusable
			}
			if !a.same(b) || !bytes.Equal(al, bl) {
				t.Fatalf("seed %d, chunk %d:\nRead    %+v left %d\nWriteTo %+v left %d", i, chunk, a, len(al), b, len(bl))
			}
		}
	}
}

// FuzzWriteTo: for any response and split, WriteTo and Read agree (see
// TestWriteToMatchesRead).
func FuzzWriteTo(f *testing.F) {
	// Small inputs: the 512-byte read buffer makes them large bodies.
	for _, s := range []string{
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + string(chunkedOf(pattern(3000), 700)),
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + string(chunkedOf(pattern(3000), 3000)) + "extra",
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + strings.TrimSuffix(string(chunkedOf(pattern(2000), 900)), "\r\n") + "T: v\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 2000\r\n\r\n" + string(pattern(2010)),
		"HTTP/1.1 200 OK\r\n\r\n" + string(pattern(2000)),
	} {
		f.Add([]byte(s), uint16(0))
		f.Add([]byte(s), uint16(300))
	}
	f.Add([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"), uint16(1))
	cfg := &Config{ReadBufferSize: 512, InlineLimit: 16, MaxChunkExtBytes: 256, MaxTrailerBytes: 256}
	f.Fuzz(func(t *testing.T, data []byte, chunk uint16) {
		a, al := readOutcome(data, int(chunk), cfg)
		b, bl := writeToOutcome(data, int(chunk), cfg)
		if len(al) > 0 {
			b.reusable = a.reusable
		}
		if !a.same(b) || !bytes.Equal(al, bl) {
			t.Fatalf("chunk %d:\nRead    %+v\nWriteTo %+v\nleft %q\nleft %q", chunk, a, b, al, bl)
		}
	})
}

// errWriter fails once it has taken n bytes.
type errWriter struct{ n int }

var errSink = errors.New("sink full")

func (w *errWriter) Write(p []byte) (int, error) {
	if len(p) > w.n {
		k := w.n
		w.n = 0
		return k, errSink
	}
	w.n -= len(p)
	return len(p), nil
}

// TestBulkConnReuse runs, on one connection: a large chunked download by
// WriteTo, a streamed upload, a download whose writer fails half way (Close
// then drains it), and a small GET, checking every byte both ways and that
// the connection has its own read buffer back.
func TestBulkConnReuse(t *testing.T) {
	down := pattern(300 << 10)
	up := pattern(200 << 10)
	small := pattern(40 << 10) // drained on Close (under 256 KiB)
	got := make(chan []byte, 4)
	s := newServer(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		answers := []string{
			"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + string(chunkedOf(down, 32<<10)),
			"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
			"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + string(chunkedOf(small, 10000)),
			"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
		}
		for _, a := range answers {
			raw, err := readRequest(br)
			if err != nil {
				return
			}
			got <- raw
			if _, err := io.WriteString(c, a); err != nil {
				return
			}
		}
	})
	c := s.dial(t, nil)
	var reusable []bool
	c.SetRelease(func(_ *Conn, r bool) { reusable = append(reusable, r) })
	ctx := testCtx(t)
	var r Response

	if err := c.RoundTrip(ctx, &Request{Method: "GET", Target: "/down"}, &r); err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if _, err := r.Body.WriteTo(&b); err != nil || !bytes.Equal(b.Bytes(), down) {
		t.Fatalf("download: %v, %d bytes", err, b.Len())
	}
	<-got

	// A reader without WriteTo goes through the connection's stream buffer.
	req := &Request{Method: "POST", Target: "/up", Body: struct{ io.Reader }{bytes.NewReader(up)}, ContentLength: int64(len(up))}
	if err := c.RoundTrip(ctx, req, &r); err != nil {
		t.Fatal(err)
	}
	if body, err := io.ReadAll(&r.Body); err != nil || string(body) != "ok" {
		t.Fatalf("upload answer %q, %v", body, err)
	}
	raw := <-got
	if _, body, _ := bytes.Cut(raw, []byte("\r\n\r\n")); !bytes.Equal(body, up) {
		t.Fatalf("server got %d upload bytes, want %d equal ones", len(body), len(up))
	}

	if err := c.RoundTrip(ctx, &Request{Method: "GET", Target: "/half"}, &r); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Body.WriteTo(&errWriter{n: 15000}); !errors.Is(err, errSink) {
		t.Fatalf("WriteTo into a failing writer: %v", err)
	}
	r.Body.Close()
	<-got

	if err := c.RoundTrip(ctx, &Request{Method: "GET", Target: "/small"}, &r); err != nil {
		t.Fatal(err)
	}
	if body, err := io.ReadAll(&r.Body); err != nil || string(body) != "hello" {
		t.Fatalf("last answer %q, %v", body, err)
	}
	<-got
	if c.Requests() != 4 || len(reusable) != 4 || !reusable[0] || !reusable[1] || !reusable[2] || !reusable[3] {
		t.Fatalf("requests %d, releases %v", c.Requests(), reusable)
	}
	if len(c.rbuf) != c.lim.readBufferSize {
		t.Fatalf("read buffer of %d bytes after the bodies, want %d", len(c.rbuf), c.lim.readBufferSize)
	}
}

// TestWriteToAllocs: a chunked body copied out with WriteTo on a reused
// connection allocates nothing beyond the round trip's own allocation (the
// bulk buffer comes from a pool).
func TestWriteToAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("alloc budget measured in full runs")
	}
	resp := append([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"), chunkedOf(pattern(256<<10), 32<<10)...)
	s := cannedServer(t, resp)
	c := s.dial(t, nil)
	c.SetRelease(func(*Conn, bool) {})
	req := &Request{Method: "GET", Target: "/", Header: hdr("Host", "x")}
	var r Response
	ctx := context.Background()
	run := func() {
		if err := c.RoundTrip(ctx, req, &r); err != nil {
			t.Fatal(err)
		}
		if n, err := r.Body.WriteTo(io.Discard); err != nil || n != 256<<10 {
			t.Fatal(n, err)
		}
	}
	run()
	if n := testing.AllocsPerRun(50, run); n > 1 {
		t.Fatalf("%.1f allocations per chunked GET copied with WriteTo, want <= 1", n)
	}
}

// TestBulkConcurrent: connections streaming at the same time, round after
// round, each get every byte of their own body (bulk buffers go back to the
// pool and come out again; -race watches for sharing).
func TestBulkConcurrent(t *testing.T) {
	const conns, rounds = 4, 5
	bodies := make([][]byte, conns)
	for i := range bodies {
		bodies[i] = pattern(300<<10 + i*1000)
		for j := range bodies[i] {
			bodies[i][j] ^= byte(i)
		}
	}
	errc := make(chan error, conns)
	for i := range conns {
		resp := append([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"), chunkedOf(bodies[i], 20000+i)...)
		c := cannedServer(t, resp).dial(t, nil)
		go func() {
			for range rounds {
				var r Response
				if err := c.RoundTrip(testCtx(t), &Request{Method: "GET", Target: "/"}, &r); err != nil {
					errc <- err
					return
				}
				var got bytes.Buffer
				if _, err := r.Body.WriteTo(&got); err != nil || !bytes.Equal(got.Bytes(), bodies[i]) {
					errc <- errors.New("connection " + strconv.Itoa(i) + ": body differs")
					return
				}
			}
			errc <- nil
		}()
	}
	for range conns {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
}
