package guise

import (
	"context"
	"crypto/x509"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/guise-http/guise/fields"
	"github.com/guise-http/guise/internal/h1"
	"github.com/guise-http/guise/internal/h2"
	"github.com/guise-http/guise/internal/h3"
	"github.com/guise-http/guise/internal/pool"
	"github.com/guise-http/guise/internal/reqhead"
	"github.com/guise-http/guise/profile"
)

// conn is one connection: HTTP/1.1 (pooled one request at a time) or
// HTTP/2 (shared by concurrent requests). It is what the pool holds, and
// it builds each request for its protocol's engine.
type conn struct {
	st  *transportState
	key pool.Key
	h1  *h1.Conn
	h2  *h2.ClientConn
	h3  *h3.ClientConn
	// h3Early, for an HTTP/3 connection that resumed with 0-RTT, is
	// closed when its handshake completes: until then only idempotent
	// requests go out (in 0-RTT, which a server may replay).
	h3Early <-chan struct{}
	// altUsed is an HTTP/3 connection's alternative authority, for
	// Alt-Used.
	altUsed string
	req     h1.Request // reused: one request at a time per HTTP/1.1 conn
	// resp is the Response of the request in flight, made by allocResp
	// once the engine knows the head's size; ex holds the fields guise
	// adds to a request (Host, ...) until it is written.
	resp   *h1Response
	ex     [4]fields.Field
	pooled bool     // false for isolated calls
	nc     net.Conn // the connection as dialed (TLS included), for tracing
	// inRoundTrip and deferred hold back a release that comes while
	// RoundTrip runs (an inline body): c.req is still in use then.
	inRoundTrip bool
	deferred    uint8
	// absolute is set on a connection to an HTTP proxy that takes http://
	// requests in absolute form; auth is the proxy's credentials for them.
	absolute bool
	auth     string
	// idleSince is when a pooled HTTP/2 connection last became idle, or
	// was dialed (Unix ns).
	idleSince atomic.Int64
	times     dialTimes // how long dialing took; reported by the first request
	// roots is the custom root pool the connection was verified against:
	// held so that the pool, whose address is in key, is not collected and
	// its address reused by another pool while the key is in use.
	roots *x509.CertPool
}

func (c *conn) Close() error {
	switch {
	case c.h2 != nil:
		return c.h2.Close()
	case c.h3 != nil:
		return c.h3.Close()
	}
	return c.h1.Close()
}

// Reserve, Usable, IdleSince and Retire are what the pool asks of a shared
// (HTTP/2) connection; it never asks them of an HTTP/1.1 one.

// An HTTP/3 connection takes requests while it can: QUIC's stream limit
// makes a request wait inside the engine, as HTTP/2's queue does.

func (c *conn) Reserve() bool {
	if c.h3 != nil {
		return c.h3.CanTakeNewRequest()
	}
	return c.h2.ReserveNewRequest()
}

func (c *conn) Usable() bool {
	if c.h3 != nil {
		return c.h3.CanTakeNewRequest()
	}
	return c.h2.Usable()
}

func (c *conn) Retire() {
	if c.h3 != nil {
		c.h3.CloseWhenIdle()
		return
	}
	c.h2.CloseWhenIdle()
}

func (c *conn) IdleSince() (time.Time, bool) {
	if c.h3 != nil {
		if c.h3.ActiveStreams() > 0 {
			return time.Time{}, false
		}
		return time.Unix(0, c.idleSince.Load()), true
	}
	if !c.h2.Idle() {
		return time.Time{}, false
	}
	return time.Unix(0, c.idleSince.Load()), true
}

// onRelease is called by the h1 engine when a request is over.
func (c *conn) onRelease(_ *h1.Conn, reusable bool) {
	if c.inRoundTrip {
		// An inline body released the connection before RoundTrip
		// returned; hand it on only once this request is done with c.req.
		c.deferred = releaseDrop
		if reusable {
			c.deferred = releasePut
		}
		return
	}
	c.release(reusable)
}

// Deferred releases (conn.deferred).
const (
	releaseNone = iota
	releasePut
	releaseDrop
)

