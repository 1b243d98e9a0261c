package guise

import (
	"context"
	"errors"
	"net/url"
	"os"
	"strings"

	"github.com/guise-http/guise/internal/ws"

	"github.com/guise-http/guise/internal/decode"
	"github.com/guise-http/guise/internal/h1"
	"github.com/guise-http/guise/internal/h2"
	"github.com/guise-http/guise/internal/proxy"
	"github.com/guise-http/guise/internal/tlsfp"
)

// Error is the error every Session, Transport and package-level call
// returns: the operation, the URL (with any password masked) and the cause.
// Use errors.Is and errors.As to look inside it.
type Error struct {
	Op  string // "Get", "Post", ... : the request's method, title-cased as net/http does
	URL string // the URL, password masked
	Err error
}

func (e *Error) Error() string {
	return "guise: " + e.Op + " " + quoteURL(e.URL) + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// Timeout reports whether the error is a timeout of any phase, or the
// request's context deadline.
func (e *Error) Timeout() bool {
	var t interface{ Timeout() bool }
	if errors.As(e.Err, &t) && t.Timeout() {
		return true
	}
	return errors.Is(e.Err, context.DeadlineExceeded) || errors.Is(e.Err, os.ErrDeadlineExceeded)
}

func quoteURL(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] == 0x7f || s[i] == '"' {
			return `"` + url.PathEscape(s) + `"`
		}
	}
	return `"` + s + `"`
}

// redact masks the password of a URL's userinfo.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	if _, has := u.User.Password(); has {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	return u.String()
}

// Phase names the part of a request a TimeoutError happened in.
type Phase uint8

// Phases of a request, in order.
const (
	PhaseDial     Phase = iota + 1 // TCP connect, to the origin or the proxy
	PhaseProxy                     // proxy handshake (CONNECT or SOCKS)
	PhaseTLS                       // TLS handshake
	PhaseHead                      // waiting for the response head
	PhaseBodyIdle                  // waiting for the next body bytes
	PhaseTotal                     // the request's whole Timeout
)

var phaseNames = [...]string{"", "dial", "proxy", "tls", "response head", "body idle", "total"}

func (p Phase) String() string {
	if int(p) < len(phaseNames) && p != 0 {
		return phaseNames[p]
	}
	return "unknown phase"
}

// TimeoutError reports that a phase of a request took longer than allowed.
// It unwraps to os.ErrDeadlineExceeded (or the context error for PhaseTotal).
type TimeoutError struct {
	Phase Phase
	Err   error
}

func (e *TimeoutError) Error() string { return "guise: " + e.Phase.String() + " timeout" }

func (e *TimeoutError) Unwrap() error { return e.Err }

// Timeout reports true.
func (e *TimeoutError) Timeout() bool { return true }

// Errors of every protocol, test for them with errors.Is. They are the
// HTTP/1.1 engine's values; an HTTP/2 error of the same meaning matches them
// too.
var (
	// ErrRefusedToSend: the request itself was invalid (CR or LF in a
	// header, a bad method or URL) and nothing was sent.
	ErrRefusedToSend = h1.ErrRefusedToSend
	// ErrHeaderTooLarge: the response head was larger than allowed (over
	// HTTP/2, its header list; see also ErrHeaderListTooLarge).
	ErrHeaderTooLarge = h1.ErrHeaderTooLarge
	// ErrTooManyHeaders: the response head had more fields than allowed.
	ErrTooManyHeaders = h1.ErrTooManyHeaders
	// ErrTooMany1xx: too many informational responses before the final one.
	ErrTooMany1xx = h1.ErrTooMany1xx
	// ErrBodyTruncated: the connection ended before the body did. It wraps
	// io.ErrUnexpectedEOF.
	ErrBodyTruncated = h1.ErrBodyTruncated
	// ErrNoResponse: an HTTP/1.1 connection was closed or reset before a
	// byte of the response arrived (or the request could not be written).
	// A request on a reused connection whose body can be sent again is
	// retried once on a new connection first.
	ErrNoResponse = h1.ErrNoResponse
)

// ProtocolError reports a malformed response: what was malformed and how.
type ProtocolError = h1.ProtocolError

// ErrUnsupportedScheme: the URL's scheme is neither http nor https.
var ErrUnsupportedScheme = errors.New("guise: unsupported URL scheme")

// ErrClosed: the Session or Transport was closed.
var ErrClosed = errors.New("guise: closed")

// ErrProtocolUnsupported: the request's Protocol asks for a version guise
// does not speak (HTTP3, for now). Nothing was sent.
var ErrProtocolUnsupported = errors.New("guise: protocol not supported")

// opName is the method as net/http's url.Error.Op spells it: "Get", "Post".
func opName(m string) string {
	switch m {
	case "GET":
		return "Get"
	case "POST":
		return "Post"
	case "HEAD":
		return "Head"
	case "PUT":
		return "Put"
	case "DELETE":
		return "Delete"
	}
	if len(m) > 1 {
		return m[:1] + strings.ToLower(m[1:])
	}
	return m
}

