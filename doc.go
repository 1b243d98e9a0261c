// Package guise is an HTTP client whose requests look, on the wire, like a
// real browser's: the TLS ClientHello, the HTTP/2 preface and frames, and the
// header order, case and values are those recorded from the browser named by
// a profile. It is also built to do less work per request than net/http.
//
// Three scopes decide what requests share:
//
//   - Get and Do are isolated visits: a new connection per call, no TLS
//     session resumption, no cookies kept.
//   - A Session keeps its connections (and cookies) until Close.
//   - A Transport is a connection pool that Sessions share when told to.
//
// Every error returned by a request is an *Error.
package guise
