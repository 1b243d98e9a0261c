package h1

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"time"

	"github.com/guise-http/guise/fields"
)

// Request is what RoundTrip writes. The caller keeps ownership; RoundTrip
// does not modify it and keeps no reference after it returns (Body may be
// read until then, or, for an early response, not at all).
//
// Header is written exactly as given: every field, in order, names in the
// given case, Host included (the caller places it). RoundTrip adds only
// framing that is missing: with a body and no Content-Length or
// Transfer-Encoding field it appends "Content-Length: N" (known length) or
// "Transfer-Encoding: chunked" (ContentLength < 0) at the end. Method, Target
// and every field are validated before a single byte is written (method a
// token; target without control bytes, SP or DEL; names tokens; values per
// fields.ValidValue; Content-Length and Transfer-Encoding fields consistent
// with the body): violations return an error wrapping ErrRefusedToSend.
type Request struct {
	Method string
	// Upgrade says the request asks for a protocol upgrade (a WebSocket
	// handshake): a 101 Switching Protocols is then its final response,
	// with no body, after which the connection is the caller's (Detach).
	// Without it a 101 is a *ProtocolError.
	Upgrade bool
	// Target is the request-target as sent: "/path?q" (origin-form) or
	// "http://h/p" (absolute-form, for proxies).
	Target string
	Header fields.Header
	// HeaderBlock, if not empty, is more fields already in wire form
	// ("Name: value\r\n" lines), written right after Header's. The caller
	// vouches for them: they are not validated and must hold no
	// Content-Length, Transfer-Encoding or Expect field (a profile's
	// default fields, rendered once instead of per request).
	HeaderBlock []byte
	// Body is the request body; nil means none. With a known length over
	// 16 KiB, an *os.File goes through the connection's io.ReaderFrom
	// (sendfile on TCP), an io.WriterTo writes straight to the connection,
	// and other readers are copied through one per-connection buffer.
	// Unknown lengths are read into the write buffer and sent chunked.
	Body io.Reader
	// BodyBytes is an alternative to Body when the caller has the bytes. Up
	// to 16 KiB goes in the same write as the head; more goes as one
	// vectored write after it. It must not be modified during RoundTrip.
	BodyBytes []byte
	// ContentLength applies to Body: >= 0 is the known length (a body of
	// another length is an error wrapping ErrBodyLength and the connection
	// is not reused); < 0 is unknown, and the body is sent chunked. A
	// Content-Length field in Header, if any, gives the length instead.
	ContentLength int64
	// Expect100Timeout applies when Header holds "Expect: 100-continue" and
	// there is a body: RoundTrip waits this long (0 means 1s) for a 100
	// response before sending the body. A final response instead means the
	// body is not sent and the connection is not reused.
	Expect100Timeout time.Duration
	// HeadTimeout bounds the time from the end of the write to the end of
	// the response head. 0 means none.
	HeadTimeout time.Duration
	// BodyIdleTimeout bounds every single body read. 0 means none.
	BodyIdleTimeout time.Duration
	// Head marks a HEAD request: no body follows the response head. A
	// Method of "HEAD" implies it.
	Head bool
	// Validated says the caller has already checked every field name and
	// value (as fields.ValidName and fields.ValidValue do), e.g. because
	// they come from a validated profile: prepare skips those checks.
	// Method, Target and framing are checked regardless.
	Validated bool
}

// lastChunkAfterData ends a chunk's data and the chunked body. Read-only.
var lastChunkAfterData = []byte("\r\n0\r\n\r\n")

// smallBody is the largest body written together with the head.
const smallBody = 16 << 10

// streamChunk is the buffer for streamed request bodies.
const streamChunk = 64 << 10

// chunkGap is room before chunk data for its size line (16 hex digits + CRLF).
const chunkGap = 18

type bodyMode uint8

const (
	sendNone    bodyMode = iota // no body
	sendInline                  // body already in wbuf after the head
	sendBytes                   // BodyBytes after the head
	sendLength                  // Body with a known length, streamed
	sendChunked                 // Body of unknown length, streamed chunked
)

// writePlan is how the request goes out; the head is in Conn.wbuf.
type writePlan struct {
	mode    bodyMode
	n       int64 // body length for sendLength
	chunked bool  // body framed chunked (sendInline, sendBytes)
	expect  bool  // wait for 100 Continue before the body
	// headPending: the head was not written yet and goes with the body.
	headPending bool
	head        bool // HEAD request
}

func refuse(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrRefusedToSend}, args...)...)
}

