package fingerprint

import (
	"bytes"

	"github.com/guise-http/guise/fields"
)

// maxH1HeadFields bounds the number of fields ParseHTTP1Request accepts.
const maxH1HeadFields = 1000

// ParseHTTP1Request parses a raw HTTP/1.x request head: the request line
// (method, target, protocol) and the fields exactly in wire order and case,
// up to the empty line. Field values are stored without surrounding
// whitespace. Bytes after the head (a body) are ignored. Lines may end in
// CRLF or a bare LF. It returns a *ParseError whose Err is ErrTruncated
// when the head has no terminating empty line yet, ErrMalformed otherwise.
// The strings it returns are copies; head may be reused afterwards.
func ParseHTTP1Request(head []byte) (*HTTPRequest, error) {
	const p = "h1"
	line, rest, ok := cutLine(head)
	if !ok {
		return nil, truncated(p, "request line", len(head))
	}
	pos := len(head) - len(rest)
	method, after, ok1 := bytes.Cut(line, []byte{' '})
	target, proto, ok2 := bytes.Cut(after, []byte{' '})
	if !ok1 || !ok2 || !validMethod(method) || len(target) == 0 || !validTarget(target) || !validHTTP1Proto(proto) {
		return nil, malformed(p, "request line", 0)
	}
	r := &HTTPRequest{}
	r.Method, r.Target, r.Proto = string(method), string(target), string(proto)
	n := bytes.Count(rest, []byte{'\n'})
	r.Header = make([]fields.Field, 0, min(n, maxH1HeadFields))
	for {
		off := pos
		line, rest, ok = cutLine(rest)
		if !ok {
			return nil, truncated(p, "header field", len(head))
		}
		pos = len(head) - len(rest)
		if len(line) == 0 {
			return r, nil
		}
		if line[0] == ' ' || line[0] == '\t' {
			return nil, malformed(p, "obsolete line folding", off)
		}
		name, value, ok := bytes.Cut(line, []byte{':'})
		if !ok || !fields.ValidName(string(name)) {
			return nil, malformed(p, "header field name", off)
		}
		value = bytes.Trim(value, " \t")
		for _, c := range value {
			if c < ' ' && c != '\t' || c == 0x7f {
				return nil, malformed(p, "header field value", off)
			}
		}
		if len(r.Header) == maxH1HeadFields {
			return nil, malformed(p, "too many header fields", off)
		}
		r.Header = append(r.Header, fields.Field{Name: string(name), Value: string(value)})
	}
}

// cutLine returns the line before the first LF (without CR LF or LF) and
// the bytes after it. ok is false when b holds no LF.
func cutLine(b []byte) (line, rest []byte, ok bool) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return nil, b, false
	}
	line = b[:i]
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	return line, b[i+1:], true
}

func validMethod(m []byte) bool {
	return len(m) > 0 && fields.ValidName(string(m))
}

// validTarget rejects controls, spaces and non-ASCII bytes in the target.
func validTarget(t []byte) bool {
	for _, c := range t {
		if c <= ' ' || c >= 0x7f {
			return false
		}
	}
	return true
}

// validHTTP1Proto accepts "HTTP/" followed by digit '.' digit.
func validHTTP1Proto(p []byte) bool {
	return len(p) == 8 && string(p[:5]) == "HTTP/" &&
		'0' <= p[5] && p[5] <= '9' && p[6] == '.' && '0' <= p[7] && p[7] <= '9'
}
