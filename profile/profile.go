// Package profile holds browser profiles as recorded data: what one browser
// version on one operating system sends on the wire. A profile carries the
// raw TLS ClientHello, the HTTP/2 connection preface (SETTINGS, WINDOW_UPDATE,
// PRIORITY, pseudo-header order, HEADERS priority) and the default request
// headers per request kind, in order and case.
//
// Profiles are JSON files written by `guise capture` (see Marshal) and
// embedded from data/*.json. They are decoded on the first Lookup or Names
// call, once, and cached; nothing runs at package initialisation. A user's
// own file is read with Load (or Parse, or Open for a name or a file),
// with the same checks, and a Set holds profiles with weights to draw one
// from.
//
// The package does not import uTLS: turning a recorded hello into a
// handshake is internal/tlsfp's job.
//
// The embedded files are generated: `go generate ./profile` runs gen.go over
// the recordings in testdata/recordings (their README says how each was
// made) and rewrites data/*.json, and CI fails when the result differs from
// what is committed. Each Profile says where it came from (Recorded, Source):
// the Chrome and Firefox profiles are recorded from the browsers, with the
// desktop browsers' header values per OS; Edge reuses Chromium's recorded
// wire format with Edge's header values; Safari and OkHttp are built from
// published fingerprints (public_test.go checks them), Safari with navigation
// headers only.
package profile

//go:generate go run gen.go gen_hello.go gen_public.go gen_flows.go gen_websocket.go gen_h3.go

import (
	"embed"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/guise-http/guise/fields"
)

// Default is the profile name used when none is given: the newest Chrome on
// Linux.
const Default = "chrome"

// DefaultOS is the operating system a name without one ("chrome156")
// resolves to, for browsers that run on it. Safari resolves to MacOS and
// OkHttp to Android instead (see HomeOS).
const DefaultOS = Linux

// HomeOS returns the operating system a profile name with browser b and no
// OS resolves to: MacOS for Safari, Android for OkHttp, DefaultOS for the
// others.
func HomeOS(b Browser) OS {
	switch b {
	case Safari:
		return MacOS
	case OkHttp:
		return Android
	}
	return DefaultOS
}

// Profile is one browser version on one operating system, as data.
//
// Profiles returned by Lookup are shared and must be treated as read-only;
// use Clone for a copy that may be changed. A Profile is safe for concurrent
// reads.
type Profile struct {
	// Name is the canonical name, "<browser><version>-<os>", e.g.
	// "chrome156-linux".
	Name    string
	Browser Browser
	// Version is the browser's major version.
	Version int
	OS      OS
	// Recorded reports whether the wire format (TLS hello, HTTP/2 preface)
	// was recorded from the real browser. False means the profile was built
	// from public facts; Source says from what.
	Recorded bool
	// Source says where the data comes from and what, if anything, was
	// derived rather than recorded.
	Source  string
	TLS     TLS
	HTTP2   HTTP2
	HTTP1   HTTP1Options
	Headers []HeaderSet
	// WebSocket is how the browser's WebSocket compresses messages, where
	// it differs from the default.
	WebSocket WebSocketOptions
	// QUIC and HTTP3 are the browser's QUIC first flight and HTTP/3
	// behaviour, recorded over h3; both nil when the profile has none (its
	// header sets then have no Proto H3), both set otherwise.
	QUIC  *QUIC
	HTTP3 *HTTP3
	// Reference is what the echo server saw the real browser send when
	// `guise capture` recorded this profile, for `guise fingerprint` to
	// compare a visit with; nil when the profile has none (the embedded
	// profiles, and files written before capture recorded it).
	Reference *Reference
	// Fallback names the embedded profile (canonical name, same browser)
	// whose header sets stand in for the ones the file lacks: HTTP/1.1
	// sets when the capture had no HTTP/1.1 visit, sets for requests with
	// a body when it had no visit of the flow page, and so on. Parse adds
	// those sets with the file's own values of the fields both have (the
	// User-Agent, client hints), so the browser stays one version; they
	// are listed by Filled and not written back by Marshal. "" means none.
	Fallback string
}

