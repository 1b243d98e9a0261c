package guise

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http/httptrace"
	"time"

	"github.com/guise-http/guise/fields"
	"github.com/guise-http/guise/internal/altsvc"
	"github.com/guise-http/guise/internal/h3"
	"github.com/guise-http/guise/internal/pool"
	"github.com/guise-http/guise/internal/reqhead"
	"github.com/guise-http/guise/internal/tlsfp"
	"github.com/guise-http/guise/profile"
)

// quicDialer opens a QUIC connection with ALPN h3 to addr (host:port),
// for serverName, with o's profile (its QUIC first flight) and o's
// certificate verification, keeping and using TLS tickets in sessions (nil
// for none: isolated calls). It returns once the handshake is done.
type quicDialer func(ctx context.Context, addr, serverName string, o *options, sessions *tlsfp.SessionCache) (h3.Conn, error)

// dialQUIC is guise's QUIC client (quic.go). quic-go's client must never
// go here: its ClientHello is Go's, not the browser's.
var dialQUIC quicDialer = dialGuiseQUIC

// quicHandshakeTimeout bounds a QUIC handshake: past it (UDP blocked,
// say) the alternative is marked broken. A variable for tests.
var quicHandshakeTimeout = 10 * time.Second

// maxTCPDelay bounds how long TCP waits for QUIC once QUIC is known to
// work.
const maxTCPDelay = 300 * time.Millisecond

// h3Route says whether the request to u goes to HTTP/3: forced (Protocol
// HTTP3), or an h3 alternative the Transport remembers for the origin
// (AnyProtocol, pooled, direct). It refuses HTTP3 where it cannot be had.
func (st *transportState) h3Route(u *parsedURL, o *options) (alt altsvc.Alternative, use, forced bool, err error) {
	if o.protocol == HTTP3 {
		switch {
		case st.quic == nil:
			return alt, false, false, fmt.Errorf("%w: %v (no QUIC client)", ErrProtocolUnsupported, HTTP3)
		case st.customDial:
			// The caller's DialContext routes TCP; UDP cannot follow it.
			return alt, false, false, fmt.Errorf("%w: %v with a Transport.DialContext", ErrProtocolUnsupported, HTTP3)
		case u.scheme != "https":
			return alt, false, false, fmt.Errorf("%w: %v over http://", ErrProtocolUnsupported, HTTP3)
		case o.proxy != nil:
			// Browsers send no HTTP/3 through HTTP or SOCKS proxies.
			return alt, false, false, fmt.Errorf("%w: %v through a proxy", ErrProtocolUnsupported, HTTP3)
		case o.profile.h3 == nil:
			return alt, false, false, fmt.Errorf("%w: %v: profile %s has no HTTP/3 recording", ErrProtocolUnsupported, HTTP3, o.profile.p.Name)
		}
		return altsvc.Alternative{Protocol: "h3"}, true, true, nil
	}
	if st.quic == nil || st.customDial || o.protocol != AnyProtocol || o.isolated || o.proxy != nil || u.scheme != "https" || o.profile.h3 == nil {
		return alt, false, false, nil
	}
	alt, use = st.alt.Lookup(u.origin, time.Now())
	return alt, use, false, nil
}

// rememberAltSvc records the Alt-Svc fields of a response from u's
// origin in the Transport's cache (never for isolated calls or through a
// proxy: see DESIGN, "Alt-Svc").
func (st *transportState) rememberAltSvc(u *parsedURL, o *options, h Header) {
	if st.quic == nil || st.customDial || o.isolated || o.proxy != nil || u.scheme != "https" {
		return
	}
	var vals []string
	for _, f := range h {
		if len(f.Name) == 7 && fields.EqualFold(f.Name, "alt-svc") {
			vals = append(vals, f.Value)
		}
	}
	if len(vals) > 0 {
		st.alt.Update(u.origin, vals, time.Now())
	}
}

