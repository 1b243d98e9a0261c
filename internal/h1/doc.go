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
//   - Framing follows RFC 9112 section 6.3; see Response.ContentLength.
package h1
