package guise

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http/httptrace"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/guise-http/guise/fields"
	"github.com/guise-http/guise/internal/h1"
	"github.com/guise-http/guise/internal/h2"
	"github.com/guise-http/guise/internal/pool"
	"github.com/guise-http/guise/internal/reqhead"
	"github.com/guise-http/guise/profile"
)

// roundTrip sends req once over a connection of st and returns the
// response head. x holds the fields guise computes for this request
// (Cookie, Referer, Sec-Fetch-Site). It retries once, on a new connection, a
// replayable request whose reused connection turned out to be closed by the
// server, or whose HTTP/2 stream the server refused unprocessed.
func (st *transportState) roundTrip(ctx context.Context, req *Request, o *options, x fields.Header) (*Response, error) {
	method := req.method()
	if !validMethod(method) {
		return nil, fmt.Errorf("%w: invalid method %q", ErrRefusedToSend, method)
	}
	u, err := req.parse()
	if err != nil {
		return nil, err
	}
	// A caller's Proxy-Authorization is for a proxy that takes the
	// request itself (an http:// URL through an HTTP proxy whose URL
	// carries no credentials); anywhere else it would reach the origin.
	proxyAuth := o.proxy != nil && o.proxy.http && o.proxy.auth == "" && u.scheme == "http"
	if err := validHeader(req.Header, proxyAuth); err != nil {
		return nil, err
	}
	b, replayable := req.body()
	key := pool.Key{Scheme: u.scheme, Addr: u.addr, Profile: o.profile.p.Name, TLS: o.tlsID()}
	if o.proxy != nil {
		key.Proxy = o.proxy.key
	}

	// The Response is allocated once the head has arrived, with what its
	// protocol needs.
	trace := httptrace.ContextClientTrace(ctx)
	var tm Timings
	tm.Start = time.Now()
	fresh := false // the retry of a request HTTP/2 left unprocessed
	for attempt := 0; ; attempt++ {
		if trace != nil && trace.GetConn != nil {
			trace.GetConn(u.addr)
		}
		var c *conn
		var reused bool
		if fresh && !o.isolated {
			// A new connection: the one that refused the stream (or
			// went away) may refuse it again.
			c, reused, err = st.h2Dial(ctx, key, o, trace)
		} else {
			c, reused, err = st.getConn(ctx, key, o, trace, tm.Start)
		}
		if err != nil {
			return nil, err
		}
		tm.GotConn, tm.Reused = time.Since(tm.Start), reused
		if !reused {
			tm.Connect, tm.TLS = c.times.connect, c.times.tls
		}
		if trace != nil && trace.GotConn != nil {
			trace.GotConn(httptrace.GotConnInfo{Conn: c.nc, Reused: reused, WasIdle: reused})
		}
		if c.h2 != nil {
			resp, err := st.roundTripH2(ctx, c, req, u, b, o, x)
			if err == nil {
				resp.Timings = tm
				resp.gotHead(trace, time.Since(tm.Start))
				return resp, nil
			}
			if attempt == 0 && (replayable || b.r == nil) && h2.CanRetry(err) && ctx.Err() == nil {
				fresh = true
				continue
			}
			return nil, classify(ctx, err)
		}
		r := &c.req
		r.Method = method
		r.Target = u.target
		ex := append(append(c.ex[:0], fields.Field{Name: "Host", Value: u.authority}), x...)
		if c.absolute {
			r.Target = u.scheme + "://" + u.authority + u.target
			if c.auth != "" {
				ex = append(ex, fields.Field{Name: "Proxy-Authorization", Value: c.auth})
			}
		}
		hr := reqhead.Request{Proto: profile.HTTP1, Kind: req.Kind, Method: method, Header: req.Header, Extra: ex,
			ContentLength: b.length, Origin: &u.origin, Redirected: req.redirected, Scripted: req.Scripted}
		if host, blk, ok := o.profile.headBlock(&hr); ok {
			r.Header, r.HeaderBlock = append(r.Header[:0], host), blk
		} else {
			r.HeaderBlock = nil
			r.Header, err = o.profile.appendHeader(r.Header[:0], &hr)
			if err != nil {
				c.abandon()
				return nil, err
			}
		}
		r.Body, r.BodyBytes, r.ContentLength = b.r, b.bytes, b.length
		r.HeadTimeout, r.BodyIdleTimeout = st.headTO, st.bodyTO
		// Profile fields were checked when the profile was parsed, the
		// caller's by validHeader above, and guise's own (Host, Cookie,
		// Referer) come from a parsed URL or the jar.
		r.Validated = true
		r1, head, err := c.roundTrip(ctx, r, tm.Start)
		if err == nil {
			r1.Timings = tm
			r1.gotHead(trace, head)
			return &r1.Response, nil
		}
		// RoundTrip closed the connection and will not call Release.
		c.abandon()
		if reused && attempt == 0 && (replayable || idempotent(method) && b.r == nil) && errors.Is(err, h1.ErrNoResponse) && ctx.Err() == nil {
			continue
		}
		return nil, classify(ctx, err)
	}
}

