package tlsfp

import (
	"errors"
	"fmt"
	"net"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/guise-http/guise/profile"
	utls "github.com/refraction-networking/utls"
)

// extension code points this file treats specially.
const (
	extServerName        = 0
	extPointFormats      = 11
	extPadding           = 21
	extEMS               = 23
	extSessionTicket     = 35
	extPSK               = 41
	extSupportedVersions = 43
	extALPS              = 17513
	extALPSNew           = 17613
	extECH               = 0xfe0d
	extRenegotiation     = 0xff01
)

// template is a recorded ClientHello parsed once: the uTLS spec it
// describes plus what must be redrawn per connection. It is never handed
// to uTLS itself (uTLS mutates extension values); build makes a fresh copy.
type template struct {
	spec    utls.ClientHelloSpec
	shuffle bool
	// fixedTail is how many last extensions the shuffle leaves in place
	// (a QUIC hello's, profile.QUIC.FixedTailExtensions).
	fixedTail int
	// resumed is the template for a connection that offers a ticket: from
	// the recorded resumed hello, or derived from this one.
	resumed *template
	ech     *echShape // nil: no ECH GREASE
	// tls13 reports whether the hello offers TLS 1.3 (and so a PSK).
	tls13 bool
	// reuseX25519: the X25519 share carries the X25519 half of the
	// X25519MLKEM768 share (Firefox), read off the recording.
	reuseX25519 bool
}

// echShape is the recorded GREASE ECH extension, minus its random parts.
type echShape struct {
	kdf         uint16
	aeads       []uint16
	encLen      int
	payloadLens []int // the profile's set; nil when the length grows
	// grows: the browser sizes the payload as NSS does (Firefox), like
	// the encrypted inner hello a real ECH offer would carry (see
	// nssInner): inner is that hello's length less its server_name and
	// pre_shared_key, which are sized per connection; pad31 says NSS
	// pads it to one byte short of a multiple of 32, as Firefox 153's
	// does, rather than to a multiple. Fitted to every Firefox 153
	// recording: 239 bytes without a PSK, 399 with a 152-byte PSK over
	// TCP, 431 with a 203-byte PSK and early_data over QUIC.
	grows bool
	inner int
	pad31 bool
	// x25519Enc: the browser fills the encapsulated key with a real X25519
	// public key (BoringSSL makes a key pair for its GREASE ECH), so its
	// top bit is always clear; NSS fills it with random bytes.
	x25519Enc bool
}

func roundUp(n, b int) int { return (n + b - 1) / b * b }

type templateKey struct {
	p    *profile.Profile
	alpn string
}

var templates sync.Map // templateKey → *templateResult

type templateResult struct {
	once sync.Once
	t    *template
	err  error
}

// compiled returns the template for p offering alpn (nil: the profile's
// own), compiling it on first use. Concurrent first calls compile once.
func compiled(p *profile.Profile, alpn []string) (*template, error) {
	key := templateKey{p: p, alpn: joinALPN(alpn)}
	v, ok := templates.Load(key)
	if !ok {
		v, _ = templates.LoadOrStore(key, new(templateResult))
	}
	r := v.(*templateResult)
	r.once.Do(func() { r.t, r.err = compile(p, alpn) })
	return r.t, r.err
}

func joinALPN(alpn []string) string {
	if alpn == nil {
		return "\x00profile"
	}
	n := 0
	for _, a := range alpn {
		n += len(a) + 1
	}
	b := make([]byte, 0, n)
	for _, a := range alpn {
		b = append(b, a...)
		b = append(b, 0)
	}
	return string(b)
}

// compileCount counts compilations, for the test that per-connection
// building does no profile parsing.
var compileCount int64
var compileMu sync.Mutex

