package guise

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
