package guise

import (
	"bytes"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/guise-http/guise/cookie"
	"github.com/guise-http/guise/fields"
	"github.com/guise-http/guise/internal/decode"
	"github.com/guise-http/guise/profile"
	"golang.org/x/net/publicsuffix"
)

// isolated serves the package-level Get and Do: it dials a new connection
// for every request and never pools it.
var isolated struct {
	once sync.Once
	t    Transport
}

func isolatedState() *transportState {
	isolated.once.Do(func() { isolated.t.init() })
	return isolated.t.state
}

// Get fetches url as a top-level navigation with profile.Default, as an
// isolated visit: a connection of its own, closed after the body, no TLS
// resumption, no cookies.
func Get(ctx context.Context, url string) (*Response, error) {
	return Do(ctx, &Request{URL: url})
}

// Do sends req as an isolated visit (see Get). The server's certificate is
// verified against the embedded Mozilla roots, or req.RootCAs when set.
func Do(ctx context.Context, req *Request) (*Response, error) {
	c, err := requestProfile(req)
	if err != nil {
		return nil, &Error{Op: opName(req.method()), URL: redact(req.URL), Err: err}
	}
	o := options{profile: c, insecure: req.InsecureSkipVerify, isolated: true}
	if o.protocol, err = resolveProtocol(req.Protocol, AnyProtocol); err != nil {
		return nil, &Error{Op: opName(req.method()), URL: redact(req.URL), Err: err}
	}
	if req.RootCAs != nil {
		o.rootCAs, o.rootsID = req.RootCAs, rootsID(req.RootCAs)
	}
	if req.Proxy != "" {
		if o.proxy, err = parseRoute(req.Proxy); err != nil {
			return nil, &Error{Op: opName(req.method()), URL: redact(req.URL), Err: err}
		}
	}
	ch, err := newChain(req, req.Redirect, 0, nil)
	ch.ephemeral = true
	if err != nil {
		return nil, &Error{Op: opName(req.method()), URL: redact(req.URL), Err: err}
	}
	return do(ctx, isolatedState(), req, &o, req.Timeout, &ch)
}

// requestProfile is the compiled profile of an isolated request.
func requestProfile(req *Request) (*compiled, error) {
	if req.Browser != nil {
		return compileProfile(req.Browser)
	}
	return compile(req.Profile)
}

// Session is a browsing session: one browser profile, its connections, its
// cookie jar and the hosts that asked for HSTS (see the package doc), kept
// until Close. Requests of one
// Session may reuse each other's connections and TLS sessions; requests of
// different Sessions never do unless they share a Transport.
//
// The zero value is ready to use, with profile.Default. Fields are read at
// the first request and must not change afterwards. A Session is safe for
// concurrent use. A Session dropped without Close is closed by a cleanup when
// garbage-collected: not while a call of it runs, nor while a response body
// of it is unread and open.
type Session struct {
	// Profile names the browser to look like (see profile.Names); ""
	// means the Transport's profile (Browser, Profiles, Profile), or
	// profile.Default.
	Profile string
	// Browser, if set, is the profile to look like, in place of Profile:
	// one loaded from a file (profile.Load, profile.Open) behaves exactly
	// as an embedded one, and its connections are its own (two files are
	// never taken for one browser, even with one name). It is shared and
	// must not be changed.
	Browser *profile.Profile
	// Profiles, if set (and Browser is not), is a weighted set the Session
	// draws its profile from, once, at its first request: the Session is
	// that browser for its whole life, its cookies, TLS tickets and
	// connections included. A Set Check refuses makes every request fail
	// with its error (profile.ParseSet checks it up front).
	Profiles profile.Set
	// Rand is the randomness of the draw from Profiles (or the
	// Transport's); nil means the Transport's Rand, or crypto/rand.
	Rand io.Reader
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
	// Protocol limits the HTTP versions requests use; the zero value,
	// AnyProtocol, is as the browser. HTTP1 offers only http/1.1 in the
	// ClientHello, as the browser does with HTTP/2 disabled.
	Protocol Protocol

	once  sync.Once
	state *sessionState
}

// sessionState is what a Session owns, apart from the Session so a GC
// cleanup can close it.
type sessionState struct {
	t       *Transport // the pool used
	own     bool       // t belongs to this Session
	jar     *cookie.Jar
	hsts    hstsStore
	rootsID string // rootsID(Session.RootCAs)
	// prof is the profile the Session settled at init (Browser, or the
	// draw from a set), nil when it goes by name; profErr why it could
	// not be had.
	prof    *compiled
	profErr error
}