// prepare validates req and builds its head (and a small body) in c.wbuf.
func (c *Conn) prepare(req *Request) (writePlan, error) {
	var p writePlan
	if !fields.ValidName(req.Method) {
		return p, refuse("invalid method %q", req.Method)
	}
	if req.Target == "" {
		return p, refuse("empty request target")
	}
	for i := 0; i < len(req.Target); i++ {
		if c := req.Target[i]; c <= ' ' || c == 0x7f {
			return p, refuse("invalid byte in request target %q", req.Target)
		}
	}
	p.head = req.Head || req.Method == "HEAD"
	var (
		cl        int64 = -1
		hasCL     bool
		hasTE     bool
		teChunked bool
	)
	for _, f := range req.Header {
		if !req.Validated && !fields.ValidName(f.Name) {
			return p, refuse("invalid header field name %q", f.Name)
		}
		if !req.Validated && !fields.ValidValue(f.Value) {
			return p, refuse("invalid value for header field %q: %q", f.Name, f.Value)
		}
		switch {
		case fields.EqualFold(f.Name, "content-length"):
			n, ok := parseDigits(f.Value)
			if !ok || hasCL && n != cl {
				return p, refuse("invalid Content-Length %q", f.Value)
			}
			cl, hasCL = n, true
		case fields.EqualFold(f.Name, "transfer-encoding"):
			hasTE = true
			teChunked = lastTokenChunked(f.Value)
		case fields.EqualFold(f.Name, "expect"):
			p.expect = fields.EqualFold(f.Value, "100-continue")
		}
	}
	if hasTE && (hasCL || !teChunked) {
		return p, refuse("Transfer-Encoding must end in chunked and exclude Content-Length")
	}
	if req.Body != nil && req.BodyBytes != nil {
		return p, refuse("both Body and BodyBytes set")
	}
	bodyLen := int64(-1)
	switch {
	case req.BodyBytes != nil:
		bodyLen = int64(len(req.BodyBytes))
	case req.Body != nil && req.ContentLength >= 0:
		bodyLen = req.ContentLength
	}
	if hasCL {
		if bodyLen >= 0 && bodyLen != cl || req.Body == nil && req.BodyBytes == nil && cl != 0 {
			return p, refuse("Content-Length %d does not match the body", cl)
		}
		bodyLen = cl
	}
	hasBody := req.Body != nil || req.BodyBytes != nil
	if !hasBody && !hasTE {
		p.expect = false
	}

	b := append(c.wbuf[:0], req.Method...)
	b = append(b, ' ')
	b = append(b, req.Target...)
	b = append(b, " HTTP/1.1\r\n"...)
	for _, f := range req.Header {
		b = append(b, f.Name...)
		b = append(b, ": "...)
		b = append(b, f.Value...)
		b = append(b, "\r\n"...)
	}
	b = append(b, req.HeaderBlock...)
	chunked := hasTE
	if hasBody && !hasCL && !hasTE {
		if bodyLen >= 0 {
			b = append(b, "Content-Length: "...)
			b = strconv.AppendInt(b, bodyLen, 10)
			b = append(b, "\r\n"...)
		} else {
			b = append(b, "Transfer-Encoding: chunked\r\n"...)
			chunked = true
		}
	}
	b = append(b, "\r\n"...)
	c.wbuf = b
	p.chunked = chunked

	switch {
	case !hasBody:
		p.mode = sendNone
		if chunked {
			p.mode = sendBytes // an empty chunked body: just the last chunk
		}
	case req.BodyBytes != nil:
		p.mode = sendBytes
	case chunked:
		p.mode = sendChunked
	default:
		p.mode, p.n = sendLength, bodyLen
		if bodyLen <= smallBody {
			// Read a small body now, so head and body go in one write and
			// a failing source leaves nothing written.
			start := len(c.wbuf)
			c.wbuf = append(c.wbuf, make([]byte, bodyLen)...)
			if _, err := io.ReadFull(req.Body, c.wbuf[start:]); err != nil {
				return p, fmt.Errorf("h1: reading request body: %w (%w)", err, ErrBodyLength)
			}
			if err := c.checkBodyEnd(req.Body); err != nil {
				return p, err
			}
			c.wbuf = c.wbuf[:start]
			p.mode = sendInline
			p.n = bodyLen
			if !p.expect {
				c.wbuf = c.wbuf[:start+int(bodyLen)]
			}
		}
	}
	if p.mode == sendBytes && len(req.BodyBytes) <= smallBody && !p.expect {
		c.wbuf = appendBody(c.wbuf, req.BodyBytes, p.chunked)
		p.mode = sendNone
	}
	return p, nil
}