var (
	// ErrTooManyRedirects: the chain was longer than MaxRedirects.
	ErrTooManyRedirects = errors.New("guise: too many redirects")
	// ErrRedirect: a redirect arrived under RedirectError.
	ErrRedirect = errors.New("guise: redirect refused by policy")
	// ErrBadLocation: a redirect's Location is not an http(s) URL.
	ErrBadLocation = errors.New("guise: bad redirect location")
)

// Content decoding errors, re-exported for errors.Is and errors.As.
var (
	// ErrTooManyEncodings: the response stacked more than 5 content
	// codings (over all its Content-Encoding fields together).
	ErrTooManyEncodings = decode.ErrTooManyEncodings
	// ErrDecodeLimit: the decoded body grew past Session.MaxBodySize.
	ErrDecodeLimit = decode.ErrDecodeLimit
)

// DecodeError reports a corrupt or truncated encoded body.
type DecodeError = decode.Error

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

// Proxy errors, re-exported for errors.As and errors.Is.
type (
	// ProxyError is any failure to open a tunnel through a proxy. Op says
	// which step failed: "dial", "tls", "connect", "socks", "config".
	ProxyError = proxy.Error
	// ProxyStatusError is a non-2xx answer to CONNECT (407, 403, 502...).
	ProxyStatusError = proxy.StatusError
	// SOCKSError is a SOCKS server's refusal, with its reply code.
	SOCKSError = proxy.SOCKSError
)

// The errors of the HTTP/2, TLS and proxy engines, re-exported so that
// callers can test for them with errors.Is and errors.As without importing
// an internal package. Each is an alias of the engine's own type or the
// engine's own value: one identity. They are found inside the *Error a call
// returns.

// HTTP/2 errors.
type (
	// StreamError reports an HTTP/2 stream that was reset: by the server
	// (RST_STREAM, Cause nil) or by us because of a malformed response
	// (Cause says what). The connection stays usable. Test for it with
	// errors.As(err, &se) where se is a StreamError (not a pointer); one
	// with REFUSED_STREAM matches ErrRefusedStream.
	StreamError = h2.StreamError
	// GoAwayError is the GOAWAY an HTTP/2 server sent, for a request it
	// ended: LastStreamID, the server's Code and its DebugData. Test with a
	// GoAwayError value, as for StreamError.
	GoAwayError = h2.GoAwayError
	// ConnectionError reports an HTTP/2 connection we closed because the
	// server broke the protocol; Code is the GOAWAY code we sent
	// (PROTOCOL_ERROR, FLOW_CONTROL_ERROR, FRAME_SIZE_ERROR,
	// ENHANCE_YOUR_CALM for a flood, ...). Test with a ConnectionError
	// value, as for StreamError.
	ConnectionError = h2.ConnectionError
	// ErrCode is an HTTP/2 error code (RFC 9113 section 7); String returns
	// its RFC name, e.g. "REFUSED_STREAM".
	ErrCode = h2.ErrCode
)

// HTTP/2 error codes.
const (
	ErrCodeNo                 = h2.ErrCodeNo
	ErrCodeProtocol           = h2.ErrCodeProtocol
	ErrCodeInternal           = h2.ErrCodeInternal
	ErrCodeFlowControl        = h2.ErrCodeFlowControl
	ErrCodeSettingsTimeout    = h2.ErrCodeSettingsTimeout
	ErrCodeStreamClosed       = h2.ErrCodeStreamClosed
	ErrCodeFrameSize          = h2.ErrCodeFrameSize
	ErrCodeRefusedStream      = h2.ErrCodeRefusedStream
	ErrCodeCancel             = h2.ErrCodeCancel
	ErrCodeCompression        = h2.ErrCodeCompression
	ErrCodeConnect            = h2.ErrCodeConnect
	ErrCodeEnhanceYourCalm    = h2.ErrCodeEnhanceYourCalm
	ErrCodeInadequateSecurity = h2.ErrCodeInadequateSecurity
	ErrCodeHTTP11Required     = h2.ErrCodeHTTP11Required
)

var (
	// ErrRefusedStream is matched by a StreamError with REFUSED_STREAM: the
	// HTTP/2 server did not process the request. guise has already sent
	// such a request once more on a new connection when its body allowed.
	ErrRefusedStream = h2.ErrRefusedStream
	// ErrFrameTooLarge is matched by the ConnectionError of an HTTP/2
	// frame larger than the profile's SETTINGS_MAX_FRAME_SIZE.
	ErrFrameTooLarge = h2.ErrFrameTooLarge
	// ErrHeaderListTooLarge is matched by the error of an HTTP/2 response
	// whose header list is larger than the profile's
	// SETTINGS_MAX_HEADER_LIST_SIZE. (HTTP/1.1's oversized head is
	// ErrHeaderTooLarge.)
	ErrHeaderListTooLarge = h2.ErrHeaderListTooLarge
)

