// Package tlsfp performs TLS handshakes that look like a browser's. It is
// the only package in guise that imports uTLS.
//
// A profile's recorded ClientHello is parsed into a uTLS spec once per
// profile and ALPN offer and cached. Per connection only what a browser
// draws fresh is drawn again, from Config.Rand: the client random, session
// id and key shares, each GREASE value (chosen independently per field),
// the GREASE ECH extension's config id, key and payload (its length from
// the profile's set), and, for Chrome, the order of the extensions.
// Certificates are verified against Config.RootCAs or a cached trust store;
// every handshake goes through a process-wide cache of the chains that
// verified (see verifyCache), which holds no identity state; a resumed
// one too, with the chain its session was made with.
// Session tickets are kept only in a SessionCache the caller provides.
package tlsfp

import (
	"context"
	"crypto/rand"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"time"

	"github.com/guise-http/guise/profile"
	utls "github.com/refraction-networking/utls"
)

// Config configures Handshake. A Config may be shared by concurrent
// handshakes (Rand must then be safe for concurrent use) and must not be
// modified while one runs.
type Config struct {
	// Profile is the browser whose ClientHello is sent. Required. Its
	// compiled form is cached per *Profile for the life of the process:
	// reuse the pointer (profile.Lookup does) rather than re-parsing.
	Profile *profile.Profile
	// ALPN is the protocol offer. Nil means the profile's own recorded
	// offer (h2 and http/1.1). []string{"http/1.1"} uses the profile's
	// recorded HTTP/1.1-only hello when there is one, and otherwise the
	// recorded hello with the ALPN list replaced (and ALPS dropped, as it
	// only carries h2 settings).
	ALPN []string
	// RootCAs verifies the server's certificate. Nil means the pool of
	// TrustStore.
	RootCAs *x509.CertPool
	// TrustStore picks the roots when RootCAs is nil. The zero value is
	// Mozilla (embedded).
	TrustStore TrustStore
	// InsecureSkipVerify turns certificate verification off.
	InsecureSkipVerify bool
	// Sessions keeps session tickets for resumption. Nil means never
	// resume and store nothing: an isolated visit sends no ticket and no
	// pre_shared_key.
	Sessions *SessionCache
	// TicketsOfDefaultALPN takes and keeps tickets with those of the
	// profile's own offer whatever ALPN offers: the connection of a
	// WebSocket, offering http/1.1 alone, resumes the page's session, as
	// Chromium's does. By default tickets stay with the offer they came
	// from.
	TicketsOfDefaultALPN bool
	// Rand is the source of every random choice in the handshake. Nil
	// means crypto/rand. Tests inject a deterministic reader (together
	// with testing/cryptotest.SetGlobalRandom, since Go's ECDH key
	// generation ignores this reader).
	Rand io.Reader
}

// Clone returns a shallow copy of c: the profile, pools, cache and reader
// are shared, the ALPN slice is copied.
func (c *Config) Clone() *Config {
	if c == nil {
		return nil
	}
	d := *c
	d.ALPN = slices.Clone(c.ALPN)
	return &d
}

// CurveID is a TLS named group.
type CurveID uint16

// Named groups browsers offer.
const (
	X25519         CurveID = 0x001d
	P256           CurveID = 0x0017
	P384           CurveID = 0x0018
	X25519MLKEM768 CurveID = 0x11ec
)

// String returns the group's IANA name, or its number.
func (c CurveID) String() string {
	switch c {
	case X25519:
		return "x25519"
	case P256:
		return "secp256r1"
	case P384:
		return "secp384r1"
	case X25519MLKEM768:
		return "X25519MLKEM768"
	}
	return "CurveID(" + strconv.Itoa(int(c)) + ")"
}

// State describes a completed handshake.
type State struct {
	// Version is the TLS version (0x0304 for TLS 1.3).
	Version uint16
	// CipherSuite is the negotiated cipher suite.
	CipherSuite uint16
	// ALPN is the negotiated application protocol, "" if none.
	ALPN string
	// Resumed reports whether the session was resumed from a ticket.
	Resumed bool
	// Group is the key exchange group of a TLS 1.3 handshake, 0 for TLS
	// 1.2.
	Group CurveID
	// PeerCertificates is the server's chain as sent, leaf first.
	PeerCertificates []*x509.Certificate
}

