package guise

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"time"

	"github.com/guise-http/guise/internal/h3"
	"github.com/guise-http/guise/internal/quic"
	"github.com/guise-http/guise/internal/tlsfp"
)

// dialGuiseQUIC is guise's own QUIC client (internal/quic) as a
// quicDialer: the profile's QUIC first flight and ClientHello, o's
// certificate verification, a UDP socket of its own that closes with the
// connection. Tickets are kept in and taken from sessions (see
// tlsfp.QUICClient): a resumed QUIC connection offers the ticket and
// early_data as Chromium does and returns before the handshake completes,
// so that the control stream and idempotent requests go in 0-RTT.
func dialGuiseQUIC(ctx context.Context, addr, serverName string, o *options, sessions *tlsfp.SessionCache) (h3.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	ip, err := resolveUDP(ctx, host)
	if err != nil {
		return nil, err
	}
	pn, err := net.LookupPort("udp", port)
	if err != nil {
		return nil, err
	}
	network := "udp4"
	if ip.Is6() {
		network = "udp6"
	}
	// A connected socket, as Chromium's: the server's ICMP port
	// unreachable fails the dial at once.
	raddr := net.UDPAddrFromAddrPort(netip.AddrPortFrom(ip, uint16(pn)))
	pc, err := net.DialUDP(network, nil, raddr)
	if err != nil {
		return nil, err
	}
	cfg := &quic.Config{
		TLS:        &tlsfp.Config{Profile: o.profile.p, RootCAs: o.rootCAs, TrustStore: o.trust, InsecureSkipVerify: o.insecure, Sessions: sessions},
		ServerName: serverName,
	}
	c, err := quic.Dial(ctx, pc, raddr, cfg)
	if err != nil {
		pc.Close()
		return nil, err
	}
	go func() {
		<-c.Done()
		pc.Close()
	}()
	return quicConn{c}, nil
}

// resolveUDP returns host's first address, IPv4 first.
func resolveUDP(ctx context.Context, host string) (netip.Addr, error) {
	if ip, err := netip.ParseAddr(host); err == nil {
		return ip.Unmap(), nil
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return netip.Addr{}, err
	}
	for _, ip := range ips {
		if ip.Unmap().Is4() {
			return ip.Unmap(), nil
		}
	}
	if len(ips) == 0 {
		return netip.Addr{}, fmt.Errorf("guise: no address for %s", host)
	}
	return ips[0], nil
}

// quicConn adapts a *quic.Conn to h3.Conn.
type quicConn struct{ c *quic.Conn }

var _ h3.Conn = quicConn{}

func (q quicConn) OpenStream(ctx context.Context) (h3.Stream, error) {
	s, err := q.c.OpenStream(ctx)
	if err != nil {
		return nil, quicErr(err)
	}
	return quicStream{s}, nil
}

func (q quicConn) OpenUniStream(ctx context.Context) (h3.SendStream, error) {
	s, err := q.c.OpenUniStream(ctx)
	if err != nil {
		return nil, quicErr(err)
	}
	return quicSendStream{s}, nil
}

func (q quicConn) AcceptUniStream(ctx context.Context) (h3.ReceiveStream, error) {
	s, err := q.c.AcceptUniStream(ctx)
	if err != nil {
		return nil, quicErr(err)
	}
	return quicRecvStream{s}, nil
}

func (q quicConn) CloseWithError(code uint64, reason string) error {
	return q.c.CloseWithError(code, reason)
}
func (q quicConn) Done() <-chan struct{} { return q.c.Done() }

// HandshakeComplete is closed when the QUIC handshake completes; a
// connection that resumed with 0-RTT comes from the dial before that.
func (q quicConn) HandshakeComplete() <-chan struct{} { return q.c.HandshakeComplete() }
func (q quicConn) Err() error                         { return quicErr(q.c.Err()) }

// ReleaseFlight sends the first flight's datagram held back for the first
// 0-RTT packet (see quic.Conn.ReleaseFlight).
func (q quicConn) ReleaseFlight() { q.c.ReleaseFlight() }

// quicErr maps internal/quic's errors to what internal/h3 tells apart: a
// peer's stream reset, a peer's application close, a deadline.
func quicErr(err error) error {
	if err == nil || err == io.EOF {
		return err // the end of every response: no errors.As (it allocates)
	}
	var se *quic.StreamError
	if errors.As(err, &se) && se.Remote {
		return &h3.ResetError{Code: h3.ErrCode(se.Code)}
	}
	var ce *quic.ConnectionError
	if errors.As(err, &ce) && ce.App {
		return &h3.CloseError{Code: h3.ErrCode(ce.Code), Remote: ce.Remote, Reason: ce.Reason}
	}
	if errors.Is(err, quic.ErrDeadline) && !errors.Is(err, os.ErrDeadlineExceeded) {
		return fmt.Errorf("%w: %w", os.ErrDeadlineExceeded, err)
	}
	return err
}

type quicStream struct{ s *quic.Stream }

func (s quicStream) Read(p []byte) (int, error)         { n, err := s.s.Read(p); return n, quicErr(err) }
func (s quicStream) Write(p []byte) (int, error)        { n, err := s.s.Write(p); return n, quicErr(err) }
func (s quicStream) Close() error                       { return s.s.Close() }
func (s quicStream) CancelRead(code uint64)             { s.s.CancelRead(code) }
func (s quicStream) CancelWrite(code uint64)            { s.s.CancelWrite(code) }
func (s quicStream) ID() uint64                         { return s.s.ID() }
func (s quicStream) SetReadDeadline(t time.Time) error  { return s.s.SetReadDeadline(t) }
func (s quicStream) SetWriteDeadline(t time.Time) error { return s.s.SetWriteDeadline(t) }

type quicSendStream struct{ s *quic.SendStream }

func (s quicSendStream) Write(p []byte) (int, error)        { n, err := s.s.Write(p); return n, quicErr(err) }
func (s quicSendStream) Close() error                       { return s.s.Close() }
func (s quicSendStream) CancelWrite(code uint64)            { s.s.CancelWrite(code) }
func (s quicSendStream) ID() uint64                         { return s.s.ID() }
func (s quicSendStream) SetWriteDeadline(t time.Time) error { return s.s.SetWriteDeadline(t) }

type quicRecvStream struct{ s *quic.ReceiveStream }

func (s quicRecvStream) Read(p []byte) (int, error)        { n, err := s.s.Read(p); return n, quicErr(err) }
func (s quicRecvStream) CancelRead(code uint64)            { s.s.CancelRead(code) }
func (s quicRecvStream) ID() uint64                        { return s.s.ID() }
func (s quicRecvStream) SetReadDeadline(t time.Time) error { return s.s.SetReadDeadline(t) }
