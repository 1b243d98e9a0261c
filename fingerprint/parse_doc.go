// Package fingerprint computes what public fingerprinting services compute
// from a client's first bytes: JA3, JA3N and JA4 (with its _r, _o and _ro
// variants) from a TLS ClientHello, the Akamai HTTP/2 string from the HTTP/2
// connection preface, and JA4H from an HTTP request head. It is guise's test
// oracle: the tests pin every value against recordings of real browsers.
//
// The parsers (ParseClientHello, ParseHTTP2, ParseHTTP1Request) read
// untrusted peer bytes: they never panic and never read out of range, and
// report malformed or incomplete input as a *ParseError.
//
// Server is an echo server, a local stand-in for the public fingerprint
// services: it terminates TLS with an in-memory CA (see NewCA), records each
// connection's raw ClientHello, HTTP/2 frames and HTTP/1.1 request heads as a
// ConnRecord, serves pages that make a browser do a navigation,
// sub-resources, fetch() calls, a request to a second host and a resumed
// connection, and answers /api/all with what the calling request sent and
// /api/conns with every connection. The same server drives capture:
// BuildProfile turns the records of a real browser's visits into a
// profile.Profile, and BodyHeaderSet the header sets of its requests with a
// body. The recordings under testdata/recordings pin every value the tests
// compare.
package fingerprint