// validHeader refuses a caller's field that could not go on the wire as
// given, before any connection is made.
func validHeader(h Header, proxyAuth bool) error {
	for _, f := range h {
		if !fields.ValidName(f.Name) {
			return fmt.Errorf("%w: invalid header field name %q", ErrRefusedToSend, f.Name)
		}
		if !fields.ValidValue(f.Value) {
			return fmt.Errorf("%w: invalid value for header field %q", ErrRefusedToSend, f.Name)
		}
		if !proxyAuth && len(f.Name) == len("proxy-authorization") && fields.EqualFold(f.Name, "proxy-authorization") {
			// Directly or through a tunnel it would reach the origin
			// (RELIABILITY P-06); with the proxy URL's credentials it
			// would go twice.
			return fmt.Errorf("%w: Proxy-Authorization goes only on an http:// request through an HTTP proxy without credentials in its URL", ErrRefusedToSend)
		}
	}
	return nil
}

// roundTripH2 sends req on a stream of c, whose slot getConn reserved, and
// returns the response head in a new Response.
func (st *transportState) roundTripH2(ctx context.Context, c *conn, req *Request, u *parsedURL, b body, o *options, x fields.Header) (*Response, error) {
	kind := req.Kind
	if kind == 0 {
		kind = profile.Navigate
	}
	resp := &h2Response{}
	r := &resp.req
	*r = h2.Request{
		Method:          req.method(),
		Scheme:          u.scheme,
		Authority:       u.authority,
		Path:            u.target,
		Body:            b.r,
		BodyBytes:       b.bytes,
		ContentLength:   b.length,
		HeadTimeout:     st.headTO,
		BodyIdleTimeout: st.bodyTO,
		// Profile fields were checked when the profile was parsed, the
		// caller's by validHeader, guise's own come from a parsed URL or
		// the jar, and header lower-cases the names.
		Validated: true,
	}
	if int(kind) < kindCount {
		r.Priority = o.profile.prio[kind]
	}
	// The request's fields are needed only until RoundTripStream has
	// encoded them: they are built in pooled scratch, not in the Response.
	scratch := h2HeaderPool.Get().(*[h2ScratchFields]Field)
	defer func() {
		clear(scratch[:])
		h2HeaderPool.Put(scratch)
	}()
	var err error
	r.Header, err = o.profile.appendHeader(scratch[:0], &reqhead.Request{Proto: profile.H2, Kind: kind, Method: req.method(), Header: req.Header, Extra: x,
		ContentLength: b.length, Origin: &u.origin, Redirected: req.redirected, Scripted: req.Scripted})
	if err != nil {
		c.h2.CancelReservation()
		c.abandon()
		return nil, err
	}
	hr, err := c.h2.RoundTripStream(ctx, r, &resp.st)
	r.Header = nil
	if err != nil {
		if errors.Is(err, h2.ErrRefusedToSend) {
			// Refused before a stream was taken: the reservation stands.
			c.h2.CancelReservation()
		}
		c.abandon()
		return nil, err
	}
	resp.h2 = hr
	resp.StatusCode = hr.StatusCode
	resp.Proto = "HTTP/2.0"
	resp.Header = hr.Header
	resp.ContentLength = hr.ContentLength
	resp.body.r = hr.Body
	resp.Body = &resp.body
	return &resp.Response, nil
}

