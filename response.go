package guise

import (
	"io"

	"github.com/guise-http/guise/internal/h1"
	"github.com/guise-http/guise/internal/h2"
)

// Response is a response head and its body. The caller must read Body to
// the end or Close it: that returns the connection to the pool (or closes
// it) and releases the request's timeout.
type Response struct {
	StatusCode int
	// Proto is "HTTP/1.1", "HTTP/1.0" or "HTTP/2.0".
	Proto string
	// Status is the reason phrase as sent ("OK"); empty over HTTP/2.
	Status string
	// Header holds the response fields in the order and case received.
	Header Header
	// ContentLength is the body length from the head; -1 when unknown.
	ContentLength int64
	// Body streams the body. It is never nil; it is empty for HEAD and for
	// 204 and 304 responses. Errors it returns are *Error.
	Body io.ReadCloser

	// URL is the URL this response answers: the last of a redirect chain.
	URL string
	// Decoded reports that guise undid the body's Content-Encoding; the
	// Content-Encoding and Content-Length fields were removed from Header.
	Decoded bool
	// Timings says where the time of the request that got this response
	// went (the last hop of a redirect chain).
	Timings Timings

	h1    h1.Response
	h2req h2.Request
	h2    *h2.Response
	h2st  h2.Stream // the first attempt's HTTP/2 stream, in the same allocation
	tries int       // HTTP/2 attempts made; a retry takes a new Stream
	body  responseBody
	url   *parsedURL
	hdr   [16]Field // backs Header for heads of up to 16 fields
	extra [4]Field  // backs the per-request fields guise computes
}

// fill copies what the engine parsed into the public fields.
func (r *Response) fill() {
	r.StatusCode = r.h1.StatusCode
	r.Proto = r.h1.Proto
	r.Status = r.h1.Reason
	r.Header = r.h1.Header
	r.ContentLength = r.h1.ContentLength
	r.body.r = &r.h1.Body
	r.Body = &r.body
}

// fillH2 copies what the HTTP/2 engine returned into the public fields.
func (r *Response) fillH2(hr *h2.Response) {
	r.h2 = hr
	r.StatusCode = hr.StatusCode
	r.Proto = "HTTP/2.0"
	r.Header = hr.Header
	r.ContentLength = hr.ContentLength
	r.body.r = hr.Body
	r.Body = &r.body
}

// Trailer returns the trailer fields of a chunked or HTTP/2 body; it is
// empty until Body has been read to the end.
func (r *Response) Trailer() Header {
	if r.h2 != nil {
		return r.h2.Trailer
	}
	return r.h1.Trailer
}

// Bytes reads the whole body, closes it and returns it. The buffer is sized
// from Content-Length when the server sent one, so a body of known length
// is read with one allocation.
func (r *Response) Bytes() ([]byte, error) {
	defer r.Body.Close()
	size := 512
	if n := r.ContentLength; n >= 0 && n < 64<<20 {
		size = int(n) + 1 // room to see EOF without growing
	}
	buf := make([]byte, 0, size)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		k, err := r.Body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+k]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}
