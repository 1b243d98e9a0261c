package proxy

import (
	"context"
	"errors"
	"os"
	"strconv"

	"github.com/guise-http/guise/fields"
)

// Error is the error every DialContext failure is returned as: which step of
// the proxy hop failed (Op), the proxy (Proxy, its URL with any password
// masked) and the cause. Use errors.Is and errors.As to look inside it.
//
// Op is one of "config" (the proxy URL, ConnectHeader or credentials are
// unusable; nothing was sent), "resolve" (local name resolution for socks5://
// and socks4://), "dial" (the TCP connection to the proxy; Err keeps the
// *net.OpError), "tls" (the handshake with an https:// proxy), "connect"
// (the HTTP CONNECT exchange) or "socks" (the SOCKS handshake). When the
// context ended the step, Err is the context's error.
type Error struct {
	Proxy string
	Op    string
	Err   error
}

func (e *Error) Error() string {
	return "proxy: " + e.Op + " via " + strconv.Quote(e.Proxy) + ": " + e.Err.Error()
}

func (e *Error) Unwrap() error { return e.Err }

// Timeout reports whether the step ran out of time: the context's deadline,
// or a connection deadline.
func (e *Error) Timeout() bool {
	if errors.Is(e.Err, context.DeadlineExceeded) || errors.Is(e.Err, os.ErrDeadlineExceeded) {
		return true
	}
	var t interface{ Timeout() bool }
	return errors.As(e.Err, &t) && t.Timeout()
}

// StatusError reports that an HTTP proxy answered CONNECT with a status other
// than 2xx (407, 403, 502, ...). The reply's body was not read and the
// connection was closed. Status is the status line after the version
// ("407 Proxy Authentication Required"), as the proxy sent it. Header holds the
// reply's header fields in order (Proxy-Authenticate among them).
type StatusError struct {
	StatusCode int
	Status     string
	Header     fields.Header
}

func (e *StatusError) Error() string {
	return "proxy: CONNECT refused with " + strconv.Quote(e.Status)
}

// Is reports whether target is ErrAuthRequired and the status 407.
func (e *StatusError) Is(target error) bool {
	return target == ErrAuthRequired && e.StatusCode == 407
}

// ErrAuthRequired is matched (errors.Is) by the refusals that mean the
// proxy wants credentials other than those sent (none, or wrong ones): a
// *StatusError with 407 Proxy Authentication Required (its Header holds the
// Proxy-Authenticate challenges) and a *SOCKSError of stage SOCKSAuth. A
// SOCKS5 server that accepts none of the methods offered (MethodNoAcceptable)
// does not match it: that may also be a server that wants GSSAPI.
var ErrAuthRequired = errors.New("proxy: proxy authentication required")

// SOCKSStage names the step of a SOCKS handshake that a SOCKSError came from.
type SOCKSStage uint8

// Stages of a SOCKS handshake.
const (
	SOCKSMethod  SOCKSStage = iota + 1 // SOCKS5 method selection
	SOCKSAuth                          // SOCKS5 username/password (RFC 1929)
	SOCKSRequest                       // the CONNECT request (SOCKS5 REP, SOCKS4 CD)
)

var stageNames = [...]string{"", "method selection", "authentication", "connect request"}

func (s SOCKSStage) String() string {
	if int(s) < len(stageNames) && s != 0 {
		return stageNames[s]
	}
	return "unknown stage"
}

// SOCKSError reports that a SOCKS server refused: Version is 4 or 5, Stage the
// step, and Reply the server's code at that step: for SOCKSMethod the method it
// chose (0xFF: no acceptable methods; anything else: a method that was not
// offered), for SOCKSAuth the RFC 1929 status, for SOCKSRequest the SOCKS5 REP
// (1..8 as in RFC 1928, or another value) or the SOCKS4 CD (91..93). The
// connection was closed.
type SOCKSError struct {
	Version byte
	Stage   SOCKSStage
	Reply   byte
}

// Reply codes of SOCKS5 (RFC 1928 section 6) and SOCKS4.
const (
	ReplyGeneralFailure      byte = 0x01
	ReplyNotAllowed          byte = 0x02
	ReplyNetworkUnreachable  byte = 0x03
	ReplyHostUnreachable     byte = 0x04
	ReplyConnectionRefused   byte = 0x05
	ReplyTTLExpired          byte = 0x06
	ReplyCommandNotSupported byte = 0x07
	ReplyAddressNotSupported byte = 0x08
	MethodNoAcceptable       byte = 0xFF // SOCKS5 method selection: none of ours is acceptable

	Reply4Rejected      byte = 0x5B // SOCKS4: request rejected or failed
	Reply4NoIdentd      byte = 0x5C // SOCKS4: identd not reachable
	Reply4IdentMismatch byte = 0x5D // SOCKS4: identd reports a different user id
)

