package h1

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/guise-http/guise/fields"
)

// Body is a response body, held by value in Response. Read serves an inline
// copy, or reads from the connection (straight into the caller's buffer for
// large reads, with no intermediate copy). At the clean end of a framed body
// it releases the connection (see Conn.SetRelease) before returning io.EOF.
//
// Close on an unfinished body drains it when what remains is known to fit in
// Config.DrainLimit (a Content-Length remainder within the limit; chunked:
// tried up to the limit) within Config.DrainTimeout, and releases the
// connection as reusable if that finished; otherwise it closes the
// connection. Close is idempotent and returns nil. A Body is not safe for
// concurrent use. The zero Body is an empty body.
type Body struct {
	c       *Conn
	gen     uint64
	kind    bodyKind
	n       int64 // bodyLength: bytes left; bodyChunked: bytes left in chunk
	inline  string
	err     error // sticky: io.EOF at the end, or the failure
	reuse   bool
	idle    time.Duration
	drain   bool
	cst     chunkState
	ext     int // chunk-extension bytes seen
	trailer *fields.Header
	// bulkOK: reads may go to a bulk buffer (set by WriteTo).
	bulkOK bool
	// big is the bulk buffer standing in for the connection's read buffer,
	// small that read buffer meanwhile; both nil otherwise.
	big   *[bulkRead]byte
	small []byte
}

type chunkState uint8

const (
	csSize    chunkState = iota // expecting a chunk-size line
	csData                      // n bytes of chunk data left
	csTrailer                   // expecting the trailer section
)

var errBodyClosed = errors.New("h1: read on closed response body")
var errStaleBody = errors.New("h1: body of an earlier response on a reused connection")

// directRead is the smallest read served straight from the connection.
const directRead = 4 << 10

// bulkRead is the size of the buffer WriteTo reads a large body through:
// fewer, larger reads than the connection's read buffer allows, so fewer
// syscalls and fewer window-update ACKs per megabyte.
const bulkRead = 128 << 10

// bulkBufs holds the bulk buffers of the bodies being streamed, so that an
// idle connection keeps none. Private scratch: a buffer is back in the pool
// only once no slice of it remains with the connection.
var bulkBufs = sync.Pool{New: func() any { return new([bulkRead]byte) }}

// Read reads up to len(p) body bytes.
func (b *Body) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.kind == bodyInline || b.kind == bodyNone {
		n := copy(p, b.inline)
		b.inline = b.inline[n:]
		if b.inline == "" {
			b.err = io.EOF
			return n, io.EOF
		}
		return n, nil
	}
	if len(p) == 0 {
		return 0, nil
	}
	c := b.c
	if c.gen != b.gen {
		return 0, errStaleBody
	}
	for {
		avail := b.avail()
		if avail == 0 {
			if err := b.step(); err != nil {
				return 0, err
			}
			continue
		}
		if c.r < c.w {
			n := copy(p[:min(int64(len(p)), avail)], c.rbuf[c.r:c.w])
			c.r += n
			return n, b.consumed(n)
		}
		want := min(int64(len(p)), avail)
		if want < directRead {
			if err := b.more(); err != nil {
				return 0, err
			}
			continue
		}
		b.setDeadline()
		n, err := c.nc.Read(p[:want])
		if n > 0 {
			return n, b.consumed(n)
		}
		if err := b.readErr(err); err != nil {
			return 0, err
		}
	}
}

// avail returns how many bytes of body data may be taken now, before the
// framing needs attention (0 when step must run). bodyClose returns a large
// number.
func (b *Body) avail() int64 {
	switch b.kind {
	case bodyLength:
		return b.n
	case bodyChunked:
		if b.cst == csData {
			return b.n
		}
		return 0
	}
	return 1 << 62
}

// consumed accounts for n data bytes taken and returns io.EOF when the body
// just ended.
func (b *Body) consumed(n int) error {
	switch b.kind {
	case bodyLength:
		b.n -= int64(n)
		if b.n == 0 {
			b.end()
			return b.err
		}
	case bodyChunked:
		b.n -= int64(n)
	}
	return nil
}

