package h1

import (
	"math"
	"time"
)

// bodyKind is how a response body is delimited.
type bodyKind uint8

const (
	bodyNone    bodyKind = iota // no body (HEAD, 204, 304, Content-Length: 0)
	bodyInline                  // complete copy in memory
	bodyLength                  // Content-Length bytes on the connection
	bodyChunked                 // chunked transfer coding
	bodyClose                   // read until the connection closes
)

// framing is what a final response head says about its body.
type framing struct {
	kind  bodyKind
	n     int64 // bodyLength: the length
	cl    int64 // what Response.ContentLength reports
	reuse bool  // the connection may carry another request after the body
	// idle is the Keep-Alive field's timeout (0: none given): how long the
	// server keeps the idle connection.
	idle time.Duration
}

// frame decides the body framing of a final response per RFC 9112 section
// 6.3: HEAD, 204 and 304 have no body (their Content-Length is still
// checked); a Transfer-Encoding list (joined over all its fields) ending in
// "chunked" means chunked, and then Content-Length is ignored and the
// connection retired; any other Transfer-Encoding means read to close;
// otherwise Content-Length, otherwise read to close.
func frame(block []byte, hdr []span, code int, http10, head bool) (framing, error) {
	var (
		cl                   int64 = -1
		hasTE, teChunked     bool
		connClose, keepAlive bool
		nChunked             int
		kaTimeout            time.Duration
		kaMax                = -1
	)
	for _, sp := range hdr {
		name, v := block[sp.ns:sp.ne], block[sp.vs:sp.ve]
		switch {
		case eqFold(name, "content-length"):
			if err := parseContentLength(v, &cl); err != nil {
				return framing{}, err
			}
		case eqFold(name, "transfer-encoding"):
			hasTE = true
			// Elements of a list may be empty; the last non-empty one counts.
			for rest, more := v, true; more; {
				var el []byte
				el, rest, more = cutComma(rest)
				if len(el) != 0 {
					teChunked = eqFold(el, "chunked")
					if teChunked {
						nChunked++
					}
				}
			}
		case eqFold(name, "connection"):
			connClose = connClose || hasToken(v, "close")
			keepAlive = keepAlive || hasToken(v, "keep-alive")
		case eqFold(name, "keep-alive"):
			kaTimeout, kaMax = keepAliveParams(v, kaTimeout, kaMax)
		}
	}
	if hasTE && http10 {
		return framing{}, &ProtocolError{Kind: "transfer-encoding", Detail: "Transfer-Encoding in an HTTP/1.0 response"}
	}
	if nChunked > 1 {
		return framing{}, &ProtocolError{Kind: "transfer-encoding", Detail: "chunked applied more than once"}
	}
	// Keep-Alive max=0: the server takes no further request on the
	// connection (RELIABILITY X-08).
	f := framing{reuse: !connClose && (!http10 || keepAlive) && kaMax != 0, idle: kaTimeout}
	switch {
	case head:
		f.kind, f.cl = bodyNone, cl
		if hasTE {
			f.cl = -1
		}
	case code == 204 || code == 304:
		f.kind, f.cl = bodyNone, 0
	case hasTE && teChunked:
		f.kind, f.cl = bodyChunked, -1
		if cl >= 0 {
			f.reuse = false // TE and CL together: smuggling smell
		}
	case hasTE:
		f.kind, f.cl, f.reuse = bodyClose, -1, false
	case cl >= 0:
		f.kind, f.n, f.cl = bodyLength, cl, cl
		if cl == 0 {
			f.kind = bodyNone
		}
	default:
		f.kind, f.cl, f.reuse = bodyClose, -1, false
	}
	return f, nil
}

// parseContentLength checks one Content-Length field value: a list of
// 1*DIGIT elements, each at most math.MaxInt64 and all equal to each other
// and to *cl when *cl >= 0.
func parseContentLength(v []byte, cl *int64) error {
	if len(v) == 0 {
		return &ProtocolError{Kind: "content-length", Detail: "empty Content-Length"}
	}
	for rest, more := v, true; more; {
		var el []byte
		el, rest, more = cutComma(rest)
		n, ok := parseDigits(el)
		if !ok {
			return &ProtocolError{Kind: "content-length", Detail: "invalid Content-Length " + quote(v)}
		}
		if *cl >= 0 && n != *cl {
			return &ProtocolError{Kind: "content-length", Detail: "conflicting Content-Length values " + quote(v)}
		}
		*cl = n
	}
	return nil
}

// parseDigits parses 1*DIGIT into a non-negative int64.
func parseDigits[T string | []byte](s T) (int64, bool) {
	if len(s) == 0 {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		d := int64(c - '0')
		if n > (math.MaxInt64-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

// cutComma returns the first element of a comma-separated list, with
// surrounding SP/HTAB removed, the rest after the comma, and whether there
// was a comma (so a trailing comma yields one more, empty, element).
func cutComma(s []byte) (el, rest []byte, more bool) {
	i := 0
	for i < len(s) && s[i] != ',' {
		i++
	}
	el = s[:i]
	if i < len(s) {
		rest, more = s[i+1:], true
	}
	for len(el) != 0 && (el[0] == ' ' || el[0] == '\t') {
		el = el[1:]
	}
	for len(el) != 0 && (el[len(el)-1] == ' ' || el[len(el)-1] == '\t') {
		el = el[:len(el)-1]
	}
	return el, rest, more
}

// eqFold reports whether b equals s under ASCII case folding; s is lower case.
func eqFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range b {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != s[i] {
			return false
		}
	}
	return true
}

// hasToken reports whether the comma-separated list v holds token t (lower case).
func hasToken(v []byte, t string) bool {
	for more := true; more; {
		var el []byte
		el, v, more = cutComma(v)
		if eqFold(el, t) {
			return true
		}
	}
	return false
}
