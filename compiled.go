package guise

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/guise-http/guise/fields"
	"github.com/guise-http/guise/internal/h2"
	"github.com/guise-http/guise/internal/h3"
	"github.com/guise-http/guise/internal/reqhead"
	"github.com/guise-http/guise/profile"
)

// compiled is a profile turned into what each request needs, built once per
// profile name and shared by every Session and Transport.
type compiled struct {
	p *profile.Profile
	// key names the profile in pool keys: its name for an embedded
	// profile, its name and a number of its own for one loaded from a
	// file, so that two files of one name never share a connection.
	key string
	// head assembles each request's header from the profile's sets.
	head *reqhead.Table
	// h2 is the profile's HTTP/2 fingerprint for the h2 engine.
	h2 *h2.Config
	// h3 is the HTTP/3 engine's Config, nil for a profile without HTTP/3
	// recordings.
	h3 *h3.Config
	// h3AltUsed is set when the profile's HTTP/3 header sets carry
	// Alt-Used (Firefox), whose value is the alternative's authority.
	h3AltUsed bool
	// prio is the HEADERS priority per request kind, the WebSocket's
	// extended CONNECT included.
	prio [prioKinds]h2.Priority
}

// kindCount counts the kinds of ordinary requests; prioKinds adds the
// WebSocket handshake.
const (
	kindCount = int(profile.Image) + 1
	prioKinds = int(profile.WebSocket) + 1
)

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
	c, err := build(p, p.Name)
	if err != nil {
		return nil, err
	}
	v, _ := compiledCache.LoadOrStore(name, &namedCompiled{name: name, c: c})
	e := v.(*namedCompiled)
	lastCompiled.Store(e)
	return e.c, nil
}

var (
	loadedCache sync.Map // *profile.Profile → *compiled
	loadedSeq   atomic.Uint64
)

// compileProfile returns the compiled form of p: an embedded profile's
// shared one, or one per *profile.Profile for a profile of the caller's
// (profile.Load, profile.Parse). The latter is kept for the life of the
// process, as a name's is: load a file once and reuse the *Profile.
func compileProfile(p *profile.Profile) (*compiled, error) {
	if v, ok := loadedCache.Load(p); ok {
		return v.(*compiled), nil
	}
	if profile.IsEmbedded(p) {
		return compile(p.Name)
	}
	c, err := build(p, fmt.Sprintf("%s#%d", p.Name, loadedSeq.Add(1)))
	if err != nil {
		return nil, err
	}
	v, _ := loadedCache.LoadOrStore(p, c)
	return v.(*compiled), nil
}

// build compiles p, named key in pool keys.
func build(p *profile.Profile, key string) (*compiled, error) {
	head, err := reqhead.New(p)
	if err != nil {
		return nil, err
	}
	c := &compiled{p: p, key: key, head: head, h2: h2Config(p), h3: h3Config(p)}
	for _, hs := range p.Headers {
		if hs.Proto == profile.H3 && hs.Header.Has("alt-used") {
			c.h3AltUsed = true
		}
	}
	for k := profile.Navigate; int(k) < prioKinds; k++ {
		if kp, ok := p.Priority(k); ok {
			c.prio[k] = h2.Priority{Send: true, Exclusive: kp.Exclusive, Weight: uint16(kp.Weight), Dep: depRule(kp.DependsOn)}
		}
	}
	return c, nil
}

// appendHeader appends the header of r to dst: see reqhead.Table.Append.
func (c *compiled) appendHeader(dst fields.Header, r *reqhead.Request) (fields.Header, error) {
	return c.head.Append(dst, r)
}

// headBlock returns, for an HTTP/1.1 request that sends nothing of its own,
// its Host field and the pre-rendered rest of its header: see
// reqhead.Table.Block.
func (c *compiled) headBlock(r *reqhead.Request) (host fields.Field, block []byte, ok bool) {
	return c.head.Block(r)
}

