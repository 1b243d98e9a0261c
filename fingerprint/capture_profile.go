package fingerprint

import (
	"encoding/binary"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/guise-http/guise/fields"
	"github.com/guise-http/guise/profile"
)

// ErrNoNavigation is returned by BuildProfile when no TLS connection
// carried an HTTP/2 top-level navigation, which every profile needs.
var ErrNoNavigation = errors.New("fingerprint: no http/2 navigation over tls recorded")

// chromeECHLengths are the GREASE ECH payload lengths Chrome picks from per
// connection (see testdata/recordings/README.md); one visit shows only
// some of them.
var chromeECHLengths = []int{144, 176, 208, 240}

// BuildProfile turns the records of a real browser's visits to the echo
// server into a profile (see package profile and Want): the full-handshake
// ClientHello of the first HTTP/2 connection that navigated, the hello of
// an HTTP/1.1-only connection and of a resumed one if recorded, the HTTP/2
// SETTINGS, WINDOW_UPDATE, PRIORITY frames, first stream ID and
// pseudo-header order of that connection, and one header set per request
// kind (navigate, fetch, subresource, image) and protocol, taken from the
// first request of that kind, with referer, sec-fetch-site and Host marked
// per request. Plain http:// connections are ignored (browsers send other
// headers to insecure origins).
//
// name is the profile's canonical name ("chrome156-linux"); "" derives it
// from the navigation's User-Agent. The profile is validated as
// profile.Parse would; BuildProfile returns ErrNoNavigation or a
// *profile.ParseError when it cannot make a valid one. The profile shares
// no memory with recs. Its Reference is the JA4, JA3N, Akamai string and
// header order the browser's navigation had, and its Fallback the
// embedded profile of the same browser (and OS, where there is one),
// whose header sets stand in for the ones the records lack (Filled lists
// them), as when the file is loaded.
func BuildProfile(recs []*ConnRecord, name string) (*profile.Profile, error) {
	var tlsRecs []*ConnRecord
	for _, r := range recs {
		if r.Transport == TransportTLS && r.Negotiated != nil {
			tlsRecs = append(tlsRecs, r)
		}
	}
	var primary *ConnRecord
	var h2 *HTTP2
	for _, r := range tlsRecs {
		if r.Protocol != ProtoH2 || r.Negotiated.Resumed {
			continue
		}
		h, _ := r.HTTP2()
		if h == nil || len(h.Settings) == 0 {
			continue
		}
		if slices.ContainsFunc(h.Requests, func(q HTTP2Request) bool {
			return requestKind(q.HTTPRequest().Header) == kindNavigate
		}) {
			primary, h2 = r, h
			break
		}
	}
	if primary == nil {
		return nil, ErrNoNavigation
	}
	nav := h2.Requests[slices.IndexFunc(h2.Requests, func(q HTTP2Request) bool {
		return requestKind(q.HTTPRequest().Header) == kindNavigate
	})]
	ua := fields.Header(nav.HTTPRequest().Header).Get("user-agent")

	p := &profile.Profile{Recorded: true}
	var err error
	if name == "" {
		p.Browser, p.Version, p.OS, err = parseUserAgent(ua)
	} else {
		p.Browser, p.Version, p.OS, err = parseProfileName(name)
	}
	if err != nil {
		return nil, err
	}
	p.Name = profile.CanonicalName(p.Browser, p.Version, p.OS)
	src := []string{fmt.Sprintf("recorded by guise capture from %q", ua),
		fmt.Sprintf("hello, HTTP/2 preface and frames from connection #%d", primary.ID)}

	// TLS.
	p.TLS.Hello = slices.Clone(primary.ClientHelloRecord)
	var full []*ClientHello
	for _, r := range tlsRecs {
		ch, err := r.ClientHello()
		if err != nil {
			continue
		}
		switch {
		case r.Negotiated.Resumed || ch.HasPreSharedKey:
			if p.TLS.HelloResumed == nil && slices.Contains(ch.ALPN, ProtoH2) {
				p.TLS.HelloResumed = slices.Clone(r.ClientHelloRecord)
				src = append(src, fmt.Sprintf("resumed hello from #%d", r.ID))
			}
		case slices.Equal(ch.ALPN, []string{ProtoHTTP1}):
			if p.TLS.HelloHTTP1 == nil {
				p.TLS.HelloHTTP1 = slices.Clone(r.ClientHelloRecord)
				src = append(src, fmt.Sprintf("http/1.1-only hello from #%d", r.ID))
			}
			full = append(full, ch)
		default:
			full = append(full, ch)
		}
	}
	if shuffled(full) {
		p.TLS.ShuffleExtensions = true
		src = append(src, fmt.Sprintf("extension order differs between the %d full hellos: shuffled", len(full)))
	}
	p.TLS.ECHPayloadLengths = echLengths(full, p.Browser)
	p.TLS.ECHAEADs = echAEADs(full, p.Browser)

	// HTTP/2.
	for _, s := range h2.Settings {
		p.HTTP2.Settings = append(p.HTTP2.Settings, profile.Setting{ID: profile.SettingID(s.ID), Value: s.Value})
	}
	p.HTTP2.ConnWindowUpdate = h2.ConnWindowUpdate
	for _, pf := range h2.Priorities {
		p.HTTP2.Priorities = append(p.HTTP2.Priorities, profile.PriorityFrame{
			StreamID: pf.StreamID, Exclusive: pf.Priority.Exclusive, DependsOn: pf.Priority.StreamDep, Weight: pf.Priority.Weight,
		})
	}
	first := h2.Requests[0]
	p.HTTP2.FirstStreamID = first.StreamID
	p.HTTP2.PseudoOrder = slices.Clone(first.PseudoOrder)
	for _, f := range h2.Frames {
		if f.Type == 8 && f.StreamID != 0 && len(f.Raw) >= 13 {
			p.HTTP2.StreamWindowUpdate = binary.BigEndian.Uint32(f.Raw[9:13]) & 0x7fffffff
			break
		}
	}

	// Header sets: the primary connection first, then the others in order.
	ordered := append([]*ConnRecord{primary}, slices.DeleteFunc(slices.Clone(tlsRecs), func(r *ConnRecord) bool { return r == primary })...)
	var from []string
	for _, r := range ordered {
		switch r.Protocol {
		case ProtoH2:
			h, _ := r.HTTP2()
			if h == nil {
				continue
			}
			for i := range h.Requests {
				q := &h.Requests[i]
				if q.Trailer {
					continue
				}
				if addHeaderSet(p, q.HTTPRequest(), profile.H2) {
					from = append(from, fmt.Sprintf("h2 %s #%d", requestKind(q.HTTPRequest().Header), r.ID))
					if q.Priority != nil {
						rule := profile.Root
						if q.Priority.Exclusive {
							rule = profile.LatestOpen
						}
						p.HTTP2.HeaderPriority = append(p.HTTP2.HeaderPriority, profile.KindPriority{
							Kind: kindOf(requestKind(q.HTTPRequest().Header)), Exclusive: q.Priority.Exclusive,
							Weight: q.Priority.Weight, DependsOn: rule,
						})
					}
				}
			}
		case ProtoHTTP1:
			for _, q := range r.HTTPRequests() {
				if addHeaderSet(p, q, profile.HTTP1) {
					p.HTTP1.Recorded = true
					from = append(from, fmt.Sprintf("http/1.1 %s #%d", requestKind(q.Header), r.ID))
				}
			}
		}
	}
	src = append(src, "header sets: "+strings.Join(from, ", "))
	bodies, err := addBodySets(p, ordered)
	if err != nil {
		return nil, err
	}
	if len(bodies) > 0 {
		src = append(src, "header sets with a body: "+strings.Join(bodies, ", "))
	} else {
		src = append(src, "no request with a body recorded (visit "+FlowStart+")")
	}
	if !p.HTTP1.Recorded {
		src = append(src, "no http/1.1 visit recorded")
	}
	if p.Browser == profile.Chrome || p.Browser == profile.Edge {
		src = append(src, "ech payload lengths: Chrome's set of four plus those seen")
	}
	if p.Browser == profile.Firefox {
		src = append(src, "ech aeads: Firefox's pair (1, 3) plus those seen")
	}
	// What one capture does not show (the HPACK encoder's choices, whether
	// the GREASE ECH key is a real X25519 key, what a derived resumed
	// hello leaves out) is the embedded profile's of the same browser.
	if ref := embeddedOf(p.Browser, p.OS); ref != nil {
		p.HTTP2.HPACK = ref.Clone().HTTP2.HPACK
		p.TLS.ECHX25519Key = ref.TLS.ECHX25519Key && helloHas(p.TLS.Hello, 0xfe0d)
		p.TLS.ResumeOmitsSessionTicket = ref.TLS.ResumeOmitsSessionTicket && helloHas(p.TLS.Hello, 35)
		src = append(src, "hpack style, ech key and resumption shape from the embedded "+ref.Name)
		// The sets one capture lacks (HTTP/1.1 without an HTTP/1.1 visit,
		// those with a body without the flow page's) are the embedded
		// profile's, with this browser's own User-Agent and client hints.
		p.Fallback = ref.Name
	}
	p.Reference, err = reference(primary, &nav)
	if err != nil {
		return nil, err
	}
	p.Source = strings.Join(src, "; ")
	b, err := p.Marshal() // validates
	if err != nil {
		return nil, err
	}
	// Parse fills in the fallback's sets, as it will when the file is
	// loaded.
	return profile.Parse(b)
}