// tcpDelay is how long the TCP connection waits for QUIC, as Chromium
// does: not at all until QUIC has worked on this Transport (both start
// at once), then 1.5 times the last QUIC handshake (Chromium: 1.5 times
// the smoothed RTT), at most maxTCPDelay.
func (st *transportState) tcpDelay() time.Duration {
	if !st.h3Works.Load() {
		return 0
	}
	return min(time.Duration(st.h3RTT.Load())*3/2, maxTCPDelay)
}

// dialH3 opens an HTTP/3 connection for key to alt.
func (st *transportState) dialH3(ctx context.Context, key pool.Key, o *options, alt altsvc.Alternative) (*conn, error) {
	host, port, err := net.SplitHostPort(key.Addr)
	if err != nil {
		return nil, err
	}
	if alt.Port != 0 {
		port = fmt.Sprint(alt.Port)
	}
	if o.profile.h3 == nil {
		return nil, fmt.Errorf("%w: profile %s has no HTTP/3 recording", ErrProtocolUnsupported, o.profile.p.Name)
	}
	hctx, cancel := context.WithTimeout(ctx, quicHandshakeTimeout)
	defer cancel()
	start := time.Now()
	// QUIC tickets go where TCP's do: the Transport's cache (a Session's
	// own Transport unless Sessions share one), none for isolated calls.
	var sessions *tlsfp.SessionCache
	if !o.isolated {
		sessions = st.sessions
	}
	addr := net.JoinHostPort(host, port)
	if to, ok := st.overrideH3(key.Addr, port); ok {
		addr = to // Transport.Resolve: UDP goes where TCP does
	}
	qc, err := st.quic(hctx, addr, host, o, sessions)
	if err != nil {
		if ctx.Err() == nil && hctx.Err() != nil {
			return nil, &TimeoutError{Phase: PhaseDial, Err: err}
		}
		return nil, err
	}
	hs := time.Since(start)
	cc, err := h3.NewClientConn(qc, o.profile.h3)
	if err != nil {
		return nil, err
	}
	var early <-chan struct{}
	if e, ok := qc.(interface{ HandshakeComplete() <-chan struct{} }); ok {
		select {
		case <-e.HandshakeComplete():
		default:
			early = e.HandshakeComplete() // 0-RTT: the dial took no round trip
		}
	}
	if early == nil {
		st.h3RTT.Store(int64(hs))
	}
	st.h3Works.Store(true)
	c := &conn{st: st, key: key, roots: o.rootCAs, h3: cc, altUsed: host, h3Early: early}
	if port != "443" {
		c.altUsed = net.JoinHostPort(host, port)
	}
	c.times.connect = hs
	c.idleSince.Store(time.Now().UnixNano())
	cc.OnIdle(func() { c.idleSince.Store(time.Now().UnixNano()) })
	return c, nil
}

// doneContext is a context that is already done: a pool lookup under it
// grants what it can at once and waits for nothing.
var doneContext = func() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}()

// h3Result is a QUIC dial's outcome.
type h3Result struct {
	c   *conn
	err error
}

