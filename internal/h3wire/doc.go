// Package h3wire reads and writes HTTP/3 framing (RFC 9114): the stream
// type that starts a unidirectional stream, frames, SETTINGS,
// PRIORITY_UPDATE (RFC 9218) and QPACK field sections (RFC 9204) with the
// static table only, which is all a peer may use while the other side
// allows no dynamic table.
//
// It holds no state and starts no goroutine. Every parse failure is a
// *Error whose Err is one of the sentinels below; no input panics or
// loops beyond its length.
package h3wire
