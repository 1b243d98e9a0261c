package reqhead

import (
	"fmt"

	"github.com/guise-http/guise/fields"
	"github.com/guise-http/guise/profile"
)

const kindCount = int(profile.Image) + 1

// Protocol indexes of the Table's arrays.
const (
	protoH1 = 0
	protoH2 = 1
	protoH3 = 2 // as HTTP/2: lower-case names, no connection-specific fields
	nProto  = 3
)

// maxFields bounds a header set: a template's field marks are bits of a
// uint64.
const maxFields = 64

// Table is one profile's header sets prepared for Append and Block. Make
// it with New, once per profile; it is read-only afterwards and safe for
// concurrent use. The zero value has no header sets: Append reports an
// error for every request.
type Table struct {
	name string
	// plain holds the header set per protocol and kind for a request
	// without a body.
	plain [nProto][kindCount]template
	// body holds, where the profile has one, the set per protocol and kind
	// for a request with a body (profile.HeaderSet.Body).
	body [nProto][kindCount]template
	// redirect holds, where the profile has one, the set per protocol for
	// a navigation that follows a redirect (profile.HeaderSet.Redirect).
	redirect [nProto]template
}

// template is a header set in the form Append sends it. A field whose
// Value is empty is a placeholder: it keeps the position of a per-request
// field (Host, Referer, Cookie, Origin, Content-Length) and is sent only
// when the request supplies a value.
type template struct {
	fields  fields.Header
	present bool
	// userActivation and needsBody have bit i set when fields[i] is in the
	// set's UserActivation or NeedsBody.
	userActivation, needsBody uint64
	// block is, for a plain HTTP/1.1 template whose first field is Host,
	// the fields after Host that a request with nothing of its own sends,
	// in wire form (see Block); nil when the template does not qualify.
	block []byte
}

// New prepares p's header sets. It reports an error when p's plain
// HTTP/1.1 set of a kind has no Host field, or a set has more than 64
// fields.
func New(p *profile.Profile) (*Table, error) {
	t := &Table{name: p.Name}
	for k := profile.Navigate; int(k) < kindCount; k++ {
		for _, proto := range [...]profile.Proto{profile.HTTP1, profile.H2, profile.H3} {
			i := protoIndex(proto)
			var err error
			if t.plain[i][k], err = prepare(p, p.HeaderSet(k, proto)); err != nil {
				return nil, err
			}
			if t.body[i][k], err = prepare(p, p.BodyHeaderSet(k, proto)); err != nil {
				return nil, err
			}
			if k == profile.Navigate {
				if t.redirect[i], err = prepare(p, p.RedirectHeaderSet(proto)); err != nil {
					return nil, err
				}
			}
			if tp := &t.plain[i][k]; i == protoH1 && tp.present {
				if !tp.fields.Has("host") {
					return nil, fmt.Errorf("reqhead: profile %s: HTTP/1.1 %s header set has no Host field", p.Name, k)
				}
				tp.block = renderBlock(tp.fields)
			}
		}
	}
	return t, nil
}

// prepare turns a header set into a template: per-request fields become
// placeholders (their recorded values are the page's, not this request's),
// except Sec-Fetch-Site, whose recorded value is the default for the kind;
// over HTTP/2 names are lower-cased and the fields HTTP/2 forbids dropped.
func prepare(p *profile.Profile, hs *profile.HeaderSet) (template, error) {
	if hs == nil {
		return template{}, nil
	}
	t := template{present: true}
	for _, f := range hs.Header {
		if hs.Proto == profile.H2 || hs.Proto == profile.H3 {
			f.Name = lower(f.Name)
			if forbiddenH2(f.Name) {
				continue
			}
		}
		if len(t.fields) == maxFields {
			return template{}, fmt.Errorf("reqhead: profile %s: %v %v header set has more than %d fields", p.Name, hs.Kind, hs.Proto, maxFields)
		}
		bit := uint64(1) << len(t.fields)
		if contains(hs.PerRequest, f.Name) && !fields.EqualFold(f.Name, "sec-fetch-site") {
			f.Value = ""
		}
		if contains(hs.UserActivation, f.Name) {
			t.userActivation |= bit
		}
		if contains(hs.NeedsBody, f.Name) {
			t.needsBody |= bit
		}
		t.fields = append(t.fields, f)
	}
	return t, nil
}

// renderBlock returns template.block for an HTTP/1.1 template h.
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

// UserAgent returns the profile's User-Agent (from its HTTP/1.1 navigation
// set), or "".
func (t *Table) UserAgent() string {
	return t.plain[protoH1][profile.Navigate].fields.Get("user-agent")
}

func protoIndex(p profile.Proto) int {
	switch p {
	case profile.H2:
		return protoH2
	case profile.H3:
		return protoH3
	}
	return protoH1
}

func contains(names []string, name string) bool {
	for _, n := range names {
		if fields.EqualFold(n, name) {
			return true
		}
	}
	return false
}

func forbiddenH2(name string) bool {
	switch name {
	case "host", "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade":
		return true
	}
	return false
}