// embeddedOf returns the newest embedded profile of b on os, else on b's
// home OS, else on any OS (Edge on Linux has none of its own), or nil.
func embeddedOf(b profile.Browser, os profile.OS) *profile.Profile {
	for _, name := range []string{b.String() + "-" + os.String(), b.String()} {
		if p, err := profile.Lookup(name); err == nil {
			return p
		}
	}
	var best *profile.Profile
	for _, name := range profile.Names() {
		if p, err := profile.Lookup(name); err == nil && p.Browser == b && (best == nil || p.Version > best.Version) {
			best = p
		}
	}
	return best
}

// reference is what the real browser sent on its first HTTP/2 navigation:
// the profile's Reference.
func reference(primary *ConnRecord, nav *HTTP2Request) (*profile.Reference, error) {
	ch, err := ParseClientHello(primary.ClientHelloRecord)
	if err != nil {
		return nil, err
	}
	h, err := primary.HTTP2()
	if err != nil {
		return nil, err
	}
	return &profile.Reference{JA4: ch.JA4(), JA3N: ch.JA3NHash(), Akamai: h.Akamai(),
		PseudoOrder: slices.Clone(nav.PseudoOrder), HeaderOrder: nav.HeaderOrder()}, nil
}

// helloHas reports whether the ClientHello record rec carries extension
// typ.
func helloHas(rec []byte, typ uint16) bool {
	ch, err := ParseClientHello(rec)
	if err != nil {
		return false
	}
	return slices.ContainsFunc(ch.Extensions, func(e Extension) bool { return e.Type == typ })
}

