package tlsfp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"reflect"
	"strconv"
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

// ErrKeyTooLarge is the Err of a *CertificateError (inside a
// *HandshakeError) when the server's chain carries an RSA key of more than
// 8192 bits. uTLS, as crypto/tls, refuses such a certificate while parsing
// the chain, before any signature with it is checked and whether or not
// the chain is verified, so that a huge modulus costs the client no
// expensive arithmetic (crypto/tls's fix for CVE-2023-29409). Chromium and
// Firefox accept RSA keys up to 16384 bits; no public CA issues keys above
// 4096.
var ErrKeyTooLarge = errors.New("tlsfp: server certificate has an RSA key over 8192 bits")

// HandshakeError is every error Handshake returns after it started talking
// to the server. Err is the cause: a *CertificateError (whose Err is the
// crypto/x509 error or ErrKeyTooLarge), an *AlertError,
// ErrPlainHTTP, ErrDowngrade, ErrALPN, ErrRetryResumption, the context's
// error (context.DeadlineExceeded or
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
// errors.As, or ErrKeyTooLarge.
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
	if a, ok := remoteAlert(err); ok {
		return &HandshakeError{ServerName: serverName, Err: &AlertError{Alert: a}}
	}
	var rhe utls.RecordHeaderError
	if errors.As(err, &rhe) && string(rhe.RecordHeader[:]) == "HTTP/" {
		return &HandshakeError{ServerName: serverName, Err: ErrPlainHTTP}
	}
	msg := err.Error()
	if strings.Contains(msg, "certificate containing RSA key larger than") {
		return &HandshakeError{ServerName: serverName, Err: &CertificateError{ServerName: serverName, Err: ErrKeyTooLarge}}
	}
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

// Alert is a TLS alert description (RFC 8446 section 6, RFC 5246 section
// 7.2). String returns its RFC name in words, or "alert(N)" for a number
// without one.
type Alert uint8

// TLS alerts.
const (
	AlertCloseNotify                  Alert = 0
	AlertUnexpectedMessage            Alert = 10
	AlertBadRecordMAC                 Alert = 20
	AlertRecordOverflow               Alert = 22
	AlertHandshakeFailure             Alert = 40
	AlertBadCertificate               Alert = 42
	AlertUnsupportedCertificate       Alert = 43
	AlertCertificateRevoked           Alert = 44
	AlertCertificateExpired           Alert = 45
	AlertCertificateUnknown           Alert = 46
	AlertIllegalParameter             Alert = 47
	AlertUnknownCA                    Alert = 48
	AlertAccessDenied                 Alert = 49
	AlertDecodeError                  Alert = 50
	AlertDecryptError                 Alert = 51
	AlertProtocolVersion              Alert = 70
	AlertInsufficientSecurity         Alert = 71
	AlertInternalError                Alert = 80
	AlertInappropriateFallback        Alert = 86
	AlertUserCanceled                 Alert = 90
	AlertMissingExtension             Alert = 109
	AlertUnsupportedExtension         Alert = 110
	AlertUnrecognizedName             Alert = 112
	AlertBadCertificateStatusResponse Alert = 113
	AlertUnknownPSKIdentity           Alert = 115
	AlertCertificateRequired          Alert = 116
	AlertNoApplicationProtocol        Alert = 120
	AlertECHRequired                  Alert = 121
)

var alertNames = map[Alert]string{
	AlertCloseNotify:                  "close notify",
	AlertUnexpectedMessage:            "unexpected message",
	AlertBadRecordMAC:                 "bad record mac",
	AlertRecordOverflow:               "record overflow",
	AlertHandshakeFailure:             "handshake failure",
	AlertBadCertificate:               "bad certificate",
	AlertUnsupportedCertificate:       "unsupported certificate",
	AlertCertificateRevoked:           "certificate revoked",
	AlertCertificateExpired:           "certificate expired",
	AlertCertificateUnknown:           "certificate unknown",
	AlertIllegalParameter:             "illegal parameter",
	AlertUnknownCA:                    "unknown ca",
	AlertAccessDenied:                 "access denied",
	AlertDecodeError:                  "decode error",
	AlertDecryptError:                 "decrypt error",
	AlertProtocolVersion:              "protocol version",
	AlertInsufficientSecurity:         "insufficient security",
	AlertInternalError:                "internal error",
	AlertInappropriateFallback:        "inappropriate fallback",
	AlertUserCanceled:                 "user canceled",
	AlertMissingExtension:             "missing extension",
	AlertUnsupportedExtension:         "unsupported extension",
	AlertUnrecognizedName:             "unrecognized name",
	AlertBadCertificateStatusResponse: "bad certificate status response",
	AlertUnknownPSKIdentity:           "unknown psk identity",
	AlertCertificateRequired:          "certificate required",
	AlertNoApplicationProtocol:        "no application protocol",
	AlertECHRequired:                  "ech required",
}

func (a Alert) String() string {
	if s, ok := alertNames[a]; ok {
		return s
	}
	return "alert(" + strconv.Itoa(int(a)) + ")"
}

// AlertError reports a fatal TLS alert the server sent: during the
// handshake (as the Err of a *HandshakeError; a server refusing the hello
// typically sends AlertHandshakeFailure or AlertProtocolVersion) or after
// it (from Conn.Read; a TLS 1.3 server that wants a client certificate
// sends AlertCertificateRequired only then). The connection is unusable.
type AlertError struct {
	Alert Alert
}

// Error names the alert and its number.
func (e *AlertError) Error() string {
	return "tlsfp: server sent tls alert " + e.Alert.String() + " (" + strconv.Itoa(int(e.Alert)) + ")"
}

// remoteAlert returns the alert of err when it is uTLS's report of a fatal
// alert from the peer: a *net.OpError with Op "remote error" whose Err is
// uTLS's unexported alert type, a uint8 (utls conn.go, readRecordOrCCS).
// utls.AlertError is not it: uTLS uses that for alerts it sends, over QUIC.
//
// err must not be nil: the caller checks, so that a Read's success does not
// pay for the escaping target of errors.As.
func remoteAlert(err error) (Alert, bool) {
	var oe *net.OpError
	if !errors.As(err, &oe) || oe.Op != "remote error" || oe.Err == nil {
		return 0, false
	}
	if v := reflect.ValueOf(oe.Err); v.Kind() == reflect.Uint8 {
		return Alert(v.Uint()), true
	}
	return 0, false
}
