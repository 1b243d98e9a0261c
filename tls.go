package guise

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"

	"github.com/guise-http/guise/internal/pool"
	"github.com/guise-http/guise/internal/tlsfp"
)

// TrustStore chooses the root certificates used to verify servers.
type TrustStore = tlsfp.TrustStore

// Trust stores. Each is built once per process and cached.
const (
	TrustMozilla = tlsfp.Mozilla // Mozilla's roots, embedded in the binary (the default)
	TrustSystem  = tlsfp.System  // the operating system's roots
	TrustBoth    = tlsfp.Both    // both
)

// TLS errors, re-exported for errors.Is and errors.As.
type (
	// CertificateError reports that the server's certificate failed
	// verification; errors.As reaches the crypto/x509 error inside.
	CertificateError = tlsfp.CertificateError
	// HandshakeError is any failure of the TLS handshake.
	HandshakeError = tlsfp.HandshakeError
)

var (
	// ErrPlainHTTP: an https:// URL reached a server that speaks plain HTTP.
	ErrPlainHTTP = tlsfp.ErrPlainHTTP
	// ErrDowngrade: the server's hello carried the TLS 1.3 downgrade canary.
	ErrDowngrade = tlsfp.ErrDowngrade
)

// tlsID names the TLS options for the pool key: connections verified
// differently are never shared. It is worked out once per Session (see
// sessionState.rootsID), so the hot path does not format a pointer.
func (o *options) tlsID() string {
	switch {
	case o.insecure:
		return "insecure"
	case o.rootCAs != nil:
		return o.rootsID
	}
	return o.trust.String()
}

// rootsID names a custom root pool by its address; the pool stays alive as
// long as a connection keyed by it does.
func rootsID(p *x509.CertPool) string {
	if p == nil {
		return ""
	}
	return fmt.Sprintf("roots:%p", p)
}

// handshake runs the profile's TLS handshake over nc, bounded by the
// Transport's TLSHandshakeTimeout.
func (st *transportState) handshake(ctx context.Context, nc net.Conn, key pool.Key, o *options) (net.Conn, tlsfp.State, error) {
	host, _, err := net.SplitHostPort(key.Addr)
	if err != nil {
		nc.Close()
		return nil, tlsfp.State{}, err
	}
	hctx, cancel := context.WithTimeout(ctx, st.tlsTO)
	defer cancel()
	cfg := tlsfp.Config{
		Profile:            o.profile.p,
		RootCAs:            o.rootCAs,
		TrustStore:         o.trust,
		InsecureSkipVerify: o.insecure,
	}
	if !o.isolated {
		cfg.Sessions = st.sessions
	}
	tc, state, err := tlsfp.Handshake(hctx, nc, host, &cfg)
	if err != nil {
		if ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
			err = &TimeoutError{Phase: PhaseTLS, Err: err}
		}
		return nil, state, err
	}
	return tc, state, nil
}
