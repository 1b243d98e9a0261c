package fingerprint

import (
	"bytes"
	"strconv"
)

// maxH1Heads bounds the request heads splitHTTP1 returns.
const maxH1Heads = 1024

// splitHTTP1 splits the bytes a client sent on an HTTP/1.x connection into
// request heads (each from the request line to the blank line, inclusive),
// skipping bodies framed by Content-Length or chunked encoding. It stops at
// the first incomplete or unparsable part: what it returns is always a
// prefix of the requests. The heads alias b.
func splitHTTP1(b []byte) [][]byte {
	var heads [][]byte
	for len(b) > 0 && len(heads) < maxH1Heads {
		// RFC 9112 2.2: a server should ignore empty lines before a request line.
		for len(b) > 0 && (b[0] == '\r' || b[0] == '\n') {
			b = b[1:]
		}
		end := bytes.Index(b, []byte("\r\n\r\n"))
		if end < 0 {
			break
		}
		head := b[:end+4]
		heads = append(heads, head)
		b = b[end+4:]
		cl, chunked, ok := bodyFraming(head)
		if !ok {
			break
		}
		switch {
		case chunked:
			n, ok := chunkedLen(b)
			if !ok {
				return heads
			}
			b = b[n:]
		case cl > 0:
			if int64(len(b)) < cl {
				return heads
			}
			b = b[cl:]
		}
	}
	return heads
}

// bodyFraming reads Content-Length and Transfer-Encoding from a request
// head; ok is false when they are invalid or conflicting.
func bodyFraming(head []byte) (cl int64, chunked, ok bool) {
	lines := bytes.Split(head, []byte("\r\n"))
	hasCL := false
	for _, ln := range lines[1:] {
		i := bytes.IndexByte(ln, ':')
		if i <= 0 {
			continue
		}
		name := ln[:i]
		val := bytes.TrimSpace(ln[i+1:])
		switch {
		case bytes.EqualFold(name, []byte("content-length")):
			n, err := strconv.ParseInt(string(val), 10, 64)
			if err != nil || n < 0 || (hasCL && n != cl) {
				return 0, false, false
			}
			cl, hasCL = n, true
		case bytes.EqualFold(name, []byte("transfer-encoding")):
			v := bytes.ToLower(val)
			if bytes.HasSuffix(v, []byte("chunked")) {
				chunked = true
			} else {
				return 0, false, false
			}
		}
	}
	if chunked && hasCL {
		return 0, false, false
	}
	return cl, chunked, true
}

// chunkedLen returns the length of a complete chunked body at the start of
// b, trailers included; ok is false if b does not hold it all.
func chunkedLen(b []byte) (int, bool) {
	off := 0
	for i := 0; i < 1<<16; i++ {
		eol := bytes.Index(b[off:], []byte("\r\n"))
		if eol < 0 {
			return 0, false
		}
		line := b[off : off+eol]
		if semi := bytes.IndexByte(line, ';'); semi >= 0 {
			line = line[:semi]
		}
		n, err := strconv.ParseInt(string(bytes.TrimSpace(line)), 16, 64)
		if err != nil || n < 0 {
			return 0, false
		}
		off += eol + 2
		if n == 0 {
			// Trailer section: lines until an empty one.
			for j := 0; j < 1<<10; j++ {
				eol := bytes.Index(b[off:], []byte("\r\n"))
				if eol < 0 {
					return 0, false
				}
				off += eol + 2
				if eol == 0 {
					return off, true
				}
			}
			return 0, false
		}
		if int64(len(b)-off) < n+2 {
			return 0, false
		}
		off += int(n)
		if string(b[off:off+2]) != "\r\n" {
			return 0, false
		}
		off += 2
	}
	return 0, false
}

// HTTP1Heads returns the HTTP/1.x request heads the client sent, in order,
// exactly as sent (request line to blank line). It is empty for HTTP/2
// connections. The heads alias ClientBytes.
func (r *ConnRecord) HTTP1Heads() [][]byte {
	if r.Protocol != ProtoHTTP1 {
		return nil
	}
	return splitHTTP1(r.ClientBytes)
}