// appendBody appends body, chunk-framed when chunked.
func appendBody(b, body []byte, chunked bool) []byte {
	if !chunked {
		return append(b, body...)
	}
	if len(body) > 0 {
		b = strconv.AppendInt(b, int64(len(body)), 16)
		b = append(b, "\r\n"...)
		b = append(b, body...)
		b = append(b, "\r\n"...)
	}
	return append(b, "0\r\n\r\n"...)
}

// lastTokenChunked reports whether the list v ends in "chunked".
func lastTokenChunked(v string) bool {
	last := false
	for rest, more := []byte(v), true; more; {
		var el []byte
		el, rest, more = cutComma(rest)
		if len(el) != 0 {
			last = eqFold(el, "chunked")
		}
	}
	return last
}

// checkBodyEnd fails when the body source has more bytes than declared.
func (c *Conn) checkBodyEnd(r io.Reader) error {
	for range 3 {
		n, err := r.Read(c.one[:])
		if n > 0 {
			return fmt.Errorf("%w: body longer than declared", ErrBodyLength)
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("h1: reading request body: %w", err)
		}
	}
	return nil // a source that keeps returning (0, nil) is taken as ended
}

// write writes b, reporting a failure as ErrNoResponse (nothing came back).
func (c *Conn) write(b []byte) error {
	if _, err := c.nc.Write(b); err != nil {
		return c.writeErr(err)
	}
	return nil
}

func (c *Conn) writeErr(err error) error {
	if cerr := c.cancelErr(); cerr != nil {
		return fmt.Errorf("h1: writing request: %w", cerr)
	}
	return fmt.Errorf("%w: writing request: %w", ErrNoResponse, err)
}

// sendAll writes head and body when no 100-continue wait is needed.
func (c *Conn) sendAll(req *Request, p *writePlan) error {
	switch p.mode {
	case sendNone:
		return c.write(c.wbuf)
	case sendInline:
		return c.write(c.wbuf)
	case sendBytes:
		// Large bytes: the writer sends head and body in one writev.
		p.headPending = true
		return c.sendBody(req, p)
	}
	if err := c.write(c.wbuf); err != nil {
		return err
	}
	return c.sendBody(req, p)
}

// sendBody sends the body after the head went out: small bodies at once,
// large ones from a writer goroutine while the response is read, so that an
// early response is seen.
func (c *Conn) sendBody(req *Request, p *writePlan) error {
	switch p.mode {
	case sendNone:
		return nil
	case sendInline:
		start := len(c.wbuf)
		return c.write(c.wbuf[start : start+int(p.n)])
	case sendBytes:
		if len(req.BodyBytes) <= smallBody {
			return c.write(appendBody(c.wbuf[:0], req.BodyBytes, p.chunked))
		}
	}
	if c.wdone == nil {
		c.wdone = make(chan error, 1)
	}
	c.wrunning = true
	c.wflushed.Store(false)
	go func() { c.wdone <- c.stream(req, p) }()
	return nil
}

// stream runs on the writer goroutine and sends a large body.
func (c *Conn) stream(req *Request, p *writePlan) error {
	var err error
	switch p.mode {
	case sendBytes:
		err = c.streamBytes(p.headPending, req.BodyBytes, p.chunked)
	case sendLength:
		err = c.streamLength(req.Body, p.n)
	case sendChunked:
		err = c.streamChunked(req.Body)
	}
	if err != nil {
		if c.wsrcErr != nil {
			// Wake the reader: the request cannot complete.
			c.nc.SetReadDeadline(time.Unix(1, 0))
		}
		return err
	}
	c.wflushed.Store(true)
	if req.HeadTimeout > 0 {
		c.setReadDeadline(time.Now().Add(req.HeadTimeout))
	}
	return nil
}

func (c *Conn) srcErr(err error) error {
	c.wsrcErr = err
	return err
}

// streamBytes writes the request head (if still pending) and body with one
// vectored write (writev on TCP).
func (c *Conn) streamBytes(withHead bool, body []byte, chunked bool) error {
	first := c.wbuf[:0]
	if withHead {
		first = c.wbuf
	}
	if chunked {
		first = strconv.AppendInt(first, int64(len(body)), 16)
		first = append(first, "\r\n"...)
	}
	c.bufs[0], c.bufs[1], c.bufs[2] = first, body, nil
	if chunked {
		c.bufs[2] = lastChunkAfterData
	}
	bufs := net.Buffers(c.bufs[:])
	if _, err := bufs.WriteTo(c.nc); err != nil {
		return c.writeErr(err)
	}
	return nil
}