// Reference is a fingerprint of the real browser's first HTTP/2
// navigation, as the echo server recorded it.
type Reference struct {
	// JA4 and JA3N are the ClientHello's fingerprints.
	JA4, JA3N string
	// Akamai is the HTTP/2 fingerprint (SETTINGS, WINDOW_UPDATE, PRIORITY
	// frames, pseudo-header order).
	Akamai string
	// PseudoOrder is the navigation's pseudo-header order.
	PseudoOrder []string
	// HeaderOrder is the navigation's field names in wire order.
	HeaderOrder []string
}

// TLS is a browser's TLS ClientHello as recorded.
type TLS struct {
	// Hello is the raw first TLS record (type 22) of a full handshake
	// offering ALPN h2 and http/1.1. Required.
	Hello []byte
	// HelloHTTP1 is the record the browser sends when it offers only
	// http/1.1, or nil if not recorded.
	HelloHTTP1 []byte
	// HelloResumed is the record of a resumed connection, or nil if not
	// recorded.
	HelloResumed []byte
	// ShuffleExtensions reports whether the browser permutes its extensions
	// on every connection (Chrome), keeping the leading and trailing GREASE
	// extensions in place, and pre_shared_key last when resuming.
	ShuffleExtensions bool
	// ECHPayloadLengths are the GREASE ECH payload lengths the browser
	// picks one from per connection (Chrome: 144, 176, 208, 240). Nil: use
	// the recorded length.
	ECHPayloadLengths []int
	// ECHAEADs are the HPKE AEAD identifiers (1 AES-128-GCM, 2 AES-256-GCM,
	// 3 ChaCha20-Poly1305) the browser picks one from per connection for
	// its GREASE ECH (Firefox: 1 and 3). Nil: use the recorded one.
	ECHAEADs []uint16
	// ECHX25519Key reports whether the browser fills its GREASE ECH
	// encapsulated key with a real X25519 public key (BoringSSL makes a key
	// pair for it, so the key's top bit is always clear) rather than random
	// bytes (NSS). It requires a GREASE ECH extension in Hello, and applies
	// only when its key is 32 bytes.
	ECHX25519Key bool
	// ResumeOmitsSessionTicket reports whether the browser leaves the
	// session_ticket extension out of a hello that resumes with a
	// pre_shared_key (Firefox; Chrome keeps it). It is read where a resumed
	// hello has to be derived from Hello (HelloResumed is nil, or the offer
	// is not the profile's own) and requires session_ticket in Hello.
	ResumeOmitsSessionTicket bool
}

// Setting is one HTTP/2 SETTINGS parameter.
type Setting struct {
	ID    SettingID
	Value uint32
}

// PriorityFrame is an HTTP/2 PRIORITY frame sent after the preface.
type PriorityFrame struct {
	StreamID  uint32
	Exclusive bool
	DependsOn uint32
	// Weight is the effective weight, 1..256 (the wire byte plus one).
	Weight int
}

// KindPriority is the priority a browser puts in the HEADERS frame of a
// request of one kind.
type KindPriority struct {
	Kind      RequestKind
	Exclusive bool
	// Weight is the effective weight, 1..256 (the wire byte plus one).
	Weight    int
	DependsOn DependRule
}

// HTTP2 is a browser's HTTP/2 connection behaviour.
type HTTP2 struct {
	// Settings are sent in this order in the first SETTINGS frame.
	Settings []Setting
	// ConnWindowUpdate is the connection WINDOW_UPDATE increment sent after
	// SETTINGS; 0 means none.
	ConnWindowUpdate uint32
	// Priorities are PRIORITY frames sent after the preface, in order.
	Priorities []PriorityFrame
	// FirstStreamID is the first request's stream ID (Chrome 1, Firefox 3).
	FirstStreamID uint32
	// StreamWindowUpdate is the WINDOW_UPDATE increment sent on every
	// stream right after its HEADERS (Firefox); 0 means none.
	StreamWindowUpdate uint32
	// PseudoOrder is the order of :method, :authority, :scheme and :path.
	PseudoOrder []string
	// HeaderPriority is the HEADERS frame priority per request kind.
	HeaderPriority []KindPriority
	// HPACK is how the browser encodes request header blocks. Required.
	HPACK HPACK
	// WebSocketPseudoOrder is the pseudo-header order of the browser's
	// extended CONNECT for a WebSocket (RFC 8441: :method, :authority,
	// :scheme, :path and :protocol), or nil if not recorded.
	WebSocketPseudoOrder []string
}

