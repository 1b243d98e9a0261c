// Package quicwire reads and writes the wire formats of QUIC version 1
// (RFC 9000, RFC 9001): variable-length integers, long headers, packet
// numbers, packet protection (the Initial keys every observer can derive
// from the client's Destination Connection ID, and Handshake and 1-RTT
// keys from TLS secrets for the three TLS 1.3 suites, with key update),
// Retry integrity, every frame type (ParseFrame, and appenders of the
// frames a client sends), and the quic_transport_parameters TLS
// extension.
//
// It is the shared ground of the fingerprint recorder, which decrypts and
// takes apart what a browser sends, and of guise's QUIC client. It holds
// no connection state and starts no goroutine. Every function is safe for
// concurrent use except the in-place methods of Keys (SealInPlace,
// Unprotect, OpenInPlace), which use scratch space in their Keys.
//
// Every parse failure is a *Error whose Err is one of the sentinels below,
// so callers branch with errors.Is. No input makes a function panic or
// loop beyond the length of its input.
package quicwire
