package guise

import "fmt"

// Protocol says which HTTP versions a request may use. The zero value,
// AnyProtocol, is what the browser does. It is part of a connection's
// identity: a connection whose ClientHello offered h2 is never used for a
// request limited to HTTP/1.1, nor the other way round, since the hello
// alone tells a server which the client asked for.
//
// Protocol applies to https:// URLs, where ALPN chooses the version; a
// plain http:// request is HTTP/1.1 whatever it says (the browsers do not
// speak cleartext HTTP/2), except that HTTP3 fails for it too.
type Protocol uint8

// Protocols.
const (
	// AnyProtocol is as the browser: HTTP/2 or HTTP/1.1 as ALPN picks
	// (HTTP/3 from Alt-Svc, once guise speaks it).
	AnyProtocol Protocol = iota
	// HTTP1 is HTTP/1.1 only: the ClientHello offers only http/1.1, as
	// the browser's does with HTTP/2 disabled (for Chrome, also without
	// the ALPS extension).
	HTTP1
	// HTTP2 is HTTP/2 or HTTP/1.1 as ALPN picks, never HTTP/3.
	HTTP2
	// HTTP3 is HTTP/3 only. guise does not speak HTTP/3 yet: such a
	// request fails with ErrProtocolUnsupported before anything is sent.
	HTTP3
)

var protocolNames = [...]string{"any", "http/1.1", "h2", "h3"}

// String returns "any", "http/1.1", "h2" or "h3" (the ALPN names).
func (p Protocol) String() string {
	if int(p) < len(protocolNames) {
		return protocolNames[p]
	}
	return "unknown protocol"
}

// alpnHTTP1 is the offer of an HTTP1 connection; tlsfp then sends the
// profile's recorded HTTP/1.1-only hello (profile.TLS.HelloHTTP1).
var alpnHTTP1 = []string{"http/1.1"}

// resolveProtocol is the protocol a request runs with: the Request's,
// unless AnyProtocol, else the Session's. HTTP3, and any value without a
// name, fails with ErrProtocolUnsupported before anything is sent.
func resolveProtocol(req, session Protocol) (Protocol, error) {
	p := pick(req, session)
	switch p {
	case AnyProtocol, HTTP1, HTTP2:
		return p, nil
	case HTTP3:
		return p, fmt.Errorf("%w: %v (HTTP/3 is not implemented yet)", ErrProtocolUnsupported, p)
	}
	return p, fmt.Errorf("%w: Protocol(%d)", ErrProtocolUnsupported, uint8(p))
}
