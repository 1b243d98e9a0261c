package h1

import (
	"unsafe"
)

const (
	proto11 = "HTTP/1.1"
	proto10 = "HTTP/1.0"
)

// finishHead turns the final head at rbuf[r:r+n] into resp (a new one from
// c.alloc if resp is nil) and sets up the body: inline when it is complete
// in the buffer and small, else streamed.
func (c *Conn) finishHead(resp *Response, req *Request, st statusLine, n int) (*Response, error) {
	head := c.rbuf[c.r : c.r+n]
	spans, err := parseFields(c.spans[:0], head, st.fieldsAt, "header")
	c.spans = spans
	if err != nil {
		return nil, err
	}
	if len(spans) > c.lim.maxHeaders {
		return nil, ErrTooManyHeaders
	}
	isHead := req.Head || req.Method == "HEAD"
	f, err := frame(head, spans, st.code, st.http10, isHead)
	if err != nil {
		return nil, err
	}
	if req.Method == "CONNECT" && st.code/100 == 2 || st.code == 101 && req.Upgrade {
		f.kind, f.cl, f.reuse = bodyNone, 0, false
	}
	c.keepAlive = f.idle
	c.r += n
	c.clearReadDeadline()

	// Decide on an inline body.
	buffered := c.rbuf[c.r:c.w]
	var (
		kind      = f.kind
		dataLen   int
		rawLen    int
		trailerAt = -1
	)
	switch f.kind {
	case bodyLength:
		if f.n <= int64(c.lim.inlineLimit) && f.n <= int64(len(buffered)) {
			kind, dataLen, rawLen = bodyInline, int(f.n), int(f.n)
		}
	case bodyChunked:
		if d, raw, tr, ok := c.scanChunked(buffered); ok {
			kind, dataLen, rawLen, trailerAt = bodyInline, d, raw, tr
		}
	}

	// The head (and an inline body and its trailer) is copied into one
	// string, into the room alloc offers when it is enough.
	size := n
	if kind == bodyInline {
		size += dataLen
		if trailerAt >= 0 {
			size += rawLen - trailerAt
		}
	}
	var room []byte
	if resp == nil {
		if c.alloc == nil {
			resp = new(Response)
		} else {
			resp, room = c.alloc(len(spans), size)
		}
	}
	if cap(room) < size {
		room = make([]byte, 0, size)
	}
	b := append(room[:0], head...)
	if kind == bodyInline {
		b = appendInline(b, f.kind, buffered, dataLen, trailerAt, rawLen)
	}
	// Nothing writes room again (SetAlloc's contract; a buffer made here
	// is not kept), so the string never changes.
	s := unsafe.String(unsafe.SliceData(b), len(b))

	resp.StatusCode = st.code
	resp.Proto = proto11
	if st.http10 {
		resp.Proto = proto10
	}
	resp.Reason = s[st.rs:st.re]
	resp.Header = appendFields(resp.Header, s, spans)
	resp.ContentLength = f.cl
	resp.Body = Body{c: c, gen: c.gen, kind: kind, reuse: f.reuse, idle: req.BodyIdleTimeout, trailer: &resp.Trailer}
	if kind == bodyInline || kind == bodyNone {
		// Nothing of it is read from the connection: a Response kept for
		// its fields does not keep the connection alive.
		resp.Body.c = nil
	}
	switch kind {
	case bodyNone:
		resp.Body.err = nil
		if st.code == 101 && req.Upgrade {
			// The connection is the caller's now (Detach): not released,
			// not closed.
			c.active = false
			c.disarm()
			break
		}
		c.finish(f.reuse)
	case bodyInline:
		resp.Body.inline = s[n : n+dataLen]
		if trailerAt >= 0 && rawLen-trailerAt > 2 {
			tspans, _ := parseFields(c.tspans[:0], buffered[trailerAt:rawLen], 0, "trailer") // checked by scanChunked
			c.tspans = tspans
			resp.Trailer = appendFields(nil, s[n+dataLen:], tspans)
		}
		c.r += rawLen
		c.finish(f.reuse)
	case bodyLength:
		resp.Body.n = f.n
	}
	return resp, nil
}

// scanChunked checks whether b begins with a complete chunked body whose
// data fits the inline limit. It returns the data length, the raw length,
// and where the trailer section starts. Any doubt (incomplete, malformed,
// too large) returns ok false, and the streaming reader takes over and
// reports errors in order.
func (c *Conn) scanChunked(b []byte) (data, raw, trailerAt int, ok bool) {
	ext := 0
	for pos := 0; ; {
		size, n, e, err := parseChunkLine(b[pos:], c.lim.maxChunkExtBytes-ext)
		if err != nil {
			return 0, 0, 0, false
		}
		ext += e
		pos += n
		if size == 0 {
			var bs blockScan
			tn, err := bs.scan(b[pos:min(len(b), pos+c.lim.maxTrailerBytes+2)], c.lim.maxHeaders, "trailer")
			if err != nil || tn == 0 {
				return 0, 0, 0, false
			}
			if tn > 2 {
				spans, err := parseFields(c.tspans[:0], b[pos:pos+tn], 0, "trailer")
				c.tspans = spans
				if err != nil {
					return 0, 0, 0, false
				}
			}
			return data, pos + tn, pos, true
		}
		if size > int64(c.lim.inlineLimit-data) || int64(len(b)-pos) < size+2 {
			return 0, 0, 0, false
		}
		pos += int(size)
		if b[pos] != '\r' || b[pos+1] != '\n' {
			return 0, 0, 0, false
		}
		pos += 2
		data += int(size)
	}
}

// appendInline appends an inline body found complete in buffered to dst:
// the first dataLen bytes of a Content-Length body, or a chunked body's
// data followed by its trailer section (buffered[trailerAt:rawLen]).
func appendInline(dst []byte, kind bodyKind, buffered []byte, dataLen, trailerAt, rawLen int) []byte {
	if kind != bodyChunked {
		return append(dst, buffered[:dataLen]...)
	}
	dst = appendChunks(dst, buffered[:trailerAt])
	return append(dst, buffered[trailerAt:rawLen]...)
}

// appendChunks appends the data of the valid chunks in b (ending at the
// last chunk's size line) to dst.
func appendChunks(dst, b []byte) []byte {
	for pos := 0; pos < len(b); {
		size, n, _, _ := parseChunkLine(b[pos:], len(b))
		pos += n
		if size == 0 {
			break
		}
		dst = append(dst, b[pos:pos+int(size)]...)
		pos += int(size) + 2
	}
	return dst
}
