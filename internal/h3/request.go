package h3

import (
	"io"
	"strings"
	"time"

	"github.com/guise-http/guise/fields"
)

// Request is one HTTP/3 request. Header holds the regular fields in wire
// order with lower-case names, as the browser sends them; the
// pseudo-header fields come from Method, Scheme, Authority and Path in
// Config.PseudoOrder. h3 adds no field of its own. The Request must not
// be changed until RoundTrip returns and, with a body, until the
// response body is done.
type Request struct {
	Method, Scheme, Authority, Path string
	Header                          fields.Header
	// Body, if non-nil, is sent in DATA frames after the HEADERS; it is
	// closed (if an io.Closer) when the request ends.
	Body io.Reader
	// BodyBytes is a body held in memory, used when Body is nil.
	BodyBytes []byte
	// ContentLength is the body length, or -1 when unknown; with Body
	// set, 0 also means unknown. A body that does not match a positive
	// ContentLength fails with ErrBodyLengthMismatch.
	ContentLength int64
	// Trailer fields are sent after the body.
	Trailer fields.Header
	// HeadTimeout bounds the wait for the response head; 0 means none.
	HeadTimeout time.Duration
	// BodyIdleTimeout bounds each wait for response body bytes.
	BodyIdleTimeout time.Duration
}

// Response is an HTTP/3 response head and its body.
type Response struct {
	StatusCode int
	// Header holds the regular fields in wire order.
	Header fields.Header
	// ContentLength is the content-length value, or -1 when unknown.
	ContentLength int64
	// Body is the response body; the caller must Close it. Close before
	// EOF cancels the stream (H3_REQUEST_CANCELLED). Not safe for
	// concurrent use.
	Body io.ReadCloser
	// Trailer holds the trailer fields once Body returned io.EOF.
	Trailer fields.Header
}

var connSpecific = [...]string{"connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "host"}

func validRequest(req *Request) error {
	if !fields.ValidName(req.Method) {
		return refusedf("invalid method %q", req.Method)
	}
	if req.Method != "CONNECT" && (req.Scheme == "" || !validPseudo(req.Scheme) || req.Path == "" || !validPseudo(req.Path)) {
		return refusedf("invalid scheme %q or path %q", req.Scheme, req.Path)
	}
	if !validPseudo(req.Authority) {
		return refusedf("invalid authority %q", req.Authority)
	}
	for _, h := range []fields.Header{req.Header, req.Trailer} {
		for _, f := range h {
			if !fields.ValidName(f.Name) || strings.ToLower(f.Name) != f.Name {
				return refusedf("invalid field name %q", f.Name)
			}
			if !fields.ValidValue(f.Value) {
				return refusedf("invalid value for field %q", f.Name)
			}
			for _, c := range connSpecific {
				if f.Name == c {
					return refusedf("connection-specific field %q", f.Name)
				}
			}
			if f.Name == "te" && f.Value != "trailers" {
				return refusedf("field te: %q", f.Value)
			}
		}
	}
	if req.Body != nil && len(req.BodyBytes) > 0 {
		return refusedf("both Body and BodyBytes set")
	}
	if req.Body == nil && req.ContentLength > 0 && int64(len(req.BodyBytes)) != req.ContentLength {
		return ErrBodyLengthMismatch
	}
	return nil
}

func validPseudo(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] <= ' ' || v[i] >= 0x7f {
			return false
		}
	}
	return true
}
