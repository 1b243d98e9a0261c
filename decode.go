package guise

import (
	"github.com/guise-http/guise/fields"
	"github.com/guise-http/guise/internal/decode"
)

// Content decoding errors, re-exported for errors.Is and errors.As.
var (
	// ErrTooManyEncodings: the response stacked more than 5 content
	// codings (over all its Content-Encoding fields together).
	ErrTooManyEncodings = decode.ErrTooManyEncodings
	// ErrDecodeLimit: the decoded body grew past Session.MaxBodySize.
	ErrDecodeLimit = decode.ErrDecodeLimit
)

// DecodeError reports a corrupt or truncated encoded body.
type DecodeError = decode.Error

// decodeBody undoes the response's Content-Encoding, as browsers do, when
// guise asked for it: the profile's Accept-Encoding went out unchanged (the
// caller set no Accept-Encoding or Range of its own) and the response has a
// body. Codings guise does not know leave the body and its header as they
// are. A decoded response has no Content-Encoding and no Content-Length.
func decodeBody(resp *Response, req *Request, limit int64) error {
	if !resp.Header.Has("content-encoding") || req.method() == "HEAD" ||
		resp.StatusCode == 204 || resp.StatusCode == 304 || resp.StatusCode < 200 ||
		req.Header.Has("accept-encoding") || req.Header.Has("range") {
		return nil
	}
	var vals [4]string // no allocation for the usual one or two fields
	vs := vals[:0]
	for _, f := range resp.Header {
		if fields.EqualFold(f.Name, "content-encoding") {
			vs = append(vs, f.Value)
		}
	}
	codings, ok, err := decode.Chain(vs)
	if err != nil {
		return err
	}
	if !ok || len(codings) == 0 {
		return nil
	}
	rc, err := decode.NewReader(resp.body.r, codings, limit)
	if err != nil {
		return err
	}
	resp.body.r = rc
	resp.Header = resp.Header.Del("content-encoding").Del("content-length")
	resp.ContentLength = -1
	resp.Decoded = true
	return nil
}