// getConnH3 returns an HTTP/3 connection for the request, or a TCP one
// that won the race. A forced request (Protocol HTTP3) waits for QUIC
// alone and fails with it. Otherwise QUIC starts, and TCP after
// tcpDelay: the first connection up carries the request. A QUIC dial
// that loses goes on and, when it succeeds, serves later requests from
// the pool; one that fails (UDP blocked, a handshake that timed out)
// marks the alternative broken, and the request goes over TCP without
// an error.
func (st *transportState) getConnH3(ctx context.Context, key pool.Key, o0 *options, trace *httptrace.ClientTrace, now time.Time, fresh bool, origin string, alt altsvc.Alternative, forced bool) (*conn, grant, error) {
	if st.resolveErr != nil {
		return nil, grant{}, st.resolveErr
	}
	hkey := key
	hkey.HTTP3, hkey.HTTP1Only = true, false
	// The paths that dial take a copy of the options, so that the
	// caller's do not escape; a pooled connection needs none.
	if o0.isolated {
		oc := *o0
		c, err := st.dialH3(ctx, hkey, &oc, alt)
		if err != nil {
			return nil, grant{}, err
		}
		return c, grant{reserved: true}, nil
	}
	// A connection up already, or one being dialed: the pool says.
	var l pool.Lease[*conn]
	if !forced {
		// Not waiting on another request's QUIC dial: a look that does
		// not wait (a done context), which costs no timer.
		var err error
		l, err = st.pool.GetAt(doneContext, hkey, now)
		if err != nil {
			if ctx.Err() != nil {
				return nil, grant{}, ctx.Err()
			}
			oc := *o0
			return st.getConn(ctx, key, &oc, trace, now, fresh) // QUIC being dialed: TCP meanwhile
		}
	} else {
		var err error
		if l, err = st.pool.GetAt(ctx, hkey, now); err != nil {
			if errors.Is(err, pool.ErrClosed) {
				err = ErrClosed
			}
			return nil, grant{}, err
		}
	}
	if l.How != pool.Dial {
		return l.Conn, grant{reused: true, reserved: true}, nil
	}
	oc := *o0
	o := &oc
	qch := make(chan h3Result, 1)
	go func() {
		c, err := st.dialH3(lifeContext{st.life, ctx}, hkey, o, alt)
		if err != nil {
			st.pool.Failed(hkey, l)
			if !forced {
				st.alt.MarkBroken(origin, alt, time.Now())
			}
		} else {
			c.pooled = true
			st.pool.Shared(hkey, l, c)
			st.alt.MarkWorking(origin, alt)
		}
		qch <- h3Result{c, err}
	}()
	if forced {
		select {
		case r := <-qch:
			if r.err != nil {
				return nil, grant{}, r.err
			}
			return r.c, grant{reserved: true}, nil
		case <-ctx.Done():
			return nil, grant{}, ctx.Err()
		}
	}
	delay := time.NewTimer(st.tcpDelay())
	defer delay.Stop()
	var tch chan tcpResult
	startTCP := func() {
		tch = make(chan tcpResult, 1)
		go func() {
			c, g, err := st.getConn(ctx, key, o, trace, now, fresh)
			tch <- tcpResult{c, g, err}
		}()
	}
	quicDone := false
	for {
		select {
		case r := <-qch:
			quicDone = true
			if r.err == nil {
				if tch != nil {
					go releaseTCP(tch)
				}
				return r.c, grant{reserved: true}, nil
			}
			if tch == nil {
				startTCP()
			}
		case <-delay.C:
			if tch == nil {
				startTCP()
			}
		case r := <-tch:
			if r.err != nil && !quicDone {
				// TCP failed first: QUIC may still carry the request.
				tch = nil
				select {
				case q := <-qch:
					if q.err == nil {
						return q.c, grant{reserved: true}, nil
					}
				case <-ctx.Done():
					return nil, grant{}, ctx.Err()
				}
				return nil, grant{}, r.err
			}
			return r.c, r.g, r.err
		case <-ctx.Done():
			if tch != nil {
				go releaseTCP(tch)
			}
			return nil, grant{}, ctx.Err()
		}
	}
}

// tcpResult is a TCP getConn's outcome in a race.
type tcpResult struct {
	c   *conn
	g   grant
	err error
}

// releaseTCP gives back a TCP connection that lost the race.
func releaseTCP(ch chan tcpResult) {
	r := <-ch
	if r.err != nil {
		return
	}
	switch {
	case r.c.h2 != nil:
		if r.g.reserved {
			r.c.h2.CancelReservation()
		}
	case r.c.h1 != nil:
		r.c.release(true)
	}
}

