// Package h3 is guise's HTTP/3 engine (RFC 9114): a client connection
// that speaks as a given browser (its control stream with the recorded
// SETTINGS order and GREASE, its QPACK streams, its pseudo-header order,
// its QPACK representation choices and its PRIORITY_UPDATE frames) and
// turns every protocol violation of the peer into a typed error.
//
// It runs over any QUIC implementation that fits the small interface in
// quic.go (Conn, Stream, SendStream, ReceiveStream), handed to it already
// connected; it knows nothing of dialling, TLS or pooling. guise's own
// QUIC client (internal/quic) fits it through a thin adapter; tests use
// quic-go's, which production never does (its ClientHello is Go's).
//
// QPACK (RFC 9204) is the package's own: an encoder that, like both
// recorded browsers facing a server that allows no dynamic table, uses
// the static table and literals only, and a decoder with the dynamic
// table the client's SETTINGS allow, bounded in table size, field
// section size and blocked streams.
package h3
