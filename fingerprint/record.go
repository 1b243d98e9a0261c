package fingerprint

import (
	"bytes"
	"crypto/tls"
	"net"
	"sync"
	"time"
)

// Transport names in [ConnRecord.Transport].
const (
	TransportTLS = "tls" // TLS over TCP
	TransportTCP = "tcp" // plain TCP (http:// visits)
	// TransportQUIC (quic_record.go) is QUIC v1 over UDP.
)

// Protocol names in [ConnRecord.Protocol], as in ALPN.
const (
	ProtoH2    = "h2"
	ProtoHTTP1 = "http/1.1"
)

// h2Preface is the client connection preface of HTTP/2 (RFC 9113 3.4).
const h2Preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// ConnRecord is what one client connection sent to the echo server: the raw
// TLS records carrying its ClientHello, what the handshake negotiated, and
// the (decrypted) bytes the client sent afterwards, from which its HTTP/1.1
// request heads or HTTP/2 frames are read.
//
// A ConnRecord is a snapshot: the Server hands out a new one on every call
// and never modifies it afterwards, so it may be read from any goroutine.
// Its byte slices are shared with the Server and with other snapshots and
// must not be modified.
type ConnRecord struct {
	// ID numbers the server's connections from 1 in accept order.
	ID uint64
	// Start is when the connection was accepted; End when it was closed
	// (zero while it is open).
	Start, End time.Time
	// Transport is TransportTLS or TransportTCP.
	Transport string
	// RemoteAddr and LocalAddr are the TCP addresses ("ip:port").
	RemoteAddr, LocalAddr string
	// ClientHelloRecord holds the TLS records that carried the ClientHello,
	// exactly as received (record headers included). Nil for TransportTCP.
	ClientHelloRecord []byte
	// Negotiated is what the TLS handshake agreed on; nil when there was no
	// TLS or the handshake failed.
	Negotiated *Negotiated
	// Protocol is ProtoH2 or ProtoHTTP1 once known (ALPN for TLS, the
	// preface for plain TCP); empty before the client sent anything.
	Protocol string
	// ClientBytes is the start of what the client sent after the handshake
	// (decrypted), at most the server's MaxClientBytes.
	ClientBytes []byte
	// ClientBytesTotal counts every byte the client sent after the
	// handshake, including those beyond the ClientBytes limit.
	ClientBytesTotal int64
	// Requests counts the HTTP requests the server has answered on the
	// connection.
	Requests int
	// Err says why the connection failed before HTTP ("" if it did not).
	Err string
	// QUIC holds a TransportQUIC connection's datagrams and streams (nil
	// for TCP). RemoteAddr and LocalAddr are then UDP addresses.
	QUIC *QUICRecord
}

// Negotiated is what a TLS handshake agreed on, named as crypto/tls names
// things ("TLS 1.3", "TLS_AES_128_GCM_SHA256", "X25519MLKEM768").
type Negotiated struct {
	Version     string `json:"version"`
	CipherSuite string `json:"cipher_suite"`
	ALPN        string `json:"alpn"`
	ServerName  string `json:"server_name"`
	Resumed     bool   `json:"resumed"`
	Group       string `json:"group"`
}

// negotiated summarises a completed handshake.
func negotiated(st tls.ConnectionState) *Negotiated {
	n := &Negotiated{
		Version:     tls.VersionName(st.Version),
		CipherSuite: tls.CipherSuiteName(st.CipherSuite),
		ALPN:        st.NegotiatedProtocol,
		ServerName:  st.ServerName,
		Resumed:     st.DidResume,
	}
	if st.CurveID != 0 {
		n.Group = st.CurveID.String()
	}
	return n
}

// Truncated reports whether the client sent more than ClientBytes holds.
func (r *ConnRecord) Truncated() bool { return r.ClientBytesTotal > int64(len(r.ClientBytes)) }

// Open reports whether the connection was still open when the snapshot
// was taken.
func (r *ConnRecord) Open() bool { return r.End.IsZero() }

// liveConn is the server's mutable state for one connection. rec is
// append-only: snapshots share its byte slices (capped at their length),
// so appends never touch bytes a snapshot can see.
type liveConn struct {
	srv *Server
	raw net.Conn // the accepted TCP connection
	max int

	mu      sync.Mutex
	rec     ConnRecord
	h1Seen  int             // HTTP/1 requests handled so far
	claimed map[uint32]bool // HTTP/2 streams already matched to a handler
	ended   bool

	quicSCID  []byte          // a QUIC connection's client SCID (quic_server.go)
	early0RTT map[uint64]bool // streams begun in 0-RTT packets (earlyTrace)

	served sync.Once // releases the server's wait for the net/http goroutine
}

// snapshot returns an immutable copy of the record.
func (lc *liveConn) snapshot() *ConnRecord {
	lc.mu.Lock()
	r := lc.rec
	r.QUIC = r.QUIC.clone()
	lc.mu.Unlock()
	r.ClientBytes = r.ClientBytes[:len(r.ClientBytes):len(r.ClientBytes)]
	return &r
}

// tee records bytes the client sent.
func (lc *liveConn) tee(p []byte) {
	lc.mu.Lock()
	lc.rec.ClientBytesTotal += int64(len(p))
	if room := lc.max - len(lc.rec.ClientBytes); room > 0 {
		if len(p) > room {
			p = p[:room]
		}
		lc.rec.ClientBytes = append(lc.rec.ClientBytes, p...)
	}
	if lc.rec.Protocol == "" && len(lc.rec.ClientBytes) > 0 {
		lc.rec.Protocol = sniffProtocol(lc.rec.ClientBytes)
	}
	lc.mu.Unlock()
}

// sniffProtocol tells HTTP/2 with prior knowledge from HTTP/1 by the
// first bytes; it returns "" while they are a proper prefix of the preface.
func sniffProtocol(b []byte) string {
	n := min(len(b), len(h2Preface))
	if string(b[:n]) != h2Preface[:n] {
		return ProtoHTTP1
	}
	if n == len(h2Preface) {
		return ProtoH2
	}
	return ""
}

// finish marks the connection ended (once) and tells the server.
func (lc *liveConn) finish(errText string) {
	lc.mu.Lock()
	if lc.ended {
		lc.mu.Unlock()
		return
	}
	lc.ended = true
	lc.rec.End = time.Now()
	if errText != "" && lc.rec.Err == "" {
		lc.rec.Err = errText
	}
	lc.mu.Unlock()
	lc.srv.connEnded(lc)
}

// nextH1 returns the index of the next HTTP/1 request on the connection, in
// the order the handlers run (which is the order of the requests).
func (lc *liveConn) nextH1() int {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	i := lc.h1Seen
	lc.h1Seen++
	return i
}

// claimStream marks an HTTP/2 stream as matched; it reports false if it
// already was.
func (lc *liveConn) claimStream(id uint32) bool {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	if lc.claimed[id] {
		return false
	}
	if lc.claimed == nil {
		lc.claimed = make(map[uint32]bool)
	}
	lc.claimed[id] = true
	return true
}

// isPreface reports whether b starts with the HTTP/2 preface.
func isPreface(b []byte) bool { return bytes.HasPrefix(b, []byte(h2Preface)) }