// perRequestFields are the fields whose value depends on the request.
var perRequestFields = []string{"host", "referer", "sec-fetch-site"}

// addHeaderSet adds the header set of a GET request of a kind the profile
// has no set for yet over proto; it reports whether it did.
func addHeaderSet(p *profile.Profile, q *HTTPRequest, proto profile.Proto) bool {
	h := q.Header
	kind := kindOf(requestKind(h))
	if q.Method != "GET" || kind == 0 || p.HeaderSet(kind, proto) != nil || len(h) == 0 {
		return false
	}
	hs := profile.HeaderSet{Kind: kind, Proto: proto}
	for _, f := range h {
		if slices.ContainsFunc(hs.Header, func(o fields.Field) bool { return fields.EqualFold(o.Name, f.Name) }) {
			continue // a repeated field: keep the first, as a set holds each name once
		}
		if slices.ContainsFunc(perRequestFields, func(n string) bool { return fields.EqualFold(n, f.Name) }) {
			hs.PerRequest = append(hs.PerRequest, f.Name)
			if fields.EqualFold(f.Name, "referer") || fields.EqualFold(f.Name, "host") {
				f.Value = "" // the echo server's name, not the browser's
			}
		}
		hs.Header = append(hs.Header, f)
	}
	p.Headers = append(p.Headers, hs)
	return true
}

