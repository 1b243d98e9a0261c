package tls13

import "github.com/guise-http/guise/internal/testpeer"

// Identity is a server certificate chain (leaf, then one intermediate CA;
// the root is not sent) issued by an in-memory root CA made for it, with
// the leaf's ECDSA P-256 key. Hand Roots to the client as its trusted
// roots. It is testpeer's certificate kit's Cert; an Identity is immutable
// once made and may be shared.
type Identity = testpeer.Cert

// NewIdentity makes a CA of its own (so that two identities' Roots do not
// trust each other's chains) and a leaf valid for names (IP addresses
// become IP SANs, everything else DNS SANs) for a day around now. Many
// names make a large certificate.
func NewIdentity(names ...string) (*Identity, error) {
	ca, err := testpeer.NewCA()
	if err != nil {
		return nil, err
	}
	return ca.Issue(testpeer.Template(names...))
}
