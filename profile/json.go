package profile

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/guise-http/guise/fields"
)

// FormatVersion is the version of the profile file format Marshal writes
// and Parse accepts. Version 2 added the browser behaviour version 1 left to
// code: http2.hpack, tls.ech_x25519_key and tls.resume_omits_session_ticket,
// redirect header sets, and the user_activation and needs_body field flags;
// a version 1 file is refused, as its profile would behave differently.
const FormatVersion = 2

// MaxFileSize bounds the size of a profile file Parse accepts.
const MaxFileSize = 1 << 20

// ParseError reports an invalid profile file or value: which field, and why.
type ParseError struct {
	// Field is the JSON path of the offending field ("tls.hello",
	// "headers[2].header[0].name"), or "" for the file as a whole.
	Field string
	// Reason says what is wrong.
	Reason string
	// Err is the underlying error, if any (a JSON syntax error).
	Err error
}

// Error returns "profile: <field>: <reason>".
func (e *ParseError) Error() string {
	msg := e.Reason
	if e.Err != nil {
		if msg != "" {
			msg += ": "
		}
		msg += e.Err.Error()
	}
	if e.Field == "" {
		return "profile: " + msg
	}
	return "profile: " + e.Field + ": " + msg
}

// Unwrap returns the underlying error, if any.
func (e *ParseError) Unwrap() error { return e.Err }