func compile(p *profile.Profile, alpn []string) (*template, error) {
	compileMu.Lock()
	compileCount++
	compileMu.Unlock()
	if p == nil {
		return nil, errors.New("tlsfp: no profile")
	}
	// The full hello and, if recorded for the same offer, the resumed one.
	full, resumed, rewrite := p.TLS.Hello, p.TLS.HelloResumed, alpn
	if alpn != nil {
		resumed = nil // recorded with the profile's own offer
		if slices.Equal(alpn, []string{"http/1.1"}) && len(p.TLS.HelloHTTP1) > 0 {
			full, rewrite = p.TLS.HelloHTTP1, nil
		}
	}
	t, err := parseHello(p, full, false)
	if err != nil {
		return nil, err
	}
	if rewrite != nil {
		if err := t.setALPN(rewrite); err != nil {
			return nil, fmt.Errorf("tlsfp: profile %s: %w", p.Name, err)
		}
	}
	if !t.tls13 {
		return t, nil
	}
	if len(resumed) > 0 {
		r, err := parseHello(p, resumed, true)
		if err != nil {
			return nil, err
		}
		t.resumed = r
		return t, nil
	}
	t.resumed = t.deriveResumed(p.TLS.ResumeOmitsSessionTicket)
	return t, nil
}

func parseHello(p *profile.Profile, hello []byte, resumed bool) (*template, error) {
	f := utls.Fingerprinter{AllowBluntMimicry: true, RealPSKResumption: true}
	spec, err := f.FingerprintClientHello(hello)
	if err != nil {
		return nil, fmt.Errorf("tlsfp: profile %s: recorded hello: %w", p.Name, err)
	}
	if err := checkExtensions(hello); err != nil {
		return nil, fmt.Errorf("tlsfp: profile %s: recorded hello: %w", p.Name, err)
	}
	t := &template{spec: *spec, shuffle: p.TLS.ShuffleExtensions, reuseX25519: reusesX25519(hello)}
	hasPSK := false
	for i, e := range t.spec.Extensions {
		if _, ok := e.(utls.PreSharedKeyExtension); ok && i != len(t.spec.Extensions)-1 {
			return nil, fmt.Errorf("tlsfp: profile %s: recorded hello: pre_shared_key is not the last extension", p.Name)
		}
	}
	for _, e := range t.spec.Extensions {
		switch e := e.(type) {
		case *utls.SupportedVersionsExtension:
			t.tls13 = slices.Contains(e.Versions, utls.VersionTLS13)
		case *utls.GREASEEncryptedClientHelloExtension:
			shape, err := parseECH(hello, p.TLS.ECHPayloadLengths, p.TLS.ECHAEADs)
			if err != nil {
				return nil, fmt.Errorf("tlsfp: profile %s: %w", p.Name, err)
			}
			shape.x25519Enc = p.TLS.ECHX25519Key && shape.encLen == 32
			t.ech = shape
		case utls.PreSharedKeyExtension:
			if !resumed {
				return nil, fmt.Errorf("tlsfp: profile %s: the full-handshake hello carries a pre_shared_key", p.Name)
			}
			hasPSK = true
		}
	}
	if resumed && !hasPSK {
		return nil, fmt.Errorf("tlsfp: profile %s: the resumed hello has no pre_shared_key", p.Name)
	}
	return t, nil
}

// deriveResumed builds the resumed shape from a full hello: a
// pre_shared_key extension last (after Chrome's final GREASE), and without
// the session_ticket extension when omitTicket (the profile's
// TLS.ResumeOmitsSessionTicket: Firefox).
func (t *template) deriveResumed(omitTicket bool) *template {
	r := *t
	r.resumed = nil
	r.spec.Extensions = nil
	for _, e := range t.spec.Extensions {
		if _, ok := e.(*utls.SessionTicketExtension); ok && omitTicket {
			continue
		}
		r.spec.Extensions = append(r.spec.Extensions, e)
	}
	r.spec.Extensions = append(r.spec.Extensions, &utls.UtlsPreSharedKeyExtension{})
	if t.ech != nil {
		e := *t.ech
		r.ech = &e
	}
	return &r
}

