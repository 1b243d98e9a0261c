// Package quic is guise's QUIC client connection, built as a browser's
// QUIC stack builds its connections from the profile's recorded data
// (profile.QUIC): the first flight (connection IDs, transport parameters,
// the Initial datagrams laid out as Chromium's quiche or Firefox's neqo
// lays them out), then the handshake, streams, flow control and loss
// recovery of RFC 9000, 9001 and 9002, for HTTP/3 above it.
//
// Dial sends the first flight that Flight builds (its bytes are what
// TestFirstFlightMatchesRecordings checks) and runs the handshake to
// completion; OpenStream, OpenUniStream and AcceptUniStream give the
// streams HTTP/3 needs. Every random choice comes from Config.Rand. The
// TLS handshake is internal/tlsfp's (the only uTLS importer), driven by
// its QUIC events: secrets become packet protection keys (internal/
// quicwire), CRYPTO data flows both ways per level.
//
// # Concurrency
//
// A Conn has one lock (Conn.mu) over all of its state and two
// goroutines. run reads the PacketConn and runs the timers: it blocks
// with the socket's read deadline set to the earliest timer (ACK delay,
// loss time or PTO, idle timeout), so a timer firing is a read that
// times out; on Linux one recvmmsg takes every datagram queued, and they
// are processed under the lock one after the other. The deadline moves
// only when a timer comes earlier than the one set: a later one (the idle
// timer, pushed back by every packet) waits for the set one to fire and
// find nothing due.
//
// sender sends. Application calls (Write, Read, Close, CancelRead,
// CancelWrite) and run queue frames under the lock and wake sender
// through a channel of one slot; sender yields once, so that the
// goroutines ready to run queue theirs too, then builds every datagram
// there is and writes them: runs of equal-sized datagrams in one sendmsg
// with UDP_SEGMENT (GSO) where the kernel offers it, one by one after the
// kernel refuses it once. A request's PRIORITY_UPDATE, HEADERS and FIN,
// the ACK of a batch read and the requests its responses let start leave
// together. The first flight is written by Dial, one datagram at a time,
// before either goroutine starts.
//
// Waiting (Read with nothing buffered, Write with a full buffer,
// OpenStream at the server's stream limit) is on a per-stream or
// per-connection channel of one slot, signalled under the lock, with the
// stream's deadline and the connection's done channel. Closing sets the
// read deadline in the past so that run wakes and returns, and closes
// done, which ends sender; CloseWithError waits for both.
//
// The Conn never closes the PacketConn, which must serve this connection
// alone; the caller closes it after Done.
//
// # Resumption and 0-RTT
//
// With Config.TLS.Sessions, the server's tickets, its NEW_TOKEN token
// and its transport parameters are kept there (tlsfp's scope rules), and
// the next connection resumes with a ticket as the profile's browser
// does. When the ticket allows 0-RTT, Dial returns right after the first
// flight: what the caller writes until the 1-RTT key goes in 0-RTT
// packets, under the limits remembered with the ticket (RFC 9000
// §7.4.1); HandshakeComplete says when the handshake is done,
// UsedEarlyData whether the server took the 0-RTT data. A declined
// 0-RTT is sent again in 1-RTT, under the server's new limits; if 0-RTT
// already sent past them, the connection ends with ErrEarlyLimits.
//
// # Not done
//
// No connection migration or path validation beyond answering
// PATH_CHALLENGE, no pacing, no ECN, no persistent congestion
// detection, no key update initiated by the client (the server's are
// followed), server-initiated bidirectional streams are refused by
// dropping their data (HTTP/3 servers open none), DATAGRAM frames are
// dropped.
package quic
