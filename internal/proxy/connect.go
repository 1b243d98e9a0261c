package proxy

import (
	"bytes"
	"fmt"
	"io"
	"net"

	"github.com/guise-http/guise/fields"
)

// connect sends CONNECT for addr over nc and reads the reply. On a 2xx reply it
// returns the tunnel: nc itself, or nc wrapped to replay the bytes that
// arrived after the reply head. It does not close nc.
func connect(nc net.Conn, addr string, tail []byte, maxHead int) (net.Conn, error) {
	// One buffer serves the request and then the reply: Write is done with it
	// when it returns.
	n := 2*len(addr) + len(tail) + len("CONNECT  HTTP/1.1\r\nHost: \r\n")
	req := make([]byte, 0, max(n, min(maxHead, initialReplyBuf)))
	req = append(req, "CONNECT "...)
	req = append(req, addr...)
	req = append(req, " HTTP/1.1\r\nHost: "...)
	req = append(req, addr...)
	req = append(req, "\r\n"...)
	req = append(req, tail...)
	if _, err := nc.Write(req); err != nil {
		return nil, err
	}
	rest, err := readConnectReply(nc, req[:0], maxHead)
	if err != nil {
		return nil, err
	}
	if len(rest) == 0 {
		return nc, nil
	}
	return &tunnelConn{Conn: nc, pending: rest}, nil
}

// initialReplyBuf is the first size of the reply buffer; it grows (doubling)
// up to the head cap. Proxies' 200 replies are well under it.
const initialReplyBuf = 1024

// readConnectReply reads reply heads from r until a final (non-1xx) one. On a
// 2xx it returns the bytes read past that head; otherwise a *StatusError or a
// parse or read error. buf is scratch space it may reuse.
func readConnectReply(r io.Reader, buf []byte, maxHead int) ([]byte, error) {
	if cap(buf) == 0 {
		buf = make([]byte, 0, min(maxHead, initialReplyBuf))
	}
	buf = buf[:0:min(cap(buf), maxHead)]
	var p headParser
	for {
		if len(buf) == cap(buf) {
			if len(buf) >= maxHead {
				return nil, ErrHeaderTooLarge
			}
			nb := make([]byte, len(buf), min(2*cap(buf), maxHead))
			copy(nb, buf)
			buf = nb
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if n > 0 {
			done, perr := p.feed(buf)
			if perr != nil {
				return nil, perr
			}
			if done {
				if p.code/100 != 2 {
					return nil, p.statusError(buf)
				}
				return buf[p.end:], nil
			}
		}
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
}

// headParser parses HTTP/1.x reply heads incrementally from a growing buffer.
// 1xx heads (other than 101) are skipped.
type headParser struct {
	pos      int // start of the next unparsed line
	inHead   bool
	code     int
	statusAt int // offsets of the final head's "code reason"
	statusTo int
	fieldsAt int // offset of the final head's first field line
	end      int // offset just past the final head
}

// feed parses the complete lines of b from where it stopped. It reports done
// when a final head is complete.
func (p *headParser) feed(b []byte) (done bool, err error) {
	for {
		i := bytes.IndexByte(b[p.pos:], '\n')
		if i < 0 {
			return false, nil
		}
		lineAt, nl := p.pos, p.pos+i
		line := b[lineAt:nl]
		if len(line) > 0 && line[len(line)-1] == '\r' {
			line = line[:len(line)-1]
		}
		p.pos = nl + 1
		if !p.inHead {
			code, err := parseStatusLine(line)
			if err != nil {
				return false, err
			}
			p.inHead, p.code = true, code
			p.statusAt, p.statusTo, p.fieldsAt = lineAt+9, lineAt+len(line), p.pos
			continue
		}
		if len(line) == 0 {
			p.inHead = false
			if p.code >= 100 && p.code < 200 && p.code != 101 {
				continue
			}
			p.end = p.pos
			return true, nil
		}
		if err := checkFieldLine(line); err != nil {
			return false, err
		}
	}
}

// parseStatusLine checks "HTTP/1.x SP 3DIGIT [SP reason]" and returns the
// code.
func parseStatusLine(line []byte) (code int, err error) {
	if len(line) < 12 || string(line[:7]) != "HTTP/1." || line[7] < '0' || line[7] > '9' || line[8] != ' ' ||
		(len(line) > 12 && line[12] != ' ') {
		return 0, fmt.Errorf("%w: CONNECT status line %q", ErrMalformedReply, line)
	}
	for _, c := range line[9:12] {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("%w: CONNECT status line %q", ErrMalformedReply, line)
		}
		code = code*10 + int(c-'0')
	}
	if code < 100 {
		return 0, fmt.Errorf("%w: CONNECT status line %q", ErrMalformedReply, line)
	}
	return code, nil
}

// checkFieldLine checks "name: value" with a token name and a value without
// NUL or bare CR.
func checkFieldLine(line []byte) error {
	colon := bytes.IndexByte(line, ':')
	if colon <= 0 {
		return fmt.Errorf("%w: CONNECT header line %q", ErrMalformedReply, line)
	}
	for _, c := range line[:colon] {
		if !fields.IsTokenByte(c) {
			return fmt.Errorf("%w: CONNECT header line %q", ErrMalformedReply, line)
		}
	}
	for _, c := range line[colon+1:] {
		if c == 0 || c == '\r' || c == '\n' {
			return fmt.Errorf("%w: CONNECT header line %q", ErrMalformedReply, line)
		}
	}
	return nil
}

// statusError builds the *StatusError for the final head in b.
func (p *headParser) statusError(b []byte) *StatusError {
	e := &StatusError{StatusCode: p.code, Status: string(bytes.TrimRight(b[p.statusAt:p.statusTo], " "))}
	for _, line := range bytes.Split(b[p.fieldsAt:p.end], []byte{'\n'}) {
		line = bytes.TrimSuffix(line, []byte{'\r'})
		name, value, ok := bytes.Cut(line, []byte{':'})
		if !ok {
			continue
		}
		e.Header = append(e.Header, fields.Field{Name: string(name), Value: string(bytes.Trim(value, " \t"))})
	}
	return e
}

// tunnelConn is a tunnel whose first bytes arrived with the CONNECT reply.
// Read returns them before reading from the connection.
type tunnelConn struct {
	net.Conn
	pending []byte
}

func (c *tunnelConn) Read(b []byte) (int, error) {
	if len(c.pending) > 0 {
		n := copy(b, c.pending)
		c.pending = c.pending[n:]
		if len(c.pending) == 0 {
			c.pending = nil
		}
		return n, nil
	}
	return c.Conn.Read(b)
}

// NetConn returns the connection to the proxy under the tunnel.
func (c *tunnelConn) NetConn() net.Conn { return c.Conn }
