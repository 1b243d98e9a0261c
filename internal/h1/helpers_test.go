package h1

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/guise-http/guise/internal/testpeer"
)

// scriptConn is an in-memory net.Conn: reads return the script in pieces of
// at most chunk bytes, then io.EOF; writes are recorded.
type scriptConn struct {
	in     []byte
	chunk  int
	eof    error // returned at the end instead of io.EOF, if set
	out    bytes.Buffer
	closed bool
}

func (s *scriptConn) Read(p []byte) (int, error) {
	if s.closed {
		return 0, net.ErrClosed
	}
	if len(s.in) == 0 {
		if s.eof != nil {
			return 0, s.eof
		}
		return 0, io.EOF
	}
	n := len(p)
	if s.chunk > 0 && n > s.chunk {
		n = s.chunk
	}
	n = copy(p[:n], s.in)
	s.in = s.in[n:]
	return n, nil
}
func (s *scriptConn) Write(p []byte) (int, error) {
	if s.closed {
		return 0, net.ErrClosed
	}
	return s.out.Write(p)
}
func (s *scriptConn) Close() error                     { s.closed = true; return nil }
func (s *scriptConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (s *scriptConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (s *scriptConn) SetDeadline(time.Time) error      { return nil }
func (s *scriptConn) SetReadDeadline(time.Time) error  { return nil }
func (s *scriptConn) SetWriteDeadline(time.Time) error { return nil }

// outcome is everything observable about one exchange, for comparisons.
type outcome struct {
	err      error
	status   int
	proto    string
	reason   string
	header   string
	cl       int64
	body     string
	bodyErr  error
	trailer  string
	released int // number of release calls
	reusable bool
}

func (o outcome) same(p outcome) bool {
	return errString(o.err) == errString(p.err) && o.status == p.status && o.proto == p.proto &&
		o.reason == p.reason && o.header == p.header && o.cl == p.cl && o.body == p.body &&
		errString(o.bodyErr) == errString(p.bodyErr) && o.trailer == p.trailer &&
		o.released == p.released && o.reusable == p.reusable
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// runScript performs one GET (or req) over a scriptConn holding response,
// read in pieces of chunk bytes, and reads the body with reads of rsize.
func runScript(response []byte, chunk, rsize int, cfg *Config, req *Request) outcome {
	sc := &scriptConn{in: response, chunk: chunk}
	c := NewConn(sc, cfg)
	var o outcome
	c.SetRelease(func(_ *Conn, reusable bool) { o.released++; o.reusable = reusable })
	if req == nil {
		req = &Request{Method: "GET", Target: "/", Header: hdr("Host", "x")}
	}
	var resp Response
	o.err = c.RoundTrip(context.Background(), req, &resp)
	if o.err != nil {
		return o
	}
	o.status, o.proto, o.reason, o.cl = resp.StatusCode, resp.Proto, resp.Reason, resp.ContentLength
	var sb strings.Builder
	for _, f := range resp.Header {
		sb.WriteString(f.Name + ": " + f.Value + "\n")
	}
	o.header = sb.String()
	var body bytes.Buffer
	buf := make([]byte, rsize)
	for range 1 << 22 {
		n, err := resp.Body.Read(buf)
		body.Write(buf[:n])
		if err != nil {
			if err != io.EOF {
				o.bodyErr = err
			}
			break
		}
	}
	resp.Body.Close()
	o.body = body.String()
	sb.Reset()
	for _, f := range resp.Trailer {
		sb.WriteString(f.Name + ": " + f.Value + "\n")
	}
	o.trailer = sb.String()
	return o
}

// server is a scripted HTTP/1.1 peer on 127.0.0.1.
type server struct{ *testpeer.Server }

// newServer calls handle for every accepted connection on its own
// goroutine; the test's cleanup closes everything and waits.
func newServer(t testing.TB, handle func(c net.Conn)) *server {
	t.Helper()
	s := testpeer.Listen(t, testpeer.Handle(handle))
	t.Cleanup(s.CloseConns)
	return &server{s}
}

func (s *server) dial(t testing.TB, cfg *Config) *Conn {
	t.Helper()
	nc, err := net.Dial("tcp", s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	c := NewConn(nc, cfg)
	t.Cleanup(func() { c.Close() })
	return c
}

// readRequest reads one request head (and a Content-Length or chunked body)
// from br and returns the raw bytes.
func readRequest(br *bufio.Reader) ([]byte, error) {
	var raw []byte
	cl := int64(0)
	chunked := false
	for {
		line, err := br.ReadSlice('\n')
		raw = append(raw, line...)
		if err != nil {
			return raw, err
		}
		l := strings.ToLower(strings.TrimSpace(string(line)))
		if v, ok := strings.CutPrefix(l, "content-length:"); ok {
			for _, c := range strings.TrimSpace(v) {
				cl = cl*10 + int64(c-'0')
			}
		}
		if l == "transfer-encoding: chunked" {
			chunked = true
		}
		if l == "" {
			break
		}
	}
	if chunked {
		for {
			line, err := br.ReadSlice('\n')
			raw = append(raw, line...)
			if err != nil {
				return raw, err
			}
			var n int64
			for _, c := range strings.TrimSpace(string(line)) {
				v, _ := hexVal(byte(c))
				n = n*16 + int64(v)
			}
			if n == 0 {
				line, err := br.ReadSlice('\n')
				raw = append(raw, line...)
				return raw, err
			}
			b := make([]byte, n+2)
			if _, err := io.ReadFull(br, b); err != nil {
				return raw, err
			}
			raw = append(raw, b...)
		}
	}
	if cl > 0 {
		b := make([]byte, cl)
		n, err := io.ReadFull(br, b)
		raw = append(raw, b[:n]...)
		if err != nil {
			return raw, err
		}
	}
	return raw, nil
}

// respond returns a handler that reads each request and answers with the
// next of responses (raw bytes); after the last it shuts down its write side
// (ending a close-delimited body) and reads until the client closes.
func respond(responses ...string) func(net.Conn) {
	return func(c net.Conn) {
		br := bufio.NewReader(c)
		for _, r := range responses {
			if _, err := readRequest(br); err != nil {
				return
			}
			if _, err := io.WriteString(c, r); err != nil {
				return
			}
		}
		c.(*net.TCPConn).CloseWrite()
		io.Copy(io.Discard, br)
	}
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func isTimeout(err error) bool { return err != nil && os.IsTimeout(err) }
