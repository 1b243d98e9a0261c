package tls13

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"time"
)

// Identity is a server certificate chain issued by an in-memory root CA
// made for it, with the leaf's private key. Hand Roots to the client as its
// trusted roots. An Identity is immutable once made and may be shared.
type Identity struct {
	// Chain is the chain the server sends, DER, leaf first, then one
	// intermediate CA (the root is not sent).
	Chain [][]byte
	// Key is the leaf's ECDSA P-256 key.
	Key *ecdsa.PrivateKey
	// Roots holds only the root CA.
	Roots *x509.CertPool
}

// NewIdentity makes a root CA, an intermediate and a leaf valid for names
// (IP addresses become IP SANs, everything else DNS SANs) for a day around
// now. Many names make a large certificate.
func NewIdentity(names ...string) (*Identity, error) {
	now := time.Now()
	rootKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	ca := func(serial int64, cn string) *x509.Certificate {
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
	rootTmpl := ca(1, "guise test root")
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
	midDER, err := x509.CreateCertificate(rand.Reader, ca(2, "guise test intermediate"), root, &midKey.PublicKey, rootKey)
	if err != nil {
		return nil, err
	}
	mid, err := x509.ParseCertificate(midDER)
	if err != nil {
		return nil, err
	}
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	leafTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(3),
		Subject:      pkix.Name{CommonName: "guise test server"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			leafTmpl.IPAddresses = append(leafTmpl.IPAddresses, ip)
		} else {
			leafTmpl.DNSNames = append(leafTmpl.DNSNames, n)
		}
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, mid, &leafKey.PublicKey, midKey)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AddCert(root)
	return &Identity{Chain: [][]byte{leafDER, midDER}, Key: leafKey, Roots: pool}, nil
}
