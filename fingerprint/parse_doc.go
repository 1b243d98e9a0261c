// Package fingerprint computes what public fingerprinting services compute
// from a client's first bytes: JA3, JA3N and JA4 (with its _r, _o and _ro
// variants) from a TLS ClientHello, the Akamai HTTP/2 string from the HTTP/2
// connection preface, and JA4H from an HTTP request head. It is guise's test
// oracle: the tests pin every value against recordings of real browsers.
//
// The parsers (ParseClientHello, ParseHTTP2, ParseHTTP1Request) read
// untrusted peer bytes: they never panic and never read out of range, and
// report malformed or incomplete input as a *ParseError.
package fingerprint