// userAgent is the profile's User-Agent, for a CONNECT to a proxy.
func (c *compiled) userAgent() string {
	return c.head.UserAgent()
}

// h2Config turns the profile's HTTP/2 data into the engine's Config.
func h2Config(p *profile.Profile) *h2.Config {
	cfg := &h2.Config{
		ConnWindowUpdate:   p.HTTP2.ConnWindowUpdate,
		FirstStreamID:      p.HTTP2.FirstStreamID,
		StreamWindowUpdate: p.HTTP2.StreamWindowUpdate,
		PseudoOrder:        p.HTTP2.PseudoOrder,
		HPACK:              hpackStyle(p.HTTP2.HPACK),
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

// h3Config turns the profile's HTTP/3 data into the engine's Config; a
// profile without a recorded QPACK Huffman rule takes its HPACK one.
func h3Config(p *profile.Profile) *h3.Config {
	if p.HTTP3 == nil {
		return nil
	}
	cfg := &h3.Config{
		GREASEFrameMaxLen: p.HTTP3.GREASEFrameMaxLen,
		QPACKStreams:      p.HTTP3.QPACKStreams,
		PseudoOrder:       p.HTTP3.PseudoOrder,
		PriorityUpdate:    p.HTTP3.PriorityUpdate,
		GREASEWideIDs:     p.HTTP3.GREASEWideIDs,
	}
	rule := p.HTTP3.QPACKHuffman
	if rule == 0 {
		rule = p.HTTP2.HPACK.Huffman
	}
	switch rule {
	case profile.HuffmanNotLonger:
		cfg.Huffman = h3.HuffmanNotLonger
	case profile.HuffmanNever:
		cfg.Huffman = h3.HuffmanNever
	default:
		cfg.Huffman = h3.HuffmanShorter
	}
	if p.HTTP3.QPACKCapacity == profile.QPACKCapacityAnnounced {
		cfg.QPACKCapacity = h3.CapacityAnnounced
	}
	switch p.HTTP3.QPACKDynamic {
	case profile.QPACKInsertAll:
		cfg.QPACKDynamic = h3.DynamicInsertAll
	case profile.QPACKInsertNewNames:
		cfg.QPACKDynamic = h3.DynamicInsertNewNames
	}
	for _, s := range p.HTTP3.Settings {
		cfg.Settings = append(cfg.Settings, h3.Setting{ID: s.ID, Value: s.Value, GREASE: s.GREASE})
	}
	return cfg
}

// hpackStyle turns the profile's HPACK data into the encoder's style.
// Parse has checked every rule is one of the named values.
func hpackStyle(s profile.HPACK) h2.HPACKStyle {
	st := h2.HPACKStyle{
		Huffman:              h2.HuffmanShorter,
		NameRef:              h2.NameRefStaticFirst,
		SizeUpdate:           h2.SizeUpdateOnChange,
		NoIndex:              s.NoIndex,
		NoIndexSkipsExact:    s.NoIndexSkipsExact,
		NeverIndex:           s.NeverIndex,
		CookieCrumbs:         s.CookieCrumbs,
		ShortCrumbNeverIndex: s.ShortCrumbNeverIndex,
		HalfTableLiteral:     s.HalfTableLiteral,
		MaxTableSize:         s.MaxTableSize,
	}
	switch s.Huffman {
	case profile.HuffmanNotLonger:
		st.Huffman = h2.HuffmanNotLonger
	case profile.HuffmanNever:
		st.Huffman = h2.HuffmanNever
	}
	if s.NameRef == profile.NameRefLastMatch {
		st.NameRef = h2.NameRefLastMatch
	}
	if s.SizeUpdate == profile.SizeUpdateOnSetting {
		st.SizeUpdate = h2.SizeUpdateOnSetting
	}
	return st
}

func depRule(d profile.DependRule) h2.DepRule {
	if d == profile.LatestOpen {
		return h2.DepLatestOpen
	}
	return h2.DepRoot
}
