package proxy

import (
	"fmt"
	"io"
	"net"
	"net/netip"
)

// SOCKS5 constants (RFC 1928, RFC 1929).
const (
	socks5Version  = 0x05
	authVersion    = 0x01
	methodNoAuth   = 0x00
	methodUserPass = 0x02
	cmdConnect     = 0x01
	atypIPv4       = 0x01
	atypDomain     = 0x03
	atypIPv6       = 0x04
	socks4Version  = 0x04
	socks4Granted  = 0x5A
	socks5BufSize  = 3 + 2*255 // the RFC 1929 request is the largest message
)

// socks5 runs the SOCKS5 handshake over nc for host:port. A valid ip is sent
// as an address; otherwise host is sent as a domain name (at most 255 bytes;
// the caller checked). It reads exactly the bytes the server's messages
// declare, never more.
func socks5(nc net.Conn, host string, ip netip.Addr, port string, c *config) error {
	buf := make([]byte, 0, socks5BufSize)

	// Method selection.
	if c.hasAuth {
		buf = append(buf, socks5Version, 2, methodNoAuth, methodUserPass)
	} else {
		buf = append(buf, socks5Version, 1, methodNoAuth)
	}
	if _, err := nc.Write(buf); err != nil {
		return err
	}
	if err := readFull(nc, buf[:2]); err != nil {
		return err
	}
	if buf[0] != socks5Version {
		return fmt.Errorf("%w: socks5 method reply version 0x%02x", ErrMalformedReply, buf[0])
	}
	switch m := buf[1]; {
	case m == methodNoAuth:
	case m == methodUserPass && c.hasAuth:
		buf = append(buf[:0], authVersion, byte(len(c.user)))
		buf = append(buf, c.user...)
		buf = append(buf, byte(len(c.pass)))
		buf = append(buf, c.pass...)
		if _, err := nc.Write(buf); err != nil {
			return err
		}
		if err := readFull(nc, buf[:2]); err != nil {
			return err
		}
		if buf[0] != authVersion {
			return fmt.Errorf("%w: socks5 auth reply version 0x%02x", ErrMalformedReply, buf[0])
		}
		if buf[1] != 0 {
			return &SOCKSError{Version: 5, Stage: SOCKSAuth, Reply: buf[1]}
		}
	default:
		return &SOCKSError{Version: 5, Stage: SOCKSMethod, Reply: m}
	}

	// CONNECT request.
	p, _ := parsePort(port)
	buf = append(buf[:0], socks5Version, cmdConnect, 0)
	switch {
	case ip.Is4() || ip.Is4In6():
		a := ip.Unmap().As4()
		buf = append(buf, atypIPv4)
		buf = append(buf, a[:]...)
	case ip.Is6():
		a := ip.As16()
		buf = append(buf, atypIPv6)
		buf = append(buf, a[:]...)
	default:
		buf = append(buf, atypDomain, byte(len(host)))
		buf = append(buf, host...)
	}
	buf = append(buf, byte(p>>8), byte(p))
	if _, err := nc.Write(buf); err != nil {
		return err
	}
	return readSOCKS5Reply(nc, buf[:cap(buf)])
}

// readSOCKS5Reply reads a SOCKS5 reply (VER REP RSV ATYP BND.ADDR BND.PORT)
// from r into buf (at least 262 bytes) and checks it.
func readSOCKS5Reply(r io.Reader, buf []byte) error {
	if err := readFull(r, buf[:4]); err != nil {
		return err
	}
	if buf[0] != socks5Version {
		return fmt.Errorf("%w: socks5 reply version 0x%02x", ErrMalformedReply, buf[0])
	}
	if buf[1] != 0 {
		return &SOCKSError{Version: 5, Stage: SOCKSRequest, Reply: buf[1]}
	}
	var n int
	switch buf[3] {
	case atypIPv4:
		n = 4
	case atypIPv6:
		n = 16
	case atypDomain:
		if err := readFull(r, buf[:1]); err != nil {
			return err
		}
		n = int(buf[0])
	default:
		return fmt.Errorf("%w: socks5 reply address type 0x%02x", ErrMalformedReply, buf[3])
	}
	return readFull(r, buf[:n+2])
}

// socks4 runs the SOCKS4 (valid ip) or SOCKS4a (host name) handshake.
func socks4(nc net.Conn, host string, ip netip.Addr, port string, c *config) error {
	p, _ := parsePort(port)
	buf := make([]byte, 0, 9+len(c.user)+len(host)+1)
	buf = append(buf, socks4Version, cmdConnect, byte(p>>8), byte(p))
	if ip.IsValid() {
		a := ip.Unmap().As4()
		buf = append(buf, a[:]...)
		buf = append(buf, c.user...)
		buf = append(buf, 0)
	} else {
		// SOCKS4a: the address 0.0.0.x (x != 0) says a name follows the user id.
		buf = append(buf, 0, 0, 0, 1)
		buf = append(buf, c.user...)
		buf = append(buf, 0)
		buf = append(buf, host...)
		buf = append(buf, 0)
	}
	if _, err := nc.Write(buf); err != nil {
		return err
	}
	return readSOCKS4Reply(nc, buf[:8])
}

// readSOCKS4Reply reads the 8-byte SOCKS4 reply (VN CD DSTPORT DSTIP) into buf.
func readSOCKS4Reply(r io.Reader, buf []byte) error {
	if err := readFull(r, buf[:8]); err != nil {
		return err
	}
	// VN is 0 by the protocol; some servers echo 4.
	if buf[0] != 0 && buf[0] != socks4Version {
		return fmt.Errorf("%w: socks4 reply version 0x%02x", ErrMalformedReply, buf[0])
	}
	if buf[1] != socks4Granted {
		return &SOCKSError{Version: 4, Stage: SOCKSRequest, Reply: buf[1]}
	}
	return nil
}

// readFull is io.ReadFull that reports a connection closed before the end of
// a message as io.ErrUnexpectedEOF, also when no byte of it arrived.
func readFull(r io.Reader, b []byte) error {
	_, err := io.ReadFull(r, b)
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
