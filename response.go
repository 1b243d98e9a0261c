package guise

import (
	"io"
	"net/http/httptrace"
	"time"
	"unsafe"

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

	// trailer is the engine's trailer field, filled in at the end of the
	// body; nil until the head has arrived.
	trailer *Header
	body    responseBody
}

// h1Response is a Response with what an HTTP/1.1 exchange needs. It is
// allocated as one of the types below, sized once the head has been
// parsed, with room in the same allocation for the head's fields and for
// the copy of the head (and of an inline body) that their names and values
// are cut from: one allocation per response. Each type fills a malloc size
// class (TestResponseSizeClasses); a response comes in the smallest that
// holds it, so most pay for no more room than they use (the garbage
// collector's work grows with the bytes allocated per request). Larger
// heads get fields room only, and the copy is allocated on its own.
//
// A header value the caller keeps keeps the whole Response alive: at most
// 4 KiB, and, for a body streamed from the connection, the connection's
// engine and buffers with it (a body complete with its head refers to no
// connection). guise's own long-lived state copies what it keeps (the
// cookie jar: TestCookieDoesNotKeepResponse).
type h1Response struct {
	Response
	eng h1.Response
}

// The room types, named for their size class: hdr holds the fields, buf
// (last, so that the garbage collector does not scan it) the head's copy,
// sized to fill the class. An object of over 512 bytes with pointers
// carries an 8-byte header of the runtime's in its slot.
const (
	mallocHeader = 8
	h1Base       = int(unsafe.Sizeof(h1Response{}))
	fieldSize    = int(unsafe.Sizeof(Field{}))
	room768      = 768 - mallocHeader - h1Base - 4*fieldSize
	room896      = 896 - mallocHeader - h1Base - 4*fieldSize
	room1024     = 1024 - mallocHeader - h1Base - 8*fieldSize
	room1280     = 1280 - mallocHeader - h1Base - 8*fieldSize
	room1536     = 1536 - mallocHeader - h1Base - 16*fieldSize
	room2048     = 2048 - mallocHeader - h1Base - 16*fieldSize
	room2688     = 2688 - mallocHeader - h1Base - 32*fieldSize
	room4096     = 4096 - mallocHeader - h1Base - 32*fieldSize
)

type (
	h1Response768 struct {
		h1Response
		hdr [4]Field
		buf [room768]byte
	}
	h1Response896 struct {
		h1Response
		hdr [4]Field
		buf [room896]byte
	}
	h1Response1024 struct {
		h1Response
		hdr [8]Field
		buf [room1024]byte
	}
	h1Response1280 struct {
		h1Response
		hdr [8]Field
		buf [room1280]byte
	}
	h1Response1536 struct {
		h1Response
		hdr [16]Field
		buf [room1536]byte
	}
	h1Response2048 struct {
		h1Response
		hdr [16]Field
		buf [room2048]byte
	}
	h1Response2688 struct {
		h1Response
		hdr [32]Field
		buf [room2688]byte
	}
	h1Response4096 struct {
		h1Response
		hdr [32]Field
		buf [room4096]byte
	}

	h1Response4 struct {
		h1Response
		hdr [4]Field
	}
	h1Response8 struct {
		h1Response
		hdr [8]Field
	}
	h1Response16 struct {
		h1Response
		hdr [16]Field
	}
	h1Response32 struct {
		h1Response
		hdr [32]Field
	}
)

