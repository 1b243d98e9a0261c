package guise

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/guise-http/guise/fields"
	"github.com/guise-http/guise/internal/h2"
	"github.com/guise-http/guise/profile"
)

// compiled is a profile turned into what each request needs, built once per
// profile name and shared by every Session and Transport.
type compiled struct {
	p *profile.Profile
	// hdr holds the default header list per protocol and request kind.
	hdr [2][kindCount]headerTemplate
	// body holds, where the profile has one, the header list per protocol
	// and kind for a request with a body (profile.HeaderSet.Body).
	body [2][kindCount]headerTemplate
	// redirect holds, where the browser orders the hop of a redirected
	// navigation differently, its header list per protocol (see
	// redirectTemplate).
	redirect [2]headerTemplate
	// h2 is the profile's HTTP/2 fingerprint for the h2 engine.
	h2 *h2.Config
	// prio is the HEADERS priority per request kind.
	prio [kindCount]h2.Priority
}

const kindCount = int(profile.Image) + 1

// Protocol indexes of compiled.hdr.
const (
	protoH1 = 0
	protoH2 = 1
)

// headerTemplate is a default header list in wire order. A field whose
// Value is empty is a placeholder: it keeps the position of a per-request
// field (Host, Referer, Cookie) and is sent only when the request supplies
// a value.
type headerTemplate struct {
	fields  fields.Header
	present bool
	// block is, for an HTTP/1.1 template whose first field is Host, the
	// fields after Host that a request with nothing of its own sends (no
	// caller fields, no Cookie or Referer, no body): every field with a
	// value, in wire form. headerFor would produce Host and exactly these;
	// see headBlock. nil when the template does not qualify.
	block []byte
}

var compiledCache sync.Map // profile name → *namedCompiled

// namedCompiled is a compiledCache entry with the name it was looked up by.
type namedCompiled struct {
	name string
	c    *compiled
}

// lastCompiled is the entry compile returned last: most programs use one
// profile, and a pointer load and a string comparison cost less than a
// map lookup, on every request.
var lastCompiled atomic.Pointer[namedCompiled]

// compile returns the compiled form of the named profile ("" means
// profile.Default). Concurrent cold calls may compile twice; one result wins
// and both are equal.
func compile(name string) (*compiled, error) {
	if name == "" {
		name = profile.Default
	}
	if e := lastCompiled.Load(); e != nil && e.name == name {
		return e.c, nil
	}
	if v, ok := compiledCache.Load(name); ok {
		e := v.(*namedCompiled)
		lastCompiled.Store(e)
		return e.c, nil
	}
	p, err := profile.Lookup(name)
	if err != nil {
		return nil, err
	}
	c := &compiled{p: p, h2: h2Config(p)}
	for k := profile.Navigate; int(k) < kindCount; k++ {
		if hs := p.HeaderSet(k, profile.HTTP1); hs != nil {
			t := template(p, hs)
			if !t.fields.Has("host") {
				return nil, fmt.Errorf("guise: profile %s: HTTP/1.1 %s header set has no Host field", p.Name, k)
			}
			t.block = renderBlock(t.fields)
			c.hdr[protoH1][k] = t
		}
		if hs := p.HeaderSet(k, profile.H2); hs != nil {
			c.hdr[protoH2][k] = h2Template(template(p, hs))
		}
		if hs := p.BodyHeaderSet(k, profile.HTTP1); hs != nil {
			c.body[protoH1][k] = template(p, hs)
		}
		if hs := p.BodyHeaderSet(k, profile.H2); hs != nil {
			c.body[protoH2][k] = h2Template(template(p, hs))
		}
		if k == profile.Navigate {
			c.redirect[protoH1] = redirectTemplate(p, c.hdr[protoH1][k])
			c.redirect[protoH2] = redirectTemplate(p, c.hdr[protoH2][k])
		}
		if kp, ok := p.Priority(k); ok {
			c.prio[k] = h2.Priority{Send: true, Exclusive: kp.Exclusive, Weight: uint16(kp.Weight), Dep: depRule(kp.DependsOn)}
		}
	}
	v, _ := compiledCache.LoadOrStore(name, &namedCompiled{name: name, c: c})
	e := v.(*namedCompiled)
	lastCompiled.Store(e)
	return e.c, nil
}