// setALPN replaces the offered protocols. ALPS is dropped when the new
// offer no longer includes a protocol it carries settings for.
func (t *template) setALPN(alpn []string) error {
	exts := t.spec.Extensions[:0:0]
	found := false
	for _, e := range t.spec.Extensions {
		switch e := e.(type) {
		case *utls.ALPNExtension:
			exts = append(exts, &utls.ALPNExtension{AlpnProtocols: slices.Clone(alpn)})
			found = true
			continue
		case *utls.ApplicationSettingsExtensionNew:
			if !overlaps(e.SupportedProtocols, alpn) {
				continue
			}
		case *utls.ApplicationSettingsExtension:
			if !overlaps(e.SupportedProtocols, alpn) {
				continue
			}
		}
		exts = append(exts, e)
	}
	if !found {
		return errors.New("recorded hello has no alpn extension to set the offer in")
	}
	t.spec.Extensions = exts
	return nil
}

func overlaps(a, b []string) bool {
	for _, x := range a {
		if slices.Contains(b, x) {
			return true
		}
	}
	return false
}

// parseECH reads the recorded GREASE ECH extension's fixed parts.
func parseECH(record []byte, lens []int, aeads []uint16) (*echShape, error) {
	body, ok := findExtension(record, extECH)
	if !ok || len(body) < 1+4+1+2 || body[0] != 0 {
		return nil, errors.New("recorded ech extension is not an outer grease ech")
	}
	s := &echShape{kdf: uint16(body[1])<<8 | uint16(body[2]), aeads: aeads}
	if len(s.aeads) == 0 {
		s.aeads = []uint16{uint16(body[3])<<8 | uint16(body[4])}
	}
	rest := body[6:]
	s.encLen = int(rest[0])<<8 | int(rest[1])
	if len(rest) < 2+s.encLen+2 {
		return nil, errors.New("recorded ech extension is truncated")
	}
	rest = rest[2+s.encLen:]
	recorded := int(rest[0])<<8 | int(rest[1])
	if len(rest) != 2+recorded {
		return nil, errors.New("recorded ech payload length does not match")
	}
	s.payloadLens = lens
	if len(s.payloadLens) > 0 {
		return s, nil
	}
	// Without the profile's set of lengths: NSS's sizing if it gives the
	// recorded length, with either padding; else the recorded length.
	s.payloadLens = []int{recorded}
	if inner, name, psk, ok := nssInner(record); ok {
		for _, pad31 := range []bool{false, true} {
			n := &echShape{inner: inner, pad31: pad31}
			if n.nssPayload(name, name > 0, psk, 0) == recorded {
				s.grows, s.inner, s.pad31, s.payloadLens = true, inner, pad31, nil
				break
			}
		}
	}
	return s, nil
}

// NSS's GREASE ECH sizing (tls13_MaybeGreaseEch in lib/ssl/tls13ech.c):
// the payload is as long as the EncodedClientHelloInner a real offer
// would encrypt, built from the outer hello's extensions once all of
// them (pre_shared_key included) are written, padded and sealed.
const (
	// nssGreaseName is the server name length the inner hello is padded
	// to (Firefox's security.tls.ech.grease_size).
	nssGreaseName = 100
	// nssTag is the AEAD tag (AES-128-GCM and ChaCha20-Poly1305).
	nssTag = 16
)

