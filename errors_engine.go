package guise

import (
	"github.com/guise-http/guise/internal/h2"
	"github.com/guise-http/guise/internal/proxy"
	"github.com/guise-http/guise/internal/tlsfp"
)

// This file re-exports the errors the HTTP/2, TLS and proxy engines define,
// so that callers can test for them with errors.Is and errors.As without
// importing an internal package. Each is an alias of the engine's own type or
// the engine's own value: one identity. They are found inside the *Error a
// call returns.

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
