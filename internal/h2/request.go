package h2

import (
	"io"
	"time"

	"github.com/guise-http/guise/fields"
)

// Request is one HTTP/2 request. Header holds the regular fields in wire
// order, with lower-case names as the browser sends them; the pseudo-header
// fields come from Method, Scheme, Authority and Path in Config.PseudoOrder.
// Connection-specific fields (connection, keep-alive, proxy-connection,
// transfer-encoding, upgrade, host, te other than "trailers") are refused with
// ErrRefusedToSend before anything is sent. h2 adds no field of its own (not
// even content-length): the caller sends what the browser would.
//
// The Request, its Header and BodyBytes must not be changed until RoundTrip
// returns and, when a body is sent, until the response body is done.
type Request struct {
	Method, Scheme, Authority, Path string
	Header                          fields.Header
	// Body, if non-nil, is read and sent under flow control after the
	// HEADERS. It is closed (if an io.Closer) when the stream ends early.
	Body io.Reader
	// BodyBytes is a body held in memory; it is used when Body is nil. A
	// small body goes out in the same write as the HEADERS.
	BodyBytes []byte
	// ContentLength is the body length, or -1 when unknown. With Body set, 0
	// also means unknown (as in net/http); a positive ContentLength that the
	// body does not match fails the stream with ErrBodyLengthMismatch.
	ContentLength int64
	// Trailer fields are sent after the body.
	Trailer fields.Header
	// Priority is the HEADERS priority.
	Priority Priority
	// HeadTimeout bounds the wait for the response head; 0 means none.
	HeadTimeout time.Duration
	// BodyIdleTimeout bounds each wait for response body bytes; 0 means none.
	BodyIdleTimeout time.Duration
	// Validated says the caller has already checked that every name in
	// Header is a lower-case token and every value is valid, so RoundTrip
	// skips those checks (it still refuses connection-specific fields).
	// Trailer is checked either way.
	Validated bool
}

// Response is an HTTP/2 response head and its body.
type Response struct {
	StatusCode int
	// Header holds the regular fields in wire order (no pseudo-headers).
	Header fields.Header
	// ContentLength is the content-length value, or -1 when unknown.
	ContentLength int64
	// Body is the response body. The caller must Close it. Close before EOF
	// resets the stream with CANCEL and returns the unread flow-control credit
	// to the connection. Body is not safe for concurrent use.
	Body io.ReadCloser
	// Trailer holds the trailer fields; it is set when Body returned io.EOF.
	Trailer fields.Header
}

// connSpecific are the fields HTTP/2 forbids (RFC 9113 8.2.2), plus host,
// which :authority replaces.
var connSpecific = [...]string{"connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "host"}

// validRequest checks req before anything is sent.
func validRequest(req *Request, ext *Extended) error {
	if !fields.ValidName(req.Method) {
		return refusedf("invalid method %q", req.Method)
	}
	if ext != nil && (req.Method != "CONNECT" || ext.Protocol == "" || !validPseudo(ext.Protocol)) {
		return refusedf("invalid :protocol %q on %s", ext.Protocol, req.Method)
	}
	if req.Method != "CONNECT" || ext != nil {
		if req.Scheme == "" || !validPseudo(req.Scheme) {
			return refusedf("invalid scheme %q", req.Scheme)
		}
		if req.Path == "" || !validPseudo(req.Path) {
			return refusedf("invalid path %q", req.Path)
		}
	}
	if !validPseudo(req.Authority) {
		return refusedf("invalid authority %q", req.Authority)
	}
	if err := validFields(req.Header, false, req.Validated); err != nil {
		return err
	}
	if err := validFields(req.Trailer, true, false); err != nil {
		return err
	}
	if req.Body != nil && len(req.BodyBytes) > 0 {
		return refusedf("both Body and BodyBytes set")
	}
	if req.Body == nil && req.ContentLength > 0 && int64(len(req.BodyBytes)) != req.ContentLength {
		return ErrBodyLengthMismatch
	}
	return nil
}

// validPseudo reports whether v may be a pseudo-header value: visible ASCII.
func validPseudo(v string) bool {
	for i := 0; i < len(v); i++ {
		if v[i] <= ' ' || v[i] >= 0x7f {
			return false
		}
	}
	return true
}

// validFields checks the fields of a request head or trailer; validated
// skips the checks of names and values that the caller made.
func validFields(h fields.Header, trailer, validated bool) error {
	for _, f := range h {
		if !validated && !validLowerName(f.Name) {
			return refusedf("invalid field name %q", f.Name)
		}
		if !validated && !fields.ValidValue(f.Value) {
			return refusedf("invalid value for field %q", f.Name)
		}
		for _, c := range connSpecific {
			if f.Name == c {
				return refusedf("connection-specific field %q", f.Name)
			}
		}
		if f.Name == "te" && (trailer || f.Value != "trailers") {
			return refusedf("field te: %q", f.Value)
		}
	}
	return nil
}

// validLowerName reports whether name is a token without upper-case letters.
func validLowerName(name string) bool {
	if !fields.ValidName(name) {
		return false
	}
	for i := 0; i < len(name); i++ {
		if 'A' <= name[i] && name[i] <= 'Z' {
			return false
		}
	}
	return true
}