// addBodySets adds to p the header sets with a body (BodyHeaderSet) made
// from the first POST to each of BodyPaths per protocol in recs, after the
// plain sets (a form's set takes Sec-Fetch-User from the plain navigation
// set), and says where each came from.
func addBodySets(p *profile.Profile, recs []*ConnRecord) ([]string, error) {
	var from []string
	for _, r := range recs {
		var proto profile.Proto
		var qs []*HTTPRequest
		switch r.Protocol {
		case ProtoH2:
			h, _ := r.HTTP2()
			if h == nil {
				continue
			}
			proto = profile.H2
			for i := range h.Requests {
				if !h.Requests[i].Trailer {
					qs = append(qs, h.Requests[i].HTTPRequest())
				}
			}
		case ProtoHTTP1:
			proto, qs = profile.HTTP1, r.HTTPRequests()
		default:
			continue
		}
		for _, q := range qs {
			i := slices.IndexFunc(BodyPaths, func(b BodyPath) bool { return b.Path == q.Target })
			if q.Method != "POST" || i < 0 || p.BodyHeaderSet(BodyPaths[i].Kind, proto) != nil {
				continue
			}
			kind := BodyPaths[i].Kind
			if kindOf(requestKind(q.Header)) != kind {
				continue // not the request the flow page sends there
			}
			hs, err := BodyHeaderSet(kind, proto, q.Header, p.HeaderSet(kind, proto))
			if err != nil {
				return nil, err
			}
			p.Headers = append(p.Headers, hs)
			from = append(from, fmt.Sprintf("%s %s #%d", r.Protocol, requestKind(q.Header), r.ID))
		}
	}
	return from, nil
}

// kindOf maps capture's kind names to profile.RequestKind.
func kindOf(k string) profile.RequestKind {
	switch k {
	case kindNavigate:
		return profile.Navigate
	case kindFetch:
		return profile.Fetch
	case kindSubresource:
		return profile.Subresource
	case kindImage:
		return profile.Image
	}
	return 0
}

// shuffled reports whether the hellos list their non-GREASE extensions in
// different orders.
func shuffled(hellos []*ClientHello) bool {
	var ref []uint16
	for i, ch := range hellos {
		var order []uint16
		for _, e := range ch.Extensions {
			if !IsGREASE(e.Type) && e.Type != extPadding && e.Type != extPreSharedKey {
				order = append(order, e.Type)
			}
		}
		if i == 0 {
			ref = order
			continue
		}
		if !slices.Equal(ref, order) {
			return true
		}
	}
	return false
}

// echLengths returns the GREASE ECH payload lengths to pick from: nil when
// the recordings show one length (keep it), else every length seen, plus
// Chrome's known set for Chrome and Edge.
func echLengths(hellos []*ClientHello, b profile.Browser) []int {
	var seen []int
	for _, ch := range hellos {
		if ch.ECH != nil && ch.ECH.Type == 0 && !slices.Contains(seen, ch.ECH.PayloadLen) {
			seen = append(seen, ch.ECH.PayloadLen)
		}
	}
	if len(seen) == 0 {
		return nil
	}
	if b == profile.Chrome || b == profile.Edge {
		for _, n := range chromeECHLengths {
			if !slices.Contains(seen, n) {
				seen = append(seen, n)
			}
		}
	}
	if len(seen) < 2 {
		return nil
	}
	slices.Sort(seen)
	return seen
}

