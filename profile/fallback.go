package profile

import (
	"slices"

	"github.com/guise-http/guise/fields"
)

// fill adds to p the header sets its Fallback has and p lacks, with p's
// own values of the fields p's sets share with them. It is called after
// validate.
func (p *Profile) fill() error {
	fb, err := Lookup(p.Fallback)
	if err != nil || fb.Name != p.Fallback {
		return perr("fallback", "%q is not an embedded profile", p.Fallback)
	}
	if fb.Browser != p.Browser {
		return perr("fallback", "%q is not a profile of %v", p.Fallback, p.Browser)
	}
	for _, hs := range fb.Headers {
		if hs.Proto == H3 && p.QUIC == nil {
			continue
		}
		if p.headerSet(hs.Kind, hs.Proto, hs.Body, hs.Redirect) != nil {
			continue
		}
		c := hs
		c.Header = hs.Header.Clone()
		c.PerRequest = slices.Clone(hs.PerRequest)
		c.UserActivation = slices.Clone(hs.UserActivation)
		c.NeedsBody = slices.Clone(hs.NeedsBody)
		c.fallback = true
		for i, f := range c.Header {
			if containsFold(c.PerRequest, f.Name) {
				continue
			}
			if v, ok := p.ownValue(hs.Kind, f.Name); ok {
				c.Header[i].Value = v
			}
		}
		p.Headers = append(p.Headers, c)
	}
	// The added sets are the fallback's, checked when it was embedded;
	// check the values they took from p again.
	return validateHeaderSets(p.Headers)
}

// identityFields are the fields whose value is the browser's, whatever the
// request kind: a set of a kind p has none of takes them from p's others.
var identityFields = []string{"user-agent", "sec-ch-ua", "sec-ch-ua-mobile", "sec-ch-ua-platform", "accept-language"}

// ownValue returns the value of the field name in p's own sets (not the
// fallback's): from a set of kind if one has it, else, for an identity
// field, from any.
func (p *Profile) ownValue(kind RequestKind, name string) (string, bool) {
	var any string
	found := false
	for _, hs := range p.Headers {
		if hs.fallback || containsFold(hs.PerRequest, name) {
			continue
		}
		for _, f := range hs.Header {
			if !fields.EqualFold(f.Name, name) {
				continue
			}
			if hs.Kind == kind {
				return f.Value, true
			}
			if !found && containsFold(identityFields, name) {
				any, found = f.Value, true
			}
		}
	}
	return any, found
}

// Filled lists the header sets p took from its Fallback, as "<proto>
// <kind>" with " with a body" or " after a redirect" where that applies;
// nil when it took none.
func (p *Profile) Filled() []string {
	var out []string
	for _, hs := range p.Headers {
		if hs.fallback {
			out = append(out, hs.describe())
		}
	}
	return out
}

func (hs *HeaderSet) describe() string {
	s := hs.Proto.String() + " " + hs.Kind.String()
	switch {
	case hs.Body:
		s += " with a body"
	case hs.Redirect:
		s += " after a redirect"
	}
	return s
}
