package guise

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http/httptrace"
	"net/netip"
	"net/url"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/guise-http/guise/fields"
	"github.com/guise-http/guise/internal/altsvc"
	"github.com/guise-http/guise/internal/h1"
	"github.com/guise-http/guise/internal/h2"
	"github.com/guise-http/guise/internal/h3"
	"github.com/guise-http/guise/internal/pool"
	"github.com/guise-http/guise/internal/proxy"
	"github.com/guise-http/guise/internal/tlsfp"
	"github.com/guise-http/guise/profile"
)

// Transport is a pool of connections that several Sessions may share. It
// holds connections, never cookies: each Session keeps its own jar. A
// connection is shared only by requests whose origin, proxy (and its
// credentials), profile and TLS options are all equal.
//
// A Transport also remembers the HTTP/3 alternatives origins advertise in
// Alt-Svc, and the ones that failed, for the Sessions that use it (once
// guise's QUIC client is built in: see Protocol). Isolated calls remember
// none.
//
// The zero value is ready to use. Fields are read at first use and must not
// change afterwards. A Transport is safe for concurrent use. Close releases
// its connections; a Transport that becomes unreachable without Close is
// closed by a cleanup when garbage-collected.
type Transport struct {
	// Profile is the browser profile of Sessions that do not name one;
	// "" means profile.Default.
	Profile string
	// Browser, if set, is the profile of Sessions that name none, in place
	// of Profile: one loaded from a file (profile.Load, profile.Open) or
	// from profile.Lookup. It is shared and must not be changed.
	Browser *profile.Profile
	// Profiles, if set (and Browser is not), is the weighted set each
	// Session that names no profile draws its own from, once, at its
	// first request: see Session.Profiles. Make it with profile.ParseSet,
	// or check it with its Check method; a Set Check refuses fails the
	// Sessions' requests.
	Profiles profile.Set
	// Rand is the randomness of the draws from Profiles for Sessions whose
	// own Rand is nil; nil means crypto/rand. Give a seeded reader (such
	// as math/rand/v2's ChaCha8) for reproducible draws in tests. It must
	// be safe for concurrent use if Sessions start concurrently.
	Rand io.Reader

	// MaxConnsPerHost caps the HTTP/1.1 connections per origin (and per
	// proxy, profile and TLS options); 0 means 6, as browsers do. Over
	// HTTP/2 an origin has one connection, as in a browser: requests over
	// the server's MAX_CONCURRENT_STREAMS wait on it for a stream, and
	// another connection is dialed only when it goes away.
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
	// It receives the host:port of the origin (or proxy), or the address
	// Resolve gives for it. HTTP/3 is not used then (Alt-Svc is not
	// followed, and Protocol HTTP3 is ErrProtocolUnsupported): QUIC's UDP
	// cannot go through it.
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)

	// Resolve pins host names to addresses, as curl's --resolve does: a
	// connection to a key, "host:port" (an IPv6 host in brackets, the host
	// case-insensitive), goes to the value's IP address on that port
	// instead of to an address looked up for host. It applies to every
	// connection guise dials itself, TCP and QUIC's UDP alike: HTTP/3 to
	// the origin, forced or reached through Alt-Svc (an alternative on
	// another port of the origin's host, with no key of its own, goes to
	// the origin's address), and an HTTP or SOCKS proxy's own host and
	// port. TLS still names the host (SNI, certificate checks). nil means
	// no overrides. A key that is not host:port, or an invalid address,
	// makes every request fail with ErrRefusedToSend.
	Resolve map[string]netip.Addr

	// quicDial replaces dialQUIC: a test seam only (tests point it at
	// quic-go's client, which production never uses).
	quicDial quicDialer

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
	// life ends when the Transport closes: dials that outlive the request
	// that started them (see dialPooled) end with it.
	life   context.Context
	end    context.CancelFunc
	dialer net.Dialer
	dialTO time.Duration // Transport.DialTimeout, or its default
	dial   func(ctx context.Context, network, addr string) (net.Conn, error)
	tlsTO  time.Duration
	headTO time.Duration
	bodyTO time.Duration
	closed sync.Once

	// customDial is set when the caller's DialContext opens the TCP
	// connections: HTTP/3, whose UDP it cannot route, is then never used.
	customDial bool
	// resolve is Transport.Resolve with each key's host in lower case;
	// resolveErr is why it could not be read (a bad key or address).
	resolve    map[string]netip.Addr
	resolveErr error
	// quic dials HTTP/3 (dialQUIC or the test's); nil: no HTTP/3.
	quic quicDialer
	// alt is the origins' Alt-Svc memory, for the Sessions of this
	// Transport (isolated calls keep none).
	alt altsvc.Cache
	// h3Works and h3RTT: a QUIC handshake succeeded on this Transport, and
	// how long the last one took (ns), for the TCP delay of a race.
	h3Works atomic.Bool
	h3RTT   atomic.Int64
}

