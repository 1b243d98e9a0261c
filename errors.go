package guise

import (
	"context"
	"errors"
	"net/url"
	"os"
	"strings"

	"github.com/guise-http/guise/internal/decode"
	"github.com/guise-http/guise/internal/h1"
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

// Errors of the HTTP/1.1 engine, re-exported so callers need not import an
// internal package. Test for them with errors.Is and errors.As.
var (
	// ErrRefusedToSend: the request itself was invalid (CR or LF in a
	// header, a bad method or URL) and nothing was sent.
	ErrRefusedToSend = h1.ErrRefusedToSend
	// ErrHeaderTooLarge: the response head was larger than allowed.
	ErrHeaderTooLarge = h1.ErrHeaderTooLarge
	// ErrTooManyHeaders: the response head had more fields than allowed.
	ErrTooManyHeaders = h1.ErrTooManyHeaders
	// ErrTooMany1xx: too many informational responses before the final one.
	ErrTooMany1xx = h1.ErrTooMany1xx
	// ErrBodyTruncated: the connection ended before the body did. It wraps
	// io.ErrUnexpectedEOF.
	ErrBodyTruncated = h1.ErrBodyTruncated
)

// ProtocolError reports a malformed response: what was malformed and how.
type ProtocolError = h1.ProtocolError

// ErrUnsupportedScheme: the URL's scheme is neither http nor https.
var ErrUnsupportedScheme = errors.New("guise: unsupported URL scheme")

// ErrClosed: the Session or Transport was closed.
var ErrClosed = errors.New("guise: closed")

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