// HPACK is how a browser's HPACK encoder chooses the representation of each
// request header field (RFC 7541). The three rules are required; the other
// fields' zero values mean "no such behaviour".
type HPACK struct {
	Huffman    HuffmanRule
	NameRef    NameRefRule
	SizeUpdate SizeUpdateRule
	// NoIndex names (lower case; pseudo-headers included) are sent as
	// literals without indexing when the table has no exact match.
	NoIndex []string
	// NoIndexSkipsExact sends NoIndex names as literals even when the table
	// holds the exact pair (Firefox's :path).
	NoIndexSkipsExact bool
	// NeverIndex names are sent as never-indexed literals.
	NeverIndex []string
	// CookieCrumbs splits Cookie at "; " into one field per crumb (RFC 9113
	// 8.2.3).
	CookieCrumbs bool
	// ShortCrumbNeverIndex, if positive, sends cookie crumbs shorter than it
	// as never-indexed literals (Firefox: 20).
	ShortCrumbNeverIndex int
	// HalfTableLiteral sends fields larger than half the dynamic table as
	// literals without indexing (Firefox).
	HalfTableLiteral bool
	// MaxTableSize caps the encoder's dynamic table whatever the peer
	// allows; 0 means the encoder's default.
	MaxTableSize uint32
}

// HTTP1Options is a browser's HTTP/1.1 behaviour beyond its header sets.
type HTTP1Options struct {
	// Recorded reports whether the HTTP/1.1 header sets were recorded from
	// the browser over HTTP/1.1. False: they were derived (Source says
	// how).
	Recorded bool
	// WebSocketFullALPN reports whether the browser, opening a WebSocket on
	// an origin whose connection turned out HTTP/1.1, dials the socket's new
	// connection with its usual ALPN offer (h2, http/1.1) and sends the
	// Upgrade on the http/1.1 it gets (Firefox), rather than offering
	// http/1.1 alone (Chromium, and the default).
	WebSocketFullALPN bool
}

// WebSocketOptions are the browser's WebSocket choices beyond its
// handshake. The zero value is Chromium's.
type WebSocketOptions struct {
	// EmptyUncompressed reports whether an empty message goes out
	// uncompressed (RSV1 clear) under permessage-deflate (Firefox), rather
	// than as the one compressed byte 00 (Chromium).
	EmptyUncompressed bool
	// KeepSmaller reports whether, without the client's context takeover,
	// a message whose compressed form would be longer than itself goes
	// uncompressed (Firefox); otherwise every message is compressed.
	KeepSmaller bool
}

// HeaderSet is the default headers of one request kind over one protocol,
// in wire order, case and value.
type HeaderSet struct {
	Kind  RequestKind
	Proto Proto
	// Body marks the variant for requests with a body (a fetch() POST, a
	// form submission): the browser's order with Content-Length,
	// Content-Type and Origin in their places. A profile has at most one
	// set per kind, protocol, Body and Redirect; a kind without a Body
	// variant sends its requests with a body with the plain set.
	Body bool
	// Redirect marks the variant for a navigation (Kind Navigate, not Body)
	// that follows a redirect, where the browser orders that hop otherwise
	// than the first request: recorded from the hop itself. A profile
	// without one sends the hop with the plain navigation set.
	Redirect bool
	// Header lists the fields in order. Over h2 names are lower case and
	// pseudo-headers are not included (see HTTP2.PseudoOrder).
	Header fields.Header
	// PerRequest names the fields of Header whose value depends on the
	// request (Host, referer, sec-fetch-site, ...). Their Value in Header is
	// the typical one; an empty Value is a placeholder that keeps the
	// field's position and is sent only when the request supplies a value.
	PerRequest []string
	// UserActivation names the fields of Header the browser sends on a
	// navigation only when a user started it (Sec-Fetch-User), not on one
	// a script started. Same form as PerRequest.
	UserActivation []string
	// NeedsBody names the fields of a Body set the browser leaves out when
	// the request (a POST or PUT) has no body after all: a fetch() without
	// a body has no Content-Type, a form submission keeps its own. Same form
	// as PerRequest.
	NeedsBody []string

	// fallback marks a set Parse took from the profile's Fallback.
	fallback bool
}

