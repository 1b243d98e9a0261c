package tls13

import (
	"errors"
	"fmt"
)

// Handshake message types (RFC 8446 4, RFC 8879 7.2).
const (
	msgClientHello            = 1
	msgServerHello            = 2
	msgEncryptedExtensions    = 8
	msgCertificate            = 11
	msgCertificateVerify      = 15
	msgFinished               = 20
	msgKeyUpdate              = 24
	msgCompressedCertificate  = 25
	msgMessageHash            = 254
	extServerName             = 0
	extSupportedGroups        = 10
	extSignatureAlgorithms    = 13
	extALPN                   = 16
	extCompressCertificate    = 27
	extSupportedVersions      = 43
	extKeyShare               = 51
	versionTLS13              = 0x0304
	suiteAES128GCMSHA256      = 0x1301
	groupX25519               = 0x001d
	sigECDSAP256SHA256        = 0x0403
	legacyVersionTLS12        = 0x0303
	compressionMethodNull     = 0
	maxCompressionAlgorithms  = 127 // algorithms<2..2^8-2>
	x25519KeyLength           = 32
	finishedLength            = hashLen
	certificateVerifyContext  = "TLS 1.3, server CertificateVerify"
	certificateVerifyPadBytes = 64
)

// keyShare is one KeyShareEntry of the client's key_share extension.
type keyShare struct {
	group uint16
	key   []byte
}

// clientHello is what the server uses of a ClientHello.
type clientHello struct {
	raw       []byte // the whole message, header included (for the transcript)
	sessionID []byte
	suites    []uint16
	versions  []uint16 // supported_versions
	groups    []uint16 // supported_groups
	shares    []keyShare
	sigAlgs   []uint16
	alpn      []string
	// certAlgs is the compress_certificate list in the client's order;
	// nil when the extension is absent.
	certAlgs []Algorithm
}

// cursor reads big-endian fields from b; a read past the end clears ok and
// returns zeros.
type cursor struct {
	b  []byte
	ok bool
}

func (c *cursor) take(n int) []byte {
	if !c.ok || n < 0 || n > len(c.b) {
		c.ok = false
		return nil
	}
	v := c.b[:n]
	c.b = c.b[n:]
	return v
}

func (c *cursor) u8() int {
	b := c.take(1)
	if b == nil {
		return 0
	}
	return int(b[0])
}

func (c *cursor) u16() int {
	b := c.take(2)
	if b == nil {
		return 0
	}
	return int(b[0])<<8 | int(b[1])
}

func (c *cursor) vec8() []byte  { return c.take(c.u8()) }
func (c *cursor) vec16() []byte { return c.take(c.u16()) }

// u16s reads a vector of uint16 values whose byte length has the given
// prefix size (1 or 2 bytes).
func (c *cursor) u16s(prefix int) []uint16 {
	var body []byte
	if prefix == 1 {
		body = c.vec8()
	} else {
		body = c.vec16()
	}
	if len(body)%2 != 0 {
		c.ok = false
		return nil
	}
	v := make([]uint16, 0, len(body)/2)
	for i := 0; i < len(body); i += 2 {
		v = append(v, uint16(body[i])<<8|uint16(body[i+1]))
	}
	return v
}

var errMalformedHello = errors.New("tls13: malformed client hello")

// parseClientHello parses msg, a ClientHello handshake message with its
// header (RFC 8446 4.1.2).
func parseClientHello(msg []byte) (*clientHello, error) {
	if len(msg) < 4 || msg[0] != msgClientHello {
		return nil, fmt.Errorf("tls13: expected a client hello, got message type %d", msg[0])
	}
	ch := &clientHello{raw: msg}
	c := &cursor{b: msg[4:], ok: true}
	c.u16()    // legacy_version
	c.take(32) // random
	ch.sessionID = c.vec8()
	ch.suites = c.u16s(2)
	c.vec8() // legacy_compression_methods
	exts := &cursor{b: c.vec16(), ok: c.ok}
	if !c.ok || len(c.b) != 0 {
		return nil, errMalformedHello
	}
	seen := map[int]bool{}
	for exts.ok && len(exts.b) > 0 {
		typ := exts.u16()
		body := &cursor{b: exts.vec16(), ok: exts.ok}
		if !exts.ok {
			break
		}
		if seen[typ] {
			return nil, fmt.Errorf("tls13: client hello repeats extension %d", typ)
		}
		seen[typ] = true
		switch typ {
		case extSupportedVersions:
			ch.versions = body.u16s(1)
		case extSupportedGroups:
			ch.groups = body.u16s(2)
		case extSignatureAlgorithms:
			ch.sigAlgs = body.u16s(2)
		case extKeyShare:
			shares := &cursor{b: body.vec16(), ok: body.ok}
			for shares.ok && len(shares.b) > 0 {
				g := shares.u16()
				k := shares.vec16()
				if shares.ok {
					ch.shares = append(ch.shares, keyShare{group: uint16(g), key: k})
				}
			}
			body.ok = body.ok && shares.ok
		case extALPN:
			names := &cursor{b: body.vec16(), ok: body.ok}
			for names.ok && len(names.b) > 0 {
				if n := names.vec8(); names.ok {
					ch.alpn = append(ch.alpn, string(n))
				}
			}
			body.ok = body.ok && names.ok
		case extCompressCertificate:
			algs := body.u16s(1)
			if len(algs) == 0 || len(algs) > maxCompressionAlgorithms {
				body.ok = false
			}
			ch.certAlgs = make([]Algorithm, 0, len(algs))
			for _, a := range algs {
				ch.certAlgs = append(ch.certAlgs, Algorithm(a))
			}
		default:
			body.b = nil // not used by this server
		}
		if !body.ok || len(body.b) != 0 {
			return nil, fmt.Errorf("tls13: malformed extension %d in the client hello", typ)
		}
	}
	if !exts.ok {
		return nil, errMalformedHello
	}
	return ch, nil
}

// share returns the client's key share for group.
func (ch *clientHello) share(group uint16) ([]byte, bool) {
	for _, s := range ch.shares {
		if s.group == group {
			return s.key, true
		}
	}
	return nil, false
}