func perr(field, format string, args ...any) error {
	return &ParseError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

type wireProfile struct {
	Format   int             `json:"format"`
	Name     string          `json:"name"`
	Browser  Browser         `json:"browser"`
	Version  int             `json:"version"`
	OS       OS              `json:"os"`
	Recorded bool            `json:"recorded"`
	Source   string          `json:"source"`
	TLS      wireTLS         `json:"tls"`
	HTTP2    wireHTTP2       `json:"http2"`
	HTTP1    wireHTTP1       `json:"http1"`
	Headers  []wireHeaderSet `json:"headers"`
	WS       *wireWebSocket  `json:"websocket,omitempty"`
	QUIC     *wireQUIC       `json:"quic,omitempty"`
	HTTP3    *wireHTTP3      `json:"http3,omitempty"`
	// Reference and Fallback: see Profile.
	Reference *wireReference `json:"reference,omitempty"`
	Fallback  string         `json:"fallback,omitempty"`
}

type wireReference struct {
	JA4         string   `json:"ja4"`
	JA3N        string   `json:"ja3n"`
	Akamai      string   `json:"akamai"`
	PseudoOrder []string `json:"pseudo_order"`
	HeaderOrder []string `json:"header_order"`
}

type wireTLS struct {
	Hello             string   `json:"hello"`
	HelloHTTP1        string   `json:"hello_http1,omitempty"`
	HelloResumed      string   `json:"hello_resumed,omitempty"`
	ShuffleExtensions bool     `json:"shuffle_extensions"`
	ECHPayloadLengths []int    `json:"ech_payload_lengths,omitempty"`
	ECHAEADs          []uint16 `json:"ech_aeads,omitempty"`
	ECHX25519Key      bool     `json:"ech_x25519_key,omitempty"`
	ResumeOmitsTicket bool     `json:"resume_omits_session_ticket,omitempty"`
}

type wireSetting struct {
	ID    uint16 `json:"id"`
	Value uint32 `json:"value"`
}

type wirePriority struct {
	StreamID  uint32 `json:"stream_id"`
	Exclusive bool   `json:"exclusive"`
	DependsOn uint32 `json:"depends_on"`
	Weight    int    `json:"weight"`
}

type wireKindPriority struct {
	Kind      RequestKind `json:"kind"`
	Exclusive bool        `json:"exclusive"`
	Weight    int         `json:"weight"`
	DependsOn DependRule  `json:"depends_on"`
}

type wireHTTP2 struct {
	Settings           []wireSetting      `json:"settings"`
	ConnWindowUpdate   uint32             `json:"conn_window_update"`
	Priorities         []wirePriority     `json:"priorities,omitempty"`
	FirstStreamID      uint32             `json:"first_stream_id"`
	StreamWindowUpdate uint32             `json:"stream_window_update"`
	PseudoOrder        []string           `json:"pseudo_order"`
	HeaderPriority     []wireKindPriority `json:"header_priority"`
	// WebSocketPseudoOrder is HTTP2.WebSocketPseudoOrder.
	WebSocketPseudoOrder []string  `json:"websocket_pseudo_order,omitempty"`
	HPACK                wireHPACK `json:"hpack"`
}

type wireHPACK struct {
	Huffman              HuffmanRule    `json:"huffman"`
	NameRef              NameRefRule    `json:"name_ref"`
	SizeUpdate           SizeUpdateRule `json:"size_update"`
	NoIndex              []string       `json:"no_index,omitempty"`
	NoIndexSkipsExact    bool           `json:"no_index_skips_exact,omitempty"`
	NeverIndex           []string       `json:"never_index,omitempty"`
	CookieCrumbs         bool           `json:"cookie_crumbs,omitempty"`
	ShortCrumbNeverIndex int            `json:"short_crumb_never_index,omitempty"`
	HalfTableLiteral     bool           `json:"half_table_literal,omitempty"`
	MaxTableSize         uint32         `json:"max_table_size,omitempty"`
}

type wireWebSocket struct {
	EmptyUncompressed bool `json:"empty_uncompressed,omitempty"`
	KeepSmaller       bool `json:"keep_smaller,omitempty"`
}

type wireHTTP1 struct {
	Recorded          bool `json:"recorded"`
	WebSocketFullALPN bool `json:"websocket_full_alpn,omitempty"`
}

type wireField struct {
	Name       string `json:"name"`
	Value      string `json:"value"`
	PerRequest bool   `json:"per_request,omitempty"`
	// UserActivation and NeedsBody: see HeaderSet.
	UserActivation bool `json:"user_activation,omitempty"`
	NeedsBody      bool `json:"needs_body,omitempty"`
}

type wireHeaderSet struct {
	Kind     RequestKind `json:"kind"`
	Proto    Proto       `json:"proto"`
	Body     bool        `json:"body,omitempty"`
	Redirect bool        `json:"redirect,omitempty"`
	Header   []wireField `json:"header"`
}

// Parse decodes and validates a profile file as Marshal writes it. It is
// strict: unknown fields, trailing data, a malformed ClientHello record,
// out-of-range HTTP/2 values, duplicate settings or header sets, invalid
// header names or values, or a name that is not the canonical
// "<browser><version>-<os>" are errors of type *ParseError.
//
// A file with a Fallback gets the header sets it lacks from that embedded
// profile (see Profile.Fallback); one naming no embedded profile of its
// browser is an error.
//
// Parse(p.Marshal()) returns a profile equal to p.
func Parse(data []byte) (*Profile, error) {
	return parse(data, true)
}

// parse is Parse; the embedded files are parsed with fill false, as the
// registry is not there yet to take a fallback from.
func parse(data []byte, fill bool) (*Profile, error) {
	if len(data) > MaxFileSize {
		return nil, perr("", "file is %d bytes, more than %d", len(data), MaxFileSize)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var w wireProfile
	if err := dec.Decode(&w); err != nil {
		var pe *ParseError
		if asParseError(err, &pe) {
			return nil, pe
		}
		return nil, &ParseError{Reason: "invalid json", Err: err}
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, perr("", "trailing data after the profile object")
	}
	p, err := fromWire(&w)
	if err != nil {
		return nil, err
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	if fill && p.Fallback != "" {
		if err := p.fill(); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// asParseError finds a *ParseError inside a JSON decoding error (the
// enumerations' UnmarshalText returns one).
func asParseError(err error, target **ParseError) bool {
	for err != nil {
		if pe, ok := err.(*ParseError); ok {
			*target = pe
			return true
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		err = u.Unwrap()
	}
	return false
}

// Marshal validates p and encodes it as a profile file: indented JSON with
// the ClientHello records in hex, deterministic for equal profiles. It is
// what `guise capture` writes.
func (p *Profile) Marshal() ([]byte, error) {
	if err := p.validate(); err != nil {
		return nil, err
	}
	w := toWire(p)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(w); err != nil {
		return nil, fmt.Errorf("profile: encoding %s: %w", p.Name, err)
	}
	return buf.Bytes(), nil
}

func toWire(p *Profile) *wireProfile {
	w := &wireProfile{
		Format: FormatVersion, Name: p.Name, Browser: p.Browser, Version: p.Version, OS: p.OS,
		Recorded: p.Recorded, Source: p.Source,
		TLS: wireTLS{
			Hello:             hex.EncodeToString(p.TLS.Hello),
			HelloHTTP1:        hex.EncodeToString(p.TLS.HelloHTTP1),
			HelloResumed:      hex.EncodeToString(p.TLS.HelloResumed),
			ShuffleExtensions: p.TLS.ShuffleExtensions,
			ECHPayloadLengths: p.TLS.ECHPayloadLengths,
			ECHAEADs:          p.TLS.ECHAEADs,
			ECHX25519Key:      p.TLS.ECHX25519Key,
			ResumeOmitsTicket: p.TLS.ResumeOmitsSessionTicket,
		},
		HTTP2: wireHTTP2{
			ConnWindowUpdate:     p.HTTP2.ConnWindowUpdate,
			FirstStreamID:        p.HTTP2.FirstStreamID,
			StreamWindowUpdate:   p.HTTP2.StreamWindowUpdate,
			PseudoOrder:          p.HTTP2.PseudoOrder,
			WebSocketPseudoOrder: p.HTTP2.WebSocketPseudoOrder,
			HPACK:                wireHPACK(p.HTTP2.HPACK),
		},
		HTTP1:    wireHTTP1{Recorded: p.HTTP1.Recorded, WebSocketFullALPN: p.HTTP1.WebSocketFullALPN},
		QUIC:     quicToWire(p.QUIC),
		HTTP3:    http3ToWire(p.HTTP3),
		Fallback: p.Fallback,
	}
	if r := p.Reference; r != nil {
		w.Reference = &wireReference{JA4: r.JA4, JA3N: r.JA3N, Akamai: r.Akamai, PseudoOrder: r.PseudoOrder, HeaderOrder: r.HeaderOrder}
	}
	if p.WebSocket != (WebSocketOptions{}) {
		w.WS = &wireWebSocket{EmptyUncompressed: p.WebSocket.EmptyUncompressed, KeepSmaller: p.WebSocket.KeepSmaller}
	}
	for _, s := range p.HTTP2.Settings {
		w.HTTP2.Settings = append(w.HTTP2.Settings, wireSetting{uint16(s.ID), s.Value})
	}
	for _, f := range p.HTTP2.Priorities {
		w.HTTP2.Priorities = append(w.HTTP2.Priorities, wirePriority(f))
	}
	for _, kp := range p.HTTP2.HeaderPriority {
		w.HTTP2.HeaderPriority = append(w.HTTP2.HeaderPriority, wireKindPriority(kp))
	}
	for _, hs := range p.Headers {
		if hs.fallback {
			continue // Parse takes it from the fallback again
		}
		ws := wireHeaderSet{Kind: hs.Kind, Proto: hs.Proto, Body: hs.Body, Redirect: hs.Redirect}
		for _, f := range hs.Header {
			ws.Header = append(ws.Header, wireField{
				Name: f.Name, Value: f.Value,
				PerRequest:     containsFold(hs.PerRequest, f.Name),
				UserActivation: containsFold(hs.UserActivation, f.Name),
				NeedsBody:      containsFold(hs.NeedsBody, f.Name),
			})
		}
		w.Headers = append(w.Headers, ws)
	}
	return w
}

func fromWire(w *wireProfile) (*Profile, error) {
	if w.Format != FormatVersion {
		return nil, perr("format", "version %d, want %d", w.Format, FormatVersion)
	}
	p := &Profile{
		Name: w.Name, Browser: w.Browser, Version: w.Version, OS: w.OS,
		Recorded: w.Recorded, Source: w.Source,
		TLS: TLS{
			ShuffleExtensions:        w.TLS.ShuffleExtensions,
			ECHPayloadLengths:        nilIfEmpty(w.TLS.ECHPayloadLengths),
			ECHAEADs:                 nilIfEmpty(w.TLS.ECHAEADs),
			ECHX25519Key:             w.TLS.ECHX25519Key,
			ResumeOmitsSessionTicket: w.TLS.ResumeOmitsTicket,
		},
		HTTP2: HTTP2{
			ConnWindowUpdate:     w.HTTP2.ConnWindowUpdate,
			FirstStreamID:        w.HTTP2.FirstStreamID,
			StreamWindowUpdate:   w.HTTP2.StreamWindowUpdate,
			PseudoOrder:          nilIfEmpty(w.HTTP2.PseudoOrder),
			WebSocketPseudoOrder: nilIfEmpty(w.HTTP2.WebSocketPseudoOrder),
			HPACK:                HPACK(w.HTTP2.HPACK),
		},
		HTTP1:    HTTP1Options{Recorded: w.HTTP1.Recorded, WebSocketFullALPN: w.HTTP1.WebSocketFullALPN},
		Fallback: w.Fallback,
	}
	if r := w.Reference; r != nil {
		p.Reference = &Reference{JA4: r.JA4, JA3N: r.JA3N, Akamai: r.Akamai,
			PseudoOrder: nilIfEmpty(r.PseudoOrder), HeaderOrder: nilIfEmpty(r.HeaderOrder)}
	}
	if w.WS != nil {
		p.WebSocket = WebSocketOptions{EmptyUncompressed: w.WS.EmptyUncompressed, KeepSmaller: w.WS.KeepSmaller}
	}
	p.HTTP2.HPACK.NoIndex = nilIfEmpty(p.HTTP2.HPACK.NoIndex)
	p.HTTP2.HPACK.NeverIndex = nilIfEmpty(p.HTTP2.HPACK.NeverIndex)
	var err error
	if p.TLS.Hello, err = decodeHex("tls.hello", w.TLS.Hello); err != nil {
		return nil, err
	}
	if p.TLS.HelloHTTP1, err = decodeHex("tls.hello_http1", w.TLS.HelloHTTP1); err != nil {
		return nil, err
	}
	if p.TLS.HelloResumed, err = decodeHex("tls.hello_resumed", w.TLS.HelloResumed); err != nil {
		return nil, err
	}
	if p.QUIC, err = quicFromWire(w.QUIC); err != nil {
		return nil, err
	}
	p.HTTP3 = http3FromWire(w.HTTP3)
	for _, s := range w.HTTP2.Settings {
		p.HTTP2.Settings = append(p.HTTP2.Settings, Setting{SettingID(s.ID), s.Value})
	}
	for _, f := range w.HTTP2.Priorities {
		p.HTTP2.Priorities = append(p.HTTP2.Priorities, PriorityFrame(f))
	}
	for _, kp := range w.HTTP2.HeaderPriority {
		p.HTTP2.HeaderPriority = append(p.HTTP2.HeaderPriority, KindPriority(kp))
	}
	for i, ws := range w.Headers {
		hs := HeaderSet{Kind: ws.Kind, Proto: ws.Proto, Body: ws.Body, Redirect: ws.Redirect}
		for j, f := range ws.Header {
			hs.Header = append(hs.Header, fields.Field{Name: f.Name, Value: f.Value})
			for _, fl := range [...]struct {
				set  bool
				list *[]string
				what string
			}{
				{f.PerRequest, &hs.PerRequest, "per-request"},
				{f.UserActivation, &hs.UserActivation, "user-activation"},
				{f.NeedsBody, &hs.NeedsBody, "needs-body"},
			} {
				if !fl.set {
					continue
				}
				if containsFold(*fl.list, f.Name) {
					return nil, perr(fmt.Sprintf("headers[%d].header[%d]", i, j), "field %q marked %s twice", f.Name, fl.what)
				}
				*fl.list = append(*fl.list, f.Name)
			}
		}
		p.Headers = append(p.Headers, hs)
	}
	return p, nil
}

func nilIfEmpty[T any](s []T) []T {
	if len(s) == 0 {
		return nil
	}
	return s
}

func decodeHex(field, s string) ([]byte, error) {
	if s == "" {
		return nil, nil
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		return nil, &ParseError{Field: field, Reason: "invalid hex", Err: err}
	}
	return b, nil
}

func containsFold(names []string, name string) bool {
	for _, n := range names {
		if fields.EqualFold(n, name) {
			return true
		}
	}
	return false
}

var pseudoHeaders = [...]string{":method", ":authority", ":scheme", ":path"}

// validate checks every invariant Parse promises.
func (p *Profile) validate() error {
	if p.Browser < Chrome || int(p.Browser) >= len(browserNames) {
		return perr("browser", "missing or invalid (%d)", p.Browser)
	}
	if p.OS < Linux || int(p.OS) >= len(osNames) {
		return perr("os", "missing or invalid (%d)", p.OS)
	}
	if p.Version <= 0 || p.Version > 9999 {
		return perr("version", "%d out of range 1..9999", p.Version)
	}
	if want := CanonicalName(p.Browser, p.Version, p.OS); p.Name != want {
		return perr("name", "%q, want %q", p.Name, want)
	}
	if strings.TrimSpace(p.Source) == "" {
		return perr("source", "missing")
	}
	if len(p.TLS.Hello) == 0 {
		return perr("tls.hello", "missing")
	}
	if err := checkHello("tls.hello", p.TLS.Hello); err != nil {
		return err
	}
	if err := checkHello("tls.hello_http1", p.TLS.HelloHTTP1); err != nil {
		return err
	}
	if err := checkHello("tls.hello_resumed", p.TLS.HelloResumed); err != nil {
		return err
	}
	for i, n := range p.TLS.ECHPayloadLengths {
		if n <= 0 || n > 0xffff {
			return perr(fmt.Sprintf("tls.ech_payload_lengths[%d]", i), "%d out of range 1..65535", n)
		}
	}
	for i, a := range p.TLS.ECHAEADs {
		if a < 1 || a > 3 || slices.Contains(p.TLS.ECHAEADs[:i], a) {
			return perr(fmt.Sprintf("tls.ech_aeads[%d]", i), "%d is not a distinct hpke aead id 1..3", a)
		}
	}
	if p.TLS.ECHX25519Key && !helloHas(p.TLS.Hello, extECH) {
		return perr("tls.ech_x25519_key", "set, but the hello has no grease ech extension")
	}
	if p.TLS.ResumeOmitsSessionTicket && !helloHas(p.TLS.Hello, extSessionTicket) {
		return perr("tls.resume_omits_session_ticket", "set, but the hello has no session_ticket extension")
	}
	if err := p.HTTP2.validate(p.Headers); err != nil {
		return err
	}
	if err := p.validateH3(); err != nil {
		return err
	}
	if err := p.Reference.validate(); err != nil {
		return err
	}
	if p.Fallback != "" && !strings.HasPrefix(p.Fallback, p.Browser.String()) {
		return perr("fallback", "%q is not a profile of %v", p.Fallback, p.Browser)
	}
	return nil
}

func (r *Reference) validate() error {
	if r == nil {
		return nil
	}
	for _, f := range [...]struct{ v, field string }{{r.JA4, "ja4"}, {r.JA3N, "ja3n"}, {r.Akamai, "akamai"}} {
		if f.v == "" || !fields.ValidValue(f.v) {
			return perr("reference."+f.field, "missing or invalid (%q)", f.v)
		}
	}
	for _, l := range [...]struct {
		names []string
		field string
	}{{r.PseudoOrder, "pseudo_order"}, {r.HeaderOrder, "header_order"}} {
		if len(l.names) == 0 {
			return perr("reference."+l.field, "missing")
		}
		for i, n := range l.names {
			if !fields.ValidName(strings.TrimPrefix(n, ":")) {
				return perr(fmt.Sprintf("reference.%s[%d]", l.field, i), "invalid name %q", n)
			}
		}
	}
	return nil
}

// validateH3 checks the QUIC and HTTP/3 parts: both or neither, and h3
// header sets only with them.
func (p *Profile) validateH3() error {
	if (p.QUIC == nil) != (p.HTTP3 == nil) {
		return perr("quic", "quic and http3 must be both present or both absent")
	}
	if p.QUIC == nil {
		for i, hs := range p.Headers {
			if hs.Proto == H3 {
				return perr(fmt.Sprintf("headers[%d]", i), "an h3 header set in a profile without quic and http3")
			}
		}
		return nil
	}
	if err := p.QUIC.validate(); err != nil {
		return err
	}
	return p.HTTP3.validate()
}

// checkHello checks that b is one TLS handshake record holding exactly one
// ClientHello message; empty b is accepted (absent).
func checkHello(field string, b []byte) error {
	if len(b) == 0 {
		return nil
	}
	if len(b) < 9 {
		return perr(field, "record of %d bytes is too short", len(b))
	}
	if b[0] != 0x16 || b[1] != 0x03 {
		return perr(field, "not a TLS handshake record (starts %q)", b[:2])
	}
	if n := int(b[3])<<8 | int(b[4]); n != len(b)-5 {
		return perr(field, "record length %d, have %d bytes", n, len(b)-5)
	}
	if b[5] != 1 {
		return perr(field, "handshake type %d is not client_hello", b[5])
	}
	if n := int(b[6])<<16 | int(b[7])<<8 | int(b[8]); n != len(b)-9 {
		return perr(field, "client_hello length %d, have %d bytes", n, len(b)-9)
	}
	// legacy_version, random, session id length, cipher suites length,
	// compression methods length: 38 bytes at least.
	if len(b)-9 < 38 || b[9] != 0x03 {
		return perr(field, "client_hello body of %d bytes is not a hello", len(b)-9)
	}
	return checkHelloBody(field, b[9+2+32:])
}

// checkHelloBody checks the vectors after the random: session id, cipher
// suites, compression methods and extensions, each inside the message, and
// no extension type twice (RFC 8446 4.2; GREASE types excepted).
func checkHelloBody(field string, b []byte) error {
	vec := func(what string, lenBytes int) ([]byte, error) {
		if len(b) < lenBytes {
			return nil, perr(field, "client_hello truncated in %s", what)
		}
		n := int(b[0])
		if lenBytes == 2 {
			n = n<<8 | int(b[1])
		}
		if len(b) < lenBytes+n {
			return nil, perr(field, "client_hello %s overruns the message", what)
		}
		v := b[lenBytes : lenBytes+n]
		b = b[lenBytes+n:]
		return v, nil
	}
	if sid, err := vec("session id", 1); err != nil {
		return err
	} else if len(sid) > 32 {
		return perr(field, "session id of %d bytes", len(sid))
	}
	if cs, err := vec("cipher suites", 2); err != nil {
		return err
	} else if len(cs) == 0 || len(cs)%2 != 0 {
		return perr(field, "cipher suites of %d bytes", len(cs))
	}
	if _, err := vec("compression methods", 1); err != nil {
		return err
	}
	exts, err := vec("extensions", 2)
	if err != nil {
		return err
	}
	if len(b) != 0 {
		return perr(field, "%d bytes after the extensions", len(b))
	}
	return walkExtensions(field, exts, nil)
}

// TLS extension code points validate checks the hello for.
const (
	extSessionTicket = 35
	extECH           = 0xfe0d
)

// helloHas reports whether the hello record b, which checkHello accepted,
// carries extension typ.
func helloHas(b []byte, typ uint16) bool {
	b = b[9+2+32:]
	b = b[1+int(b[0]):]                // session id
	b = b[2+(int(b[0])<<8|int(b[1])):] // cipher suites
	b = b[1+int(b[0]):]                // compression methods
	found := false
	walkExtensions("", b[2:], func(t uint16) { found = found || t == typ })
	return found
}

// walkExtensions checks an extensions block and calls each, if not nil,
// with every extension type in it.
func walkExtensions(field string, exts []byte, each func(uint16)) error {
	var seen []uint16
	for len(exts) > 0 {
		if len(exts) < 4 {
			return perr(field, "truncated extension header")
		}
		typ, n := uint16(exts[0])<<8|uint16(exts[1]), int(exts[2])<<8|int(exts[3])
		if len(exts) < 4+n {
			return perr(field, "extension %d overruns the extensions", typ)
		}
		exts = exts[4+n:]
		if each != nil {
			each(typ)
		}
		if typ&0x0f0f == 0x0a0a && typ>>8 == typ&0xff {
			continue // GREASE
		}
		if slices.Contains(seen, typ) {
			return perr(field, "extension %d appears twice", typ)
		}
		seen = append(seen, typ)
	}
	return nil
}

const maxStreamID = 1<<31 - 1

func (h *HTTP2) validate(sets []HeaderSet) error {
	if len(h.Settings) == 0 {
		return perr("http2.settings", "missing")
	}
	for i, s := range h.Settings {
		if s.ID == 0 {
			return perr(fmt.Sprintf("http2.settings[%d]", i), "id 0")
		}
		for _, t := range h.Settings[:i] {
			if t.ID == s.ID {
				return perr(fmt.Sprintf("http2.settings[%d]", i), "duplicate %v", s.ID)
			}
		}
	}
	if h.ConnWindowUpdate > maxStreamID {
		return perr("http2.conn_window_update", "%d exceeds 2^31-1", h.ConnWindowUpdate)
	}
	if h.StreamWindowUpdate > maxStreamID {
		return perr("http2.stream_window_update", "%d exceeds 2^31-1", h.StreamWindowUpdate)
	}
	if h.FirstStreamID == 0 || h.FirstStreamID%2 == 0 || h.FirstStreamID > maxStreamID {
		return perr("http2.first_stream_id", "%d is not an odd client stream id", h.FirstStreamID)
	}
	for i, f := range h.Priorities {
		field := fmt.Sprintf("http2.priorities[%d]", i)
		if f.StreamID == 0 || f.StreamID > maxStreamID || f.DependsOn > maxStreamID || f.DependsOn == f.StreamID {
			return perr(field, "invalid stream %d depending on %d", f.StreamID, f.DependsOn)
		}
		if f.Weight < 1 || f.Weight > 256 {
			return perr(field, "weight %d out of range 1..256", f.Weight)
		}
	}
	if len(h.PseudoOrder) != len(pseudoHeaders) {
		return perr("http2.pseudo_order", "%d entries, want %d", len(h.PseudoOrder), len(pseudoHeaders))
	}
	for _, ph := range pseudoHeaders {
		n := 0
		for _, x := range h.PseudoOrder {
			if x == ph {
				n++
			}
		}
		if n != 1 {
			return perr("http2.pseudo_order", "%q appears %d times", ph, n)
		}
	}
	if h.WebSocketPseudoOrder != nil {
		if len(h.WebSocketPseudoOrder) != len(pseudoHeaders)+1 {
			return perr("http2.websocket_pseudo_order", "%d entries, want %d", len(h.WebSocketPseudoOrder), len(pseudoHeaders)+1)
		}
		for _, ph := range append(pseudoHeaders[:], ":protocol") {
			if n := countOf(h.WebSocketPseudoOrder, ph); n != 1 {
				return perr("http2.websocket_pseudo_order", "%q appears %d times", ph, n)
			}
		}
	}
	for i, kp := range h.HeaderPriority {
		field := fmt.Sprintf("http2.header_priority[%d]", i)
		if kp.Kind < Navigate || int(kp.Kind) >= len(kindNames) {
			return perr(field, "invalid kind %d", kp.Kind)
		}
		if kp.DependsOn < Root || int(kp.DependsOn) >= len(dependNames) {
			return perr(field, "invalid depends_on %d", kp.DependsOn)
		}
		if kp.Weight < 1 || kp.Weight > 256 {
			return perr(field, "weight %d out of range 1..256", kp.Weight)
		}
		for _, o := range h.HeaderPriority[:i] {
			if o.Kind == kp.Kind {
				return perr(field, "duplicate kind %v", kp.Kind)
			}
		}
	}
	if err := h.HPACK.validate(); err != nil {
		return err
	}
	return validateHeaderSets(sets)
}

func (h *HPACK) validate() error {
	if h.Huffman < HuffmanShorter || int(h.Huffman) >= len(huffmanNames) {
		return perr("http2.hpack.huffman", "missing or invalid (%d)", h.Huffman)
	}
	if h.NameRef < NameRefStaticFirst || int(h.NameRef) >= len(nameRefNames) {
		return perr("http2.hpack.name_ref", "missing or invalid (%d)", h.NameRef)
	}
	if h.SizeUpdate < SizeUpdateOnChange || int(h.SizeUpdate) >= len(sizeUpdateNames) {
		return perr("http2.hpack.size_update", "missing or invalid (%d)", h.SizeUpdate)
	}
	for _, l := range [...]struct {
		names []string
		field string
	}{{h.NoIndex, "http2.hpack.no_index"}, {h.NeverIndex, "http2.hpack.never_index"}} {
		for i, n := range l.names {
			name := strings.TrimPrefix(n, ":")
			if !fields.ValidName(name) || strings.ToLower(n) != n || slices.Contains(l.names[:i], n) {
				return perr(fmt.Sprintf("%s[%d]", l.field, i), "%q is not a distinct lower-case field name", n)
			}
		}
	}
	if h.ShortCrumbNeverIndex < 0 || h.ShortCrumbNeverIndex > 1<<16 {
		return perr("http2.hpack.short_crumb_never_index", "%d out of range 0..65536", h.ShortCrumbNeverIndex)
	}
	return nil
}

// maxSetFields bounds the fields of a header set (guise's request
// templates mark fields by bits of a uint64).
const maxSetFields = 64

func validateHeaderSets(sets []HeaderSet) error {
	if len(sets) == 0 {
		return perr("headers", "missing")
	}
	for i, hs := range sets {
		field := fmt.Sprintf("headers[%d]", i)
		if hs.Kind < Navigate || int(hs.Kind) >= len(kindNames) {
			return perr(field, "invalid kind %d", hs.Kind)
		}
		if hs.Proto < H2 || int(hs.Proto) >= len(protoNames) {
			return perr(field, "invalid proto %d", hs.Proto)
		}
		if hs.Redirect && (hs.Kind != Navigate || hs.Body) {
			return perr(field, "redirect set for %v (body %v): only a plain navigation has one", hs.Kind, hs.Body)
		}
		for _, o := range sets[:i] {
			if o.Kind == hs.Kind && o.Proto == hs.Proto && o.Body == hs.Body && o.Redirect == hs.Redirect {
				return perr(field, "duplicate header set %v over %v (body %v, redirect %v)", hs.Kind, hs.Proto, hs.Body, hs.Redirect)
			}
		}
		if len(hs.NeedsBody) > 0 && !hs.Body {
			return perr(field+".needs_body", "%q in a set that is not for requests with a body", hs.NeedsBody)
		}
		if len(hs.Header) == 0 {
			return perr(field+".header", "empty")
		}
		if len(hs.Header) > maxSetFields {
			return perr(field+".header", "%d fields, more than %d", len(hs.Header), maxSetFields)
		}
		if hs.Proto == HTTP1 && !hs.Body && !hs.Redirect && !slices.ContainsFunc(hs.Header, func(f fields.Field) bool { return fields.EqualFold(f.Name, "host") }) {
			return perr(field+".header", "an http/1.1 set without a Host field")
		}
		for j, f := range hs.Header {
			ff := fmt.Sprintf("%s.header[%d]", field, j)
			if !fields.ValidName(f.Name) {
				return perr(ff, "invalid name %q", f.Name)
			}
			if hs.Proto != HTTP1 && strings.ToLower(f.Name) != f.Name {
				return perr(ff, "%v name %q is not lower case", hs.Proto, f.Name)
			}
			if !fields.ValidValue(f.Value) {
				return perr(ff, "invalid value %q", f.Value)
			}
			if f.Value == "" && !containsFold(hs.PerRequest, f.Name) {
				return perr(ff, "empty value for %q that is not per-request", f.Name)
			}
			for _, o := range hs.Header[:j] {
				if fields.EqualFold(o.Name, f.Name) {
					return perr(ff, "duplicate field %q", f.Name)
				}
			}
		}
		// The name lists must name fields of Header, once each, in Header
		// order, so that the file form (a flag per field) round-trips.
		for _, l := range [...]struct {
			names []string
			what  string
		}{{hs.PerRequest, "per_request"}, {hs.UserActivation, "user_activation"}, {hs.NeedsBody, "needs_body"}} {
			k := 0
			for _, f := range hs.Header {
				if k < len(l.names) && l.names[k] == f.Name {
					k++
				}
			}
			if k != len(l.names) {
				return perr(field+"."+l.what, "%q are not fields of the set in its order", l.names)
			}
		}
	}
	return nil
}

func countOf(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}
