package harness

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
)

// rawClient is a hand-written HTTP/1.1 client, the practical limit of a
// client in Go: each connection writes Config.Header (the same head the
// others send) with one write, parses the status line and Content-Length
// (or Transfer-Encoding: chunked) and nothing else, and reuses one read
// buffer. A chunked body is read chunk by chunk through that buffer
// (chunk extensions and trailers are skipped), so that it shows the floor
// of a streamed download; close-delimited bodies are refused. Up to
// Config.Conns connections, kept; one in doubt is closed.
type rawClient struct {
	cfg  Config
	idle chan *rawConn // a slot per connection; nil: not dialed yet
}

type rawConn struct {
	c   net.Conn
	r   *bufio.Reader
	buf []byte
}

func newRaw(cfg Config) *rawClient {
	c := &rawClient{cfg: cfg, idle: make(chan *rawConn, cfg.Conns)}
	for range cfg.Conns {
		c.idle <- nil
	}
	return c
}

func (c *rawClient) take(ctx context.Context, u *url.URL) (*rawConn, error) {
	var rc *rawConn
	select {
	case rc = <-c.idle:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if rc != nil {
		return rc, nil
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", u.Host)
	if err != nil {
		c.idle <- nil
		return nil, err
	}
	if u.Scheme == "https" {
		tc := tls.Client(conn, &tls.Config{RootCAs: c.cfg.RootCAs, ServerName: u.Hostname(), NextProtos: []string{"http/1.1"}})
		if err := tc.HandshakeContext(ctx); err != nil {
			conn.Close()
			c.idle <- nil
			return nil, err
		}
		conn = tc
	}
	return &rawConn{c: conn, r: bufio.NewReaderSize(conn, 64<<10)}, nil
}

// put returns rc to the pool, or closes it and frees its slot when err is
// not nil.
func (c *rawClient) put(rc *rawConn, err error) {
	if err != nil {
		rc.c.Close()
		c.idle <- nil
		return
	}
	c.idle <- rc
}

func (c *rawClient) do(ctx context.Context, method, rawURL string, body []byte, keep []byte) (int64, []byte, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return 0, nil, err
	}
	rc, err := c.take(ctx, u)
	if err != nil {
		return 0, nil, err
	}
	n, out, err := rc.exchange(method, u, c.cfg.Header, body, keep)
	c.put(rc, err)
	return n, out, err
}

var errRawFraming = errors.New("harness: raw: response without Content-Length")

func (rc *rawConn) exchange(method string, u *url.URL, hdr []Field, body, keep []byte) (int64, []byte, error) {
	b := rc.buf[:0]
	b = append(b, method...)
	b = append(b, ' ')
	b = append(b, u.RequestURI()...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, u.Host...)
	b = append(b, "\r\n"...)
	for _, f := range hdr {
		b = append(b, f.Name...)
		b = append(b, ": "...)
		b = append(b, f.Value...)
		b = append(b, "\r\n"...)
	}
	if body != nil {
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, int64(len(body)), 10)
		b = append(b, "\r\n"...)
	}
	b = append(b, "\r\n"...)
	rc.buf = b
	if body != nil {
		bufs := net.Buffers{b, body}
		if _, err := bufs.WriteTo(rc.c); err != nil {
			return 0, nil, err
		}
	} else if _, err := rc.c.Write(b); err != nil {
		return 0, nil, err
	}
	line, err := rc.r.ReadSlice('\n')
	if err != nil {
		return 0, nil, err
	}
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.1 ")) {
		return 0, nil, fmt.Errorf("harness: raw: status line %q", line)
	}
	code := line[9:12]
	ok := string(code) == "200"
	length := int64(-1)
	chunked := false
	for {
		line, err = rc.r.ReadSlice('\n')
		if err != nil {
			return 0, nil, err
		}
		if len(line) <= 2 {
			break
		}
		name, value, found := bytes.Cut(line, []byte(":"))
		if !found {
			return 0, nil, fmt.Errorf("harness: raw: field line %q", line)
		}
		if len(name) == len("transfer-encoding") && bytes.EqualFold(name, []byte("transfer-encoding")) {
			chunked = bytes.EqualFold(bytes.TrimSpace(value), []byte("chunked"))
			if !chunked {
				return 0, nil, fmt.Errorf("harness: raw: Transfer-Encoding %q", value)
			}
		}
		if len(name) == len("content-length") && bytes.EqualFold(name, []byte("content-length")) {
			if length, err = strconv.ParseInt(string(bytes.TrimSpace(value)), 10, 64); err != nil {
				return 0, nil, fmt.Errorf("harness: raw: Content-Length %q", value)
			}
		}
	}
	if chunked {
		if keep != nil {
			return 0, nil, fmt.Errorf("harness: raw: a chunked body to keep")
		}
		if length, err = rc.discardChunked(); err != nil {
			return 0, nil, err
		}
	} else if length < 0 {
		return 0, nil, errRawFraming
	}
	var out []byte
	switch {
	case chunked: // read above
	case keep != nil:
		out = append(keep[:0], make([]byte, length)...)
		if _, err := io.ReadFull(rc.r, out); err != nil {
			return 0, nil, err
		}
	default:
		if _, err := rc.r.Discard(int(length)); err != nil {
			return 0, nil, err
		}
	}
	if !ok {
		return length, out, &statusError{"raw", int(code[0]-'0')*100 + int(code[1]-'0')*10 + int(code[2]-'0')}
	}
	return length, out, nil
}

var errRawChunk = errors.New("harness: raw: bad chunk framing")

// discardChunked reads a chunked body to its end and returns its length.
func (rc *rawConn) discardChunked() (int64, error) {
	var total int64
	for {
		line, err := rc.r.ReadSlice('\n')
		if err != nil {
			return 0, err
		}
		size := int64(0)
		digits := 0
		for _, c := range line {
			var d byte
			switch {
			case '0' <= c && c <= '9':
				d = c - '0'
			case 'a' <= c && c <= 'f':
				d = c - 'a' + 10
			case 'A' <= c && c <= 'F':
				d = c - 'A' + 10
			default:
				d = 0xff
			}
			if d == 0xff {
				break
			}
			if digits++; digits > 15 {
				return 0, errRawChunk
			}
			size = size<<4 | int64(d)
		}
		if digits == 0 {
			return 0, errRawChunk
		}
		if size == 0 {
			break
		}
		if _, err := rc.r.Discard(int(size)); err != nil {
			return 0, err
		}
		total += size
		if crlf, err := rc.r.ReadSlice('\n'); err != nil {
			return 0, err
		} else if len(crlf) != 2 || crlf[0] != '\r' {
			return 0, errRawChunk
		}
	}
	for { // trailers, up to the empty line
		line, err := rc.r.ReadSlice('\n')
		if err != nil {
			return 0, err
		}
		if len(line) <= 2 {
			return total, nil
		}
	}
}

func (c *rawClient) Get(ctx context.Context, url string, mode Mode) (int64, error) {
	if mode != ReadAll && mode != Stream {
		return 0, fmt.Errorf("harness: raw: mode %v not supported", mode)
	}
	n, _, err := c.do(ctx, "GET", url, nil, nil)
	return n, err
}

func (c *rawClient) Post(ctx context.Context, url string, body []byte) ([]byte, error) {
	_, out, err := c.do(ctx, "POST", url, body, make([]byte, 0, 32))
	return out, err
}

func (c *rawClient) Close() error {
	for range cap(c.idle) {
		if rc := <-c.idle; rc != nil {
			rc.c.Close()
		}
	}
	return nil
}
