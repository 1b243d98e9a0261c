// Package quicwire reads and writes the parts of QUIC version 1 (RFC 9000,
// RFC 9001) that a client's first flight is made of: variable-length
// integers, long-header packets, Initial packet protection (the keys every
// observer can derive from the client's Destination Connection ID), the
// frames an Initial packet may carry, and the quic_transport_parameters
// TLS extension.
//
// It is the shared ground of the fingerprint recorder, which decrypts and
// takes apart what a browser sends, and of guise's QUIC client, which must
// build the same bytes. It holds no connection state and starts no
// goroutine; every function is safe for concurrent use.
//
// Every parse failure is a *Error whose Err is one of the sentinels below,
// so callers branch with errors.Is. No input makes a function panic or
// loop beyond the length of its input.
package quicwire
