package tlsfp

import (
	"container/list"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"testing"
	"time"

	"github.com/guise-http/guise/internal/testpeer"
	utls "github.com/refraction-networking/utls"
)

func newVerifyCache() *verifyCache { return &verifyCache{m: make(map[verifyKey]*list.Element)} }

// TestVerifyCache: a chain that verified for a name and a root pool is not
// verified again for them within the TTL and the chain's validity; another
// name, another pool, a later time or an expired certificate are verified
// (and fail) afresh; failures are not kept.
func TestVerifyCache(t *testing.T) {
	cert := testCerts(t)
	chain := testChain(t)
	cs := utls.ConnectionState{PeerCertificates: chain}
	now := time.Now()
	at := func(d time.Duration) func() time.Time { return func() time.Time { return now.Add(d) } }
	vc := newVerifyCache()

	verify := func(name string, roots *x509.CertPool, when func() time.Time) (misses int64, err error) {
		before := vc.verifications.Load()
		err = vc.verifyWith(name, roots, when)(cs)
		return vc.verifications.Load() - before, err
	}
	if n, err := verify("fp.test", cert.Roots, at(0)); err != nil || n != 1 {
		t.Fatalf("first: %d verifications, %v; want 1, nil", n, err)
	}
	if n, err := verify("fp.test", cert.Roots, at(time.Minute)); err != nil || n != 0 {
		t.Errorf("again: %d verifications, %v; want a hit", n, err)
	}
	var hn x509.HostnameError
	if n, err := verify("other.test", cert.Roots, at(0)); !errors.As(err, &hn) || n != 1 {
		t.Errorf("other name: %d verifications, %v; want x509.HostnameError", n, err)
	}
	var cve *utls.CertificateVerificationError
	if _, err := verify("other.test", cert.Roots, at(0)); !errors.As(err, &cve) || len(cve.UnverifiedCertificates) != len(chain) {
		t.Errorf("other name again: %v; want a *utls.CertificateVerificationError with the chain (failures are not kept)", err)
	}
	other, err := testpeer.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	var ua x509.UnknownAuthorityError
	if n, err := verify("fp.test", other.Roots, at(0)); !errors.As(err, &ua) || n != 1 {
		t.Errorf("other roots: %d verifications, %v; want x509.UnknownAuthorityError", n, err)
	}
	if n, err := verify("fp.test", cert.Roots, at(verifyCacheTTL+time.Second)); err != nil || n != 1 {
		t.Errorf("past the TTL: %d verifications, %v; want 1, nil", n, err)
	}
	expired := cert.Leaf.NotAfter.Sub(now) + time.Hour
	var ci x509.CertificateInvalidError
	if n, err := verify("fp.test", cert.Roots, at(expired)); !errors.As(err, &ci) || n != 1 {
		t.Errorf("after the leaf's NotAfter: %d verifications, %v; want x509.CertificateInvalidError", n, err)
	}
	if vc.len() != 0 {
		// The expired lookup dropped the entry; nothing failed was added.
		t.Errorf("%d entries left, want 0", vc.len())
	}

	// Bounded: the oldest results go first.
	key := func(i int) verifyKey { return verifyKey{chain: [32]byte{byte(i), byte(i >> 8)}} }
	for i := range verifyCacheSize + 10 {
		vc.add(key(i), chain, now)
	}
	if n := vc.len(); n != verifyCacheSize {
		t.Errorf("%d entries, want %d", n, verifyCacheSize)
	}
	if vc.check(key(0), now) || !vc.check(key(verifyCacheSize+9), now) {
		t.Error("eviction did not drop the oldest entry first")
	}
}

// TestIsolatedHandshakesShareVerification: handshakes without a
// SessionCache verify a chain once for the process, and the wrong name
// still fails after the right one was cached. A handshake keeping tickets
// goes through the same cache: its full handshake verifies nothing anew
// once the chain is known, its ticket still resumes, and the resumption is
// verified too (uTLS calls VerifyConnection with the session's chain): with
// the entry gone, the resumed handshake verifies the chain once.
func TestIsolatedHandshakesShareVerification(t *testing.T) {
	s := newServer(t, nil)
	p := lookup(t, "chrome")
	roots := testCerts(t).Roots
	before := verified.verifications.Load()
	for i := range 3 {
		if _, _, err := dial(t, s, "fp.test", &Config{Profile: p, RootCAs: roots}); err != nil {
			t.Fatalf("isolated handshake %d: %v", i, err)
		}
	}
	if n := verified.verifications.Load() - before; n > 1 {
		t.Errorf("3 isolated handshakes verified the chain %d times, want at most 1", n)
	}
	key := keyOf(testChain(t), "fp.test", roots)
	if !verified.check(key, time.Now()) {
		t.Error("the isolated handshakes' chain is not in the shared cache")
	}
	var hn x509.HostnameError
	if _, _, err := dial(t, s, "other.test", &Config{Profile: p, RootCAs: roots}); !errors.As(err, &hn) {
		t.Errorf("wrong name after a cached success: %v; want x509.HostnameError", err)
	}

	for _, version := range []uint16{tls.VersionTLS13, tls.VersionTLS12} {
		s := newServer(t, &tls.Config{MaxVersion: version})
		cfg := &Config{Profile: p, RootCAs: roots, Sessions: NewSessionCache()}
		before = verified.verifications.Load()
		if st, _, err := dial(t, s, "fp.test", cfg); err != nil || st.Resumed {
			t.Fatalf("%x: first handshake with tickets: %v, resumed %v", version, err, st.Resumed)
		}
		if n := verified.verifications.Load() - before; n != 0 {
			t.Errorf("%x: a handshake keeping tickets verified a cached chain again (%d verifications)", version, n)
		}
		if cfg.Sessions.Len() == 0 {
			t.Fatalf("%x: no ticket stored", version)
		}
		verified.forget(key)
		before = verified.verifications.Load()
		if st, _, err := dial(t, s, "fp.test", cfg); err != nil || !st.Resumed {
			t.Fatalf("%x: second handshake with tickets: %v, resumed %v", version, err, st.Resumed)
		}
		if n := verified.verifications.Load() - before; n != 1 {
			t.Errorf("%x: the resumed handshake verified the chain %d times, want 1", version, n)
		}
	}
}

// testChain is testCerts' chain as the server sends it, parsed.
func testChain(t *testing.T) []*x509.Certificate {
	var chain []*x509.Certificate
	for _, der := range testCerts(t).Chain {
		c, err := x509.ParseCertificate(der)
		if err != nil {
			t.Fatal(err)
		}
		chain = append(chain, c)
	}
	return chain
}