func (t *Transport) init() *transportState {
	t.once.Do(func() {
		st := &transportState{sessions: tlsfp.NewSessionCache(), proxySessions: tlsfp.NewSessionCache()}
		st.pool.MaxPerKey = t.MaxConnsPerHost
		st.pool.MaxIdlePerKey = t.MaxIdleConnsPerHost
		st.pool.IdleTimeout = t.IdleConnTimeout
		st.life, st.end = context.WithCancel(context.Background())
		st.h1.MaxHeaderBytes = t.MaxResponseHeaderBytes
		st.h1.DrainLimit = t.DrainLimit
		st.dialTO = orDefault(t.DialTimeout, 30*time.Second)
		st.dialer.Timeout = st.dialTO
		st.dialer.KeepAlive = 30 * time.Second
		st.dial = t.DialContext
		st.customDial = t.DialContext != nil
		if st.dial == nil {
			st.dial = st.dialer.DialContext
		}
		st.resolve, st.resolveErr = readResolve(t.Resolve)
		if st.resolve != nil {
			dial := st.dial
			st.dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
				if to, ok := st.override(addr); ok {
					addr = to
				}
				return dial(ctx, network, addr)
			}
		}
		st.tlsTO = orDefault(t.TLSHandshakeTimeout, 10*time.Second)
		st.headTO = t.ResponseHeaderTimeout
		st.bodyTO = t.BodyIdleTimeout
		st.quic = dialQUIC
		if t.quicDial != nil {
			st.quic = t.quicDial
		}
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
}

func (st *transportState) close() {
	st.closed.Do(func() {
		st.end()
		// Responses being read finish; each HTTP/2 connection closes
		// after its last stream.
		st.pool.Close()
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
	// protocol limits the HTTP versions (see protocol.go); HTTP3 only
	// where the Transport can dial QUIC (h3Route).
	protocol Protocol
	// tunnel sends http:// through an HTTP proxy's CONNECT tunnel rather
	// than in absolute form: a WebSocket's, as Chromium and Firefox do.
	tunnel bool
}

// TrustStore chooses the root certificates used to verify servers.
type TrustStore = tlsfp.TrustStore

// Trust stores. Each is built once per process and cached.
const (
	TrustMozilla = tlsfp.Mozilla // Mozilla's roots, embedded in the binary (the default)
	TrustSystem  = tlsfp.System  // the operating system's roots
	TrustBoth    = tlsfp.Both    // both
)

// tlsID names the TLS options for the pool key: connections verified
// differently are never shared. It is worked out once per Session (see
// sessionState.rootsID), so the hot path does not format a pointer.
func (o *options) tlsID() string {
	switch {
	case o.insecure:
		return "insecure"
	case o.rootCAs != nil:
		return o.rootsID
	}
	return o.trust.String()
}

// rootsID names a custom root pool by its address; the pool stays alive as
// long as a connection keyed by it does.
func rootsID(p *x509.CertPool) string {
	if p == nil {
		return ""
	}
	return fmt.Sprintf("roots:%p", p)
}

// roundTrip sends req once over a connection of st and returns the
// response head. x holds the fields guise computes for this request
// (Cookie, Referer, Sec-Fetch-Site), and b is req's body as the client
// inspected it. fresh asks for a new connection: the one that left the
// request unprocessed may refuse it again. An error that left the request
// unprocessed by the server is an *unprocessedError, which the client may
// retry once; every other error is final.
func (st *transportState) roundTrip(ctx context.Context, req *Request, o *options, x fields.Header, b body, fresh bool) (*Response, error) {
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
	key := o.poolKey(u)

	trace := httptrace.ContextClientTrace(ctx)
	var tm Timings
	tm.Start = time.Now()
	if trace != nil && trace.GetConn != nil {
		trace.GetConn(u.addr)
	}
	alt, useH3, forced, err := st.h3Route(u, o)
	if err != nil {
		return nil, err
	}
	var c *conn
	var g grant
	if useH3 {
		c, g, err = st.getConnH3(ctx, key, o, trace, tm.Start, fresh, u.origin, alt, forced)
	} else {
		c, g, err = st.getConn(ctx, key, o, trace, tm.Start, fresh)
	}
	if err != nil {
		return nil, err
	}
	tm.GotConn, tm.Reused = time.Since(tm.Start), g.reused
	if !g.reused {
		tm.Connect, tm.TLS = c.times.connect, c.times.tls
	}
	if trace != nil && trace.GotConn != nil {
		trace.GotConn(httptrace.GotConnInfo{Conn: c.nc, Reused: g.reused, WasIdle: g.reused})
	}
	var resp *Response
	var head time.Duration
	switch {
	case c.h3 != nil:
		resp, err = c.roundTripH3(ctx, req, u, b, o, x)
		head = time.Since(tm.Start)
		if err != nil {
			if ctx.Err() == nil && h3.CanRetry(err) {
				// Through the pool again: it retires this connection if
				// it no longer takes requests.
				return nil, &unprocessedError{err: classify(ctx, err)}
			}
			return nil, classify(ctx, err)
		}
		resp.Timings = tm
		resp.gotHead(trace, head)
		return resp, nil
	case c.h2 != nil:
		resp, err = c.roundTripH2(ctx, req, u, b, o, x, g.reserved)
		head = time.Since(tm.Start)
	default:
		resp, head, err = c.roundTripH1(ctx, req, u, b, o, x, tm.Start)
	}
	if err != nil {
		// A request the server never began on may go again: over
		// HTTP/2 a refused stream or one past a GOAWAY, over HTTP/1.1
		// a reused connection the server had closed.
		if ctx.Err() == nil && (c.h2 != nil && h2.CanRetry(err) || c.h2 == nil && g.reused && errors.Is(err, h1.ErrNoResponse)) {
			// Over HTTP/1.1 the retry dials: the pool's other idle
			// connections to the server may be as dead as this one (a
			// server closing idle connections closes them all), and a
			// second failure would use up the one retry. Over HTTP/2 the
			// retry goes through the pool, as Chromium's restarted
			// transaction asks its session pool again: after a GOAWAY
			// the pool retires the connection and dials one for all the
			// requests it failed; after REFUSED_STREAM on a connection
			// still taking requests it waits there for a stream, under
			// the limit the server's SETTINGS gave by then. (A dial per
			// refused stream turned the refusals of a server's first
			// SETTINGS round trip, 96 of 200 concurrent requests under
			// a limit of 4, into 96 connections: TestRefusalsUnderLoadS9.)
			return nil, &unprocessedError{err: classify(ctx, err), fresh: c.h2 == nil,
				notSent: c.h2 != nil && errors.Is(err, h2.ErrNotSent)}
		}
		return nil, classify(ctx, err)
	}
	resp.Timings = tm
	resp.gotHead(trace, head)
	if st.quic != nil {
		st.rememberAltSvc(u, o, resp.Header)
	}
	return resp, nil
}

// poolKey is the key of the connections a request to u may use under o.
func (o *options) poolKey(u *parsedURL) pool.Key {
	key := pool.Key{Scheme: u.scheme, Addr: u.addr, Profile: o.profile.key, TLS: o.tlsID(),
		HTTP1Only: o.protocol == HTTP1 && u.scheme == "https"}
	if o.proxy != nil {
		key.Proxy = o.proxy.key
	}
	return key
}

// unprocessedError is a roundTrip error after which the request may go
// again: the server did not begin on it. fresh says that the retry needs a
// new connection; notSent that nothing of the request went out (it waited
// for an HTTP/2 stream on a connection that stopped taking them), so that
// sending it elsewhere is no retry.
type unprocessedError struct {
	err     error
	fresh   bool
	notSent bool
}

func (e *unprocessedError) Error() string { return e.err.Error() }
func (e *unprocessedError) Unwrap() error { return e.err }

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

// classify turns an engine error into the error callers test for.
func classify(ctx context.Context, err error) error {
	var te *h1.TimeoutError
	var te2 *h2.TimeoutError
	var te3 *h3.TimeoutError
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
	case errors.As(err, &te3):
		return &TimeoutError{Phase: PhaseHead, Err: err}
	case errors.Is(err, h2.ErrRefusedToSend), errors.Is(err, h3.ErrRefusedToSend):
		return &sameAs{err, ErrRefusedToSend}
	case errors.Is(err, h3.ErrFieldSectionTooLarge):
		return &sameAs{err, ErrHeaderTooLarge}
	case errors.Is(err, h3.ErrTooMany1xx):
		return &sameAs{err, ErrTooMany1xx}
	case errors.Is(err, h2.ErrHeaderListTooLarge):
		return &sameAs{err, ErrHeaderTooLarge}
	case errors.Is(err, h2.ErrTooMany1xx):
		return &sameAs{err, ErrTooMany1xx}
	}
	return err
}

// grant says how getConn's connection came: reused (pooled before, HTTP/1.1
// idle or HTTP/2 shared) and, over HTTP/2, with a stream reserved.
type grant struct {
	reused, reserved bool
}

// getConn returns a connection for key: a shared HTTP/2 one (with a
// stream reserved, or to queue on when it is full), an idle HTTP/1.1 one,
// or a new one, as the pool grants. now is the request's start, against
// which idle connections are judged expired. fresh dials a new connection
// outside the pool's turn.
func (st *transportState) getConn(ctx context.Context, key pool.Key, o *options, trace *httptrace.ClientTrace, now time.Time, fresh bool) (*conn, grant, error) {
	if st.resolveErr != nil {
		return nil, grant{}, st.resolveErr
	}
	if o.isolated {
		c, err := st.dialConn(ctx, key, o, trace)
		return c, grant{reserved: true}, err
	}
	var l pool.Lease[*conn]
	if fresh {
		// Outside the pool's count: the pool takes the connection as it
		// takes any dialed one.
		l.How = pool.Dial
	} else {
		var err error
		if l, err = st.pool.GetAt(ctx, key, now); err != nil {
			if errors.Is(err, pool.ErrClosed) {
				err = ErrClosed
			}
			return nil, grant{}, err
		}
	}
	switch l.How {
	case pool.Idle:
		return l.Conn, grant{reused: true}, nil
	case pool.Reserved:
		return l.Conn, grant{reused: true, reserved: true}, nil
	case pool.Queued:
		return l.Conn, grant{reused: true}, nil
	}
	c, err := st.dialPooled(ctx, key, o, trace, l)
	if err != nil {
		return nil, grant{}, err
	}
	return c, grant{reserved: c.h2 != nil}, nil
}

// lifeContext is the context of a dial that outlives its request: it ends
// with the Transport (Context) and carries the request's values (vals),
// such as an httptrace.ClientTrace that net.Dialer reports to.
type lifeContext struct {
	context.Context
	vals context.Context
}

func (c lifeContext) Value(key any) any { return c.vals.Value(key) }

// dialed is the outcome of dialPooled's dial.
type dialed struct {
	c   *conn
	err error
}

// dialPooled dials the connection lease l grants and hands it to the pool.
// The dial goes on when ctx ends first: other requests wait for it, and
// later ones use its connection. A connection nobody is left for keeps no
// stream reserved (HTTP/2), or waits idle in the pool (HTTP/1.1).
func (st *transportState) dialPooled(ctx context.Context, key pool.Key, o *options, trace *httptrace.ClientTrace, l pool.Lease[*conn]) (*conn, error) {
	oc := *o // a copy for the dial, so that o does not escape on the hot path
	ch := make(chan dialed, 1)
	go func() {
		// Not ctx: the dial outlives a caller who gives up, but not the
		// Transport.
		c, err := st.dialConn(lifeContext{st.life, ctx}, key, &oc, trace)
		switch {
		case err != nil:
			st.pool.Failed(key, l)
		case c.h2 != nil:
			c.pooled = true
			st.pool.Shared(key, l, c)
		default:
			c.pooled = true
			st.pool.Exclusive(key, l)
		}
		ch <- dialed{c, err}
	}()
	select {
	case d := <-ch:
		return d.c, d.err
	case <-ctx.Done():
		go func() {
			d := <-ch
			switch {
			case d.err != nil:
			case d.c.h2 != nil:
				d.c.h2.CancelReservation()
			default:
				// Parked unused: the handshake's last flight, held for
				// the first request, goes now.
				if tc, ok := d.c.nc.(*tlsfp.Conn); ok && tc.Flush() != nil {
					d.c.abandon()
					return
				}
				d.c.release(true)
			}
		}()
		return nil, ctx.Err()
	}
}

// dialConn opens a connection for key: TCP, then for https TLS with the
// profile's ClientHello, and HTTP/2 when ALPN picks it.
func (st *transportState) dialConn(ctx context.Context, key pool.Key, o *options, trace *httptrace.ClientTrace) (*conn, error) {
	if st.resolveErr != nil {
		return nil, st.resolveErr
	}
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
				// The connection ended (or the server allowed no stream)
				// before its first request: say why, as a dial's error.
				cause := cc.Err()
				cc.Close()
				if cause != nil {
					return nil, fmt.Errorf("guise: new HTTP/2 connection ended before its first stream: %w", cause)
				}
				return nil, errors.New("guise: new HTTP/2 connection refused a first stream")
			}
			if o.isolated {
				// The hook runs on the connection's read loop, which
				// Close waits for: close from outside it.
				cc.OnIdle(func(cc *h2.ClientConn) { go cc.Close() })
			} else {
				c.idleSince.Store(time.Now().UnixNano())
				cc.OnIdle(func(*h2.ClientConn) { c.idleSince.Store(time.Now().UnixNano()) })
			}
			c.h2 = cc
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

// dialTimes are the connection phases of a freshly dialed connection.
type dialTimes struct {
	connect, tls time.Duration
}

// dialTCP connects to addr. DNS and connect events reach a ClientTrace in
// ctx through net.Dialer itself, which reads httptrace's hooks from the
// context.
func (st *transportState) dialTCP(ctx context.Context, addr string, dt *dialTimes) (net.Conn, error) {
	start := time.Now()
	nc, err := st.dial(ctx, "tcp", addr)
	dt.connect = time.Since(start)
	return nc, err
}

// handshake runs the profile's TLS handshake over nc, bounded by the
// Transport's TLSHandshakeTimeout.
func (st *transportState) handshake(ctx context.Context, nc net.Conn, key pool.Key, o *options) (net.Conn, tlsfp.State, error) {
	host, _, err := net.SplitHostPort(key.Addr)
	if err != nil {
		nc.Close()
		return nil, tlsfp.State{}, err
	}
	hctx, cancel := context.WithTimeout(ctx, st.tlsTO)
	defer cancel()
	cfg := tlsfp.Config{
		Profile:            o.profile.p,
		RootCAs:            o.rootCAs,
		TrustStore:         o.trust,
		InsecureSkipVerify: o.insecure,
	}
	if key.HTTP1Only {
		cfg.ALPN = alpnHTTP1 // the profile's recorded h1-only hello
		// A WebSocket's own connection resumes the page's session.
		cfg.TicketsOfDefaultALPN = o.tunnel && o.protocol != HTTP1
	}
	if !o.isolated {
		cfg.Sessions = st.sessions
	}
	tc, state, err := tlsfp.Handshake(hctx, nc, host, &cfg)
	if err != nil {
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			err = &TimeoutError{Phase: PhaseTLS, Err: err}
		}
		return nil, state, err
	}
	return tc, state, nil
}

// tlsState converts the handshake's result for httptrace.
func tlsState(s tlsfp.State, serverName string) tls.ConnectionState {
	return tls.ConnectionState{
		Version:            s.Version,
		HandshakeComplete:  true,
		DidResume:          s.Resumed,
		CipherSuite:        s.CipherSuite,
		NegotiatedProtocol: s.ALPN,
		ServerName:         serverName,
		PeerCertificates:   s.PeerCertificates,
	}
}

// route is a parsed proxy URL: what the pool key and the dialer need.
type route struct {
	u    *url.URL
	key  string // scheme, host, port and a hash of the credentials
	auth string // Proxy-Authorization for absolute-form requests, "" without credentials
	http bool   // an HTTP(S) proxy, which takes http:// requests in absolute form
}

// routes caches parsed proxy URLs by their text; a Session's requests all
// name the same one. Rotating proxies can name many: past maxRoutes the
// cache starts over.
var (
	routes    sync.Map // string → *route
	routesLen atomic.Int32
)

const maxRoutes = 4096

func parseRoute(raw string) (*route, error) {
	if r, ok := routes.Load(raw); ok {
		return r.(*route), nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("%w: bad proxy URL %q", ErrRefusedToSend, redact(raw))
	}
	r := &route{u: u, key: proxy.Key(u)}
	switch u.Scheme {
	case "http", "https":
		r.http = true
	case "socks5", "socks5h", "socks4", "socks4a":
	default:
		return nil, fmt.Errorf("%w: proxy scheme %q", ErrUnsupportedScheme, u.Scheme)
	}
	if r.http && u.User != nil {
		pw, _ := u.User.Password()
		r.auth = "Basic " + base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+pw))
	}
	if len(raw) < 1024 {
		if routesLen.Add(1) > maxRoutes {
			routes.Clear()
			routesLen.Store(0)
		}
		routes.Store(raw, r)
	}
	return r, nil
}

