package guise

import (
	"context"
	"crypto/x509"
	"errors"
	"net"
	"net/http/httptrace"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/guise-http/guise/fields"
	"github.com/guise-http/guise/internal/h1"
	"github.com/guise-http/guise/internal/h2"
	"github.com/guise-http/guise/internal/pool"
	"github.com/guise-http/guise/internal/proxy"
	"github.com/guise-http/guise/internal/tlsfp"
)

// Transport is a pool of connections that several Sessions may share. It
// holds connections, never cookies: each Session keeps its own jar. A
// connection is shared only by requests whose origin, proxy (and its
// credentials), profile and TLS options are all equal.
//
// The zero value is ready to use. Fields are read at first use and must not
// change afterwards. A Transport is safe for concurrent use. Close releases
// its connections; a Transport that becomes unreachable without Close is
// closed by a cleanup when garbage-collected.
type Transport struct {
	// Profile is the browser profile of Sessions that do not name one;
	// "" means profile.Default.
	Profile string

	// MaxConnsPerHost caps the HTTP/1.1 connections per origin (and per
	// proxy, profile and TLS options); 0 means 6, as browsers do.
	MaxConnsPerHost int
	// MaxIdleConnsPerHost caps idle connections kept per origin; 0 means
	// MaxConnsPerHost.
	MaxIdleConnsPerHost int
	// IdleConnTimeout closes a connection idle for longer; 0 means 90s.
	IdleConnTimeout time.Duration

	// DialTimeout bounds the TCP connect and, through a proxy, the proxy's
	// handshake (TLS to an https proxy, CONNECT or SOCKS); 0 means 30s.
	DialTimeout time.Duration
	// TLSHandshakeTimeout bounds the TLS handshake; 0 means 10s.
	TLSHandshakeTimeout time.Duration
	// ResponseHeaderTimeout bounds the wait for the response head after the
	// request was written; 0 means no limit but the request's Timeout.
	ResponseHeaderTimeout time.Duration
	// BodyIdleTimeout bounds the wait for each read of the response body
	// to make progress; 0 means no limit but the request's Timeout.
	BodyIdleTimeout time.Duration

	// MaxResponseHeaderBytes caps the response head; 0 means 10 MiB.
	MaxResponseHeaderBytes int
	// DrainLimit is how much of an unread body Close reads to keep the
	// connection; 0 means 256 KiB.
	DrainLimit int64

	// DialContext, if set, opens TCP connections instead of a net.Dialer.
	// It receives the host:port of the origin (or proxy).
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)

	once  sync.Once
	state *transportState
}

// transportState is what a Transport owns. It is separate from Transport so
// that the GC cleanup can close it without keeping the Transport alive.
type transportState struct {
	pool     pool.Pool[*conn]
	h1       h1.Config
	sessions *tlsfp.SessionCache // TLS tickets, shared within this Transport only
	// proxySessions holds the proxy hop's TLS tickets, apart from the
	// origins' (CVE-2021-22890).
	proxySessions *tlsfp.SessionCache
	h2s           h2Conns
	dialer        net.Dialer
	dialTO        time.Duration // Transport.DialTimeout, or its default
	dial          func(ctx context.Context, network, addr string) (net.Conn, error)
	tlsTO         time.Duration
	headTO        time.Duration
	bodyTO        time.Duration
	closed        sync.Once
}

