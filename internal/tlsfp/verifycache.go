package tlsfp

import (
	"container/list"
	"crypto/sha256"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	utls "github.com/refraction-networking/utls"
)

// verifyCacheSize and verifyCacheTTL bound the verification cache as
// Chrome bounds its CachingCertVerifier: 256 results, each kept 30
// minutes at most.
const (
	verifyCacheSize = 256
	verifyCacheTTL  = 30 * time.Minute
)

// verifyCache remembers the certificate chains that verified, keyed by the
// chain as the server sent it, the name it was verified for and the root
// pool, as Chrome's certificate verifier caches its results. A hit skips
// the chain's signature checks (two ECDSA or RSA verifications for a
// typical chain, the largest part of a handshake's verification); the
// handshake's own signature (CertificateVerify), which proves the server
// holds the key, is checked by uTLS on every handshake as before.
//
// The cache holds no identity state: a result says only that public
// certificates chain to a root for a name, nothing a server gave one
// visit that it could recognise in another. So every verified handshake,
// isolated or keeping tickets in a Session's cache, shares one cache
// process-wide. An entry is used until verifyCacheTTL after it was made and
// never outside the validity of every certificate of its chain; only
// successes are kept, so a failure is verified, and reported, afresh.
// A verifyCache is safe for concurrent use.
type verifyCache struct {
	// verifications counts the chains verified in full (the misses).
	verifications atomic.Int64

	mu  sync.Mutex
	m   map[verifyKey]*list.Element
	lru list.List // of *verifyEntry, most recent first
}

// verifyKey names a verification: a hash of every certificate of the
// chain as sent, in order, and of the name; and the root pool. The pointer
// keeps the pool alive while the entry exists, so that its address cannot
// name another pool.
type verifyKey struct {
	chain [sha256.Size]byte
	roots *x509.CertPool
}

type verifyEntry struct {
	key       verifyKey
	until     time.Time // verifyCacheTTL after the verification
	notBefore time.Time // the latest NotBefore of the chain
	notAfter  time.Time // the earliest NotAfter of the chain
}

// verified is the process's cache, shared by every verified handshake.
var verified = &verifyCache{m: make(map[verifyKey]*list.Element)}

// keyOf returns the key of verifying certs for name against roots.
func keyOf(certs []*x509.Certificate, name string, roots *x509.CertPool) verifyKey {
	h := sha256.New()
	var n [8]byte
	for _, c := range certs {
		binary.BigEndian.PutUint64(n[:], uint64(len(c.Raw)))
		h.Write(n[:])
		h.Write(c.Raw)
	}
	binary.BigEndian.PutUint64(n[:], uint64(len(name)))
	h.Write(n[:])
	h.Write([]byte(name))
	k := verifyKey{roots: roots}
	h.Sum(k.chain[:0])
	return k
}

// check reports whether the chain is known to verify for name against
// roots at now.
func (vc *verifyCache) check(key verifyKey, now time.Time) bool {
	vc.mu.Lock()
	defer vc.mu.Unlock()
	el, ok := vc.m[key]
	if !ok {
		return false
	}
	e := el.Value.(*verifyEntry)
	if !now.Before(e.until) || now.Before(e.notBefore) || now.After(e.notAfter) {
		vc.lru.Remove(el)
		delete(vc.m, key)
		return false
	}
	vc.lru.MoveToFront(el)
	return true
}

// add records that key's chain verified at now, chain being the verified
// chain (leaf to root) whose validity bounds the entry.
func (vc *verifyCache) add(key verifyKey, chain []*x509.Certificate, now time.Time) {
	e := &verifyEntry{key: key, until: now.Add(verifyCacheTTL)}
	for i, c := range chain {
		if i == 0 || c.NotBefore.After(e.notBefore) {
			e.notBefore = c.NotBefore
		}
		if i == 0 || c.NotAfter.Before(e.notAfter) {
			e.notAfter = c.NotAfter
		}
	}
	vc.mu.Lock()
	defer vc.mu.Unlock()
	if el, ok := vc.m[key]; ok {
		vc.lru.Remove(el)
	}
	vc.m[key] = vc.lru.PushFront(e)
	for vc.lru.Len() > verifyCacheSize {
		last := vc.lru.Back()
		vc.lru.Remove(last)
		delete(vc.m, last.Value.(*verifyEntry).key)
	}
}

// forget drops key's result, if any (for tests).
func (vc *verifyCache) forget(key verifyKey) {
	vc.mu.Lock()
	defer vc.mu.Unlock()
	if el, ok := vc.m[key]; ok {
		vc.lru.Remove(el)
		delete(vc.m, key)
	}
}

// len returns the number of results held.
func (vc *verifyCache) len() int {
	vc.mu.Lock()
	defer vc.mu.Unlock()
	return vc.lru.Len()
}

// verifyWith returns a utls VerifyConnection that verifies the server's
// chain for name against roots as uTLS itself does (x509 Verify with the
// chain's other certificates as intermediates, server authentication),
// through vc. A failure is a *utls.CertificateVerificationError, as from
// uTLS's own verification, and uTLS answers it with the same
// bad_certificate alert.
func (vc *verifyCache) verifyWith(name string, roots *x509.CertPool, now func() time.Time) func(utls.ConnectionState) error {
	return func(cs utls.ConnectionState) error {
		certs := cs.PeerCertificates
		if len(certs) == 0 {
			// uTLS refuses an empty Certificate message before this.
			return &utls.CertificateVerificationError{Err: errors.New("tlsfp: the server sent no certificate")}
		}
		t := now()
		key := keyOf(certs, name, roots)
		if vc.check(key, t) {
			return nil
		}
		opts := x509.VerifyOptions{
			Roots:         roots,
			CurrentTime:   t,
			DNSName:       name,
			Intermediates: x509.NewCertPool(),
		}
		for _, c := range certs[1:] {
			opts.Intermediates.AddCert(c)
		}
		vc.verifications.Add(1)
		chains, err := certs[0].Verify(opts)
		if err != nil {
			return &utls.CertificateVerificationError{UnverifiedCertificates: certs, Err: err}
		}
		vc.add(key, chains[0], t)
		return nil
	}
}
