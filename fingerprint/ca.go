package fingerprint

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"time"
)

// LeafNames are the DNS names and IP addresses the echo server's leaf
// certificate is valid for. fp.test and its subdomains are the names the
// recordings in testdata/recordings used, so that browsers send SNI
// (they never send SNI for an IP address).
var LeafNames = []string{"localhost", "127.0.0.1", "::1", "fp.test", "*.fp.test"}

// CA is an in-memory certificate authority with one ECDSA P-256 leaf
// certificate for [LeafNames]. It exists only in memory: nothing is written
// to disk unless the caller writes [CA.PEM] somewhere.
//
// A CA is immutable after [NewCA] and safe for concurrent use. The zero
// value is not usable.
type CA struct {
	cert    *x509.Certificate
	certPEM []byte
	leaf    tls.Certificate
}

// NewCA creates a fresh CA key and certificate and a leaf certificate
// signed by it. Both keys are ECDSA P-256. The CA is valid from one hour ago
// for 30 days, the leaf for the same period.
func NewCA() (*CA, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, errors.New("fingerprint: ca key: " + err.Error())
	}
	now := time.Now()
	notBefore, notAfter := now.Add(-time.Hour), now.Add(30*24*time.Hour)
	caTmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "guise echo server local CA", Organization: []string{"guise"}},
		NotBefore:             notBefore,
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, errors.New("fingerprint: ca certificate: " + err.Error())
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, errors.New("fingerprint: ca certificate: " + err.Error())
	}

	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, errors.New("fingerprint: leaf key: " + err.Error())
	}
	leafTmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "fp.test"},
		NotBefore:    notBefore,
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	for _, n := range LeafNames {
		if ip := net.ParseIP(n); ip != nil {
			leafTmpl.IPAddresses = append(leafTmpl.IPAddresses, ip)
		} else {
			leafTmpl.DNSNames = append(leafTmpl.DNSNames, n)
		}
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, caCert, &leafKey.PublicKey, caKey)
	if err != nil {
		return nil, errors.New("fingerprint: leaf certificate: " + err.Error())
	}
	leafCert, err := x509.ParseCertificate(leafDER)
	if err != nil {
		return nil, errors.New("fingerprint: leaf certificate: " + err.Error())
	}
	return &CA{
		cert:    caCert,
		certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		leaf: tls.Certificate{
			Certificate: [][]byte{leafDER, caDER},
			PrivateKey:  leafKey,
			Leaf:        leafCert,
		},
	}, nil
}

// serial returns a random positive 127-bit certificate serial number.
func serial() *big.Int {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+).
	b[0] &= 0x7f
	return new(big.Int).SetBytes(b[:])
}

// PEM returns the CA certificate in PEM form, for a browser or a system
// trust store to import. The caller must not modify the returned slice.
func (ca *CA) PEM() []byte { return ca.certPEM }

// Certificate returns the parsed CA certificate. The caller must not modify it.
func (ca *CA) Certificate() *x509.Certificate { return ca.cert }

// CertPool returns a new pool holding only the CA certificate, for a Go
// client's tls.Config.RootCAs.
func (ca *CA) CertPool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

// Leaf returns the leaf certificate chain (leaf, CA) with its private key,
// as a tls.Config.Certificates entry.
func (ca *CA) Leaf() tls.Certificate { return ca.leaf }