// nssInner returns the length of the inner hello NSS would build from the
// ClientHello record, less its server_name and pre_shared_key extensions,
// and the host name and pre_shared_key lengths it holds (0 for none):
//   - legacy_version, random, an empty session id, the cipher suites and
//     compression methods, and the extensions' length;
//   - the inner ECH extension (4 bytes and its type byte);
//   - supported_versions, TLS 1.3 alone (and a GREASE version if the
//     outer offers one);
//   - the other extensions that exist in TLS 1.3 named by type in one
//     ech_outer_extensions extension (2 bytes each), those of TLS 1.2
//     alone (ec_point_formats, extended_master_secret, session_ticket,
//     renegotiation_info) left out, as are ECH and padding themselves.
func nssInner(record []byte) (inner, name, psk int, ok bool) {
	b := record[min(len(record), 5+4+2+32):]
	if len(b) < 1 || len(b) < 1+int(b[0])+2 {
		return 0, 0, 0, false
	}
	b = b[1+int(b[0]):]
	suites := int(b[0])<<8 | int(b[1])
	if len(b) < 2+suites+1 {
		return 0, 0, 0, false
	}
	comp := int(b[2+suites])
	inner = 2 + 32 + 1 + 2 + suites + 1 + comp + 2 + 4 + 1
	outer := 0
	for e := extensionBlock(record); len(e) >= 4; {
		typ := uint16(e[0])<<8 | uint16(e[1])
		n := int(e[2])<<8 | int(e[3])
		if len(e) < 4+n {
			return 0, 0, 0, false
		}
		body := e[4 : 4+n]
		e = e[4+n:]
		switch typ {
		case extECH, extPadding, extPointFormats, extEMS, extSessionTicket, extRenegotiation:
		case extServerName:
			if n < 5 {
				return 0, 0, 0, false
			}
			name = int(body[3])<<8 | int(body[4])
		case extPSK:
			psk = 4 + n
		case extSupportedVersions:
			inner += 4 + 1 + 2
			for v := body[min(1, n):]; len(v) >= 2; v = v[2:] {
				if isGREASE(uint16(v[0])<<8 | uint16(v[1])) {
					inner += 2
					break
				}
			}
		default:
			outer++
		}
	}
	if outer > 0 {
		inner += 4 + 1 + 2*outer
	}
	return inner, name, psk, true
}

// nssPayload is the payload length for a hello to a host of name bytes,
// which the hello names in server_name when sni, whose pre_shared_key
// extension has psk bytes (0: none), and which leaves out dropped of the
// extensions inner counts (2 bytes each in ech_outer_extensions).
func (s *echShape) nssPayload(name int, sni bool, psk, dropped int) int {
	n := s.inner - 2*dropped + psk + max(nssGreaseName-name, 0)
	if sni {
		n += 4 + 2 + 1 + 2 + name
	}
	if s.pad31 {
		return n/32*32 + 31 + nssTag
	}
	return roundUp(n, 32) + nssTag
}

// checkExtensions rejects what RFC 8446 4.2 forbids and uTLS would assert
// on: a repeated extension, or more than two GREASE extensions.
func checkExtensions(record []byte) error {
	var seen [16]uint16
	ids := seen[:0]
	grease := 0
	for b := extensionBlock(record); len(b) >= 4; {
		typ := uint16(b[0])<<8 | uint16(b[1])
		n := int(b[2])<<8 | int(b[3])
		if len(b) < 4+n {
			return errors.New("truncated extension")
		}
		b = b[4+n:]
		if isGREASE(typ) {
			if grease++; grease > 2 {
				return errors.New("more than two grease extensions")
			}
			continue
		}
		if slices.Contains(ids, typ) {
			return fmt.Errorf("extension %d appears twice", typ)
		}
		ids = append(ids, typ)
	}
	return nil
}

// findExtension returns the body of extension id in a ClientHello record
// that uTLS already parsed successfully.
func findExtension(record []byte, id uint16) ([]byte, bool) {
	for b := extensionBlock(record); len(b) >= 4; {
		typ := uint16(b[0])<<8 | uint16(b[1])
		n := int(b[2])<<8 | int(b[3])
		if len(b) < 4+n {
			return nil, false
		}
		if typ == id {
			return b[4 : 4+n], true
		}
		b = b[4+n:]
	}
	return nil, false
}

