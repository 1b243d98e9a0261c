package guise

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/guise-http/guise/cookie"
	"github.com/guise-http/guise/fields"
	"golang.org/x/net/publicsuffix"
)

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

var (
	// ErrTooManyRedirects: the chain was longer than MaxRedirects.
	ErrTooManyRedirects = errors.New("guise: too many redirects")
	// ErrRedirect: a redirect arrived under RedirectError.
	ErrRedirect = errors.New("guise: redirect refused by policy")
	// ErrBadLocation: a redirect's Location is not an http(s) URL.
	ErrBadLocation = errors.New("guise: bad redirect location")
)

// chain is the state of one call across its redirect hops.
type chain struct {
	policy RedirectPolicy
	max    int
	jar    jar // nil: no cookies
	// ephemeral makes a jar for this call alone when a response sets a
	// cookie (isolated calls keep cookies only along one redirect chain).
	ephemeral bool
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
		resp, err := st.roundTrip(ctx, hop, ho, xs)
		if err != nil {
			return nil, err
		}
		resp.URL = hop.URL
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
		Profile: hop.Profile, Proxy: hop.Proxy, Timeout: hop.Timeout, InsecureSkipVerify: hop.InsecureSkipVerify,
		RootCAs: hop.RootCAs, Scripted: hop.Scripted,
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