// Handshake runs a TLS client handshake over nc as cfg.Profile's browser
// would, for serverName (sent as SNI unless it is an IP address, and
// verified against the certificate unless InsecureSkipVerify). ctx bounds
// the handshake; once it returns, ctx no longer matters.
//
// On success the returned conn (a *Conn) owns nc. On failure nc is
// closed and the error is a *HandshakeError (see it for the causes callers
// can test with errors.Is and errors.As), or a configuration error before
// anything was sent.
func Handshake(ctx context.Context, nc net.Conn, serverName string, cfg *Config) (net.Conn, State, error) {
	uc, hc, err := newConn(nc, serverName, cfg)
	if err != nil {
		nc.Close()
		return nil, State{}, err
	}
	err = runHandshake(ctx, uc, nc)
	// After a failure, send the alert the handshake ended with; after a
	// success its last flight waits for the first request's records.
	if ferr := hc.done(err == nil); err == nil {
		err = ferr
	}
	if err != nil {
		nc.Close()
		return nil, State{}, classify(ctx, err, serverName)
	}
	cs := uc.ConnectionState()
	st := State{
		Version:          cs.Version,
		CipherSuite:      cs.CipherSuite,
		ALPN:             cs.NegotiatedProtocol,
		Resumed:          cs.DidResume,
		PeerCertificates: cs.PeerCertificates,
	}
	if cs.Version == utls.VersionTLS13 && uc.HandshakeState.ServerHello != nil {
		st.Group = CurveID(uc.HandshakeState.ServerHello.ServerShare.Group)
	}
	if st.ALPN != "" && !slices.Contains(uc.HandshakeState.Hello.AlpnProtocols, st.ALPN) {
		uc.Close()
		return nil, State{}, &HandshakeError{ServerName: serverName, Err: ErrALPN}
	}
	if cs.Version == utls.VersionTLS13 {
		release(uc)
	}
	return &Conn{UConn: uc, raw: hc}, st, nil
}

// release drops what uTLS keeps of a finished TLS 1.3 handshake and never
// reads again: the hello (its encoding, key shares and extensions), the
// server's hello, the key shares' private keys (an ML-KEM-768 decapsulation
// key alone is 8 KiB), the transcript and the handshake's secrets. Only a
// renegotiation would read them again, and TLS 1.3 has none; tickets and
// key updates use the connection's own state. An idle connection holds
// about 13 KiB less.
func release(uc *utls.UConn) {
	hs := &uc.HandshakeState
	hs.Hello, hs.ServerHello, hs.MasterSecret, hs.Session = nil, nil, nil, nil
	hs.State12 = utls.TLS12OnlyState{}
	hs.State13 = utls.TLS13OnlyState{}
	uc.Extensions = nil
}

// runHandshake runs uc's handshake over nc, bounded by ctx. uTLS given a
// context that can end starts a goroutine per handshake to watch it, and
// waits for that goroutine at the end (two goroutine switches, and often an
// idle thread woken, per connection); a context.AfterFunc does the same
// job, closing nc when ctx ends, and costs nothing unless it fires.
func runHandshake(ctx context.Context, uc *utls.UConn, nc net.Conn) error {
	if ctx.Done() == nil {
		return uc.HandshakeContext(ctx)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { nc.Close() })
	err := uc.HandshakeContext(context.Background())
	if !stop() && err == nil {
		// ctx ended just as the handshake completed: nc is being closed.
		err = ctx.Err()
	}
	return err
}

