package tlsfp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"

	utls "github.com/refraction-networking/utls"
)

// ErrPlainHTTP is returned (wrapped in a *HandshakeError) when the server
// answered the ClientHello with plain HTTP ("HTTP/..."): an http:// server
// on the port, or a TLS-unaware proxy.
var ErrPlainHTTP = errors.New("tlsfp: server speaks plain http, not tls")

// ErrDowngrade is returned (wrapped in a *HandshakeError) when a server
// negotiated TLS 1.2 or lower while its ServerHello random carries the TLS
// 1.3 downgrade canary (RFC 8446 4.1.3): an active attacker or a broken
// middlebox.
var ErrDowngrade = errors.New("tlsfp: tls downgrade attempt detected")

// ErrALPN is returned (wrapped in a *HandshakeError) when the server selected
// an application protocol that was not offered.
var ErrALPN = errors.New("tlsfp: server selected an application protocol outside the offer")

// ErrRetryResumption is returned (wrapped in a *HandshakeError) when the
// server answered a hello that offered to resume a session with a
// HelloRetryRequest, which uTLS cannot follow with a pre_shared_key. The
// ticket has been used up; a new connection (which then offers no ticket,
// or another) succeeds.
var ErrRetryResumption = errors.New("tlsfp: the server asked to retry a resuming hello (HelloRetryRequest), which uTLS cannot do")

// HandshakeError is every error Handshake returns after it started talking
// to the server. Err is the cause: a *CertificateError, ErrPlainHTTP,
// ErrDowngrade, ErrALPN, the context's error (context.DeadlineExceeded or
// context.Canceled), or an error from the connection or from uTLS.
type HandshakeError struct {
	ServerName string
	Err        error
}

// Error describes the cause and names the server.
func (e *HandshakeError) Error() string {
	var ce *CertificateError
	if errors.As(e.Err, &ce) {
		return ce.Error() // names the server already
	}
	msg := e.Err.Error()
	if !strings.HasPrefix(msg, "tlsfp: ") {
		msg = "tlsfp: " + msg
	}
	return msg + " (handshake with " + quoteName(e.ServerName) + ")"
}

// Unwrap returns the cause.
func (e *HandshakeError) Unwrap() error { return e.Err }

// Timeout reports whether the handshake failed because the context's
// deadline passed or the connection timed out.
func (e *HandshakeError) Timeout() bool {
	if errors.Is(e.Err, context.DeadlineExceeded) {
		return true
	}
	var ne net.Error
	return errors.As(e.Err, &ne) && ne.Timeout()
}

// CertificateError reports that the server's certificate chain failed
// verification. Err is the crypto/x509 error (x509.UnknownAuthorityError,
// x509.HostnameError, x509.CertificateInvalidError, ...), reachable with
// errors.As.
type CertificateError struct {
	ServerName string
	Err        error
}

// Error names the server and the verification failure.
func (e *CertificateError) Error() string {
	return "tlsfp: certificate verification failed for " + quoteName(e.ServerName) + ": " + e.Err.Error()
}

// Unwrap returns the crypto/x509 error.
func (e *CertificateError) Unwrap() error { return e.Err }

func quoteName(s string) string {
	b := make([]byte, 0, len(s)+2)
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			const hex = "0123456789abcdef"
			b = append(b, '\\', 'x', hex[c>>4], hex[c&15])
			continue
		}
		b = append(b, c)
	}
	return string(append(b, '"'))
}

// classify turns an error from uTLS into the typed causes above. uTLS (as
// crypto/tls) reports a downgrade and an unoffered ALPN only as plain error
// strings, so those two are recognised by their text; everything else by
// type.
func classify(ctx context.Context, err error, serverName string) error {
	if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
		// The context ended the handshake (by closing the connection); the
		// connection's error is only its symptom.
		return &HandshakeError{ServerName: serverName, Err: fmt.Errorf("%w (%v)", ctxErr, err)}
	}
	var cve *utls.CertificateVerificationError
	if errors.As(err, &cve) {
		return &HandshakeError{ServerName: serverName, Err: &CertificateError{ServerName: serverName, Err: cve.Err}}
	}
	var rhe utls.RecordHeaderError
	if errors.As(err, &rhe) && string(rhe.RecordHeader[:]) == "HTTP/" {
		return &HandshakeError{ServerName: serverName, Err: ErrPlainHTTP}
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "downgrade attempt detected"):
		err = ErrDowngrade
	case strings.Contains(msg, "unadvertised ALPN protocol"), strings.Contains(msg, "unrequested ALPN extension"):
		err = ErrALPN
	case strings.Contains(msg, "reprocessing of PSK key triggered by HelloRetryRequest"):
		err = ErrRetryResumption
	}
	return &HandshakeError{ServerName: serverName, Err: err}
}

// ErrRecordFlood is the error of a Read when the server sent more than
// maxQuietRecords records in a row without application data: KeyUpdate
// messages, session tickets, empty records (RELIABILITY T-08). uTLS follows
// each KeyUpdate, deriving new keys, for as long as the server sends them.
var ErrRecordFlood = errors.New("tlsfp: too many TLS records without application data")