func (t *Transport) init() *transportState {
	t.once.Do(func() {
		st := &transportState{sessions: tlsfp.NewSessionCache(), proxySessions: tlsfp.NewSessionCache()}
		st.pool.MaxPerKey = t.MaxConnsPerHost
		st.pool.MaxIdlePerKey = t.MaxIdleConnsPerHost
		st.pool.IdleTimeout = t.IdleConnTimeout
		st.h2s.idle = orDefault(t.IdleConnTimeout, 90*time.Second)
		st.h1.MaxHeaderBytes = t.MaxResponseHeaderBytes
		st.h1.DrainLimit = t.DrainLimit
		st.dialTO = orDefault(t.DialTimeout, 30*time.Second)
		st.dialer.Timeout = st.dialTO
		st.dialer.KeepAlive = 30 * time.Second
		st.dial = t.DialContext
		if st.dial == nil {
			st.dial = st.dialer.DialContext
		}
		st.tlsTO = orDefault(t.TLSHandshakeTimeout, 10*time.Second)
		st.headTO = t.ResponseHeaderTimeout
		st.bodyTO = t.BodyIdleTimeout
		t.state = st
		runtime.AddCleanup(t, func(st *transportState) { st.close() }, st)
	})
	return t.state
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// Close closes idle connections and makes the Transport refuse new
// requests. Responses being read finish; their connections are closed
// afterwards instead of kept.
func (t *Transport) Close() error {
	t.init().close()
	return nil
}

// CloseIdleConnections closes the connections not in use now.
func (t *Transport) CloseIdleConnections() {
	st := t.init()
	st.pool.CloseIdle()
	st.h2s.closeIdle()
}

func (st *transportState) close() {
	st.closed.Do(func() {
		st.pool.Close()
		st.h2s.close()
	})
}

// options are the settings one request runs with, resolved from the
// Request, the Session and the Transport.
type options struct {
	profile  *compiled
	proxy    *route // nil: direct
	insecure bool
	rootCAs  *x509.CertPool
	rootsID  string // rootsID(rootCAs)
	trust    TrustStore
	isolated bool // no pool: a new connection per request, closed after
	// proxyEnv: proxy came from the environment (ProxyFromEnvironment),
	// which names it per URL, so each redirect hop looks it up again.
	proxyEnv bool
}

// conn is one connection: HTTP/1.1 (pooled one request at a time) or
// HTTP/2 (shared by concurrent requests).
type conn struct {
	st  *transportState
	key pool.Key
	h1  *h1.Conn
	h2  *h2.ClientConn
	req h1.Request // reused: one request at a time per HTTP/1.1 conn
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
	// idleSince is when an HTTP/2 connection last became idle (Unix ns;
	// 0 while it never was).
	idleSince atomic.Int64
	times     dialTimes // how long dialing took; reported by the first request
	// roots is the custom root pool the connection was verified against:
	// held so that the pool, whose address is in key, is not collected and
	// its address reused by another pool while the key is in use.
	roots *x509.CertPool
}

func (c *conn) Close() error {
	if c.h2 != nil {
		return c.h2.Close()
	}
	return c.h1.Close()
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

// roundTrip runs one HTTP/1.1 exchange on c, keeping c out of the pool
// until it returns even when the body was complete in the head's read.
//
// It returns how long after start the head arrived (reading only the
// monotonic clock), which is also when an inline body's connection went
// idle.
func (c *conn) roundTrip(ctx context.Context, r *h1.Request, start time.Time) (*h1Response, time.Duration, error) {
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
func (c *conn) allocResp(nfields int) *h1.Response {
	c.resp = newH1Response(nfields)
	return &c.resp.eng
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

// getConn returns a connection for key: an HTTP/2 connection with a stream
// reserved, a pooled idle HTTP/1.1 one, or a new one. now is the request's
// start, against which idle connections are judged expired.
func (st *transportState) getConn(ctx context.Context, key pool.Key, o *options, trace *httptrace.ClientTrace, now time.Time) (*conn, bool, error) {
	if o.isolated {
		c, err := st.dialConn(ctx, key, o, trace)
		return c, false, err
	}
	lead := false
	for key.Scheme == "https" {
		if c := st.h2Get(key); c != nil {
			return c, true, nil
		}
		if st.h2Known(key) {
			return st.h2Dial(ctx, key, o, trace)
		}
		wait, first := st.h2s.probe(key)
		if wait == nil {
			lead = first
			break
		}
		select {
		case <-wait: // the first connection is up (or failed): look again
		case <-ctx.Done():
			return nil, false, ctx.Err()
		}
	}
	c, ok, err := st.pool.GetAt(ctx, key, now)
	if err != nil {
		if lead {
			st.h2s.endProbe(key, false)
		}
		if errors.Is(err, pool.ErrClosed) {
			err = ErrClosed
		}
		return nil, false, err
	}
	if ok {
		if lead {
			st.h2s.endProbe(key, true)
		}
		return c, true, nil
	}
	c, err = st.dialConn(ctx, key, o, trace)
	if err != nil {
		st.pool.Drop(key)
		if lead {
			st.h2s.endProbe(key, false)
		}
		return nil, false, err
	}
	if lead {
		defer st.h2s.endProbe(key, c.h2 == nil)
	}
	if c.h2 != nil {
		// The slot was for an HTTP/1.1 connection; HTTP/2 ones live apart.
		st.pool.Drop(key)
		st.h2Add(key, c)
		return c, false, nil
	}
	c.pooled = true
	return c, false, nil
}

// dialConn opens a connection for key: TCP, then for https TLS with the
// profile's ClientHello, and HTTP/2 when ALPN picks it.
func (st *transportState) dialConn(ctx context.Context, key pool.Key, o *options, trace *httptrace.ClientTrace) (*conn, error) {
	c := &conn{st: st, key: key, roots: o.rootCAs}
	var nc net.Conn
	var err error
	// DialTimeout bounds the connect and, through a proxy, the proxy's
	// handshake (CONNECT or SOCKS, and TLS to an https proxy), whatever
	// dials: the caller's DialContext too.
	dctx, cancel := context.WithTimeout(ctx, st.dialTO)
	if o.proxy != nil {
		nc, c.absolute, err = st.dialProxy(dctx, key.Addr, key.Scheme, o.proxy, o, &c.times)
		c.auth = o.proxy.auth
	} else {
		nc, err = st.dialTCP(dctx, key.Addr, &c.times)
	}
	expired := errors.Is(dctx.Err(), context.DeadlineExceeded)
	cancel()
	if err != nil {
		if ctx.Err() == nil && (expired || isTimeout(err)) {
			ph := PhaseDial
			var pe *proxy.Error
			if errors.As(err, &pe) && pe.Op != "dial" && pe.Op != "resolve" {
				ph = PhaseProxy
			}
			return nil, &TimeoutError{Phase: ph, Err: err}
		}
		return nil, err
	}
	if key.Scheme == "https" {
		if trace != nil && trace.TLSHandshakeStart != nil {
			trace.TLSHandshakeStart()
		}
		start := time.Now()
		tc, state, err := st.handshake(ctx, nc, key, o)
		if errors.Is(err, tlsfp.ErrRetryResumption) {
			// The server wants a new hello and uTLS cannot redo one that
			// resumes: the ticket is spent, so a new connection's full
			// handshake goes through.
			if nc, err = st.redial(ctx, key, o, c); err == nil {
				tc, state, err = st.handshake(ctx, nc, key, o)
			}
		}
		c.times.tls = time.Since(start)
		if trace != nil && trace.TLSHandshakeDone != nil {
			host, _, _ := net.SplitHostPort(key.Addr)
			trace.TLSHandshakeDone(tlsState(state, host), err)
		}
		if err != nil {
			return nil, err
		}
		c.nc = tc
		if state.ALPN == "h2" {
			cc, err := h2.NewClientConn(tc, o.profile.h2)
			if err != nil {
				tc.Close()
				return nil, err
			}
			if !cc.ReserveNewRequest() {
				cc.Close()
				return nil, errors.New("guise: new HTTP/2 connection refused a first stream")
			}
			if o.isolated {
				// The hook runs on the connection's read loop, which
				// Close waits for: close from outside it.
				cc.OnIdle(func(cc *h2.ClientConn) { go cc.Close() })
			}
			c.h2 = cc
			c.pooled = !o.isolated
			return c, nil
		}
		nc = tc
	}
	if c.nc == nil {
		c.nc = nc
	}
	c.h1 = h1.NewConn(nc, &st.h1)
	c.h1.SetRelease(c.onRelease)
	c.h1.SetAlloc(c.allocResp)
	return c, nil
}

// redial opens a second TCP connection (or tunnel) for key, for a
// handshake that must start over.
func (st *transportState) redial(ctx context.Context, key pool.Key, o *options, c *conn) (net.Conn, error) {
	dctx, cancel := context.WithTimeout(ctx, st.dialTO)
	defer cancel()
	if o.proxy != nil {
		nc, _, err := st.dialProxy(dctx, key.Addr, key.Scheme, o.proxy, o, &c.times)
		return nc, err
	}
	return st.dialTCP(dctx, key.Addr, &c.times)
}

func isTimeout(err error) bool {
	var t interface{ Timeout() bool }
	return errors.As(err, &t) && t.Timeout()
}
