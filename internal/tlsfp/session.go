package tlsfp

import (
	"container/list"
	"crypto/x509"
	"sync"
	"time"

	utls "github.com/refraction-networking/utls"
	"golang.org/x/crypto/cryptobyte"
)

// DefaultSessionCacheSize is the number of sessions a SessionCache made by
// NewSessionCache keeps before evicting the least recently used.
const DefaultSessionCacheSize = 256

// SessionCache holds TLS session tickets so that later handshakes resume.
// An entry is keyed by the server name and by everything that decided how
// the first connection was verified and what it offered: the root pool's
// identity, the trust store, InsecureSkipVerify, the profile and the ALPN
// offer. A ticket is therefore never offered to a handshake whose settings
// differ from the one that received it (GO-2026-4337).
//
// A TLS 1.3 ticket is offered once and then dropped, as browsers do; a
// TLS 1.2 ticket is reused until replaced or evicted.
//
// Share one SessionCache only within one isolation scope (a Session or a
// Transport). A SessionCache is safe for concurrent use. Create it with
// NewSessionCache; the zero value is not usable.
type SessionCache struct {
	mu  sync.Mutex
	max int
	m   map[string]*list.Element
	lru list.List // of *cacheEntry, most recent first
	// rtts are the QUIC RTTs remembered per server (by the tickets'
	// key), which Chromium sends as initial_rtt; at most max.
	rtts map[string]time.Duration
}

type cacheEntry struct {
	key   string
	state *utls.ClientSessionState
	// parsed says that tls13, useBy and pskLen have been read from state
	// (by take, under the cache's lock).
	parsed bool
	tls13  bool
	useBy  time.Time // zero: unknown
	// pskLen is the size of the pre_shared_key extension offering this
	// TLS 1.3 ticket (one identity, one binder).
	pskLen int
	// early says a QUIC ticket allows 0-RTT (max_early_data_size
	// 0xffffffff, RFC 9001 §4.6.1).
	early bool
	// token is the last NEW_TOKEN token of the QUIC connection that
	// received this ticket (RFC 9000 §8.1.3), sent in the Initial of the
	// connection that uses the ticket, as Chromium keeps it: with the
	// session, used once.
	token []byte
	// params are the server's QUIC transport parameters on the
	// connection that received this ticket: a 0-RTT client takes its
	// limits from them (RFC 9000 §7.4.1).
	params []byte
	// roots keeps the pool the scope key names by address alive, so that
	// the address cannot be reused by another pool while the entry exists.
	roots *x509.CertPool
}

// NewSessionCache returns an empty cache holding up to
// DefaultSessionCacheSize sessions.
func NewSessionCache() *SessionCache {
	return &SessionCache{max: DefaultSessionCacheSize, m: make(map[string]*list.Element)}
}

// Len returns the number of sessions held.
func (c *SessionCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Len()
}

// take returns the session for key, or nil. A TLS 1.3 ticket is removed:
// like Chrome and Firefox, a ticket is offered once (RFC 8446 C.4), so
// that two connections cannot be linked by it; the resumed connection
// receives fresh ones. TLS 1.2 tickets stay for reuse.
func (c *SessionCache) take(key string, now time.Time) *cacheEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.m[key]
	if !ok {
		return nil
	}
	e := el.Value.(*cacheEntry)
	if !e.parsed {
		e.tls13, e.useBy, e.pskLen, e.early = sessionInfo(e.state)
		e.parsed = true
	}
	if e.tls13 || !e.useBy.IsZero() && !now.Before(e.useBy) {
		c.lru.Remove(el)
		delete(c.m, key)
		if !e.useBy.IsZero() && !now.Before(e.useBy) {
			return nil
		}
		return e
	}
	c.lru.MoveToFront(el)
	return e
}

func (c *SessionCache) put(e *cacheEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.m[e.key]; ok {
		c.lru.Remove(el)
		delete(c.m, e.key)
	}
	if e.state == nil {
		return
	}
	c.m[e.key] = c.lru.PushFront(e)
	for c.lru.Len() > c.max {
		last := c.lru.Back()
		c.lru.Remove(last)
		delete(c.m, last.Value.(*cacheEntry).key)
	}
}

