// Package quicgo adapts quic-go's QUIC connections to internal/h3's Conn,
// and starts quic-go's HTTP/3 server, for tests only: guise never dials
// with quic-go's client in production, since its ClientHello is Go's and
// not the browser's.
package quicgo

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/guise-http/guise/internal/h3"
	"github.com/guise-http/guise/internal/testpeer"
	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

// Conn adapts a *quic.Conn.
type Conn struct{ C *quic.Conn }

var _ h3.Conn = Conn{}

// Adapt wraps c.
func Adapt(c *quic.Conn) Conn { return Conn{C: c} }

func (c Conn) OpenStream(ctx context.Context) (h3.Stream, error) {
	s, err := c.C.OpenStreamSync(ctx)
	if err != nil {
		return nil, translate(err)
	}
	return stream{s}, nil
}

func (c Conn) OpenUniStream(ctx context.Context) (h3.SendStream, error) {
	s, err := c.C.OpenUniStreamSync(ctx)
	if err != nil {
		return nil, translate(err)
	}
	return sendStream{s}, nil
}

func (c Conn) AcceptUniStream(ctx context.Context) (h3.ReceiveStream, error) {
	s, err := c.C.AcceptUniStream(ctx)
	if err != nil {
		return nil, translate(err)
	}
	return recvStream{s}, nil
}

func (c Conn) CloseWithError(code uint64, reason string) error {
	return c.C.CloseWithError(quic.ApplicationErrorCode(code), reason)
}

func (c Conn) Done() <-chan struct{} { return c.C.Context().Done() }

func (c Conn) Err() error {
	select {
	case <-c.C.Context().Done():
		return translate(context.Cause(c.C.Context()))
	default:
		return nil
	}
}

// translate maps quic-go's errors to h3's.
func translate(err error) error {
	if err == nil {
		return nil
	}
	var se *quic.StreamError
	if errors.As(err, &se) && se.Remote {
		return &h3.ResetError{Code: h3.ErrCode(se.ErrorCode)}
	}
	var ae *quic.ApplicationError
	if errors.As(err, &ae) {
		return &h3.CloseError{Code: h3.ErrCode(ae.ErrorCode), Remote: ae.Remote, Reason: ae.ErrorMessage}
	}
	return err
}

type stream struct{ s *quic.Stream }

func (s stream) Read(p []byte) (int, error)         { n, err := s.s.Read(p); return n, translate(err) }
func (s stream) Write(p []byte) (int, error)        { n, err := s.s.Write(p); return n, translate(err) }
func (s stream) Close() error                       { return s.s.Close() }
func (s stream) CancelRead(code uint64)             { s.s.CancelRead(quic.StreamErrorCode(code)) }
func (s stream) CancelWrite(code uint64)            { s.s.CancelWrite(quic.StreamErrorCode(code)) }
func (s stream) ID() uint64                         { return uint64(s.s.StreamID()) }
func (s stream) SetReadDeadline(t time.Time) error  { return s.s.SetReadDeadline(t) }
func (s stream) SetWriteDeadline(t time.Time) error { return s.s.SetWriteDeadline(t) }

type sendStream struct{ s *quic.SendStream }

func (s sendStream) Write(p []byte) (int, error)        { n, err := s.s.Write(p); return n, translate(err) }
func (s sendStream) Close() error                       { return s.s.Close() }
func (s sendStream) CancelWrite(code uint64)            { s.s.CancelWrite(quic.StreamErrorCode(code)) }
func (s sendStream) ID() uint64                         { return uint64(s.s.StreamID()) }
func (s sendStream) SetWriteDeadline(t time.Time) error { return s.s.SetWriteDeadline(t) }

type recvStream struct{ s *quic.ReceiveStream }

func (s recvStream) Read(p []byte) (int, error)        { n, err := s.s.Read(p); return n, translate(err) }
func (s recvStream) CancelRead(code uint64)            { s.s.CancelRead(quic.StreamErrorCode(code)) }
func (s recvStream) ID() uint64                        { return uint64(s.s.StreamID()) }
func (s recvStream) SetReadDeadline(t time.Time) error { return s.s.SetReadDeadline(t) }

// Dial opens a QUIC connection with ALPN h3 to addr with quic-go's client,
// trusting roots for serverName. The returned Conn owns the UDP socket.
func Dial(ctx context.Context, pc net.PacketConn, raddr net.Addr, roots *x509.CertPool, serverName string) (Conn, error) {
	tc := &tls.Config{RootCAs: roots, ServerName: serverName, NextProtos: []string{"h3"}}
	var c *quic.Conn
	var err error
	qcfg := &quic.Config{EnableDatagrams: true, HandshakeIdleTimeout: 5 * time.Second, MaxIdleTimeout: 30 * time.Second}
	if pc == nil {
		c, err = quic.DialAddr(ctx, raddr.String(), tc, qcfg)
	} else {
		c, err = quic.Dial(ctx, pc, raddr, tc, qcfg)
	}
	if err != nil {
		return Conn{}, err
	}
	return Conn{C: c}, nil
}

// Server is quic-go's HTTP/3 server on 127.0.0.1, with a certificate for
// localhost and 127.0.0.1 from testpeer.
type Server struct {
	Addr *net.UDPAddr
	Cert *testpeer.Cert
	srv  *http3.Server
	pc   net.PacketConn
}

// HTTP3Server starts quic-go's HTTP/3 server with h; it stops at the end
// of the test.
func HTTP3Server(tb testing.TB, h http.Handler) *Server {
	tb.Helper()
	cert := testpeer.Localhost(tb)
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	s := &Server{Addr: pc.LocalAddr().(*net.UDPAddr), Cert: cert, pc: pc}
	s.srv = &http3.Server{Handler: h, TLSConfig: http3.ConfigureTLSConfig(cert.ServerConfig("h3"))}
	done := make(chan struct{})
	go func() { defer close(done); s.srv.Serve(pc) }()
	tb.Cleanup(func() {
		s.srv.Close()
		pc.Close()
		<-done
	})
	return s
}

// Listen starts a raw QUIC listener (ALPN h3) on 127.0.0.1 for scripted
// HTTP/3 peers; it closes at the end of the test.
func Listen(tb testing.TB) (*quic.Listener, *testpeer.Cert) {
	tb.Helper()
	cert := testpeer.Localhost(tb)
	l, err := quic.ListenAddr("127.0.0.1:0", cert.ServerConfig("h3"), &quic.Config{EnableDatagrams: true, MaxIdleTimeout: 30 * time.Second})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { l.Close() })
	return l, cert
}