// template prepares a header set: per-request fields become placeholders
// (their recorded values are the page's, not this request's), except
// sec-fetch-site whose recorded value is the default for the kind. A set
// recorded with Cookie (the chrome, edge and firefox profiles: see
// profile/testdata/recordings/*-flows.json) keeps its placeholder where the
// browser sent it; a set without one gets a Cookie placeholder where
// cookiePosition guesses.
func template(p *profile.Profile, hs *profile.HeaderSet) headerTemplate {
	t := headerTemplate{present: true}
	for _, f := range hs.Header {
		if isPerRequest(hs.PerRequest, f.Name) && !fields.EqualFold(f.Name, "sec-fetch-site") {
			f.Value = ""
		}
		t.fields = append(t.fields, f)
	}
	if !t.fields.Has("cookie") {
		name := "cookie"
		if hs.Proto == profile.HTTP1 {
			name = "Cookie"
		}
		at := cookiePosition(p, t.fields)
		t.fields = append(t.fields[:at], append(fields.Header{{Name: name}}, t.fields[at:]...)...)
	}
	return t
}

// h2Template puts an HTTP/2 template in the form headerFor sends (names
// lower-cased, no field HTTP/2 forbids), so that only the fields a request
// adds after the template's need that pass.
func h2Template(t headerTemplate) headerTemplate {
	t.fields = h2Fields(t.fields, 0)
	return t
}

// renderBlock returns headerTemplate.block for an HTTP/1.1 template h.
func renderBlock(h fields.Header) []byte {
	if len(h) == 0 || !fields.EqualFold(h[0].Name, "host") {
		return nil
	}
	var b []byte
	for _, f := range h[1:] {
		if f.Value == "" {
			continue // a per-request placeholder with nothing to send
		}
		switch {
		case fields.EqualFold(f.Name, "content-length"), fields.EqualFold(f.Name, "transfer-encoding"), fields.EqualFold(f.Name, "expect"):
			return nil // framing is the engine's to check
		}
		b = append(b, f.Name...)
		b = append(b, ": "...)
		b = append(b, f.Value...)
		b = append(b, "\r\n"...)
	}
	return b
}

// headBlock returns, for an HTTP/1.1 request of kind that sends nothing of
// its own (no caller fields, extra holding Host alone, no body, neither a
// redirect hop nor scripted), its Host field and the template's
// pre-rendered block: what headerFor would assemble, without assembling it
// per request. ok is false when the request or the template does not
// qualify.
func (c *compiled) headBlock(kind profile.RequestKind, user, extra fields.Header, length int64, nav navFlags) (host fields.Field, block []byte, ok bool) {
	if kind == 0 {
		kind = profile.Navigate
	}
	if len(user) != 0 || len(extra) != 1 || length != 0 || nav != 0 || int(kind) >= kindCount {
		return host, nil, false
	}
	t := &c.hdr[protoH1][kind]
	if t.block == nil || !fields.EqualFold(extra[0].Name, "host") {
		return host, nil, false
	}
	return fields.Field{Name: t.fields[0].Name, Value: extra[0].Value}, t.block, true
}

// redirectTemplate returns the header list of a navigation that follows a
// redirect, when the browser orders it otherwise than the first request.
// Chromium (Chrome, Edge) adds the client hints back after the fields it set
// for the hop, so that sec-ch-ua, sec-ch-ua-mobile and sec-ch-ua-platform
// come right after sec-fetch-dest, over HTTP/1.1 and h2 alike: recorded in
// profile/testdata/recordings/chromium-156-flows.json, the GET /flow/ that
// follows the 302 of /flow/start. Firefox keeps its order (the same file
// for firefox-esr-153). Other profiles are not recorded and keep theirs.
func redirectTemplate(p *profile.Profile, t headerTemplate) headerTemplate {
	if !t.present || p.Browser != profile.Chrome && p.Browser != profile.Edge {
		return headerTemplate{}
	}
	var hints, rest fields.Header
	for _, f := range t.fields {
		if len(f.Name) >= 9 && fields.EqualFold(f.Name[:9], "sec-ch-ua") {
			hints = append(hints, f)
		} else {
			rest = append(rest, f)
		}
	}
	at := index(rest, "sec-fetch-dest")
	if len(hints) == 0 || at < 0 {
		return headerTemplate{}
	}
	out := append(append(append(fields.Header{}, rest[:at+1]...), hints...), rest[at+1:]...)
	return headerTemplate{fields: out, present: true}
}

// cookiePosition guesses where a browser puts Cookie, for header sets
// recorded without it: only the profiles built from public facts (Safari,
// OkHttp) need it now. The rule is the one the chrome and firefox
// recordings show: Chromium sends Cookie right after accept-language,
// Firefox before upgrade-insecure-requests or sec-fetch-dest; other
// browsers are placed as Chromium.
func cookiePosition(p *profile.Profile, h fields.Header) int {
	if p.Browser == profile.Firefox {
		for i, f := range h {
			if fields.EqualFold(f.Name, "upgrade-insecure-requests") || fields.EqualFold(f.Name, "sec-fetch-dest") {
				return i
			}
		}
		return len(h)
	}
	for i, f := range h {
		if fields.EqualFold(f.Name, "accept-language") {
			return i + 1
		}
	}
	return len(h)
}