// step advances over framing: chunk-size lines, the CRLF after chunk data,
// the trailer section; for a finished length body it ends it.
func (b *Body) step() error {
	c := b.c
	if b.kind == bodyLength {
		b.end()
		return b.err
	}
	switch b.cst {
	case csData: // chunk data done: CRLF follows
		for c.w-c.r < 2 {
			if err := b.more(); err != nil {
				return err
			}
		}
		if c.rbuf[c.r] != '\r' || c.rbuf[c.r+1] != '\n' {
			return b.fail(chunkErr("chunk data not followed by CRLF", c.rbuf[c.r:c.r+2]))
		}
		c.r += 2
		b.cst = csSize
	case csSize:
		for {
			budget := c.lim.maxChunkExtBytes - b.ext
			size, n, ext, err := parseChunkLine(c.rbuf[c.r:c.w], budget)
			if err == nil {
				c.r += n
				b.ext += ext
				if size == 0 {
					b.cst = csTrailer
					c.hs = blockScan{}
				} else {
					b.cst, b.n = csData, size
				}
				return nil
			}
			if err != errNeedMore {
				return b.fail(err)
			}
			if c.w-c.r >= budget+chunkLineSlack {
				return b.fail(chunkErr("chunk extensions too long", c.rbuf[c.r:c.r+32])) // as parseChunkLine says it
			}
			if err := b.more(); err != nil {
				return err
			}
		}
	case csTrailer:
		for {
			block := c.rbuf[c.r:c.w]
			lim := c.lim.maxTrailerBytes + 2
			n, err := c.hs.scan(block[:min(len(block), lim)], c.lim.maxHeaders, "trailer")
			if err != nil {
				if err == ErrTooManyHeaders {
					err = &ProtocolError{Kind: "trailer", Detail: "too many trailer fields", Err: ErrTooManyHeaders}
				}
				return b.fail(toTrailerErr(err))
			}
			if n > 0 {
				if err := b.setTrailer(block[:n]); err != nil {
					return b.fail(err)
				}
				c.r += n
				b.end()
				return b.err
			}
			if len(block) >= lim {
				return b.fail(&ProtocolError{Kind: "trailer", Detail: "trailer section too large", Err: ErrHeaderTooLarge})
			}
			if err := b.more(); err != nil {
				return err
			}
		}
	}
	return nil
}

// setTrailer parses a complete trailer section into *b.trailer.
func (b *Body) setTrailer(block []byte) error {
	if len(block) == 2 {
		return nil
	}
	spans, err := parseFields(b.c.tspans[:0], block, 0, "trailer")
	b.c.tspans = spans
	if err != nil {
		return toTrailerErr(err)
	}
	s := string(block)
	if b.trailer != nil {
		*b.trailer = appendFields((*b.trailer)[:0], s, spans)
	}
	return nil
}

func toTrailerErr(err error) error {
	var pe *ProtocolError
	if errors.As(err, &pe) && pe.Kind != "trailer" {
		return &ProtocolError{Kind: "trailer", Detail: pe.Kind + ": " + pe.Detail, Err: pe.Err}
	}
	return err
}

func appendFields(h fields.Header, s string, spans []span) fields.Header {
	for _, sp := range spans {
		h = append(h, fields.Field{Name: s[sp.ns:sp.ne], Value: s[sp.vs:sp.ve]})
	}
	return h
}

// more reads more bytes into the connection's buffer; a clean EOF is the
// end of a close-delimited body and a truncation of any other.
func (b *Body) more() error {
	c := b.c
	if b.bulkOK && b.big == nil {
		b.bulk()
	}
	b.setDeadline()
	limit := len(c.rbuf)
	if b.kind == bodyChunked {
		// Room for a size line with extensions or a trailer section.
		limit = max(limit, c.lim.maxChunkExtBytes+64, c.lim.maxTrailerBytes+64)
	}
	err := c.fill(limit)
	if err == nil {
		return nil
	}
	return b.readErr(err)
}