// extensionBlock returns the extensions of a ClientHello record, or nil if
// the record is too short to hold them.
func extensionBlock(record []byte) []byte {
	skip := func(b []byte, n int) []byte {
		if n < 0 || len(b) < n {
			return nil
		}
		return b[n:]
	}
	b := skip(record, 5+4+2+32)
	if len(b) < 1 {
		return nil
	}
	b = skip(b, 1+int(b[0])) // session id
	if len(b) < 2 {
		return nil
	}
	b = skip(b, 2+(int(b[0])<<8|int(b[1]))) // cipher suites
	if len(b) < 1 {
		return nil
	}
	b = skip(b, 1+int(b[0])) // compression methods
	if len(b) < 2 {
		return nil
	}
	return b[2:]
}

// build returns a fresh spec for one connection: every extension copied
// (uTLS mutates them), SNI set, GREASE values the uTLS preset leaves fixed
// redrawn, GREASE ECH redrawn, and the extensions shuffled when the
// browser does. It does no parsing.
//
// pskLen is the length of the pre_shared_key extension uTLS will write
// (0 for a full handshake); a browser whose GREASE ECH tracks the inner
// hello's size grows the ECH payload by it.
func (t *template) build(g *rng, serverName string, pskLen int, dropEarly bool) *utls.ClientHelloSpec {
	spec := &utls.ClientHelloSpec{
		CipherSuites:       t.spec.CipherSuites, // copied by ApplyPreset
		CompressionMethods: t.spec.CompressionMethods,
		TLSVersMin:         t.spec.TLSVersMin,
		TLSVersMax:         t.spec.TLSVersMax,
	}
	exts := make([]utls.TLSExtension, 0, len(t.spec.Extensions))
	ech, dropped := -1, 0
	for _, e := range t.spec.Extensions {
		switch e := e.(type) {
		case *utls.SNIExtension:
			exts = append(exts, &utls.SNIExtension{ServerName: serverName})
		case *utls.UtlsGREASEExtension:
			exts = append(exts, &utls.UtlsGREASEExtension{Value: e.Value, Body: e.Body})
		case *utls.SupportedCurvesExtension:
			exts = append(exts, &utls.SupportedCurvesExtension{Curves: slices.Clone(e.Curves)})
		case *utls.SupportedVersionsExtension:
			exts = append(exts, &utls.SupportedVersionsExtension{Versions: slices.Clone(e.Versions)})
		case *utls.KeyShareExtension:
			ks := make([]utls.KeyShare, len(e.KeyShares))
			for j, k := range e.KeyShares {
				ks[j] = utls.KeyShare{Group: k.Group}
				if isGREASE(uint16(k.Group)) {
					ks[j].Data = k.Data // the GREASE share's fixed body
				}
			}
			exts = append(exts, &utls.KeyShareExtension{KeyShares: ks})
		case *utls.SignatureAlgorithmsExtension:
			// uTLS replays a recorded GREASE signature algorithm as is;
			// Chrome draws it per connection like every other GREASE.
			algs := slices.Clone(e.SupportedSignatureAlgorithms)
			for j, a := range algs {
				if isGREASE(uint16(a)) {
					algs[j] = utls.SignatureScheme(g.grease())
				}
			}
			exts = append(exts, &utls.SignatureAlgorithmsExtension{SupportedSignatureAlgorithms: algs})
		case *utls.SessionTicketExtension:
			exts = append(exts, &utls.SessionTicketExtension{})
		case utls.PreSharedKeyExtension:
			exts = append(exts, &utls.UtlsPreSharedKeyExtension{})
		case *utls.GREASEEncryptedClientHelloExtension:
			ech = len(exts)
			exts = append(exts, nil) // drawn below, once its size is known
		case *utls.GenericExtension:
			if e.Id == extEarlyData && dropEarly {
				dropped++
				continue
			}
			exts = append(exts, shallowCopy(e))
		default:
			exts = append(exts, shallowCopy(e))
		}
	}
	if ech >= 0 {
		host, sni := sniHost(serverName)
		exts[ech] = t.ech.generic(g, host, sni, pskLen, dropped)
	}
	if t.shuffle {
		shuffle(exts[:len(exts)-t.fixedTail], g)
	}
	spec.Extensions = exts
	return spec
}