// h2Config turns the profile's HTTP/2 data into the engine's Config.
func h2Config(p *profile.Profile) *h2.Config {
	cfg := &h2.Config{
		ConnWindowUpdate:   p.HTTP2.ConnWindowUpdate,
		FirstStreamID:      p.HTTP2.FirstStreamID,
		StreamWindowUpdate: p.HTTP2.StreamWindowUpdate,
		PseudoOrder:        p.HTTP2.PseudoOrder,
		HPACK:              h2.ChromiumHPACK(),
	}
	if p.Browser == profile.Firefox {
		cfg.HPACK = h2.FirefoxHPACK()
	}
	for _, s := range p.HTTP2.Settings {
		cfg.Settings = append(cfg.Settings, h2.Setting{ID: h2.SettingID(s.ID), Val: s.Value})
	}
	for _, pf := range p.HTTP2.Priorities {
		cfg.PriorityFrames = append(cfg.PriorityFrames, h2.PriorityFrame{StreamID: pf.StreamID,
			PriorityParam: h2.PriorityParam{StreamDep: pf.DependsOn, Exclusive: pf.Exclusive, Weight: uint8(pf.Weight - 1)}})
	}
	return cfg
}

func depRule(d profile.DependRule) h2.DepRule {
	if d == profile.LatestOpen {
		return h2.DepLatestOpen
	}
	return h2.DepRoot
}

func isPerRequest(names []string, name string) bool {
	for _, n := range names {
		if fields.EqualFold(n, name) {
			return true
		}
	}
	return false
}

// emptyBody is the length headerFor takes for a POST or PUT without a
// body (see bodyLength): the browsers send such a request with
// "Content-Length: 0" and the fields of a request with a body, but no
// default Content-Type for a fetch() (it has no body to type); a form
// submission keeps its Content-Type.
const emptyBody = -2

// bodyLength is the length headerFor takes for a request of method with a
// body of length (0: none, -1: unknown): emptyBody for a POST or PUT without
// one, as Chromium and Firefox send Content-Length: 0 for those two methods
// (net/http does the same, and some servers answer 411 without it).
func bodyLength(method string, length int64) int64 {
	if length == 0 && (method == "POST" || method == "PUT") {
		return emptyBody
	}
	return length
}

// headerFor appends to dst the header of one request: the profile's defaults
// for proto and kind in their order; where the caller's header has a field
// of the same name, the caller's fields instead (in its case); where extra
// (fields guise computes per request: Host, Cookie, Referer,
// Sec-Fetch-Site) has one, that; placeholders nobody filled are left out;
// then the caller's other fields in its order, then extra fields that have
// no place. Over HTTP/2, names are lower-cased and fields HTTP/2 forbids
// dropped.
//
// A request with a body (length > 0, or < 0 for a body of unknown length)
// uses the profile's body variant of kind when it has one (recorded: a
// fetch() POST, a form submission), which puts Content-Length, Origin and
// the browser's Content-Type (and Chrome's Cache-Control for a form) in the
// browser's places. Otherwise, or when that
// variant has no Content-Length slot, a body of known length adds
// Content-Length first over HTTP/2 and, by the h1 engine, at the end over
// HTTP/1.1.
//
// origin is the request's own origin ("https://host:port",
// as the Origin field serialises it; "" if unknown). A request with a body
// carries Origin, as both browsers send it on every POST, same-origin
// included: the origin of the page it comes from, which is the Referer's
// origin when the request has a Referer (guise derives one from
// Request.Referrer, or the caller gave one), else origin (the request is
// taken to come from a page of its own origin). With neither, Origin is
// left out. A caller's Origin field is sent as given. nav says how a
// navigation came about: one that follows a redirect takes the browser's
// order for such a hop where it has one (redirectTemplate); a scripted one
// goes without the profile's Sec-Fetch-User, as the browsers send it
// without user activation (profile/testdata/recordings/*-flows.json: the
// scripted navigation to /flow/linked and form submission).
func (c *compiled) headerFor(dst fields.Header, proto int, kind profile.RequestKind, user, extra fields.Header, length int64, origin string, nav navFlags) (fields.Header, error) {
	if kind == 0 {
		kind = profile.Navigate
	}
	redirected := nav&navRedirected != 0
	scripted := nav&navScripted != 0 && kind == profile.Navigate
	if int(kind) >= kindCount || !c.hdr[proto][kind].present {
		return dst, fmt.Errorf("guise: profile %s has no %s headers for %s requests", c.p.Name, protoName(proto), kind)
	}
	tpl := c.hdr[proto][kind].fields
	if length != 0 && c.body[proto][kind].present {
		tpl = c.body[proto][kind].fields
	} else if redirected && kind == profile.Navigate && c.redirect[proto].present {
		tpl = c.redirect[proto].fields
	}
	cl := "" // the Content-Length guise sends, if any
	if length > 0 {
		cl = strconv.FormatInt(length, 10)
	} else if length == emptyBody {
		cl = "0"
	}
	slot := cl != "" && index(tpl, "content-length") >= 0 // a place for cl
	if proto == protoH2 && cl != "" && !user.Has("content-length") && !slot {
		dst = append(dst, fields.Field{Name: "content-length", Value: cl})
	}
	for _, d := range tpl {
		if len(user) > 0 {
			if i := index(user, d.Name); i >= 0 {
				for _, u := range user[i:] {
					if fields.EqualFold(u.Name, d.Name) {
						if proto == protoH2 {
							u.Name = d.Name // lower case already: h2Fields need not copy
						}
						dst = append(dst, u)
					}
				}
				continue
			}
		}
		if i := index(extra, d.Name); i >= 0 {
			dst = append(dst, fields.Field{Name: d.Name, Value: extra[i].Value})
			continue
		}
		if scripted && fields.EqualFold(d.Name, "sec-fetch-user") {
			continue
		}
		if d.Value != "" {
			if length == emptyBody && kind != profile.Navigate && fields.EqualFold(d.Name, "content-type") {
				continue // a fetch() without a body has no Content-Type
			}
			dst = append(dst, d)
			continue
		}
		switch {
		case cl != "" && fields.EqualFold(d.Name, "content-length"):
			dst = append(dst, fields.Field{Name: d.Name, Value: cl})
		case length != 0 && fields.EqualFold(d.Name, "origin"):
			if o := requestOrigin(user, extra, origin); o != "" {
				dst = append(dst, fields.Field{Name: d.Name, Value: o})
			}
		}
	}
	tail := len(dst) // before: the template's names (lower case over HTTP/2)
	for _, u := range user {
		if index(tpl, u.Name) < 0 {
			dst = append(dst, u)
		}
	}
	for _, e := range extra {
		if index(tpl, e.Name) < 0 && index(user, e.Name) < 0 {
			dst = append(dst, e)
		}
	}
	if proto == protoH1 && length == emptyBody && !slot && !user.Has("content-length") {
		// A profile without a slot: last, where the h1 engine puts the
		// Content-Length of a body (it adds none when there is no body).
		dst = append(dst, fields.Field{Name: "Content-Length", Value: "0"})
	}
	if proto == protoH2 {
		dst = h2Fields(dst, tail)
	}
	return dst, nil
}

