package reqhead

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/guise-http/guise/fields"
	"github.com/guise-http/guise/profile"
)

// Request describes the request whose header Append assembles. Append
// only reads it; the slices stay the caller's.
type Request struct {
	// Proto is the protocol the request goes over: profile.HTTP1,
	// profile.H2 or profile.H3 (assembled as H2's: lower-case names).
	Proto profile.Proto
	// Kind is the request kind; 0 means profile.Navigate.
	Kind profile.RequestKind
	// Method is the request method; "" means GET.
	Method string
	// Header is the caller's fields, in the caller's order and case.
	Header fields.Header
	// Extra is the fields guise computes per request (Host over HTTP/1.1,
	// Cookie, Referer, Sec-Fetch-Site, Proxy-Authorization).
	Extra fields.Header
	// ContentLength is the body's length: 0 for none, -1 for a body of
	// unknown length.
	ContentLength int64
	// Origin points to the request's own origin, "scheme://host[:port]" as
	// the Origin field serialises it; nil or "" if unknown. It is read only
	// for a request with a body. (A pointer, so that the fields Append puts
	// in dst come from one level below Request: a string here would make
	// the compiler move the caller's Header and Extra arrays to the heap.)
	Origin *string
	// Redirected reports that the request follows a redirect.
	Redirected bool
	// Scripted reports that a navigation was started by a script, without
	// user activation.
	Scripted bool
}

// emptyBody is length's value for a POST or PUT without a body.
const emptyBody = -2

// length returns r's body length for the assembly: ContentLength, or
// emptyBody for a POST or PUT without a body, which browsers (and net/http)
// send with "Content-Length: 0" and the fields of a request with a body.
func (r *Request) length() int64 {
	if r.ContentLength == 0 && (r.Method == "POST" || r.Method == "PUT") {
		return emptyBody
	}
	return r.ContentLength
}

