// Package ws is the WebSocket framing of RFC 6455 and the permessage-deflate
// extension of RFC 7692, as a client speaks them. It is handed a stream that
// the handshake opened (the connection after an HTTP/1.1 101, or an HTTP/2
// stream after an extended CONNECT) and knows nothing of HTTP, dialling or
// TLS; the handshake's pure parts (the key, the accept value, the extension
// offer and answer) are here so that the root can check them.
//
// Every violation of the peer (reserved bits or opcodes, a masked frame, a
// bad control frame, a bad continuation, invalid UTF-8, a message over the
// limit, a compression bomb, a bad close frame) fails the connection with the
// close code RFC 6455 gives it (1002, 1007, 1009) and a *CloseError that
// says so; nothing the peer sends makes the package panic.
package ws