// bodyOrigin is the origin argument of headerFor for a request to u with a
// body of length (0 means none, and then it is ""): u's scheme and
// authority as the Origin field serialises them (no default port, host in
// lower case).
func bodyOrigin(u *parsedURL, length int64) string {
	if length == 0 {
		return ""
	}
	return u.origin
}

// requestOrigin is the Origin of a request with a body: the origin of its
// Referer (extra's, else the caller's), else origin.
func requestOrigin(user, extra fields.Header, origin string) string {
	ref := ""
	if i := index(extra, "referer"); i >= 0 {
		ref = extra[i].Value
	} else if i := index(user, "referer"); i >= 0 {
		ref = user[i].Value
	}
	if o := originOf(ref); o != "" {
		return o
	}
	return origin
}

// originOf returns the scheme://host[:port] prefix of an absolute http(s)
// URL, or "".
func originOf(u string) string {
	rest, ok := "", false
	for _, scheme := range [...]string{"https://", "http://"} {
		if len(u) > len(scheme) && fields.EqualFold(u[:len(scheme)], scheme) {
			rest, ok = u[len(scheme):], true
			break
		}
	}
	if !ok {
		return ""
	}
	host := rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		host = rest[:i]
	}
	if host == "" || strings.IndexByte(host, '@') >= 0 {
		return "" // no host, or credentials: not a referrer a browser sends
	}
	return u[:len(u)-len(rest)+len(host)]
}

// userAgent is the profile's User-Agent, for a CONNECT to a proxy.
func (c *compiled) userAgent() string {
	return c.hdr[protoH1][profile.Navigate].fields.Get("user-agent")
}

func protoName(proto int) string {
	if proto == protoH2 {
		return "HTTP/2"
	}
	return "HTTP/1.1"
}

func index(h fields.Header, name string) int {
	for i := range h {
		if fields.EqualFold(h[i].Name, name) {
			return i
		}
	}
	return -1
}

// h2Fields lower-cases names from start on and drops the fields HTTP/2
// forbids, which browsers never send over it.
func h2Fields(h fields.Header, start int) fields.Header {
	out := h[:start]
	for _, f := range h[start:] {
		if hasUpper(f.Name) {
			f.Name = lower(f.Name)
		}
		switch f.Name {
		case "host", "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade":
			continue
		}
		out = append(out, f)
	}
	return out
}

func hasUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return true
		}
	}
	return false
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
