package guise

import (
	"bytes"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/guise-http/guise/fields"
	"github.com/guise-http/guise/profile"
)

// Request is one HTTP request. The zero Method means GET. A Request may be
// reused for several calls, sequentially, when its Body is nil or
// replayable; reuse skips parsing the URL again. A Request must not be
// changed while a call that uses it is running.
type Request struct {
	Method string // "" means GET
	URL    string // absolute http:// or https:// URL

	// Header holds the caller's fields. They are merged into the profile's
	// default headers: a field whose name matches a default replaces it in
	// the default's position (in the caller's case); other fields follow the
	// defaults, in the caller's order.
	Header Header

	// Body is the request body; nil means none. A *bytes.Buffer body has a
	// known length and is sent again on a retry or a 307/308 redirect.
	// *bytes.Reader and *strings.Reader bodies have a known length and are
	// sent again on a 307/308 redirect (seeking back to their start), but
	// never retried. An *os.File goes out through the kernel's copy path
	// where the connection allows. Other readers are sent chunked unless
	// ContentLength is set, and are never sent twice.
	Body io.Reader
	// ContentLength is the length of Body when Body is another kind of
	// reader: 0 means unknown (sent chunked) unless Body is nil.
	ContentLength int64

	// Kind selects the profile's default headers: a top-level navigation
	// (the zero value), a fetch() or a sub-resource.
	Kind profile.RequestKind

	// Scripted marks a navigation that a page's script started without
	// user activation (location.href set by a timer, form.submit(), a
	// meta refresh): the browsers then send no Sec-Fetch-User, on it and on
	// the hops of its redirects. The zero value is a person's navigation,
	// typed or clicked, with Sec-Fetch-User where the browser sends it.
	Scripted bool

	// Redirect overrides the Session's redirect policy for this request.
	// (It sits by the two fields above, in their word: the Request stays
	// within 288 bytes.)
	Redirect RedirectPolicy

	// Referrer is the URL of the page the request comes from, "" for none
	// (a typed-in navigation). guise derives Referer from it under the
	// browsers' default policy (strict-origin-when-cross-origin) on every
	// hop, and Sec-Fetch-Site. A Referer field in Header is sent as given
	// instead.
	Referrer string

	// Per-request overrides of the Session's settings; zero values mean
	// "as the Session says".
	Profile string
	// Browser, if set, is the profile of this request in place of Profile
	// (see Session.Browser).
	Browser            *profile.Profile
	Proxy              string
	Timeout            time.Duration
	InsecureSkipVerify bool
	// Protocol, when not AnyProtocol, overrides the Session's Protocol;
	// the hops of a redirect chain keep it.
	Protocol Protocol
	// redirected marks a request guise made to follow a redirect (here, by
	// the bool above, to keep the Request within 288 bytes).
	redirected bool
	// RootCAs, when set, verifies the server's certificate against these
	// roots instead of the Session's RootCAs or trust store; for Get and Do
	// instead of the embedded Mozilla roots. Connections verified against
	// other roots are never used for the request.
	RootCAs *x509.CertPool

	// parsed caches what the URL parses to, for reuse.
	parsed parsedURL
}

// parsedURL is a URL parsed into what the wire needs.
type parsedURL struct {
	u         *url.URL
	raw       string // the URL this was parsed from
	scheme    string // "http" or "https"
	host      string // host without port, IPv6 without brackets
	authority string // host[:port] as sent in Host / :authority
	addr      string // host:port to dial
	target    string // request-target: path?query
	origin    string // scheme://authority, as the Origin field serialises it
}

func (r *Request) method() string {
	if r.Method == "" {
		return "GET"
	}
	return r.Method
}

// parse parses r.URL once per distinct URL: a reused Request keeps its
// result, and a process-wide cache serves new Requests for URLs seen
// before (API clients and monitors ask for the same URLs again and again).
func (r *Request) parse() (*parsedURL, error) {
	if r.parsed.raw == r.URL && r.parsed.scheme != "" {
		return &r.parsed, nil
	}
	if p := lastURL.Load(); p != nil && p.raw == r.URL {
		r.parsed = *p
		return &r.parsed, nil
	}
	if v, ok := urlCache.Load(r.URL); ok {
		p := v.(*parsedURL)
		lastURL.Store(p)
		r.parsed = *p
		return &r.parsed, nil
	}
	p, err := parseURL(r.URL)
	if err != nil {
		return nil, err
	}
	r.parsed = p
	if len(r.URL) <= maxCachedURL {
		if urlCacheLen.Add(1) > maxCachedURLs {
			// Crude but bounded: start over rather than track age.
			urlCache.Clear()
			urlCacheLen.Store(0)
		}
		urlCache.Store(r.URL, &p)
		lastURL.Store(&p)
	}
	return &r.parsed, nil
}

// The parsed-URL cache. A parsedURL holds nothing of a Session, so sharing
// it across scopes links nothing; its *url.URL is never modified.
var (
	urlCache    sync.Map // string → *parsedURL
	urlCacheLen atomic.Int32
	// lastURL is the cache's entry served last: a program asking for one
	// URL again and again compares strings instead of hashing one.
	lastURL atomic.Pointer[parsedURL]
)