// readLength reads more of a Content-Length body into the empty read
// buffer (the bulk buffer when WriteTo asked for it), no further than the
// a bytes that remain: like a Read into the caller's buffer, it never reads
// past the body.
func (b *Body) readLength(a int64) error {
	c := b.c
	if b.bulkOK && b.big == nil {
		b.bulk()
	}
	b.setDeadline()
	c.r, c.w = 0, 0
	n, err := c.nc.Read(c.rbuf[:min(int64(len(c.rbuf)), a)])
	c.w = n
	c.got += n
	if n > 0 {
		return nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return b.readErr(err)
}

func (b *Body) setDeadline() {
	if b.drain {
		return
	}
	if b.idle > 0 {
		b.c.setReadDeadline(time.Now().Add(b.idle))
	}
}

// readErr maps a failed read (nil when it was only a zero-byte read).
func (b *Body) readErr(err error) error {
	if err == nil {
		return nil
	}
	if err == io.EOF {
		if b.kind == bodyClose {
			b.end()
			return b.err
		}
		return b.fail(ErrBodyTruncated)
	}
	c := b.c
	if cerr := c.cancelErr(); cerr != nil {
		return b.fail(fmt.Errorf("h1: reading response body: %w", cerr))
	}
	if errors.Is(err, os.ErrDeadlineExceeded) && !b.drain {
		return b.fail(&TimeoutError{Phase: PhaseBodyIdle})
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return b.fail(fmt.Errorf("%w: %w", ErrBodyTruncated, err))
	}
	return b.fail(fmt.Errorf("h1: reading response body: %w", err))
}

// bulk makes a bulk buffer the connection's read buffer for the rest of
// the body, moving the unread bytes over.
func (b *Body) bulk() {
	c := b.c
	if len(c.rbuf) >= bulkRead {
		b.bulkOK = false // the read buffer is as large already
		return
	}
	big := bulkBufs.Get().(*[bulkRead]byte)
	n := copy(big[:], c.rbuf[c.r:c.w])
	b.big, b.small = big, c.rbuf
	c.rbuf, c.r, c.w = big[:], 0, n
}

// unbulk gives the connection its own read buffer back when the body ends,
// before the connection is released, and the bulk buffer back to the pool.
// Unread bytes (which make the connection not reusable) move along; if they
// do not fit, the closing connection keeps the bulk buffer. So does a read
// buffer that fill has replaced meanwhile.
func (b *Body) unbulk() {
	big, small := b.big, b.small
	if big == nil {
		return
	}
	b.big, b.small = nil, nil
	c := b.c
	if !c.active || &c.rbuf[0] != &big[0] || c.w-c.r > len(small) {
		// !c.active: the request already ended (a copy of this Body ended
		// it); the buffer may be in the pool already.
		return
	}
	n := copy(small, c.rbuf[c.r:c.w])
	c.rbuf, c.r, c.w = small, 0, n
	bulkBufs.Put(big)
}

// end marks a clean end of the body and releases the connection.
func (b *Body) end() {
	b.err = io.EOF
	b.unbulk()
	b.c.finish(b.reuse && b.kind != bodyClose)
}

// fail ends the body with err; the connection is closed and released.
func (b *Body) fail(err error) error {
	b.err = err
	b.unbulk()
	b.c.finish(false)
	return err
}

// Close ends the body; see Body.
func (b *Body) Close() error {
	if b.err != nil {
		if b.err == io.EOF {
			b.err = errBodyClosed
		}
		return nil
	}
	if b.kind == bodyInline || b.kind == bodyNone {
		b.err, b.inline = errBodyClosed, ""
		return nil
	}
	c := b.c
	if c.gen != b.gen {
		b.err = errBodyClosed
		return nil
	}
	limit := c.lim.drainLimit
	if b.kind == bodyClose || b.kind == bodyLength && b.n-int64(c.w-c.r) > limit {
		b.fail(errBodyClosed)
		return nil
	}
	b.drain = true
	c.setReadDeadline(time.Now().Add(c.lim.drainTimeout))
	start := c.got - (c.w - c.r)
	for b.err == nil {
		if int64(c.got-(c.w-c.r)-start) > limit {
			b.fail(errBodyClosed)
			break
		}
		if a := b.avail(); a > 0 {
			if c.r == c.w {
				if b.more() != nil {
					break
				}
				continue
			}
			n := int(min(a, int64(c.w-c.r)))
			c.r += n
			b.consumed(n)
			continue
		}
		b.step()
	}
	b.err = errBodyClosed
	return nil
}

// WriteTo writes the rest of the body to w, reading through the
// connection's buffer (no extra copy buffer). A body that goes on past what
// is buffered is read through a 128 KiB bulk buffer, which stands in for
// the connection's read buffer until the body ends (fewer, larger reads);
// a Content-Length body is never read past its end.
func (b *Body) WriteTo(w io.Writer) (int64, error) {
	var total int64
	if b.err != nil {
		if b.err == io.EOF {
			return 0, nil
		}
		return 0, b.err
	}
	if b.kind == bodyInline || b.kind == bodyNone {
		n, err := io.WriteString(w, b.inline)
		b.inline = b.inline[n:]
		if err == nil {
			b.err = io.EOF
		}
		return int64(n), err
	}
	c := b.c
	if c.gen != b.gen {
		return 0, errStaleBody
	}
	// A body that goes on past the buffered bytes is read through the bulk
	// buffer.
	b.bulkOK = b.kind != bodyLength || b.n > int64(c.w-c.r)
	for {
		a := b.avail()
		if a == 0 {
			if err := b.step(); err != nil {
				if err == io.EOF {
					return total, nil
				}
				return total, err
			}
			continue
		}
		if c.r == c.w {
			var err error
			if b.kind == bodyLength {
				err = b.readLength(a)
			} else {
				err = b.more()
			}
			if err != nil {
				if err == io.EOF {
					return total, nil
				}
				return total, err
			}
			continue
		}
		k := int(min(a, int64(c.w-c.r)))
		n, werr := w.Write(c.rbuf[c.r : c.r+k])
		c.r += n
		total += int64(n)
		if err := b.consumed(n); err != nil {
			return total, nil
		}
		if werr != nil {
			return total, werr
		}
	}
}