// HeaderSet returns the default header set for kind over proto, for
// requests without a body, or nil.
func (p *Profile) HeaderSet(kind RequestKind, proto Proto) *HeaderSet {
	return p.headerSet(kind, proto, false, false)
}

// RedirectHeaderSet returns the header set for a navigation over proto
// that follows a redirect, or nil when the profile sends such a hop with
// its plain navigation set (see HeaderSet.Redirect).
func (p *Profile) RedirectHeaderSet(proto Proto) *HeaderSet {
	return p.headerSet(Navigate, proto, false, true)
}

// BodyHeaderSet returns the default header set for kind over proto for
// requests with a body, or nil when the profile has none for kind (see
// HeaderSet.Body).
func (p *Profile) BodyHeaderSet(kind RequestKind, proto Proto) *HeaderSet {
	return p.headerSet(kind, proto, true, false)
}

func (p *Profile) headerSet(kind RequestKind, proto Proto, body, redirect bool) *HeaderSet {
	for i := range p.Headers {
		if hs := &p.Headers[i]; hs.Kind == kind && hs.Proto == proto && hs.Body == body && hs.Redirect == redirect {
			return hs
		}
	}
	return nil
}

// Priority returns the HEADERS priority for kind, and whether there is one.
func (p *Profile) Priority(kind RequestKind) (KindPriority, bool) {
	for _, kp := range p.HTTP2.HeaderPriority {
		if kp.Kind == kind {
			return kp, true
		}
	}
	return KindPriority{}, false
}

// Clone returns a deep copy of p.
func (p *Profile) Clone() *Profile {
	c := *p
	c.TLS.Hello = slices.Clone(p.TLS.Hello)
	c.TLS.HelloHTTP1 = slices.Clone(p.TLS.HelloHTTP1)
	c.TLS.HelloResumed = slices.Clone(p.TLS.HelloResumed)
	c.TLS.ECHPayloadLengths = slices.Clone(p.TLS.ECHPayloadLengths)
	c.TLS.ECHAEADs = slices.Clone(p.TLS.ECHAEADs)
	c.HTTP2.Settings = slices.Clone(p.HTTP2.Settings)
	c.HTTP2.Priorities = slices.Clone(p.HTTP2.Priorities)
	c.HTTP2.PseudoOrder = slices.Clone(p.HTTP2.PseudoOrder)
	c.HTTP2.HeaderPriority = slices.Clone(p.HTTP2.HeaderPriority)
	c.HTTP2.WebSocketPseudoOrder = slices.Clone(p.HTTP2.WebSocketPseudoOrder)
	c.HTTP2.HPACK.NoIndex = slices.Clone(p.HTTP2.HPACK.NoIndex)
	c.HTTP2.HPACK.NeverIndex = slices.Clone(p.HTTP2.HPACK.NeverIndex)
	c.QUIC = p.QUIC.clone()
	c.HTTP3 = p.HTTP3.clone()
	if p.Reference != nil {
		r := *p.Reference
		r.PseudoOrder = slices.Clone(r.PseudoOrder)
		r.HeaderOrder = slices.Clone(r.HeaderOrder)
		c.Reference = &r
	}
	c.Headers = slices.Clone(p.Headers)
	for i := range c.Headers {
		c.Headers[i].Header = c.Headers[i].Header.Clone()
		c.Headers[i].PerRequest = slices.Clone(c.Headers[i].PerRequest)
		c.Headers[i].UserActivation = slices.Clone(c.Headers[i].UserActivation)
		c.Headers[i].NeedsBody = slices.Clone(c.Headers[i].NeedsBody)
	}
	return &c
}