// firefoxECHAEADs are the HPKE AEADs Firefox picks its GREASE ECH from
// per connection (see testdata/recordings/README.md).
var firefoxECHAEADs = []uint16{1, 3}

// echAEADs returns the GREASE ECH AEADs to pick from: nil when the
// recordings show one (keep it), else every one seen, plus Firefox's known
// pair for Firefox.
func echAEADs(hellos []*ClientHello, b profile.Browser) []uint16 {
	var seen []uint16
	for _, ch := range hellos {
		if ch.ECH != nil && ch.ECH.Type == 0 && !slices.Contains(seen, ch.ECH.AEAD) {
			seen = append(seen, ch.ECH.AEAD)
		}
	}
	if len(seen) == 0 {
		return nil
	}
	if b == profile.Firefox {
		for _, a := range firefoxECHAEADs {
			if !slices.Contains(seen, a) {
				seen = append(seen, a)
			}
		}
	}
	if len(seen) < 2 {
		return nil
	}
	slices.Sort(seen)
	return seen
}

var (
	uaFirefox = regexp.MustCompile(`Firefox/(\d+)`)
	uaEdge    = regexp.MustCompile(`Edg/(\d+)`)
	uaChrome  = regexp.MustCompile(`Chrom(?:e|ium)/(\d+)`)
	uaSafari  = regexp.MustCompile(`Version/(\d+)[.\d]* (?:Mobile/\S+ )?Safari/`)
)

// parseUserAgent reads browser, major version and OS from a User-Agent.
func parseUserAgent(ua string) (profile.Browser, int, profile.OS, error) {
	var b profile.Browser
	var m []string
	switch {
	case uaFirefox.MatchString(ua):
		b, m = profile.Firefox, uaFirefox.FindStringSubmatch(ua)
	case uaEdge.MatchString(ua):
		b, m = profile.Edge, uaEdge.FindStringSubmatch(ua)
	case uaChrome.MatchString(ua):
		b, m = profile.Chrome, uaChrome.FindStringSubmatch(ua)
	case uaSafari.MatchString(ua):
		b, m = profile.Safari, uaSafari.FindStringSubmatch(ua)
	default:
		return 0, 0, 0, fmt.Errorf("fingerprint: unknown browser in user-agent %q (pass a profile name)", ua)
	}
	v, err := strconv.Atoi(m[1])
	if err != nil || v <= 0 {
		return 0, 0, 0, fmt.Errorf("fingerprint: bad version in user-agent %q", ua)
	}
	var os profile.OS
	switch {
	case strings.Contains(ua, "Android"):
		os = profile.Android
	case strings.Contains(ua, "iPhone") || strings.Contains(ua, "iPad"):
		os = profile.IOS
	case strings.Contains(ua, "Windows"):
		os = profile.Windows
	case strings.Contains(ua, "Macintosh") || strings.Contains(ua, "Mac OS X"):
		os = profile.MacOS
	case strings.Contains(ua, "Linux") || strings.Contains(ua, "X11"):
		os = profile.Linux
	default:
		return 0, 0, 0, fmt.Errorf("fingerprint: unknown os in user-agent %q (pass a profile name)", ua)
	}
	return b, v, os, nil
}

// parseProfileName splits a canonical profile name "<browser><version>-<os>".
func parseProfileName(name string) (profile.Browser, int, profile.OS, error) {
	bad := fmt.Errorf("fingerprint: profile name %q is not <browser><version>-<os> (e.g. chrome156-linux)", name)
	base, osName, ok := strings.Cut(name, "-")
	i := strings.IndexAny(base, "0123456789")
	if !ok || i <= 0 {
		return 0, 0, 0, bad
	}
	var b profile.Browser
	var os profile.OS
	if b.UnmarshalText([]byte(base[:i])) != nil || os.UnmarshalText([]byte(osName)) != nil {
		return 0, 0, 0, bad
	}
	v, err := strconv.Atoi(base[i:])
	if err != nil || v <= 0 {
		return 0, 0, 0, bad
	}
	return b, v, os, nil
}

