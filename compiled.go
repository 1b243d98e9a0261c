package guise

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/guise-http/guise/internal/fields"
	"github.com/guise-http/guise/internal/h2"
	"github.com/guise-http/guise/profile"
)

// compiled is a profile turned into what each request needs, built once per
// profile name and shared by every Session and Transport.
type compiled struct {
	p *profile.Profile
	// h1 and h2hdr hold the default header list per request kind, with
	// placeholder fields (empty values) already dropped except Host.
	h1    [kindCount]headerTemplate
	h2hdr [kindCount]headerTemplate
	// h2 is the profile's HTTP/2 fingerprint for the h2 engine.
	h2 *h2.Config
	// prio is the HEADERS priority per request kind.
	prio [kindCount]h2.Priority
}

const kindCount = int(profile.Image) + 1

// headerTemplate is a default header list. host is the index of the Host
// field (HTTP/1.1) whose value each request fills in, or -1.
type headerTemplate struct {
	fields  fields.Header
	host    int
	perReq  []string // names whose value the caller must supply to be sent
	present bool
}

var compiledCache sync.Map // profile name → *compiled

// compile returns the compiled form of the named profile ("" means
// profile.Default). Concurrent cold calls may compile twice; one result wins
// and both are equal.
func compile(name string) (*compiled, error) {
	if name == "" {
		name = profile.Default
	}
	if c, ok := compiledCache.Load(name); ok {
		return c.(*compiled), nil
	}
	p, err := profile.Lookup(name)
	if err != nil {
		return nil, err
	}
	c := &compiled{p: p, h2: h2Config(p)}
	for k := profile.Navigate; int(k) < kindCount; k++ {
		if hs := p.HeaderSet(k, profile.HTTP1); hs != nil {
			t := template(hs)
			if t.host < 0 {
				return nil, fmt.Errorf("guise: profile %s: HTTP/1.1 %s header set has no Host field", p.Name, k)
			}
			c.h1[k] = t
		}
		if hs := p.HeaderSet(k, profile.H2); hs != nil {
			c.h2hdr[k] = template(hs)
		}
		if kp, ok := p.Priority(k); ok {
			c.prio[k] = h2.Priority{Send: true, Exclusive: kp.Exclusive, Weight: uint16(kp.Weight), Dep: depRule(kp.DependsOn)}
		}
	}
	v, _ := compiledCache.LoadOrStore(name, c)
	return v.(*compiled), nil
}

// template prepares a header set: placeholders (per-request fields with no
// value) are dropped, Host is kept and its index noted.
func template(hs *profile.HeaderSet) headerTemplate {
	t := headerTemplate{host: -1, present: true, perReq: hs.PerRequest}
	for _, f := range hs.Header {
		if fields.EqualFold(f.Name, "host") {
			t.host = len(t.fields)
			t.fields = append(t.fields, f)
			continue
		}
		if f.Value == "" && isPerRequest(hs.PerRequest, f.Name) {
			continue // a placeholder; sent only when the caller gives it
		}
		t.fields = append(t.fields, f)
	}
	return t
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

// h1Header appends to dst the HTTP/1.1 header for a request of kind to
// authority: the profile's defaults in order with the caller's fields merged
// in (see Request.Header).
func (c *compiled) h1Header(dst fields.Header, kind profile.RequestKind, authority string, user fields.Header) (fields.Header, error) {
	if kind == 0 {
		kind = profile.Navigate
	}
	if int(kind) >= kindCount || !c.h1[kind].present {
		return dst, fmt.Errorf("guise: profile %s has no HTTP/1.1 headers for %s requests", c.p.Name, kind)
	}
	t := &c.h1[kind]
	start := len(dst)
	dst = fields.Merge(dst, t.fields, user)
	if !user.Has("host") {
		// The Host field kept its template position; fill its value.
		for i := start; i < len(dst); i++ {
			if fields.EqualFold(dst[i].Name, "host") {
				dst[i].Value = authority
				break
			}
		}
	}
	return dst, nil
}

// h2Header appends to dst the HTTP/2 header for a request of kind: the
// profile's defaults with the caller's fields merged in, names lower-cased
// as HTTP/2 requires. A body of known length adds content-length first, as
// Chrome and Firefox place it.
func (c *compiled) h2Header(dst fields.Header, kind profile.RequestKind, user fields.Header, length int64) (fields.Header, error) {
	if int(kind) >= kindCount || !c.h2hdr[kind].present {
		return dst, fmt.Errorf("guise: profile %s has no HTTP/2 headers for %s requests", c.p.Name, kind)
	}
	if length > 0 && !user.Has("content-length") {
		dst = append(dst, fields.Field{Name: "content-length", Value: strconv.FormatInt(length, 10)})
	}
	start := len(dst)
	dst = fields.Merge(dst, c.h2hdr[kind].fields, user)
	for i := start; i < len(dst); i++ {
		if hasUpper(dst[i].Name) {
			dst[i].Name = strings.ToLower(dst[i].Name)
		}
	}
	// Fields HTTP/2 forbids are dropped, as browsers never send them.
	out := dst[:start]
	for _, f := range dst[start:] {
		switch strings.ToLower(f.Name) {
		case "host", "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade":
			continue
		}
		out = append(out, f)
	}
	return out, nil
}

func hasUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return true
		}
	}
	return false
}
