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
	// AnyProtocol is as the browser: HTTP/2 or HTTP/1.1 as ALPN picks,
	// and HTTP/3 for an origin whose Alt-Svc offered h3 to a Session of
	// the same Transport, racing QUIC against TCP and falling back to TCP
	// without an error when QUIC fails (once guise's QUIC client is built
	// in; until then, never HTTP/3).
	AnyProtocol Protocol = iota
	// HTTP1 is HTTP/1.1 only: the ClientHello offers only http/1.1, as
	// the browser's does with HTTP/2 disabled (for Chrome, also without
	// the ALPS extension).
	HTTP1
	// HTTP2 is HTTP/2 or HTTP/1.1 as ALPN picks, never HTTP/3.
	HTTP2
	// HTTP3 is HTTP/3 only, without Alt-Svc and without falling back
	// (curl's --http3-only). It fails with ErrProtocolUnsupported before
	// anything is sent for http:// URLs, through a proxy (browsers send
	// no HTTP/3 through HTTP or SOCKS proxies), and while guise's own
	// QUIC client is not built in.
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
// unless AnyProtocol, else the Session's. A value without a name fails
// with ErrProtocolUnsupported before anything is sent; HTTP3 is checked
// against the route by the Transport (h3Route).
func resolveProtocol(req, session Protocol) (Protocol, error) {
	p := pick(req, session)
	switch p {
	case AnyProtocol, HTTP1, HTTP2, HTTP3:
		return p, nil
	}
	return p, fmt.Errorf("%w: Protocol(%d)", ErrProtocolUnsupported, uint8(p))
}
