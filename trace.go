package guise

import (
	"context"
	"crypto/tls"
	"net"
	"time"

	"github.com/guise-http/guise/internal/tlsfp"
)

// Timings says where a request's time went. Durations of the connection
// phases are zero when the request reused a connection. guise also reports
// these events to a net/http/httptrace.ClientTrace carried by the request's
// context (httptrace.WithClientTrace), so instrumentation written for
// net/http, such as OpenTelemetry's, works unchanged.
type Timings struct {
	Start   time.Time     // when the request (this hop) started
	Connect time.Duration // name resolution and TCP connect (and the proxy handshake)
	TLS     time.Duration // TLS handshake
	GotConn time.Duration // from Start until a connection was ready
	Head    time.Duration // from Start until the response head was parsed
	Reused  bool          // the connection had served a request before
}

// dialTimes are the connection phases of a freshly dialed connection.
type dialTimes struct {
	connect, tls time.Duration
}

// dialTCP connects to addr. DNS and connect events reach a ClientTrace in
// ctx through net.Dialer itself, which reads httptrace's hooks from the
// context.
func (st *transportState) dialTCP(ctx context.Context, addr string, dt *dialTimes) (net.Conn, error) {
	start := time.Now()
	nc, err := st.dial(ctx, "tcp", addr)
	dt.connect = time.Since(start)
	return nc, err
}

// tlsState converts the handshake's result for httptrace.
func tlsState(s tlsfp.State, serverName string) tls.ConnectionState {
	return tls.ConnectionState{
		Version:            s.Version,
		HandshakeComplete:  true,
		DidResume:          s.Resumed,
		CipherSuite:        s.CipherSuite,
		NegotiatedProtocol: s.ALPN,
		ServerName:         serverName,
		PeerCertificates:   s.PeerCertificates,
	}
}