// sniHost returns the host name of serverName as it goes in server_name,
// and whether it does: uTLS leaves out an IP literal (RFC 6066 §3) and
// sends a name without its trailing dot.
func sniHost(serverName string) (string, bool) {
	h := strings.TrimSuffix(serverName, ".")
	if net.ParseIP(strings.Trim(h, "[]")) != nil {
		return h, false
	}
	return h, h != ""
}

// shallowCopy returns a new extension value equal to e. The extensions it
// is used for are only read by uTLS, so their slices may stay shared.
func shallowCopy(e utls.TLSExtension) utls.TLSExtension {
	v := reflect.ValueOf(e)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return e
	}
	c := reflect.New(v.Type().Elem())
	c.Elem().Set(v.Elem())
	return c.Interface().(utls.TLSExtension)
}

// shuffle permutes the extensions uniformly, as Chrome does per
// connection, keeping GREASE, padding and pre_shared_key where they are
// (Chrome's GREASE extensions stay first and last; uTLS requires the PSK
// last).
func shuffle(exts []utls.TLSExtension, g *rng) {
	var idx [64]int
	movable := idx[:0]
	for i, e := range exts {
		switch e.(type) {
		case *utls.UtlsGREASEExtension, *utls.UtlsPaddingExtension, utls.PreSharedKeyExtension:
			continue
		}
		movable = append(movable, i)
	}
	for i := len(movable) - 1; i > 0; i-- {
		j := g.intn(i + 1)
		exts[movable[i]], exts[movable[j]] = exts[movable[j]], exts[movable[i]]
	}
}

// generic draws one GREASE ECH extension (RFC 9849 6.2): an outer ECH with
// the recorded KDF, an AEAD from the profile's set, a random config id, a random encapsulated key
// of the recorded length and a random payload of a length the browser
// uses. It is a generic extension so that every byte comes from the
// Config's randomness (uTLS's own GREASE ECH reads crypto/rand directly).
//
// A payload that grows (NSS's) is sized for host, named in server_name
// when sni, with a pre_shared_key of pskLen bytes, and the template's
// extensions but dropped of them (each one 2 bytes fewer in
// ech_outer_extensions).
func (s *echShape) generic(g *rng, host string, sni bool, pskLen, dropped int) *utls.GenericExtension {
	var n int
	switch {
	case s.grows:
		n = s.nssPayload(len(host), sni, pskLen, dropped)
	case len(s.payloadLens) == 1:
		n = s.payloadLens[0]
	default:
		n = s.payloadLens[g.intn(len(s.payloadLens))]
	}
	aead := s.aeads[0]
	if len(s.aeads) > 1 {
		aead = s.aeads[g.intn(len(s.aeads))]
	}
	b := make([]byte, 1+4+1+2+s.encLen+2+n)
	b[0] = 0 // outer
	b[1], b[2], b[3], b[4] = byte(s.kdf>>8), byte(s.kdf), byte(aead>>8), byte(aead)
	g.read(b[5:6]) // config id
	b[6], b[7] = byte(s.encLen>>8), byte(s.encLen)
	g.read(b[8 : 8+s.encLen])
	if s.x25519Enc {
		b[8+s.encLen-1] &= 0x7f // an X25519 public key is below 2^255 (little-endian)
	}
	p := b[8+s.encLen:]
	p[0], p[1] = byte(n>>8), byte(n)
	g.read(p[2:])
	return &utls.GenericExtension{Id: extECH, Data: b}
}
