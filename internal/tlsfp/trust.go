package tlsfp

import (
	"crypto/x509"
	"fmt"
	"sync"
	"sync/atomic"

	"golang.org/x/crypto/x509roots/fallback/bundle"
)

// TrustStore selects the root certificates a handshake verifies against
// when Config.RootCAs is nil. The zero value is Mozilla.
type TrustStore uint8

// Trust stores.
const (
	// Mozilla is the Mozilla root program's set, embedded in the binary
	// (golang.org/x/crypto/x509roots/fallback): the same everywhere,
	// independent of the host.
	Mozilla TrustStore = iota
	// System is the host's root store (x509.SystemCertPool).
	System
	// Both is the union of System and Mozilla.
	Both
	trustStoreCount
)

var trustNames = [...]string{Mozilla: "mozilla", System: "system", Both: "both"}

// String returns "mozilla", "system" or "both".
func (t TrustStore) String() string {
	if t < trustStoreCount {
		return trustNames[t]
	}
	return fmt.Sprintf("TrustStore(%d)", uint8(t))
}

type trustEntry struct {
	once sync.Once
	pool *x509.CertPool
	err  error
}

// trustCache builds each store's pool once. builds counts constructions,
// for the test that concurrent cold callers build once.
type trustCache struct {
	entries [trustStoreCount]trustEntry
	builds  atomic.Int32
}

func (c *trustCache) pool(ts TrustStore) (*x509.CertPool, error) {
	if ts >= trustStoreCount {
		return nil, fmt.Errorf("tlsfp: unknown trust store %d", uint8(ts))
	}
	e := &c.entries[ts]
	e.once.Do(func() {
		c.builds.Add(1)
		e.pool, e.err = buildPool(ts)
	})
	return e.pool, e.err
}

var trustPools trustCache

// TrustPool returns the root pool of ts. Each pool is built once per
// process, on first use, and shared: callers must not modify it.
// Concurrent first calls build it once. It is safe for concurrent use.
func TrustPool(ts TrustStore) (*x509.CertPool, error) { return trustPools.pool(ts) }

func buildPool(ts TrustStore) (*x509.CertPool, error) {
	var p *x509.CertPool
	switch ts {
	case Mozilla:
		p = x509.NewCertPool()
	case System, Both:
		sys, err := x509.SystemCertPool()
		if err != nil {
			return nil, fmt.Errorf("tlsfp: loading the system trust store: %w", err)
		}
		if ts == System {
			return sys, nil
		}
		p = sys
	}
	for r := range bundle.Roots() {
		c, err := x509.ParseCertificate(r.Certificate)
		if err != nil {
			return nil, fmt.Errorf("tlsfp: parsing an embedded mozilla root: %w", err)
		}
		if r.Constraint == nil {
			p.AddCert(c)
		} else {
			p.AddCertWithConstraint(c, r.Constraint)
		}
	}
	return p, nil
}