// roundTripH3 sends req on a stream of c, an HTTP/3 connection.
func (c *conn) roundTripH3(ctx context.Context, req *Request, u *parsedURL, b body, o *options, x fields.Header) (*Response, error) {
	kind := req.Kind
	if kind == 0 {
		kind = profile.Navigate
	}
	if o.profile.h3AltUsed {
		// Alt-Used names the alternative the connection went to (RFC
		// 7838 §5), as Firefox sends it; Chromium sends none.
		x = append(x[:len(x):len(x)], fields.Field{Name: "alt-used", Value: c.altUsed})
	}
	hr3 := reqhead.Request{Proto: profile.H3, Kind: kind, Method: req.method(), Header: req.Header, Extra: x,
		ContentLength: b.length, Origin: &u.origin, Redirected: req.redirected, Scripted: req.Scripted}
	// The request's fields are needed only until RoundTrip has encoded
	// them: they are built in pooled scratch, as HTTP/2's are.
	scratch := h2HeaderPool.Get().(*[h2ScratchFields]Field)
	defer func() {
		clear(scratch[:])
		h2HeaderPool.Put(scratch)
	}()
	hdr, err := o.profile.appendHeader(scratch[:0], &hr3)
	if err != nil {
		// Kinds not recorded over HTTP/3 (scripts, WebSocket...) take
		// their HTTP/2 set in its stead.
		hr3.Proto = profile.H2
		hdr, err = o.profile.appendHeader(scratch[:0], &hr3)
	}
	if err != nil {
		c.closeIfIsolated()
		return nil, err
	}
	for i := range hdr {
		hdr[i].Name = lowerASCII(hdr[i].Name)
	}
	// One allocation for the request, the Response and its body. A
	// request with a body has its own: the goroutine sending the body
	// holds it, and the Response would keep the body's bytes alive.
	x3 := &h3Exchange{}
	r := &x3.req
	if b.r != nil || len(b.bytes) > 0 {
		r = new(h3.Request)
	}
	*r = h3.Request{
		Method: req.method(), Scheme: u.scheme, Authority: u.authority, Path: u.target,
		Header: hdr, Body: b.r, BodyBytes: b.bytes, ContentLength: b.length,
		HeadTimeout: c.st.headTO, BodyIdleTimeout: c.st.bodyTO,
	}
	if c.h3Early != nil && !idempotent(r.Method) {
		// Not in 0-RTT, as browsers: a replayed POST could act twice.
		// The hello's last datagram, if held for the first request,
		// goes now: the handshake waits on it.
		c.h3.ReleaseFlight()
		select {
		case <-c.h3Early:
		case <-ctx.Done():
			c.closeIfIsolated()
			return nil, ctx.Err()
		}
	}
	hr, err := c.h3.RoundTrip(ctx, r)
	// RoundTrip encoded the fields; a body still being sent reads only
	// r's body and trailer fields.
	r.Header = nil
	if err != nil {
		c.closeIfIsolated()
		return nil, err
	}
	resp := &x3.Response
	resp.StatusCode, resp.Proto, resp.Header, resp.ContentLength = hr.StatusCode, "HTTP/3.0", hr.Header, hr.ContentLength
	resp.trailer = &hr.Trailer
	x3.body = h3Body{r: hr.Body, c: c}
	resp.body.r = &x3.body
	resp.Body = &resp.body
	return resp, nil
}

// h3Exchange is an HTTP/3 request's Response with the engine's request
// (if it has no body) and the body reader, in one allocation.
type h3Exchange struct {
	Response
	req  h3.Request
	body h3Body
}

func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// closeIfIsolated closes the connection of an isolated call.
func (c *conn) closeIfIsolated() {
	if !c.pooled {
		c.h3.Close()
	}
}

// h3Body is an HTTP/3 response body; an isolated call's connection closes
// with it.
type h3Body struct {
	r    io.ReadCloser
	c    *conn
	done bool
}

func (b *h3Body) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && !b.done {
		b.done = true
		b.c.closeIfIsolated()
	}
	return n, err
}

func (b *h3Body) Close() error {
	err := b.r.Close()
	if !b.done {
		b.done = true
		b.c.closeIfIsolated()
	}
	return err
}

// idempotent reports whether a request with method may go in 0-RTT: GET,
// HEAD and OPTIONS (RFC 9110 §9.2.1's safe methods), as browsers send
// in it.
func idempotent(method string) bool {
	return method == "GET" || method == "HEAD" || method == "OPTIONS"
}