var reply5Names = [...]string{
	ReplyGeneralFailure:      "general SOCKS server failure",
	ReplyNotAllowed:          "connection not allowed by ruleset",
	ReplyNetworkUnreachable:  "network unreachable",
	ReplyHostUnreachable:     "host unreachable",
	ReplyConnectionRefused:   "connection refused",
	ReplyTTLExpired:          "TTL expired",
	ReplyCommandNotSupported: "command not supported",
	ReplyAddressNotSupported: "address type not supported",
}

// Reason names the reply code in words.
func (e *SOCKSError) Reason() string {
	switch e.Stage {
	case SOCKSMethod:
		if e.Reply == MethodNoAcceptable {
			return "no acceptable authentication methods"
		}
		return "server chose a method that was not offered"
	case SOCKSAuth:
		return "username/password authentication failed"
	case SOCKSRequest:
		if e.Version == 4 {
			switch e.Reply {
			case Reply4Rejected:
				return "request rejected or failed"
			case Reply4NoIdentd:
				return "identd not reachable"
			case Reply4IdentMismatch:
				return "identd user id mismatch"
			}
			return "unknown reply"
		}
		if int(e.Reply) < len(reply5Names) && reply5Names[e.Reply] != "" {
			return reply5Names[e.Reply]
		}
		return "unknown reply"
	}
	return "unknown reply"
}

// Is reports whether target is ErrAuthRequired and the server refused
// the username and password.
func (e *SOCKSError) Is(target error) bool {
	return target == ErrAuthRequired && e.Stage == SOCKSAuth
}

func (e *SOCKSError) Error() string {
	return "proxy: socks" + strconv.Itoa(int(e.Version)) + " " + e.Stage.String() + ": " +
		e.Reason() + " (0x" + hex2(e.Reply) + ")"
}

func hex2(b byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[b>>4], digits[b&15]})
}

// ErrHeaderTooLarge is returned (inside *Error, Op "connect") when the CONNECT
// reply head, with any 1xx heads before it, exceeds MaxResponseHeaderBytes.
var ErrHeaderTooLarge = errors.New("proxy: CONNECT reply head too large")

// ErrMalformedReply is wrapped when a proxy's reply breaks its protocol: a
// CONNECT status line or header line that is not HTTP/1.x, a SOCKS reply with
// the wrong version byte or an unknown address type.
var ErrMalformedReply = errors.New("proxy: malformed proxy reply")

// ErrHostTooLong is returned (inside *Error, Op "socks") when the target host
// name is over 255 bytes and must be sent to a SOCKS5 server (socks5h://) or a
// SOCKS4a server. It is never resolved locally instead (CVE-2023-38545).
var ErrHostTooLong = errors.New("proxy: target host name longer than 255 bytes")

// ErrCredentialsTooLong is returned (inside *Error, Op "config") when a SOCKS
// username or password is over 255 bytes.
var ErrCredentialsTooLong = errors.New("proxy: socks username or password longer than 255 bytes")

// ErrUnsupportedScheme is returned (inside *Error, Op "config") for a proxy
// URL whose scheme is not http, https, socks5, socks5h, socks4 or socks4a.
var ErrUnsupportedScheme = errors.New("proxy: unsupported proxy scheme")

// ErrInvalidURL is returned (inside *Error, Op "config") for a nil proxy URL,
// one without a host, or one with an invalid port.
var ErrInvalidURL = errors.New("proxy: invalid proxy URL")

// ErrInvalidHeader is returned (inside *Error, Op "config") when a
// ConnectHeader field has an invalid name or a value with CR, LF or NUL.
var ErrInvalidHeader = errors.New("proxy: invalid CONNECT header field")

// ErrInvalidTarget is returned (inside *Error) for a target address that is not
// host:port with a port in 1..65535 and a host without control bytes or
// spaces, or that the proxy's protocol cannot carry (an IPv6 address over
// SOCKS4).
var ErrInvalidTarget = errors.New("proxy: invalid target address")

// ErrNoTLS is returned (inside *Error, Op "config") when the proxy URL is
// https:// and Dialer.TLS is nil.
var ErrNoTLS = errors.New("proxy: https proxy needs Dialer.TLS")
