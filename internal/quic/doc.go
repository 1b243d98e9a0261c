// Package quic builds guise's QUIC client connection as a browser's QUIC
// stack does, from the profile's recorded data (profile.QUIC). It holds
// the first flight today: the connection IDs, the transport parameters
// and the Initial datagrams that carry the ClientHello, laid out as
// Chromium's quiche or Firefox's neqo lays them out and sealed with the
// Initial keys (internal/quicwire). Loss recovery, the Handshake and 1-RTT
// spaces, streams and HTTP/3 are not written yet: this is not a client.
//
// Every random choice comes from an injected io.Reader, so that tests are
// deterministic. The TLS handshake itself is internal/tlsfp's (the only
// uTLS importer); this package never imports uTLS.
package quic