// dialProxy opens the connection a request for key goes over: a tunnel to
// the origin, or (absolute is true) a connection to an HTTP proxy that
// takes the http:// request itself.
func (st *transportState) dialProxy(ctx context.Context, addr, scheme string, r *route, o *options, dt *dialTimes) (nc net.Conn, absolute bool, err error) {
	oc := *o // the TLS func below keeps a copy, so o does not escape
	d := &proxy.Dialer{
		URL:  r.u,
		Dial: st.dial,
		TLS: func(ctx context.Context, nc net.Conn, serverName string) (net.Conn, error) {
			// The proxy hop has its own TLS sessions, never the origin's.
			cfg := tlsfp.Config{Profile: oc.profile.p, ALPN: []string{"http/1.1"}, RootCAs: oc.rootCAs,
				TrustStore: oc.trust, InsecureSkipVerify: oc.insecure}
			if !oc.isolated {
				cfg.Sessions = st.proxySessions
			}
			tc, _, err := tlsfp.Handshake(ctx, nc, serverName, &cfg)
			return tc, err
		},
	}
	if ua := o.profile.userAgent(); ua != "" {
		d.ConnectHeader = Header{{Name: "User-Agent", Value: ua}}
	}
	start := time.Now()
	defer func() { dt.connect = time.Since(start) }()
	if r.http && scheme == "http" && !o.tunnel {
		// Plain http:// through an HTTP proxy: no tunnel, the proxy takes
		// the request in absolute form.
		op := "dial"
		nc, err = st.dial(ctx, "tcp", hostPort(r.u))
		if err == nil && r.u.Scheme == "https" {
			op = "tls"
			nc, err = d.TLS(ctx, nc, r.u.Hostname()) // closes nc on failure
		}
		if err != nil {
			return nil, false, &proxy.Error{Proxy: redact(r.u.String()), Op: op, Err: err}
		}
		return nc, true, nil
	}
	// Its errors are *proxy.Error; dialConn tells a timeout's phase.
	nc, err = d.DialContext(ctx, addr)
	return nc, false, err
}

func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	switch u.Scheme {
	case "https":
		return net.JoinHostPort(u.Hostname(), "443")
	case "http":
		return net.JoinHostPort(u.Hostname(), "80")
	}
	return net.JoinHostPort(u.Hostname(), "1080")
}

// envProxy is the proxy the environment names for u, or "".
func envProxy(u *parsedURL) (string, error) {
	pu, err := proxy.ForURL(u.url(), os.Getenv)
	if err != nil || pu == nil {
		return "", err
	}
	return pu.String(), nil
}

// hopOptions returns the options for a redirect hop to u: o itself, or,
// when o's proxy came from the environment, a copy with the proxy the
// environment names for u. An http to https redirect then goes through
// HTTPS_PROXY instead of HTTP_PROXY (with that proxy's credentials, not the
// first one's), and a hop to a NO_PROXY host goes direct (RELIABILITY P-06).
func hopOptions(o *options, u *parsedURL) (*options, error) {
	if !o.proxyEnv {
		return o, nil
	}
	p, err := envProxy(u)
	if err != nil {
		return nil, err
	}
	c := *o
	c.proxy = nil
	if p != "" {
		if c.proxy, err = parseRoute(p); err != nil {
			return nil, err
		}
	}
	return &c, nil
}