// newConn prepares a uTLS client with this connection's hello applied,
// running over a handshakeConn around nc.
func newConn(nc net.Conn, serverName string, cfg *Config) (*utls.UConn, *handshakeConn, error) {
	if cfg == nil || cfg.Profile == nil {
		return nil, nil, errors.New("tlsfp: config has no profile")
	}
	t, err := compiled(cfg.Profile, cfg.ALPN)
	if err != nil {
		return nil, nil, err
	}
	roots := cfg.RootCAs
	if roots == nil && !cfg.InsecureSkipVerify {
		if roots, err = TrustPool(cfg.TrustStore); err != nil {
			return nil, nil, err
		}
	}
	r := cfg.Rand
	if r == nil {
		r = rand.Reader
	}
	ucfg := &utls.Config{
		ServerName:         serverName,
		RootCAs:            roots,
		InsecureSkipVerify: cfg.InsecureSkipVerify,
		Rand:               r,
		MinVersion:         utls.VersionTLS12,
		// The hello's shape is decided below from the pinned session, so
		// uTLS must neither fail on an empty PSK nor insist on one.
		OmitEmptyPsk:                       true,
		PreferSkipResumptionOnNilExtension: true,
	}
	tpl, pskLen := t, 0
	if cfg.Sessions != nil {
		sc := &scopedCache{c: cfg.Sessions, scope: scopeKey(cfg, roots), roots: roots}
		if e := cfg.Sessions.take(sc.scope+serverName, time.Now()); e != nil {
			sc.pinned = e
			if e.tls13 && t.resumed != nil {
				tpl, pskLen = t.resumed, e.pskLen
			}
		}
		ucfg.ClientSessionCache = sc
	}
	if !cfg.InsecureSkipVerify {
		// The chain is verified through the process's cache (see
		// verifyCache) instead of by uTLS. uTLS skips only its chain check
		// then; it still parses the chain and checks the server's
		// signature. uTLS calls VerifyConnection on resumed handshakes
		// too, with the certificates the session was made with, so a
		// resumption is verified (and its name checked) the same way; the
		// sessions uTLS stores then carry no verified chains, which it
		// requires only when it verifies itself.
		ucfg.InsecureSkipVerify = true
		ucfg.VerifyConnection = verified.verifyWith(serverName, roots, time.Now)
	}
	return applyTemplate(nc, ucfg, tpl, pskLen, cfg.Profile.Name)
}

// applyTemplate builds this connection's hello from tpl, with its key
// shares, and applies it to a new uTLS client over a handshakeConn.
func applyTemplate(nc net.Conn, ucfg *utls.Config, tpl *template, pskLen int, name string) (*utls.UConn, *handshakeConn, error) {
	g := newRNG(ucfg.Rand)
	spec := tpl.build(g, ucfg.ServerName, pskLen, false)
	if g.err != nil {
		return nil, nil, g.err
	}
	var keys *keySet
	if ks := keyShareExtension(spec); ks != nil {
		var err error
		if keys, err = newKeySet(shareGroups(ks), ucfg.Rand, tpl.reuseX25519); err != nil {
			return nil, nil, fmt.Errorf("tlsfp: profile %s: %w", name, err)
		}
		keys.fill(ks)
	}
	hc := newHandshakeConn(nc)
	uc := utls.UClient(hc, ucfg, utls.HelloCustom)
	if err := uc.ApplyPreset(spec); err != nil {
		return nil, nil, fmt.Errorf("tlsfp: profile %s: applying the hello: %w", name, err)
	}
	if keys != nil {
		uc.HandshakeState.State13.KeyShareKeys = keys.public()
		// uTLS takes one classic key, and X25519 keys are made in
		// crypto/ecdh's form only when picked: hand uTLS the key of the
		// group the server picks.
		hc.watchHello(func(group uint16) {
			keys.picked(uc.HandshakeState.State13.KeyShareKeys, utls.CurveID(group))
		})
	}
	return uc, hc, nil
}

// keyShareExtension returns spec's key_share extension, or nil.
func keyShareExtension(spec *utls.ClientHelloSpec) *utls.KeyShareExtension {
	for _, e := range spec.Extensions {
		if ks, ok := e.(*utls.KeyShareExtension); ok {
			return ks
		}
	}
	return nil
}

// scopeKey names everything a ticket's validity depends on besides the
// server name. The roots pool is named by address; cache entries keep the
// pool alive so the address stays unique.
func scopeKey(cfg *Config, roots *x509.CertPool) string {
	alpn := cfg.ALPN
	if cfg.TicketsOfDefaultALPN {
		alpn = nil
	}
	return fmt.Sprintf("%s|%p|%p|%d|%t|%q|", cfg.Profile.Name, cfg.Profile, roots, cfg.TrustStore, cfg.InsecureSkipVerify, alpn)
}