func (c *Conn) streamBuf() []byte {
	if c.cbuf == nil {
		c.cbuf = make([]byte, streamChunk)
	}
	return c.cbuf
}

// streamLength copies exactly n bytes of body. An *os.File source goes
// through the connection's ReadFrom (sendfile on TCP); a WriterTo source
// writes through a limit; anything else is copied through the conn's
// stream buffer (not io.Copy's fresh 32 KiB one).
func (c *Conn) streamLength(body io.Reader, n int64) error {
	w := writerOnly{c.nc}
	if _, isFile := body.(*os.File); !isFile {
		if wt, ok := body.(io.WriterTo); ok {
			lw := &limitWriter{w: w, n: n}
			_, err := wt.WriteTo(lw)
			if lw.err != nil {
				return c.copyErr(lw.err)
			}
			if lw.over {
				return c.srcErr(fmt.Errorf("%w: body longer than declared", ErrBodyLength))
			}
			if err != nil {
				return c.srcErr(fmt.Errorf("h1: reading request body: %w", err))
			}
			if lw.n != 0 {
				return c.srcErr(fmt.Errorf("%w: body shorter than declared", ErrBodyLength))
			}
			return nil
		}
	}
	c.lr = io.LimitedReader{R: body, N: n}
	var dst io.Writer = w
	if _, isFile := body.(*os.File); isFile {
		dst = c.nc
	}
	written, err := io.CopyBuffer(dst, &c.lr, c.streamBuf())
	if err != nil {
		return c.copyErr(err)
	}
	if written != n {
		return c.srcErr(fmt.Errorf("%w: body shorter than declared", ErrBodyLength))
	}
	if err := c.checkBodyEnd(body); err != nil {
		return c.srcErr(err)
	}
	return nil
}

// copyErr classifies an io.Copy error: a net error is a write failure,
// anything else came from the body source.
func (c *Conn) copyErr(err error) error {
	var ne net.Error
	var oe *net.OpError
	if errors.As(err, &oe) || errors.As(err, &ne) || errors.Is(err, net.ErrClosed) {
		return c.writeErr(err)
	}
	return c.srcErr(fmt.Errorf("h1: reading request body: %w", err))
}

// writerOnly hides a connection's ReadFrom, whose generic fallback would
// allocate a copy buffer per request.
type writerOnly struct{ w io.Writer }

func (w writerOnly) Write(p []byte) (int, error) { return w.w.Write(p) }

// limitWriter passes at most n bytes; more is ErrBodyLength.
type limitWriter struct {
	w    io.Writer
	n    int64
	err  error // write error
	over bool
}

func (l *limitWriter) Write(p []byte) (int, error) {
	over := int64(len(p)) > l.n
	if over {
		p = p[:l.n]
	}
	n, err := l.w.Write(p)
	l.n -= int64(n)
	if err != nil {
		l.err = err
		return n, err
	}
	if over {
		l.over = true
		return n, errLimit
	}
	return n, nil
}

// errLimit stops a WriterTo source that writes more than declared.
var errLimit = errors.New("h1: body longer than declared")

// streamChunked sends body chunked: each read lands in the buffer after a
// gap that then takes the chunk-size line, so data is never copied.
func (c *Conn) streamChunked(body io.Reader) error {
	buf := c.streamBuf()
	max := len(buf) - chunkGap - 7 // room for CRLF and a last chunk
	for {
		n, rerr := body.Read(buf[chunkGap : chunkGap+max])
		start := chunkGap
		end := chunkGap + n
		if n > 0 {
			var hex [16]byte
			h := strconv.AppendInt(hex[:0], int64(n), 16)
			start = chunkGap - len(h) - 2
			copy(buf[start:], h)
			buf[chunkGap-2], buf[chunkGap-1] = '\r', '\n'
			end += copy(buf[end:], "\r\n")
		}
		if rerr == io.EOF {
			end += copy(buf[end:], "0\r\n\r\n")
		}
		if end > start {
			if _, err := c.nc.Write(buf[start:end]); err != nil {
				return c.writeErr(err)
			}
		}
		if rerr == io.EOF {
			return nil
		}
		if rerr != nil {
			return c.srcErr(fmt.Errorf("h1: reading request body: %w", rerr))
		}
	}
}
