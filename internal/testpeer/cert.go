package testpeer

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// CA is an in-memory certificate authority for tests: a root and an
// intermediate it signed, which issues the leaves. Trust it with Roots. A CA
// is safe for concurrent use.
type CA struct {
	// Roots holds the root certificate only.
	Roots *x509.CertPool
	// PEM is the root certificate, PEM-encoded, for clients configured by
	// file.
	PEM []byte

	mid    *x509.Certificate
	midDER []byte
	midKey *ecdsa.PrivateKey
	serial atomic.Int64
}

// Cert is a server certificate chain issued by a CA, with the leaf's key. A
// Cert is immutable once made and may be shared between tests.
type Cert struct {
	// Chain is what a server sends, DER: the leaf, then the intermediate
	// (the root is not sent).
	Chain [][]byte
	// Key is the leaf's ECDSA P-256 key.
	Key *ecdsa.PrivateKey
	// Leaf is Chain[0], parsed.
	Leaf *x509.Certificate
	// Roots trusts the issuing CA's root, and nothing else.
	Roots *x509.CertPool
	// CAPEM is the issuing CA's root, PEM-encoded.
	CAPEM []byte
}

// NewCA makes a CA with fresh P-256 keys, valid from an hour ago for a day.
// Tests that need a CA other than the shared one (to see a chain refused)
// make one with NewCA.
func NewCA() (*CA, error) {
	now := time.Now()
	tmpl := func(serial int64, cn string) *x509.Certificate {
		return &x509.Certificate{
			SerialNumber:          big.NewInt(serial),
			Subject:               pkix.Name{CommonName: cn, Organization: []string{"guise tests"}},
			NotBefore:             now.Add(-time.Hour),
			NotAfter:              now.Add(24 * time.Hour),
			KeyUsage:              x509.KeyUsageCertSign,
			BasicConstraintsValid: true,
			IsCA:                  true,
		}
	}
	rootKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	rootTmpl := tmpl(1, "guise test root")
	rootDER, err := x509.CreateCertificate(rand.Reader, rootTmpl, rootTmpl, &rootKey.PublicKey, rootKey)
	if err != nil {
		return nil, err
	}
	root, err := x509.ParseCertificate(rootDER)
	if err != nil {
		return nil, err
	}
	midKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	midDER, err := x509.CreateCertificate(rand.Reader, tmpl(2, "guise test intermediate"), root, &midKey.PublicKey, rootKey)
	if err != nil {
		return nil, err
	}
	mid, err := x509.ParseCertificate(midDER)
	if err != nil {
		return nil, err
	}
	ca := &CA{
		Roots:  x509.NewCertPool(),
		PEM:    pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: rootDER}),
		mid:    mid,
		midDER: midDER,
		midKey: midKey,
	}
	ca.Roots.AddCert(root)
	ca.serial.Store(2)
	return ca, nil
}

// Template is a leaf template for names: IP addresses become IP SANs,
// everything else DNS SANs. Many names make a large certificate.
func Template(names ...string) *x509.Certificate {
	tmpl := &x509.Certificate{Subject: pkix.Name{CommonName: "guise test server"}}
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, n)
		}
	}
	return tmpl
}

// Issue signs a leaf made from tmpl with a fresh P-256 key. It fills what
// tmpl leaves zero: the serial number, validity (an hour ago to a day from
// now), key usage (digital signature) and extended key usage (server
// authentication). Issue does not modify tmpl.
func (ca *CA) Issue(tmpl *x509.Certificate) (*Cert, error) {
	t := *tmpl
	now := time.Now()
	if t.SerialNumber == nil {
		t.SerialNumber = big.NewInt(ca.serial.Add(1))
	}
	if t.NotBefore.IsZero() {
		t.NotBefore = now.Add(-time.Hour)
	}
	if t.NotAfter.IsZero() {
		t.NotAfter = now.Add(24 * time.Hour)
	}
	if t.KeyUsage == 0 {
		t.KeyUsage = x509.KeyUsageDigitalSignature
	}
	if t.ExtKeyUsage == nil {
		t.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	der, err := x509.CreateCertificate(rand.Reader, &t, ca.mid, &key.PublicKey, ca.midKey)
	if err != nil {
		return nil, err
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &Cert{Chain: [][]byte{der, ca.midDER}, Key: key, Leaf: leaf, Roots: ca.Roots, CAPEM: ca.PEM}, nil
}

var shared struct {
	once      sync.Once
	ca        *CA
	localhost *Cert
	err       error
}

// SharedCA is the process's test CA, made on first use. Every Cert from
// NewCert and Localhost is issued by it, so its Roots trust them all.
func SharedCA(tb testing.TB) *CA {
	tb.Helper()
	shared.once.Do(func() {
		shared.ca, shared.err = NewCA()
		if shared.err == nil {
			shared.localhost, shared.err = shared.ca.Issue(Template("localhost", "127.0.0.1", "::1"))
		}
	})
	if shared.err != nil {
		tb.Fatalf("testpeer: test CA: %v", shared.err)
	}
	return shared.ca
}

// Localhost is the shared CA's certificate for localhost, 127.0.0.1 and
// ::1, made once per process.
func Localhost(tb testing.TB) *Cert {
	tb.Helper()
	SharedCA(tb)
	return shared.localhost
}

// NewCert issues a fresh certificate for names (see Template) from the
// shared CA.
func NewCert(tb testing.TB, names ...string) *Cert {
	tb.Helper()
	c, err := SharedCA(tb).Issue(Template(names...))
	if err != nil {
		tb.Fatalf("testpeer: issue %v: %v", names, err)
	}
	return c
}

// TLS is c as a tls.Certificate, for tls.Config.Certificates.
func (c *Cert) TLS() tls.Certificate {
	return tls.Certificate{Certificate: c.Chain, PrivateKey: c.Key, Leaf: c.Leaf}
}

// ServerConfig is a new server tls.Config presenting c and offering
// nextProtos in ALPN (none when empty).
func (c *Cert) ServerConfig(nextProtos ...string) *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{c.TLS()}, NextProtos: nextProtos}
}

// PEM is c's chain (leaf first) and its key ("EC PRIVATE KEY"),
// PEM-encoded, as nginx, nghttpd and haproxy read them.
func (c *Cert) PEM() (chain, key []byte) {
	for _, der := range c.Chain {
		chain = append(chain, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})...)
	}
	kder, err := x509.MarshalECPrivateKey(c.Key)
	if err != nil {
		// A P-256 key made by ecdsa.GenerateKey always marshals.
		panic("testpeer: marshal key: " + err.Error())
	}
	return chain, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}

// WriteFiles writes c's PEM chain and key to dir as cert.pem and key.pem,
// readable by daemons' unprivileged workers, and returns their paths.
func (c *Cert) WriteFiles(tb testing.TB, dir string) (certFile, keyFile string) {
	tb.Helper()
	chain, key := c.PEM()
	certFile, keyFile = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	if err := os.WriteFile(certFile, chain, 0o644); err != nil {
		tb.Fatal(err)
	}
	if err := os.WriteFile(keyFile, key, 0o644); err != nil {
		tb.Fatal(err)
	}
	return certFile, keyFile
}