// TLS errors.
type (
	// AlertError reports a fatal TLS alert the server sent, during the
	// handshake (inside a *HandshakeError) or afterwards.
	AlertError = tlsfp.AlertError
	// Alert is a TLS alert description (RFC 8446 section 6); String
	// returns its name, e.g. "handshake failure".
	Alert = tlsfp.Alert
)

// TLS alerts.
const (
	AlertCloseNotify                  = tlsfp.AlertCloseNotify
	AlertUnexpectedMessage            = tlsfp.AlertUnexpectedMessage
	AlertBadRecordMAC                 = tlsfp.AlertBadRecordMAC
	AlertRecordOverflow               = tlsfp.AlertRecordOverflow
	AlertHandshakeFailure             = tlsfp.AlertHandshakeFailure
	AlertBadCertificate               = tlsfp.AlertBadCertificate
	AlertUnsupportedCertificate       = tlsfp.AlertUnsupportedCertificate
	AlertCertificateRevoked           = tlsfp.AlertCertificateRevoked
	AlertCertificateExpired           = tlsfp.AlertCertificateExpired
	AlertCertificateUnknown           = tlsfp.AlertCertificateUnknown
	AlertIllegalParameter             = tlsfp.AlertIllegalParameter
	AlertUnknownCA                    = tlsfp.AlertUnknownCA
	AlertAccessDenied                 = tlsfp.AlertAccessDenied
	AlertDecodeError                  = tlsfp.AlertDecodeError
	AlertDecryptError                 = tlsfp.AlertDecryptError
	AlertProtocolVersion              = tlsfp.AlertProtocolVersion
	AlertInsufficientSecurity         = tlsfp.AlertInsufficientSecurity
	AlertInternalError                = tlsfp.AlertInternalError
	AlertInappropriateFallback        = tlsfp.AlertInappropriateFallback
	AlertUserCanceled                 = tlsfp.AlertUserCanceled
	AlertMissingExtension             = tlsfp.AlertMissingExtension
	AlertUnsupportedExtension         = tlsfp.AlertUnsupportedExtension
	AlertUnrecognizedName             = tlsfp.AlertUnrecognizedName
	AlertBadCertificateStatusResponse = tlsfp.AlertBadCertificateStatusResponse
	AlertUnknownPSKIdentity           = tlsfp.AlertUnknownPSKIdentity
	AlertCertificateRequired          = tlsfp.AlertCertificateRequired
	AlertNoApplicationProtocol        = tlsfp.AlertNoApplicationProtocol
	AlertECHRequired                  = tlsfp.AlertECHRequired
)

var (
	// ErrALPN: the server selected an application protocol that was not
	// offered (inside a *HandshakeError).
	ErrALPN = tlsfp.ErrALPN
	// ErrRecordFlood: after the handshake the server sent too many TLS
	// records without application data (KeyUpdates, tickets, empty
	// records).
	ErrRecordFlood = tlsfp.ErrRecordFlood
)

// ErrProxyAuthRequired is matched by a proxy's refusal that asks for other
// credentials: a ProxyStatusError with 407 (its Header holds the
// Proxy-Authenticate challenges) or a SOCKSError at the username/password
// step.
var ErrProxyAuthRequired = proxy.ErrAuthRequired

// sameAs is an engine's error that also matches the root sentinel standing
// for it in every protocol (errors.Is(err, ErrRefusedToSend) holds for an
// HTTP/2 refusal as for an HTTP/1.1 one).
type sameAs struct{ err, as error }

func (e *sameAs) Error() string   { return e.err.Error() }
func (e *sameAs) Unwrap() []error { return []error{e.err, e.as} }

// WebSocket errors (websocket.go), produced by internal/ws.

// CloseError is how a WebSocket ended with a close code: the peer's close
// frame (Remote), or the code guise failed the connection with because of
// what the peer sent (1002 protocol error, 1007 invalid data, 1009 too
// big).
type CloseError = ws.CloseError

// WebSocketHandshakeError is a handshake response that does not open a
// WebSocket: a status other than 101 (200 over HTTP/2), a wrong
// Sec-WebSocket-Accept, an extension, parameter or subprotocol that was not
// offered.
type WebSocketHandshakeError = ws.HandshakeError

var (
	// ErrWebSocketDropped is wrapped by the error of a WebSocket whose
	// connection ended without a close frame.
	ErrWebSocketDropped = ws.ErrDropped
	// ErrPingTimeout ends a WebSocket whose peer sent nothing within
	// PingTimeout of a ping.
	ErrPingTimeout = ws.ErrPingTimeout
	// ErrWebSocketClosed is returned by a WebSocket's calls after Close.
	ErrWebSocketClosed = ws.ErrClosed
	// ErrInvalidMessage is a Write or Close that cannot go on the wire: a
	// text message that is not UTF-8, a close code that may not be sent, a
	// reason over 123 bytes.
	ErrInvalidMessage = ws.ErrInvalidMessage
)