func (s *Session) init() *sessionState {
	s.once.Do(func() {
		st := &sessionState{t: s.Transport, jar: s.Jar, rootsID: rootsID(s.RootCAs)}
		if st.jar == nil {
			st.jar = cookie.New(nil)
		}
		st.prof, st.profErr = s.settle()
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

// settle resolves the Session's profile when it is not a name: its
// Browser, its draw from Profiles, or else the Transport's.
func (s *Session) settle() (*compiled, error) {
	var t Transport
	if s.Transport != nil {
		t.Browser, t.Profiles, t.Rand = s.Transport.Browser, s.Transport.Profiles, s.Transport.Rand
	}
	switch {
	case s.Browser != nil:
		return compileProfile(s.Browser)
	case len(s.Profiles) > 0:
		return draw(s.Profiles, pick(s.Rand, t.Rand))
	case s.Profile != "":
		return nil, nil
	case t.Browser != nil:
		return compileProfile(t.Browser)
	case len(t.Profiles) > 0:
		return draw(t.Profiles, pick(s.Rand, t.Rand))
	}
	return nil, nil
}

func draw(set profile.Set, r io.Reader) (*compiled, error) {
	p, err := set.Draw(r)
	if err != nil {
		return nil, err
	}
	return compileProfile(p)
}

// ProfileInUse returns the profile the Session looks like: a request's own
// Profile aside, the one its requests use. With a set it is the one
// drawn. It makes the Session's state, as the first request would.
func (s *Session) ProfileInUse() (*profile.Profile, error) {
	st := s.init()
	if st.profErr != nil {
		return nil, st.profErr
	}
	if st.prof != nil {
		return st.prof.p, nil
	}
	c, err := compile(pick(s.Profile, st.t.Profile))
	if err != nil {
		return nil, err
	}
	return c.p, nil
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
	resp, err := do(ctx, ts, req, &o, pick(req.Timeout, s.Timeout), &ch)
	if err == nil {
		// The body keeps s, and so its connections, from the cleanup of
		// a forgotten Session until the body is done with.
		resp.body.session = s
	}
	runtime.KeepAlive(s)
	return resp, err
}

// chain starts the redirect state of one call.
func (s *Session) chain(req *Request) (chain, error) {
	ch, err := newChain(req, pick(req.Redirect, s.Redirect), s.MaxRedirects, cookieJar{s.state.jar})
	ch.decode, ch.limit = !s.RawBody, s.MaxBodySize
	ch.hsts = &s.state.hsts
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
	var c *compiled
	var err error
	switch st := s.state; {
	case req.Browser != nil:
		c, err = compileProfile(req.Browser)
	case req.Profile != "":
		c, err = compile(req.Profile)
	case st.profErr != nil:
		err = st.profErr
	case st.prof != nil:
		c = st.prof
	default:
		c, err = compile(pick(s.Profile, t.Profile))
	}
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
	if o.protocol, err = resolveProtocol(req.Protocol, s.Protocol); err != nil {
		return options{}, err
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

// RedirectPolicy says what a request does with a 3xx response that carries
// a Location.
type RedirectPolicy uint8

// Redirect policies. The zero value means "as the Session says", and a
// Session's zero value means RedirectFollow.
const (
	RedirectDefault RedirectPolicy = iota
	// RedirectFollow follows redirects as a browser does, up to
	// MaxRedirects hops.
	RedirectFollow
	// RedirectManual returns the 3xx response itself.
	RedirectManual
	// RedirectError fails with ErrRedirect on the first redirect.
	RedirectError
)

var redirectNames = [...]string{"default", "follow", "manual", "error"}

func (p RedirectPolicy) String() string {
	if int(p) < len(redirectNames) {
		return redirectNames[p]
	}
	return "RedirectPolicy(" + fmt.Sprint(uint8(p)) + ")"
}

// DefaultMaxRedirects is the longest redirect chain followed when
// MaxRedirects is 0: Chrome's and Firefox's limit.
const DefaultMaxRedirects = 20

// chain is the state of one call across its redirect hops.
type chain struct {
	policy RedirectPolicy
	max    int
	jar    jar // nil: no cookies
	// ephemeral makes a jar for this call alone when a response sets a
	// cookie (isolated calls keep cookies only along one redirect chain),
	// and an HSTS store when one sets Strict-Transport-Security.
	ephemeral bool
	// hsts is the Session's HSTS state (hsts.go); nil for an isolated call
	// until a hop of its chain sets it.
	hsts *hstsStore
	// decode undoes Content-Encoding; limit caps the decoded body.
	decode   bool
	limit    int64
	referrer *url.URL
	first    *url.URL // the first URL, the initiator of a browser-initiated navigation
	hops     int
	// dropped is set once a cross-origin hop removed the caller's
	// credentials; they never come back later in the chain.
	dropped bool
	cross   bool // some hop so far left the first URL's site
	xorig   bool // some hop so far left the first URL's origin
}

// jar is what a chain needs of a cookie jar.
type jar interface {
	cookieHeader(u *url.URL, site cookie.SiteContext) string
	setCookies(u *url.URL, values []string)
}

func newChain(req *Request, policy RedirectPolicy, max int, j jar) (chain, error) {
	ch := chain{policy: policy, max: max, jar: j, decode: true}
	if ch.policy == RedirectDefault {
		ch.policy = RedirectFollow
	}
	if ch.max <= 0 {
		ch.max = DefaultMaxRedirects
	}
	if req.Referrer != "" {
		r, err := url.Parse(req.Referrer)
		if err != nil || r.Scheme == "" || r.Host == "" {
			return ch, fmt.Errorf("%w: bad Referrer %q", ErrRefusedToSend, req.Referrer)
		}
		ch.referrer = r
	}
	return ch, nil
}

// do runs one call: the request, and the redirects it is told to follow,
// within timeout. Every error is an *Error.
func do(ctx context.Context, st *transportState, req *Request, o *options, timeout time.Duration, ch *chain) (*Response, error) {
	var cancel context.CancelFunc
	if timeout > 0 {
		ctx, cancel = context.WithTimeout(ctx, timeout)
	}
	resp, err := ch.run(ctx, st, req, o)
	if err != nil {
		if cancel != nil {
			cancel()
		}
		if errors.Is(err, context.DeadlineExceeded) && timeout > 0 {
			err = &TimeoutError{Phase: PhaseTotal, Err: err}
		}
		return nil, &Error{Op: opName(req.method()), URL: redact(req.URL), Err: err}
	}
	resp.body.cancel = cancel
	resp.body.op = opName(req.method())
	resp.body.url = req.URL
	resp.body.timeout = timeout > 0
	return resp, nil
}

func (ch *chain) run(ctx context.Context, st *transportState, req *Request, o *options) (*Response, error) {
	hop := req
	var x [3]fields.Field
	for {
		u, err := hop.parse()
		if err != nil {
			return nil, err
		}
		if u.scheme == "http" && ch.hsts != nil && ch.hsts.known(u.host) {
			hop = upgrade(hop, u.url())
			if u, err = hop.parse(); err != nil {
				return nil, err
			}
		}
		var wu *url.URL
		if ch.jar != nil || ch.hops > 0 || ch.referrer != nil {
			wu = u.url()
		}
		xs := x[:0]
		if ch.jar != nil {
			if v := ch.jar.cookieHeader(wu, ch.siteContext(hop, wu)); v != "" {
				xs = append(xs, fields.Field{Name: "Cookie", Value: v})
			}
		}
		if ch.hops > 0 || ch.referrer != nil {
			if ref := refererFor(ch.referrer, wu); ref != "" {
				xs = append(xs, fields.Field{Name: "Referer", Value: ref})
			}
			if site := ch.fetchSite(wu); site != "" {
				xs = append(xs, fields.Field{Name: "Sec-Fetch-Site", Value: site})
			}
		}
		ho := o
		if hop != req {
			if ho, err = hopOptions(o, u); err != nil {
				return nil, err
			}
		}
		resp, err := ch.send(ctx, st, hop, ho, xs)
		if err != nil {
			return nil, err
		}
		resp.URL = hop.URL
		if u.scheme == "https" && !ho.insecure && (ch.hsts != nil || ch.ephemeral) {
			// RFC 6797 8.1: only over a secure transport without errors,
			// so not when verification was off.
			if v, ok := resp.Header.Lookup("strict-transport-security"); ok {
				if ch.hsts == nil {
					ch.hsts = new(hstsStore)
				}
				ch.hsts.observe(u.host, v)
			}
		}
		if ch.jar != nil || ch.ephemeral {
			if vs := resp.Header.Values("set-cookie"); len(vs) > 0 {
				if wu == nil {
					wu = u.url()
				}
				if ch.jar == nil {
					ch.jar = cookieJar{cookie.New(nil)}
				}
				ch.jar.setCookies(wu, vs)
			}
		}
		next, err := ch.redirect(resp, hop, u)
		if next == nil || err != nil {
			if err == nil && ch.decode {
				err = decodeBody(resp, hop, ch.limit)
			}
			if err != nil {
				discard(resp)
				return nil, err
			}
			return resp, nil
		}
		discard(resp)
		hop = next
	}
}

// send sends one hop, and sends it once more, on a new connection where
// the protocol wants one, when the server left it unprocessed (a reused
// HTTP/1.1 connection it had closed, a refused HTTP/2 stream, a GOAWAY)
// and its body can be sent again: a retry goes out at most once. A request
// that waited for an HTTP/2 stream on a connection that stopped taking
// them was not sent at all: it goes to the next connection, body and all,
// without using up its retry, up to maxMoves times (a server sending GOAWAY
// on every connection must not hold a request for ever, RELIABILITY H2-14).
func (ch *chain) send(ctx context.Context, st *transportState, hop *Request, o *options, x fields.Header) (*Response, error) {
	b, replayable := hop.body()
	fresh, retried := false, false
	for moves := 0; ; {
		resp, err := st.roundTrip(ctx, hop, o, x, b, fresh)
		if err == nil {
			return resp, nil
		}
		up, ok := err.(*unprocessedError)
		if !ok {
			return nil, err
		}
		switch {
		case ctx.Err() != nil:
			// Its context ended before it could go again: say so, as
			// an error after the context ended always does.
			return nil, classify(ctx, up.err)
		case up.notSent && moves < maxMoves:
			moves++
			fresh = false
		case retried || !replayable:
			return nil, up.err
		default:
			retried = true
			fresh = up.fresh && !o.isolated
		}
	}
}

// maxMoves bounds how often one request that was never sent moves on to
// another HTTP/2 connection.
const maxMoves = 8

// discard drains (up to the Transport's limit) and closes a body the caller
// will never see.
func discard(resp *Response) {
	resp.body.r.Close()
}

// isRedirect reports whether status is a redirect that carries a Location
// to follow.
func isRedirect(status int) bool {
	switch status {
	case 301, 302, 303, 307, 308:
		return true
	}
	return false
}

// redirect decides what follows resp: nil to hand resp to the caller, or
// the next hop's request.
func (ch *chain) redirect(resp *Response, hop *Request, u *parsedURL) (*Request, error) {
	if !isRedirect(resp.StatusCode) || ch.policy == RedirectManual {
		return nil, nil
	}
	loc := resp.Header.Get("location")
	if loc == "" {
		return nil, nil
	}
	if ch.policy == RedirectError {
		return nil, fmt.Errorf("%w: %d to %q", ErrRedirect, resp.StatusCode, loc)
	}
	if ch.hops >= ch.max {
		return nil, fmt.Errorf("%w: stopped after %d", ErrTooManyRedirects, ch.hops)
	}
	cur := u.url()
	target, err := cur.Parse(loc)
	if err != nil {
		return nil, fmt.Errorf("%w %q: %v", ErrBadLocation, loc, err)
	}
	if target.Scheme != "http" && target.Scheme != "https" || target.Host == "" {
		return nil, fmt.Errorf("%w %q: not an http(s) URL", ErrBadLocation, loc)
	}
	target.Fragment, target.RawFragment = "", ""
	if ch.first == nil {
		ch.first = cur
	}

	next := &Request{
		redirected: true,
		Method:     hop.method(), URL: target.String(), Kind: hop.Kind,
		Profile: hop.Profile, Browser: hop.Browser, Proxy: hop.Proxy, Timeout: hop.Timeout, InsecureSkipVerify: hop.InsecureSkipVerify,
		RootCAs: hop.RootCAs, Scripted: hop.Scripted, Protocol: hop.Protocol,
	}
	keepBody := true
	switch resp.StatusCode {
	case 301, 302:
		if next.Method == "POST" {
			next.Method, keepBody = "GET", false
		}
	case 303:
		if next.Method != "HEAD" {
			next.Method, keepBody = "GET", false
		}
	}
	if keepBody && hop.Body != nil {
		body, ok := replay(hop.Body)
		if !ok {
			return nil, nil // a 307/308 whose body cannot be sent again: hand it back
		}
		next.Body, next.ContentLength = body, hop.ContentLength
	}
	if !sameOrigin(cur, target) {
		ch.xorig = true
		ch.dropped = true
	}
	if !sameSite(ch.first, target) {
		ch.cross = true
	}
	next.Header = make(Header, 0, len(hop.Header))
	for _, f := range hop.Header {
		if ch.dropped && sensitive(f.Name) {
			continue
		}
		if !keepBody && bodyField(f.Name) {
			continue
		}
		next.Header = append(next.Header, f)
	}
	ch.hops++
	return next, nil
}

// sensitive names the fields a cross-origin redirect removes for good.
func sensitive(name string) bool {
	for _, s := range [...]string{"authorization", "proxy-authorization", "cookie", "cookie2", "www-authenticate", "proxy-authenticate"} {
		if fields.EqualFold(name, s) {
			return true
		}
	}
	return false
}

// bodyField names the fields that describe a body a redirect dropped.
func bodyField(name string) bool {
	for _, s := range [...]string{"content-type", "content-length", "content-encoding", "content-language", "content-location", "transfer-encoding"} {
		if fields.EqualFold(name, s) {
			return true
		}
	}
	return false
}

// replay returns a reader that sends body again from its start, for the
// bodies whose content is at hand.
func replay(body io.Reader) (io.Reader, bool) {
	switch b := body.(type) {
	case interface{ Bytes() []byte }: // *bytes.Buffer, not drained by sending
		return bytes.NewReader(b.Bytes()), true
	case io.Seeker:
		if _, err := b.Seek(0, io.SeekStart); err == nil {
			return body, true
		}
	}
	return nil, false
}

// origin is scheme://host[:port] with the default port omitted, lower case.
func sameOrigin(a, b *url.URL) bool {
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

func port(u *url.URL) string {
	if p := u.Port(); p != "" {
		return p
	}
	if strings.EqualFold(u.Scheme, "https") {
		return "443"
	}
	return "80"
}

// site is the scheme and registrable domain (eTLD+1) of u; an IP address
// or a name without one is its own site.
func site(u *url.URL) string {
	h := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if net.ParseIP(h) == nil {
		if d, err := publicsuffix.EffectiveTLDPlusOne(h); err == nil {
			h = d
		}
	}
	return strings.ToLower(u.Scheme) + "://" + h
}

func sameSite(a, b *url.URL) bool { return site(a) == site(b) }

// fetchSite computes Sec-Fetch-Site for the next request to u: relative to
// the referrer when there is one, else (a browser-initiated navigation) to
// the chain's first URL, and never better than an earlier hop was.
func (ch *chain) fetchSite(u *url.URL) string {
	from := ch.referrer
	if from == nil {
		from = ch.first
		if from == nil {
			return "" // the first request: the profile's value stands
		}
	}
	switch {
	case ch.cross || !sameSite(from, u):
		return "cross-site"
	case ch.xorig || !sameOrigin(from, u):
		return "same-site"
	}
	return "same-origin"
}

// refererFor is the Referer a request to target carries under
// strict-origin-when-cross-origin, the browsers' default policy: the full
// referrer URL (without credentials and fragment) to the same origin, its
// origin to another origin, nothing from https to http.
func refererFor(ref, target *url.URL) string {
	if ref == nil {
		return ""
	}
	if strings.EqualFold(ref.Scheme, "https") && !strings.EqualFold(target.Scheme, "https") {
		return ""
	}
	if sameOrigin(ref, target) {
		r := *ref
		r.User, r.Fragment, r.RawFragment = nil, "", ""
		return r.String()
	}
	return strings.ToLower(ref.Scheme) + "://" + ref.Host + "/"
}

// cookieJar lets a redirect chain use a *cookie.Jar.
type cookieJar struct{ j *cookie.Jar }

func (c cookieJar) cookieHeader(u *url.URL, site cookie.SiteContext) string {
	var buf [512]byte
	b := c.j.AppendCookieHeader(buf[:0], u, site)
	if len(b) == 0 {
		return ""
	}
	return string(b)
}

func (c cookieJar) setCookies(u *url.URL, values []string) { c.j.SetCookies(u, values) }

// siteContext is how a browser classifies a request for SameSite cookies:
// same-site unless the request comes, or a redirect went, from another
// site.
func (ch *chain) siteContext(hop *Request, u *url.URL) cookie.SiteContext {
	from := ch.referrer
	if from == nil {
		from = ch.first
	}
	if !ch.cross && (from == nil || sameSite(from, u)) {
		return cookie.SameSiteRequest
	}
	if hop.Kind == 0 || hop.Kind == profile.Navigate {
		switch hop.method() {
		case "GET", "HEAD", "OPTIONS", "TRACE":
			return cookie.CrossSiteNavigation
		}
		return cookie.CrossSiteUnsafeNavigation
	}
	return cookie.CrossSite
}

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