// CanonicalName returns the canonical profile name for b, version and os,
// e.g. "chrome156-linux".
func CanonicalName(b Browser, version int, os OS) string {
	return b.String() + strconv.Itoa(version) + "-" + os.String()
}

// ErrUnknown is returned (wrapped) by Lookup for a name no profile has.
var ErrUnknown = errors.New("profile: unknown profile")

//go:embed data/*.json
var dataFS embed.FS

type registry struct {
	all []*Profile // sorted by name
	err error
}

var (
	regOnce sync.Once
	reg     registry
)

func load() *registry {
	regOnce.Do(func() {
		ents, err := dataFS.ReadDir("data")
		if err != nil {
			reg.err = fmt.Errorf("profile: reading embedded profiles: %w", err)
			return
		}
		for _, e := range ents {
			b, err := dataFS.ReadFile("data/" + e.Name())
			if err != nil {
				reg.err = fmt.Errorf("profile: reading %s: %w", e.Name(), err)
				return
			}
			p, err := parse(b, false)
			if err != nil {
				reg.err = fmt.Errorf("profile: embedded %s: %w", e.Name(), err)
				return
			}
			if p.Fallback != "" {
				reg.err = fmt.Errorf("profile: embedded %s has a fallback", e.Name())
				return
			}
			if p.Name+".json" != e.Name() {
				reg.err = fmt.Errorf("profile: embedded %s holds profile %q", e.Name(), p.Name)
				return
			}
			reg.all = append(reg.all, p)
		}
		slices.SortFunc(reg.all, func(a, b *Profile) int { return strings.Compare(a.Name, b.Name) })
	})
	return &reg
}

// Names returns the canonical names of all embedded profiles, sorted. It
// returns nil if the embedded profiles fail to decode (Lookup reports why).
func Names() []string {
	r := load()
	if r.err != nil {
		return nil
	}
	names := make([]string, len(r.all))
	for i, p := range r.all {
		names[i] = p.Name
	}
	return names
}

// Lookup returns the embedded profile called name. Besides canonical names
// ("chrome156-windows") it accepts a browser alone ("chrome": the newest
// version on the browser's HomeOS, so "safari" is Safari on macOS and
// "okhttp" OkHttp on Android), a browser and version ("firefox153": on
// HomeOS) and a browser and OS ("chrome-macos": the newest version on
// that OS). "" means Default. Names are case-insensitive. An unknown name
// gives an error wrapping ErrUnknown.
//
// The returned profile is shared: do not modify it (see Clone). Lookup is
// safe for concurrent use; the first call decodes the embedded files.
func Lookup(name string) (*Profile, error) {
	r := load()
	if r.err != nil {
		return nil, r.err
	}
	if name == "" {
		name = Default
	}
	key := strings.ToLower(name)
	base, osName, hasOS := strings.Cut(key, "-")
	i := 0
	for i < len(base) && (base[i] < '0' || base[i] > '9') {
		i++
	}
	b := Browser(enumIndex(browserNames[:], base[:i]))
	if b == 0 {
		return nil, fmt.Errorf("%w %q", ErrUnknown, name)
	}
	os := HomeOS(b)
	if hasOS {
		os = OS(enumIndex(osNames[:], osName))
		if os == 0 {
			return nil, fmt.Errorf("%w %q", ErrUnknown, name)
		}
	}
	version := 0
	if i < len(base) {
		v, err := strconv.Atoi(base[i:])
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("%w %q", ErrUnknown, name)
		}
		version = v
	}
	var best *Profile
	for _, p := range r.all {
		if p.Browser != b || p.OS != os || (version != 0 && p.Version != version) {
			continue
		}
		if best == nil || p.Version > best.Version {
			best = p
		}
	}
	if best == nil {
		return nil, fmt.Errorf("%w %q", ErrUnknown, name)
	}
	return best, nil
}
