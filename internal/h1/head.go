package h1

import (
	"bytes"
	"fmt"
	"strings"
)

// blockScan is the resumable state of the search for the end of a header
// block (a response head or a trailer section) in a buffer that fills up
// over several reads. Offsets are relative to the block start.
type blockScan struct {
	off       int // bytes scanned so far
	lineStart int // start of the current line
	lines     int // complete non-empty lines seen
}

// scan looks for the empty line ending the block b. It returns the block
// length (through the final CRLF) once found, 0 when more bytes are needed.
// maxLines caps the non-empty lines.
func (s *blockScan) scan(b []byte, maxLines int, kind string) (int, error) {
	for s.off < len(b) {
		i := bytes.IndexByte(b[s.off:], '\n')
		if i < 0 {
			s.off = len(b)
			return 0, nil
		}
		i += s.off
		if i == s.lineStart || b[i-1] != '\r' {
			return 0, &ProtocolError{Kind: "line ending", Detail: "bare LF in " + kind + " line " + quote(b[s.lineStart:i+1])}
		}
		if i-1 == s.lineStart {
			return i + 1, nil
		}
		s.lines++
		if s.lines > maxLines {
			return 0, ErrTooManyHeaders
		}
		s.lineStart = i + 1
		s.off = i + 1
	}
	return 0, nil
}

// quote returns b quoted with %q, cut to 64 bytes.
func quote(b []byte) string {
	if len(b) > 64 {
		return fmt.Sprintf("%q...", b[:64])
	}
	return fmt.Sprintf("%q", b)
}

// span locates one field's name and value inside a block.
type span struct{ ns, ne, vs, ve int }

// statusLine is the parsed first line of a response head.
type statusLine struct {
	code     int
	http10   bool
	rs, re   int // reason
	fieldsAt int // offset of the first field line
}

// checkStatusPrefix fails fast when the first bytes of a response cannot
// start a status line, so garbage (an HTTP/2 frame, an HTTP/0.9 body) is
// reported without waiting for a line end that may never come.
func checkStatusPrefix(b []byte) error {
	// Errors quote only the bytes up to the first bad one, so the result
	// does not depend on how the response was split into reads.
	const p = "HTTP/1."
	for i := 0; i < len(b) && i < len(p); i++ {
		if b[i] != p[i] {
			detail := "response does not start with \"HTTP/1.\": " + quote(b[:i+1])
			if b[0] == 0 || b[0] == 'P' {
				detail = "peer seems to speak HTTP/2, not HTTP/1.1: " + quote(b[:i+1])
			}
			return &ProtocolError{Kind: "version", Detail: detail}
		}
	}
	if len(b) > 7 && b[7] != '0' && b[7] != '1' {
		return &ProtocolError{Kind: "version", Detail: "unsupported version " + quote(b[:8])}
	}
	if len(b) > 8 && b[8] != ' ' {
		return &ProtocolError{Kind: "status line", Detail: "no single SP after version: " + quote(b[:9])}
	}
	return nil
}

// parseStatusLine parses the first line of head, which holds at least the
// complete line (the caller found the block end).
func parseStatusLine(head []byte) (statusLine, error) {
	var st statusLine
	end := bytes.IndexByte(head, '\n') - 1 // head[end] == '\r'
	line := head[:end]
	if err := checkStatusPrefix(line); err != nil {
		return st, err
	}
	if len(line) < 12 {
		return st, &ProtocolError{Kind: "status line", Detail: "too short: " + quote(line)}
	}
	st.http10 = line[7] == '0'
	for _, c := range line[9:12] {
		if c < '0' || c > '9' {
			return st, &ProtocolError{Kind: "status", Detail: "status code is not three digits: " + quote(line)}
		}
		st.code = st.code*10 + int(c-'0')
	}
	st.rs, st.re = 12, 12
	if len(line) > 12 {
		if line[12] != ' ' {
			return st, &ProtocolError{Kind: "status", Detail: "status code is not three digits: " + quote(line)}
		}
		st.rs, st.re = 13, len(line)
		for _, c := range line[13:] {
			if !valueByte[c] {
				return st, &ProtocolError{Kind: "status line", Detail: "invalid byte in reason phrase: " + quote(line)}
			}
		}
	}
	st.fieldsAt = end + 2
	return st, nil
}

// parseFields parses the field lines of block from offset off up to the
// empty line that ends block, appending their spans to dst. kind names the
// section in errors ("header" or "trailer").
func parseFields(dst []span, block []byte, off int, kind string) ([]span, error) {
	for {
		nl := bytes.IndexByte(block[off:], '\n') + off
		line := block[off : nl-1] // without CRLF; the scanner checked the CR
		if len(line) == 0 {
			return dst, nil
		}
		if line[0] == ' ' || line[0] == '\t' {
			return dst, &ProtocolError{Kind: kind + " line", Detail: "obs-fold or leading whitespace not allowed: " + quote(line)}
		}
		colon := bytes.IndexByte(line, ':')
		if colon < 0 {
			return dst, &ProtocolError{Kind: kind + " line", Detail: "no colon: " + quote(line)}
		}
		if colon == 0 {
			return dst, &ProtocolError{Kind: kind + " name", Detail: "empty name: " + quote(line)}
		}
		for _, c := range line[:colon] {
			if c >= 0x80 || !tokenByte[c] {
				d := "invalid byte in name: " + quote(line[:colon])
				if c == ' ' || c == '\t' {
					d = "whitespace before colon: " + quote(line[:colon+1])
				}
				return dst, &ProtocolError{Kind: kind + " name", Detail: d}
			}
		}
		vs, ve := colon+1, len(line)
		for vs < ve && (line[vs] == ' ' || line[vs] == '\t') {
			vs++
		}
		for ve > vs && (line[ve-1] == ' ' || line[ve-1] == '\t') {
			ve--
		}
		for _, c := range line[vs:ve] {
			if !valueByte[c] {
				return dst, &ProtocolError{Kind: kind + " value", Detail: "invalid byte in value of " + quote(line[:colon]) + ": " + quote(line[vs:ve])}
			}
		}
		dst = append(dst, span{off, off + colon, off + vs, off + ve})
		off = nl + 1
	}
}

// tokenByte and valueByte classify bytes of field names and values.
var tokenByte, valueByte = func() (t, v [256]bool) {
	const tchar = "!#$%&'*+-.^_`|~"
	for c := 0; c < 256; c++ {
		t[c] = 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			c < 0x80 && strings.IndexByte(tchar, byte(c)) >= 0
		v[c] = c == '\t' || c >= 0x20 && c != 0x7f
	}
	return
}()