// newH1Response makes a Response with room for nfields header fields and,
// when they fit, nbytes of head in its own allocation; room is the bytes'
// room (nil when they do not fit).
func newH1Response(nfields, nbytes int) (r *h1Response, room []byte) {
	var hdr []Field
	switch {
	case nfields <= 4 && nbytes <= room768:
		x := new(h1Response768)
		r, hdr, room = &x.h1Response, x.hdr[:0], x.buf[:0]
	case nfields <= 4 && nbytes <= room896:
		x := new(h1Response896)
		r, hdr, room = &x.h1Response, x.hdr[:0], x.buf[:0]
	case nfields <= 8 && nbytes <= room1024:
		x := new(h1Response1024)
		r, hdr, room = &x.h1Response, x.hdr[:0], x.buf[:0]
	case nfields <= 8 && nbytes <= room1280:
		x := new(h1Response1280)
		r, hdr, room = &x.h1Response, x.hdr[:0], x.buf[:0]
	case nfields <= 16 && nbytes <= room1536:
		x := new(h1Response1536)
		r, hdr, room = &x.h1Response, x.hdr[:0], x.buf[:0]
	case nfields <= 16 && nbytes <= room2048:
		x := new(h1Response2048)
		r, hdr, room = &x.h1Response, x.hdr[:0], x.buf[:0]
	case nfields <= 32 && nbytes <= room2688:
		x := new(h1Response2688)
		r, hdr, room = &x.h1Response, x.hdr[:0], x.buf[:0]
	case nfields <= 32 && nbytes <= room4096:
		x := new(h1Response4096)
		r, hdr, room = &x.h1Response, x.hdr[:0], x.buf[:0]
	case nfields <= 4:
		x := new(h1Response4)
		r, hdr = &x.h1Response, x.hdr[:0]
	case nfields <= 8:
		x := new(h1Response8)
		r, hdr = &x.h1Response, x.hdr[:0]
	case nfields <= 16:
		x := new(h1Response16)
		r, hdr = &x.h1Response, x.hdr[:0]
	case nfields <= 32:
		x := new(h1Response32)
		r, hdr = &x.h1Response, x.hdr[:0]
	default:
		r, hdr = new(h1Response), make([]Field, 0, nfields)
	}
	r.eng.Header = hdr
	return r, room
}

// h2Response is a Response with what an HTTP/2 exchange needs, in one
// allocation: the stream (which holds the response fields) and the request
// the stream refers to until it ends.
type h2Response struct {
	Response
	req h2.Request
	st  h2.Stream
}

// fill copies what the engine parsed into the public fields.
func (r *h1Response) fill() {
	r.trailer = &r.eng.Trailer
	r.StatusCode = r.eng.StatusCode
	r.Proto = r.eng.Proto
	r.Status = r.eng.Reason
	r.Header = r.eng.Header
	r.ContentLength = r.eng.ContentLength
	r.body.r = &r.eng.Body
	r.Body = &r.body
}

// Trailer returns the trailer fields of a chunked or HTTP/2 body. Call it
// only once Body has been read to the end: before, it may be empty, and
// over HTTP/2 the connection may be filling it in.
func (r *Response) Trailer() Header {
	if r.trailer == nil {
		return nil
	}
	return *r.trailer
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

// Timings says where a request's time went. Durations of the connection
// phases are zero when the request reused a connection. guise also reports
// these events to a net/http/httptrace.ClientTrace carried by the request's
// context (httptrace.WithClientTrace), so instrumentation written for
// net/http, such as OpenTelemetry's, works unchanged.
type Timings struct {
	Start   time.Time     // when the request (this hop) started
	Connect time.Duration // name resolution and TCP connect (and the proxy handshake)
	TLS     time.Duration // TLS handshake
	GotConn time.Duration // from Start until a connection was ready
	Head    time.Duration // from Start until the response head was parsed
	Reused  bool          // the connection had served a request before
}

// gotHead records that the head arrived head after the start and reports
// it to trace. The write events are reported here too, in their order: the
// engines do not report the end of the write separately yet.
func (r *Response) gotHead(trace *httptrace.ClientTrace, head time.Duration) {
	r.Timings.Head = head
	if trace == nil {
		return
	}
	if trace.WroteHeaders != nil {
		trace.WroteHeaders()
	}
	if trace.WroteRequest != nil {
		trace.WroteRequest(httptrace.WroteRequestInfo{})
	}
	if trace.GotFirstResponseByte != nil {
		trace.GotFirstResponseByte()
	}
}