// Append appends to dst the header of r and returns the extended slice. It
// allocates nothing when dst has room for the fields, except the text of a
// Content-Length of 100 or more and caller names it lower-cases over
// HTTP/2.
//
// The fields are the profile's set for r's protocol and kind, in its
// order: where r.Header has a field of the same name, the caller's fields
// instead (in its case); where r.Extra has one, that; placeholders nobody
// filled are left out; then the caller's other fields in their order, then
// the Extra fields the set has no place for. Over HTTP/2, names are
// lower-cased and the fields HTTP/2 forbids dropped.
//
// Which set: a request with a body (ContentLength not 0, or a POST or PUT)
// takes the set's Body variant where the profile has one, which has the
// browser's places for Content-Length, Origin and Content-Type; a
// navigation that follows a redirect takes the Redirect variant where the
// profile has one; otherwise the plain set. A body of known length, or a
// POST or PUT without one (Content-Length: 0), fills the set's
// Content-Length slot; a set without one gets Content-Length first over
// HTTP/2 and, for a POST or PUT without a body, last over HTTP/1.1 (the h1
// engine adds the Content-Length of a body itself, at the end).
//
// A request with a body fills the set's Origin slot with the origin of the
// page it comes from: the Referer's origin when it has a Referer (r.Extra's,
// else the caller's), else r.Origin; with neither it is left out. A
// caller's Origin is sent as given. A scripted navigation goes without the
// set's UserActivation fields, and a POST or PUT without a body without
// its NeedsBody fields.
//
// Append reports an error, leaving dst as it was, when the profile has no
// set for r's protocol and kind.
func (t *Table) Append(dst fields.Header, r *Request) (fields.Header, error) {
	kind := r.Kind
	if kind == 0 {
		kind = profile.Navigate
	}
	proto := protoIndex(r.Proto)
	if r.Proto != profile.H2 && r.Proto != profile.HTTP1 && r.Proto != profile.H3 || int(kind) >= kindCount || !t.plain[proto][kind].present {
		return dst, fmt.Errorf("reqhead: profile %s has no %v headers for %s requests", t.name, r.Proto, kind)
	}
	length := r.length()
	scripted := r.Scripted && kind == profile.Navigate
	tp := &t.plain[proto][kind]
	if length != 0 && t.body[proto][kind].present {
		tp = &t.body[proto][kind]
	} else if r.Redirected && kind == profile.Navigate && t.redirect[proto].present {
		tp = &t.redirect[proto]
	}
	tpl, user, extra := tp.fields, r.Header, r.Extra
	cl := "" // the Content-Length sent, if any
	if length > 0 {
		cl = strconv.FormatInt(length, 10)
	} else if length == emptyBody {
		cl = "0"
	}
	slot := cl != "" && index(tpl, "content-length") >= 0 // a place for cl
	if proto != protoH1 && cl != "" && !user.Has("content-length") && !slot {
		dst = append(dst, fields.Field{Name: "content-length", Value: cl})
	}
	for i, d := range tpl {
		if len(user) > 0 {
			if j := index(user, d.Name); j >= 0 {
				for _, u := range user[j:] {
					if fields.EqualFold(u.Name, d.Name) {
						if proto != protoH1 {
							u.Name = d.Name // lower case already: h2Fields need not copy
						}
						dst = append(dst, u)
					}
				}
				continue
			}
		}
		if j := index(extra, d.Name); j >= 0 {
			dst = append(dst, fields.Field{Name: d.Name, Value: extra[j].Value})
			continue
		}
		bit := uint64(1) << i
		if scripted && tp.userActivation&bit != 0 {
			continue
		}
		if d.Value != "" {
			if length == emptyBody && tp.needsBody&bit != 0 {
				continue
			}
			dst = append(dst, d)
			continue
		}
		switch {
		case cl != "" && fields.EqualFold(d.Name, "content-length"):
			dst = append(dst, fields.Field{Name: d.Name, Value: cl})
		case length != 0 && fields.EqualFold(d.Name, "origin"):
			if o := requestOrigin(user, extra, r.Origin); o != "" {
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
		// A set without a slot: last, where the h1 engine puts the
		// Content-Length of a body (it adds none when there is no body).
		dst = append(dst, fields.Field{Name: "Content-Length", Value: "0"})
	}
	if proto != protoH1 {
		dst = h2Fields(dst, tail)
	}
	return dst, nil
}

// Block returns, for an HTTP/1.1 request that sends nothing of its own (no
// caller fields, Extra holding Host alone, no body and not a POST or PUT,
// neither redirected nor scripted), its Host field and the plain set's
// pre-rendered fields after Host ("Name: value\r\n" each): what Append
// would assemble, without assembling it. ok is false when r or the set
// does not qualify. block is shared: the caller must not modify it.
func (t *Table) Block(r *Request) (host fields.Field, block []byte, ok bool) {
	kind := r.Kind
	if kind == 0 {
		kind = profile.Navigate
	}
	if r.Proto != profile.HTTP1 || len(r.Header) != 0 || len(r.Extra) != 1 || r.length() != 0 || r.Redirected || r.Scripted || int(kind) >= kindCount {
		return host, nil, false
	}
	tp := &t.plain[protoH1][kind]
	if tp.block == nil || !fields.EqualFold(r.Extra[0].Name, "host") {
		return host, nil, false
	}
	return fields.Field{Name: tp.fields[0].Name, Value: r.Extra[0].Value}, tp.block, true
}

// requestOrigin is the Origin of a request with a body: the origin of its
// Referer (extra's, else the caller's), else *origin.
func requestOrigin(user, extra fields.Header, origin *string) string {
	ref := ""
	if i := index(extra, "referer"); i >= 0 {
		ref = extra[i].Value
	} else if i := index(user, "referer"); i >= 0 {
		ref = user[i].Value
	}
	if o := originOf(ref); o != "" {
		return o
	}
	if origin == nil {
		return ""
	}
	return *origin
}

// originOf returns the scheme://host[:port] prefix of an absolute http(s)
// URL u, as it is (no case folding, no default port removed), or "" when u
// is not one or carries credentials.
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
		if forbiddenH2(f.Name) {
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

// lower returns s in lower case; s itself when it has no upper case.
func lower(s string) string {
	if !hasUpper(s) {
		return s
	}
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