const (
	maxCachedURL  = 512
	maxCachedURLs = 4096
)

func parseURL(raw string) (parsedURL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return parsedURL{}, fmt.Errorf("%w: %v", ErrRefusedToSend, err)
	}
	var p parsedURL
	switch strings.ToLower(u.Scheme) {
	case "http":
		p.scheme = "http"
	case "https":
		p.scheme = "https"
	default:
		return parsedURL{}, fmt.Errorf("%w %q", ErrUnsupportedScheme, u.Scheme)
	}
	if u.Host == "" {
		return parsedURL{}, fmt.Errorf("%w: no host in URL", ErrRefusedToSend)
	}
	p.host = u.Hostname()
	if !validHost(p.host) {
		return parsedURL{}, fmt.Errorf("%w: invalid host %q", ErrRefusedToSend, p.host)
	}
	def := "80"
	if p.scheme == "https" {
		def = "443"
	}
	// The port as the URL Standard serialises it: leading zeros dropped,
	// and none at all when it is empty ("a.example:") or the scheme's
	// default, which browsers never send.
	hostPart, port := u.Host, strings.TrimLeft(u.Port(), "0")
	if i := strings.LastIndexByte(u.Host, ':'); i >= 0 && !strings.Contains(u.Host[i:], "]") {
		hostPart = u.Host[:i]
		if port == "" && i+1 < len(u.Host) {
			port = "0" // all zeros
		}
	}
	if !isASCII(p.host) {
		// An internationalised name goes out as its A-labels, in Host,
		// :authority, the TLS server name and the DNS lookup, as the URL
		// Standard's host parser gives browsers (UTS 46, as for HSTS).
		a, err := hstsLookup.ToASCII(p.host)
		if err != nil || !utf8.ValidString(p.host) || a == "" || !isASCII(a) || !validHost(a) {
			return parsedURL{}, fmt.Errorf("%w: invalid host %q", ErrRefusedToSend, p.host)
		}
		p.host, hostPart = a, a
	}
	p.authority = hostPart
	if port == "" || port == def {
		port = def
	} else {
		p.authority += ":" + port
	}
	p.addr = net.JoinHostPort(p.host, port)
	p.target = u.EscapedPath()
	if p.target == "" {
		p.target = "/"
	}
	if u.RawQuery != "" || u.ForceQuery {
		p.target += "?" + encodeQuery(u.RawQuery)
	}
	p.origin = p.scheme + "://" + strings.ToLower(p.authority)
	p.raw = raw
	p.u = u
	return p, nil
}

// encodeQuery percent-encodes the bytes of a raw query that the URL
// Standard's special-query percent-encode set holds and net/url leaves as
// they are: space, '"', '<', '>', the apostrophe and every byte above 0x7e, as
// Chromium and Firefox send them ("?q=a b" goes out as "?q=a%20b"). Control
// bytes never get here: url.Parse refuses them. A query with none of these
// is returned as it is, without allocating.
func encodeQuery(q string) string {
	i := 0
	for i < len(q) && !queryEscaped(q[i]) {
		i++
	}
	if i == len(q) {
		return q
	}
	const hex = "0123456789ABCDEF"
	b := make([]byte, 0, len(q)+16)
	b = append(b, q[:i]...)
	for ; i < len(q); i++ {
		if c := q[i]; queryEscaped(c) {
			b = append(b, '%', hex[c>>4], hex[c&15])
		} else {
			b = append(b, c)
		}
	}
	return string(b)
}

func queryEscaped(c byte) bool {
	return c <= ' ' || c >= 0x7f || c == '"' || c == '<' || c == '>' || c == '\''
}

// url returns the parsed URL. It is shared: do not modify it.
func (p *parsedURL) url() *url.URL { return p.u }

// validHost accepts a DNS name or IP literal and nothing that could break
// out of a Host header or request line.
func validHost(h string) bool {
	if h == "" {
		return false
	}
	for i := 0; i < len(h); i++ {
		c := h[i]
		// '[' and ']' only bracket an IPv6 literal, which Hostname has
		// taken them from: "http://]" has none.
		if c <= ' ' || c == 0x7f || c == '/' || c == '\\' || c == '@' || c == '?' || c == '#' || c == '[' || c == ']' {
			return false
		}
	}
	return true
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// validMethod reports whether m is a token.
func validMethod(m string) bool { return fields.ValidName(m) }

// body describes how a request body goes on the wire and whether it can be
// sent again.
type body struct {
	r      io.Reader
	bytes  []byte // when the whole body is at hand
	length int64  // -1 unknown
}

// requestBody inspects r.Body. It reads nothing.
func (r *Request) body() (body, bool) {
	switch b := r.Body.(type) {
	case nil:
		return body{length: 0}, true
	case *bytes.Buffer:
		return body{bytes: b.Bytes(), length: int64(b.Len())}, true
	case *bytes.Reader:
		return body{r: b, length: int64(b.Len())}, false
	case *strings.Reader:
		return body{r: b, length: int64(b.Len())}, false
	}
	if r.ContentLength > 0 {
		return body{r: r.Body, length: r.ContentLength}, false
	}
	return body{r: r.Body, length: -1}, false
}