// roundTripH1 sends req over c, an HTTP/1.1 connection, and returns the
// response head and how long after start it arrived. x holds the fields
// guise computes for the request.
func (c *conn) roundTripH1(ctx context.Context, req *Request, u *parsedURL, b body, o *options, x fields.Header, start time.Time) (*Response, time.Duration, error) {
	method := req.method()
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
		var err error
		r.HeaderBlock = nil
		r.Header, err = o.profile.appendHeader(r.Header[:0], &hr)
		if err != nil {
			c.abandon()
			return nil, 0, err
		}
	}
	r.Body, r.BodyBytes, r.ContentLength = b.r, b.bytes, b.length
	r.HeadTimeout, r.BodyIdleTimeout = c.st.headTO, c.st.bodyTO
	// Profile fields were checked when the profile was parsed, the
	// caller's by validHeader, and guise's own (Host, Cookie, Referer)
	// come from a parsed URL or the jar.
	r.Validated = true
	r1, head, err := c.exchange(ctx, r, start)
	if err != nil {
		// The engine closed the connection and will not call Release.
		c.abandon()
		return nil, head, err
	}
	return &r1.Response, head, nil
}

// exchange runs one HTTP/1.1 exchange on c, keeping c out of the pool
// until it returns even when the body was complete in the head's read.
//
// It returns how long after start the head arrived (reading only the
// monotonic clock), which is also when an inline body's connection went
// idle.
func (c *conn) exchange(ctx context.Context, r *h1.Request, start time.Time) (*h1Response, time.Duration, error) {
	c.inRoundTrip, c.deferred = true, releaseNone
	_, err := c.h1.RoundTripNew(ctx, r)
	resp := c.resp
	c.resp = nil
	// The request is written; drop references to the caller's data.
	r.Body, r.BodyBytes, r.Header, r.HeaderBlock = nil, nil, r.Header[:0], nil
	clear(c.ex[:])
	if err == nil {
		resp.fill()
	} else {
		resp = nil
	}
	head := time.Since(start)
	c.inRoundTrip = false
	if d := c.deferred; d != releaseNone {
		c.deferred = releaseNone
		c.releaseAt(d == releasePut, start.Add(head))
	}
	return resp, head, err
}

// allocResp is the h1 engine's SetAlloc function.
func (c *conn) allocResp(nfields, nbytes int) (*h1.Response, []byte) {
	resp, room := newH1Response(nfields, nbytes)
	c.resp = resp
	return &resp.eng, room
}

func (c *conn) release(reusable bool) {
	var now time.Time
	if reusable && c.pooled {
		now = time.Now()
	}
	c.releaseAt(reusable, now)
}

// releaseAt is release for a caller that has read the clock: now is when
// the connection became idle.
func (c *conn) releaseAt(reusable bool, now time.Time) {
	switch {
	case !c.pooled:
		c.h1.Close()
	case reusable:
		c.st.pool.PutIdle(c.key, c, now, keepAliveTTL(c.h1.IdleTimeout()))
	default:
		c.st.pool.Drop(c.key)
	}
}

// keepAliveTTL is how long guise keeps an HTTP/1.1 connection idle whose
// server announced Keep-Alive: timeout=d (0: no limit of its own): a
// second, or half of d when that is less, before the server would close it,
// so that a request does not go out on a connection the server is closing
// (RELIABILITY X-08).
func keepAliveTTL(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return d - min(d/2, time.Second)
}

// roundTripH2 sends req on a stream of c, an HTTP/2 connection, and
// returns the response head in a new Response. reserved says that getConn
// reserved the stream's slot; without one, the request waits on c for a
// slot.
func (c *conn) roundTripH2(ctx context.Context, req *Request, u *parsedURL, b body, o *options, x fields.Header, reserved bool) (*Response, error) {
	st := c.st
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
		if reserved {
			c.h2.CancelReservation()
		}
		c.abandon()
		return nil, err
	}
	hr, err := c.h2.RoundTripStream(ctx, r, &resp.st)
	r.Header = nil
	if err != nil {
		if reserved && errors.Is(err, h2.ErrRefusedToSend) {
			// Refused before a stream was taken: the reservation stands.
			c.h2.CancelReservation()
		}
		c.abandon()
		return nil, err
	}
	resp.trailer = &hr.Trailer
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
