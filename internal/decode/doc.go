// Package decode undoes HTTP content codings (RFC 9110 section 8.4): gzip (and its
// legacy alias x-gzip), deflate, br and zstd.
//
// Chain turns the Content-Encoding field lines of a response into the list of codings
// that were applied, and NewReader returns a reader that undoes them over a body.
// Decoders are pooled and reused between bodies, the decoded size is capped, and
// corrupt input is reported as a typed *Error rather than as a silently short body.
//
// The package holds no global state besides its decoder pools and is safe for
// concurrent use by many bodies at once.
package decode
