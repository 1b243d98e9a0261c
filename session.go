package guise

import (
	"context"

	"crypto/x509"
	"github.com/guise-http/guise/cookie"
	"runtime"
	"sync"
	"time"
)

// Session is a browsing session: one browser profile, its connections and
// (once cookies land) its cookie jar, kept until Close. Requests of one
// Session may reuse each other's connections and TLS sessions; requests of
// different Sessions never do unless they share a Transport.
//
// The zero value is ready to use, with profile.Default. Fields are read at
// the first request and must not change afterwards. A Session is safe for
// concurrent use. A Session dropped without Close is closed by a cleanup when
// garbage-collected.
type Session struct {
	// Profile names the browser to look like (see profile.Names); ""
	// means the Transport's Profile, or profile.Default.
	Profile string
	// Proxy is the proxy URL for every request; "" means a direct
	// connection.
	Proxy string
	// ProxyFromEnvironment takes the proxy from HTTP_PROXY, HTTPS_PROXY,
	// ALL_PROXY and NO_PROXY (or their lower-case forms) for requests that
	// name no Proxy. Off unless set: guise reads no environment by default.
	ProxyFromEnvironment bool
	// Timeout bounds each request from start to the end of its body; 0
	// means no limit but the context's.
	Timeout time.Duration
	// InsecureSkipVerify turns certificate verification off. Use it only
	// against servers you run.
	InsecureSkipVerify bool
	// RootCAs replaces TrustStore's roots when set.
	RootCAs *x509.CertPool
	// TrustStore chooses the roots certificates are verified against; the
	// zero value is the embedded Mozilla roots.
	TrustStore TrustStore
	// Transport, if set, is the connection pool this Session uses and may
	// share with other Sessions. Nil means a pool of the Session's own.
	Transport *Transport
	// Jar holds the Session's cookies; nil means a jar of its own, made at
	// the first request (see Cookies). The jar is never reset or expired as
	// a whole by guise.
	Jar *cookie.Jar
	// RawBody hands bodies over as received, without undoing their
	// Content-Encoding.
	RawBody bool
	// MaxBodySize caps a decoded body: reading past it fails with
	// ErrDecodeLimit. 0 means no limit.
	MaxBodySize int64
	// Redirect is the redirect policy; the zero value follows redirects
	// as a browser does.
	Redirect RedirectPolicy
	// MaxRedirects caps a redirect chain; 0 means DefaultMaxRedirects.
	MaxRedirects int

	once  sync.Once
	state *sessionState
}

// sessionState is what a Session owns, apart from the Session so a GC
// cleanup can close it.
type sessionState struct {
	t       *Transport // the pool used
	own     bool       // t belongs to this Session
	jar     *cookie.Jar
	rootsID string // rootsID(Session.RootCAs)
}

func (s *Session) init() *sessionState {
	s.once.Do(func() {
		st := &sessionState{t: s.Transport, jar: s.Jar, rootsID: rootsID(s.RootCAs)}
		if st.jar == nil {
			st.jar = cookie.New(nil)
		}
		if st.t == nil {
			st.t = &Transport{Profile: s.Profile}
			st.own = true
			st.t.init()
			runtime.AddCleanup(s, func(t *Transport) { t.Close() }, st.t)
		}
		s.state = st
	})
	return s.state
}

// Close closes the Session's own connections. A shared Transport stays
// open. Requests after Close fail with ErrClosed.
func (s *Session) Close() error {
	st := s.init()
	if st.own {
		return st.t.Close()
	}
	return nil
}

// Get fetches url as a top-level navigation.
func (s *Session) Get(ctx context.Context, url string) (*Response, error) {
	return s.Do(ctx, &Request{URL: url})
}

// Do sends req and returns the response head; the caller reads and closes
// the body. Any error is an *Error. An error response (4xx, 5xx) is not an
// error.
func (s *Session) Do(ctx context.Context, req *Request) (*Response, error) {
	st := s.init()
	t := st.t
	ts := t.init()
	o, err := s.options(req, t)
	if err != nil {
		return nil, &Error{Op: opName(req.method()), URL: redact(req.URL), Err: err}
	}
	ch, err := s.chain(req)
	if err != nil {
		return nil, &Error{Op: opName(req.method()), URL: redact(req.URL), Err: err}
	}
	return do(ctx, ts, req, &o, pick(req.Timeout, s.Timeout), &ch)
}

// chain starts the redirect state of one call.
func (s *Session) chain(req *Request) (chain, error) {
	ch, err := newChain(req, pick(req.Redirect, s.Redirect), s.MaxRedirects, cookieJar{s.state.jar})
	ch.decode, ch.limit = !s.RawBody, s.MaxBodySize
	return ch, err
}

// Cookies returns the Session's cookie jar: Jar, or the one the Session
// made. Use it to look at, export or import cookies.
func (s *Session) Cookies() *cookie.Jar { return s.init().jar }

func pick[T comparable](a, b T) T {
	var zero T
	if a != zero {
		return a
	}
	return b
}

// options resolves the settings of req under s and t.
func (s *Session) options(req *Request, t *Transport) (options, error) {
	c, err := compile(pick(req.Profile, pick(s.Profile, t.Profile)))
	if err != nil {
		return options{}, err
	}
	o := options{
		profile:  c,
		insecure: req.InsecureSkipVerify || s.InsecureSkipVerify,
		rootCAs:  s.RootCAs,
		rootsID:  s.state.rootsID,
		trust:    s.TrustStore,
	}
	if req.RootCAs != nil {
		o.rootCAs, o.rootsID = req.RootCAs, rootsID(req.RootCAs)
	}
	p := pick(req.Proxy, s.Proxy)
	if p == "" && s.ProxyFromEnvironment {
		o.proxyEnv = true
		u, err := req.parse()
		if err != nil {
			return options{}, err
		}
		if p, err = envProxy(u); err != nil {
			return options{}, err
		}
	}
	if p != "" {
		if o.proxy, err = parseRoute(p); err != nil {
			return options{}, err
		}
	}
	return o, nil
}