// bodyPerRequest names the fields of a Body header set whose value depends
// on the request; all but sec-fetch-site become empty placeholders.
var bodyPerRequest = []string{"host", "referer", "cookie", "content-length", "origin", "sec-fetch-site"}

// BodyHeaderSet makes the header set a profile uses for requests of kind
// with a body over proto (profile.HeaderSet.Body) from rec, the fields of
// such a request as the browser sent it (over HTTP/2 without the
// pseudo-headers): rec's order and values, with Host, Referer, Cookie,
// Content-Length and Origin as empty per-request placeholders and
// Sec-Fetch-Site per request with the recorded value as its default.
//
// plain is the profile's set for kind without a body (nil if none). A
// navigation recorded without Sec-Fetch-User (a form a script submitted,
// with no user activation) gets it where plain has it, after the field it
// follows in plain, as a user's click sends it.
//
// A fetch() set marks Content-Type NeedsBody: a fetch() POST without a
// body has none (the Fetch standard takes it from the body), where a form
// submission keeps its enctype.
//
// rec must have Content-Length, Origin and Content-Type, as a browser's
// fetch() POST and form submission do; BodyHeaderSet reports an error
// otherwise.
func BodyHeaderSet(kind profile.RequestKind, proto profile.Proto, rec []fields.Field, plain *profile.HeaderSet) (profile.HeaderSet, error) {
	hs := profile.HeaderSet{Kind: kind, Proto: proto, Body: true}
	has := func(h []fields.Field, name string) bool {
		return slices.ContainsFunc(h, func(f fields.Field) bool { return fields.EqualFold(f.Name, name) })
	}
	for _, n := range []string{"content-length", "origin", "content-type"} {
		if !has(rec, n) {
			return hs, fmt.Errorf("fingerprint: the %v request with a body over %v has no %s", kind, proto, n)
		}
	}
	addUser := kind == profile.Navigate && plain != nil && !has(rec, "sec-fetch-user")
	for _, f := range rec {
		if has(hs.Header, f.Name) {
			continue // a repeated field (Cookie crumbs over HTTP/2): a set holds each name once
		}
		if slices.ContainsFunc(bodyPerRequest, func(n string) bool { return fields.EqualFold(n, f.Name) }) {
			if !fields.EqualFold(f.Name, "sec-fetch-site") {
				f.Value = ""
			}
			hs.PerRequest = append(hs.PerRequest, f.Name)
		}
		hs.Header = append(hs.Header, f)
		if kind != profile.Navigate && fields.EqualFold(f.Name, "content-type") {
			hs.NeedsBody = append(hs.NeedsBody, f.Name)
		}
		if addUser {
			for i, u := range plain.Header {
				if fields.EqualFold(u.Name, "sec-fetch-user") && i > 0 && fields.EqualFold(plain.Header[i-1].Name, f.Name) {
					hs.Header = append(hs.Header, u)
				}
			}
		}
	}
	return hs, nil
}

// BodyPath is a flow page request with a body and the kind of request it
// is.
type BodyPath struct {
	Kind profile.RequestKind
	Path string
}

// BodyPaths are the flow page's requests (see FlowStart) that the Body
// header sets are made from: a fetch() POST of a string (the browser's
// default Content-Type, text/plain;charset=UTF-8) and a form submission (a
// navigation POST, application/x-www-form-urlencoded).
var BodyPaths = []BodyPath{
	{profile.Fetch, "/flow/post-text"},
	{profile.Navigate, "/flow/form"},
}
