// Package h1 is the HTTP/1.1 client wire engine: it writes one request on a
// connection and parses the response, with fixed-length, chunked and
// close-delimited body readers and a drain-or-close policy for bodies the
// caller abandons.
//
// A Conn carries one request at a time. The response head is parsed from the
// connection's read buffer and copied once into a single string that all
// header names and values slice into. A body that already sits completely in
// the read buffer is handed over inline and the connection is released at
// once; otherwise the body reads straight from the connection.
//
// Parsing policy (strict, RFC 9112):
//
//   - Every line of a response head, a chunk-size line and a trailer section
//     must end in CRLF. A bare LF is rejected (ProtocolError Kind "line ending"),
//     and so is a bare CR anywhere in the head.
//   - obs-fold (a line starting with SP or HTAB) is rejected, never joined.
//   - A field name is a token; whitespace before the colon is rejected. A
//     field value may hold HTAB, SP, visible ASCII and obs-text (bytes >= 0x80,
//     not checked for UTF-8); other control bytes are rejected. Leading and
//     trailing SP/HTAB around a value are not part of it.
//   - Only "HTTP/1.1" and "HTTP/1.0" are accepted as versions; the status code
//     is exactly three digits ("000" to "999").
//   - 1xx responses other than 101 are skipped (at most Config.Max1xx); 101 is
//     an error because this package never asks for an upgrade.
//   - Framing follows RFC 9112 section 6.3; see Response.ContentLength. A
//     Transfer-Encoding list ending in "chunked" is decoded as chunked
//     (other codings in the list are left to the caller; the field stays in
//     Header); any other Transfer-Encoding means read-to-close. Trailing
//     whitespace is not part of a field value, so "chunked " is chunked.
//
// Connection reuse: a connection is released as reusable only when the
// response was framed cleanly and fully consumed, no byte follows it in the
// read buffer, the server did not ask to close, and nothing (timeout, context
// end, write error, early response) is in doubt. Bytes a server sends while
// the connection is idle in a pool cannot be seen without a read; a 408
// answer on a reused connection is therefore taken for the server's idle
// timeout and reported as ErrNoResponse, so the caller may retry.
//
// A request body larger than 16 KiB, or streamed from an io.Reader, is
// written by a goroutine owned by RoundTrip while the response head is read,
// so a response that arrives before the body is sent is delivered (and the
// connection retired); RoundTrip never returns with that goroutine running.
package h1