// h2ScratchFields is the size of the pooled arrays HTTP/2 request heads
// are built in; a larger head grows out of its array (and that copy is not
// pooled).
const h2ScratchFields = 24

// h2HeaderPool holds *[h2ScratchFields]Field, cleared.
var h2HeaderPool = sync.Pool{New: func() any { return new([h2ScratchFields]Field) }}

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

// abandon gives up a connection the h1 engine will not release: closed, or
// never used.
func (c *conn) abandon() {
	if c.h2 != nil {
		// The stream failed; a shared connection decides its own fate, an
		// isolated call's goes with it.
		if !c.pooled {
			c.h2.Close()
		}
		return
	}
	c.h1.Close()
	if c.pooled {
		c.st.pool.Drop(c.key)
	}
}

func idempotent(m string) bool {
	switch m {
	case "GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE":
		return true
	}
	return false
}

// classify turns an engine error into the error callers test for.
func classify(ctx context.Context, err error) error {
	var te *h1.TimeoutError
	var te2 *h2.TimeoutError
	switch {
	case ctx.Err() != nil && !errors.Is(err, ctx.Err()):
		return fmt.Errorf("%w (%v)", ctx.Err(), err)
	case errors.As(err, &te):
		ph := PhaseHead
		if te.Phase == h1.PhaseBodyIdle {
			ph = PhaseBodyIdle
		}
		return &TimeoutError{Phase: ph, Err: err}
	case errors.As(err, &te2):
		// Before the response head (classify's only use), whatever
		// timed out (the head's wait, or the connection's ping) kept
		// the head from coming; the body's are responseBody.finish's.
		return &TimeoutError{Phase: PhaseHead, Err: err}
	}
	return err
}

// opName is the method as net/http's url.Error.Op spells it: "Get", "Post".
func opName(m string) string {
	switch m {
	case "GET":
		return "Get"
	case "POST":
		return "Post"
	case "HEAD":
		return "Head"
	case "PUT":
		return "Put"
	case "DELETE":
		return "Delete"
	}
	if len(m) > 1 {
		return m[:1] + strings.ToLower(m[1:])
	}
	return m
}

// responseBody is Response.Body: the engine's body plus what the request's
// lifetime needs (its timeout's cancel) and error wrapping.
type responseBody struct {
	r       io.ReadCloser
	plain   readerOnly // r without its WriterTo, for io.Copy
	cancel  context.CancelFunc
	op, url string
	timeout bool
	done    bool
}

// readerOnly hides every method of r but Read.
type readerOnly struct{ r io.Reader }

func (o *readerOnly) Read(p []byte) (int, error) { return o.r.Read(p) }

func (b *responseBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil {
		err = b.finish(err)
	}
	return n, err
}

// WriteTo copies the body to w without an intermediate buffer of the
// caller's (io.Copy uses it).
func (b *responseBody) WriteTo(w io.Writer) (int64, error) {
	var n int64
	var err error
	if wt, ok := b.r.(io.WriterTo); ok {
		n, err = wt.WriteTo(w)
	} else {
		// Only Read, so that io.Copy does not come back here; a field,
		// so that the wrapper costs no allocation.
		b.plain.r = b.r
		n, err = io.Copy(w, &b.plain)
		b.plain.r = nil
	}
	if err == nil {
		err = io.EOF
	}
	if err = b.finish(err); err == io.EOF {
		err = nil
	}
	return n, err
}

// Close closes the body: an unfinished one is drained (up to the
// Transport's DrainLimit) so its connection can be reused, or closed.
func (b *responseBody) Close() error {
	err := b.r.Close()
	b.finish(io.EOF)
	return err
}

func (b *responseBody) finish(err error) error {
	if !b.done {
		b.done = true
		if b.cancel != nil {
			defer b.cancel()
		}
	}
	if err == io.EOF {
		return err
	}
	var te *h1.TimeoutError
	var te2 *h2.TimeoutError
	switch {
	case errors.As(err, &te), errors.As(err, &te2):
		err = &TimeoutError{Phase: PhaseBodyIdle, Err: err}
	case b.timeout && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded)):
		err = &TimeoutError{Phase: PhaseTotal, Err: err}
	}
	return &Error{Op: b.op, URL: redact(b.url), Err: err}
}