// setRTT remembers a QUIC RTT for key.
func (c *SessionCache) setRTT(key string, d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.rtts == nil {
		c.rtts = make(map[string]time.Duration)
	}
	if _, ok := c.rtts[key]; !ok && len(c.rtts) >= c.max {
		clear(c.rtts) // bounded; an RTT is only a hint
	}
	c.rtts[key] = d
}

func (c *SessionCache) rtt(key string) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rtts[key]
}

// setToken gives the entry for key, if there is one, a NEW_TOKEN token.
func (c *SessionCache) setToken(key string, token []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.m[key]; ok {
		el.Value.(*cacheEntry).token = token
	}
}

// scopedCache is the utls.ClientSessionCache one handshake sees: reads
// return only the entry chosen before the hello was built (so the hello's
// shape and uTLS's resumption agree), writes go to the scope's key.
type scopedCache struct {
	c      *SessionCache
	scope  string
	roots  *x509.CertPool
	pinned *cacheEntry
	// token is the connection's last NEW_TOKEN token (QUIC), kept with
	// the tickets it stores, and params the server's transport
	// parameters.
	token, params []byte
}

// Get implements utls.ClientSessionCache.
func (s *scopedCache) Get(sessionKey string) (*utls.ClientSessionState, bool) {
	if s.pinned == nil || s.pinned.key != s.scope+sessionKey {
		return nil, false
	}
	return s.pinned.state, true
}

// Put implements utls.ClientSessionCache.
func (s *scopedCache) Put(sessionKey string, cs *utls.ClientSessionState) {
	// The ticket is read (sessionInfo) when it is taken, not here: Put
	// runs on the connection's reader, whose stack stays at what an idle
	// read needs only if nothing deep runs on it (a goroutine's stack
	// grows but shrinks back only by halves while little of it is used,
	// and an idle HTTP/2 connection is mostly its reader's stack).
	s.c.put(&cacheEntry{key: s.scope + sessionKey, state: cs, roots: s.roots, token: s.token, params: s.params})
}

// sessionInfo reads the version, for TLS 1.3 the use-by time, the size
// of the pre_shared_key extension that offers the ticket, and whether it
// allows QUIC 0-RTT, from a session's encoding (utls keeps them
// unexported). It runs once per ticket received, not per handshake.
func sessionInfo(cs *utls.ClientSessionState) (tls13 bool, useBy time.Time, pskLen int, early bool) {
	ticket, ss, err := cs.ResumptionState()
	if err != nil || ss == nil {
		return false, time.Time{}, 0, false
	}
	early = ss.EarlyData
	tls13, useBy, pskLen = sessionBytesInfo(ticket, ss)
	return tls13, useBy, pskLen, early
}

func sessionBytesInfo(ticket []byte, ss *utls.SessionState) (tls13 bool, useBy time.Time, pskLen int) {
	b, err := ss.Bytes()
	if err != nil {
		return false, time.Time{}, 0
	}
	s := cryptobyte.String(b)
	var vers, suite uint16
	var typ uint8
	var ignored cryptobyte.String
	var earlyData, ems uint8
	if !s.ReadUint16(&vers) || !s.ReadUint8(&typ) || !s.ReadUint16(&suite) {
		return false, time.Time{}, 0
	}
	if vers != utls.VersionTLS13 {
		return false, time.Time{}, 0
	}
	hashLen := 32
	if suite == utls.TLS_AES_256_GCM_SHA384 {
		hashLen = 48
	}
	// type, length; identities length; identity, obfuscated age; binders
	// length; binder.
	pskLen = 4 + 2 + 2 + len(ticket) + 4 + 2 + 1 + hashLen
	if !s.Skip(8) ||
		!s.ReadUint8LengthPrefixed(&ignored) || !s.ReadUint24LengthPrefixed(&ignored) ||
		!s.ReadUint8(&ems) || !s.ReadUint8(&earlyData) ||
		!s.ReadUint24LengthPrefixed(&ignored) || !s.ReadUint24LengthPrefixed(&ignored) {
		return true, time.Time{}, pskLen
	}
	if earlyData == 1 && !s.ReadUint8LengthPrefixed(&ignored) {
		return true, time.Time{}, pskLen
	}
	var use uint64
	if typ != 2 || !s.ReadUint64(&use) {
		return true, time.Time{}, pskLen
	}
	return true, time.Unix(int64(use), 0), pskLen
}
