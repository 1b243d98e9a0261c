package quicwire

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/binary"
	"errors"
	"hash"

	"golang.org/x/crypto/chacha20"
	"golang.org/x/crypto/chacha20poly1305"
)

// TLS 1.3 cipher suites a QUIC connection may use (RFC 9001 §5.3).
const (
	SuiteAES128GCMSHA256        uint16 = 0x1301
	SuiteAES256GCMSHA384        uint16 = 0x1302
	SuiteChaCha20Poly1305SHA256 uint16 = 0x1303
)

// ErrSuite means a cipher suite QUIC does not define.
var ErrSuite = errors.New("quicwire: unsupported cipher suite")

// TagLen is the AEAD tag size of every QUIC version 1 cipher suite.
const TagLen = 16

// headerProtector computes the header protection mask of a sample.
type headerProtector interface {
	mask(dst *[16]byte, sample []byte)
}

type aesHP struct{ b cipher.Block }

func (h aesHP) mask(dst *[16]byte, sample []byte) { h.b.Encrypt(dst[:], sample[:16]) }

type chachaHP struct{ key [32]byte }

func (h *chachaHP) mask(dst *[16]byte, sample []byte) {
	c, err := chacha20.NewUnauthenticatedCipher(h.key[:], sample[4:16])
	if err != nil {
		panic("quicwire: chacha20: " + err.Error()) // never: the key and nonce sizes are fixed
	}
	c.SetCounter(binary.LittleEndian.Uint32(sample[:4]))
	clear(dst[:5])
	c.XORKeyStream(dst[:5], dst[:5])
}

// NewKeys returns the packet protection keys of one direction of the
// Handshake or 1-RTT level from the TLS traffic secret and the negotiated
// cipher suite (RFC 9001 §5.1). The in-place methods of the result
// (SealInPlace, Unprotect, OpenInPlace) use scratch space in it: they are
// not safe for concurrent use.
func NewKeys(suite uint16, secret []byte) (*Keys, error) {
	var h func() hash.Hash
	var keyLen int
	switch suite {
	case SuiteAES128GCMSHA256:
		h, keyLen = sha256.New, 16
	case SuiteAES256GCMSHA384:
		h, keyLen = sha512.New384, 32
	case SuiteChaCha20Poly1305SHA256:
		h, keyLen = sha256.New, 32
	default:
		return nil, ErrSuite
	}
	k := &Keys{suite: suite, hash: h, secret: append([]byte(nil), secret...)}
	hp := expandLabelHash(h, secret, "quic hp", keyLen)
	if suite == SuiteChaCha20Poly1305SHA256 {
		c := &chachaHP{}
		copy(c.key[:], hp)
		k.hpx = c
	} else {
		b, err := aes.NewCipher(hp)
		if err != nil {
			return nil, err
		}
		k.hp, k.hpx = b, aesHP{b}
	}
	if err := k.setAEAD(secret); err != nil {
		return nil, err
	}
	return k, nil
}

func (k *Keys) setAEAD(secret []byte) error {
	keyLen := 16
	if k.suite != SuiteAES128GCMSHA256 {
		keyLen = 32
	}
	key := expandLabelHash(k.hash, secret, "quic key", keyLen)
	copy(k.iv[:], expandLabelHash(k.hash, secret, "quic iv", 12))
	if k.suite == SuiteChaCha20Poly1305SHA256 {
		a, err := chacha20poly1305.New(key)
		k.aead = a
		return err
	}
	b, err := aes.NewCipher(key)
	if err != nil {
		return err
	}
	k.aead, err = cipher.NewGCM(b)
	return err
}

// Next returns the keys of the next key phase (RFC 9001 §6.1): the
// secret advanced with "quic ku", the header protection key kept.
func (k *Keys) Next() *Keys {
	n := &Keys{suite: k.suite, hash: k.hash, hp: k.hp, hpx: k.hpx}
	n.secret = expandLabelHash(k.hash, k.secret, "quic ku", len(k.secret))
	if err := n.setAEAD(n.secret); err != nil {
		panic("quicwire: key update: " + err.Error()) // never: the suite made the first keys
	}
	return n
}

// SealInPlace protects the packet in pkt: pkt[:hdrLen] is its header
// ending with the pnLen-byte packet number pn, pkt[hdrLen:] the payload,
// with room for the tag in pkt's capacity (it is appended). The payload
// must satisfy pnLen+payload >= 4 (the caller's invariant). It returns
// the whole protected packet.
func (k *Keys) SealInPlace(pkt []byte, hdrLen, pnLen int, pn uint64) []byte {
	k.fillNonce(pn)
	out := k.aead.Seal(pkt[hdrLen:hdrLen], k.nonceBuf[:], pkt[hdrLen:], pkt[:hdrLen])
	pkt = pkt[:hdrLen+len(out)]
	pnOffset := hdrLen - pnLen
	k.hpx.mask(&k.maskBuf, pkt[pnOffset+4:pnOffset+4+hpSampleLen])
	if pkt[0]&0x80 != 0 {
		pkt[0] ^= k.maskBuf[0] & 0x0f
	} else {
		pkt[0] ^= k.maskBuf[0] & 0x1f
	}
	for i := range pnLen {
		pkt[pnOffset+i] ^= k.maskBuf[1+i]
	}
	return pkt
}

// Unprotect removes header protection in place from the packet pkt whose
// packet number starts at pnOffset, and returns the unprotected first
// byte, the packet number length and the truncated packet number.
func (k *Keys) Unprotect(pkt []byte, pnOffset int) (first byte, pnLen int, pn uint64, err error) {
	if pnOffset+4+hpSampleLen > len(pkt) {
		return 0, 0, 0, truncated("header protection sample", pnOffset)
	}
	k.hpx.mask(&k.maskBuf, pkt[pnOffset+4:pnOffset+4+hpSampleLen])
	if pkt[0]&0x80 != 0 {
		pkt[0] ^= k.maskBuf[0] & 0x0f
	} else {
		pkt[0] ^= k.maskBuf[0] & 0x1f
	}
	pnLen = int(pkt[0]&3) + 1
	for i := range pnLen {
		pkt[pnOffset+i] ^= k.maskBuf[1+i]
		pn = pn<<8 | uint64(pkt[pnOffset+i])
	}
	return pkt[0], pnLen, pn, nil
}

// OpenInPlace decrypts the payload of pkt (header pkt[:hdrLen], already
// unprotected, full packet number pn) in place and returns it. On
// failure the payload bytes are undefined.
func (k *Keys) OpenInPlace(pkt []byte, hdrLen int, pn uint64) ([]byte, error) {
	if len(pkt)-hdrLen < TagLen {
		return nil, truncated("packet payload", hdrLen)
	}
	k.fillNonce(pn)
	p, err := k.aead.Open(pkt[hdrLen:hdrLen], k.nonceBuf[:], pkt[hdrLen:], pkt[:hdrLen])
	if err != nil {
		return nil, &Error{What: "packet", Offset: hdrLen, Err: ErrDecrypt}
	}
	return p, nil
}

func (k *Keys) fillNonce(pn uint64) {
	k.nonceBuf = k.iv
	for i := range 8 {
		k.nonceBuf[4+i] ^= byte(pn >> (56 - 8*i))
	}
}

// expandLabelHash is expandLabel with the suite's hash.
func expandLabelHash(h func() hash.Hash, secret []byte, label string, n int) []byte {
	info := make([]byte, 0, 4+6+len(label))
	info = append(info, byte(n>>8), byte(n), byte(6+len(label)))
	info = append(info, "tls13 "...)
	info = append(info, label...)
	info = append(info, 0)
	out, err := hkdf.Expand(h, secret, string(info), n)
	if err != nil {
		panic("quicwire: hkdf expand: " + err.Error()) // never: n is at most 32
	}
	return out
}

// retryKey and retryNonce are QUIC version 1's fixed Retry integrity
// key and nonce (RFC 9001 §5.8).
var (
	retryKey   = [16]byte{0xbe, 0x0c, 0x69, 0x0b, 0x9f, 0x66, 0x57, 0x5a, 0x1d, 0x76, 0x6b, 0x54, 0xe3, 0x68, 0xc8, 0x4e}
	retryNonce = [12]byte{0x46, 0x15, 0x99, 0xd3, 0x5d, 0x63, 0x2b, 0xf2, 0x23, 0x98, 0x25, 0xbb}
)

// RetryToken checks the integrity tag of the Retry packet pkt (the
// whole datagram) sent in answer to an Initial whose Destination
// Connection ID was odcid, and returns its token and the server's new
// Source Connection ID (both alias pkt).
func RetryToken(pkt, odcid []byte) (token, scid []byte, err error) {
	h, err := ParseHeader(pkt)
	if err != nil {
		return nil, nil, err
	}
	if h.Type != PacketRetry {
		return nil, nil, malformed("retry packet type", 0)
	}
	off := 7 + len(h.DCID) + len(h.SCID)
	if len(pkt) < off+TagLen {
		return nil, nil, truncated("retry integrity tag", off)
	}
	b, _ := aes.NewCipher(retryKey[:])
	g, _ := cipher.NewGCM(b)
	pseudo := make([]byte, 0, 1+len(odcid)+len(pkt))
	pseudo = append(pseudo, byte(len(odcid)))
	pseudo = append(pseudo, odcid...)
	pseudo = append(pseudo, pkt[:len(pkt)-TagLen]...)
	if _, err := g.Open(nil, retryNonce[:], pkt[len(pkt)-TagLen:], pseudo); err != nil {
		return nil, nil, &Error{What: "retry integrity tag", Offset: len(pkt) - TagLen, Err: ErrDecrypt}
	}
	return pkt[off : len(pkt)-TagLen], h.SCID, nil
}

// AppendRetry appends a Retry packet (as a server sends it) to dst: for
// tests of a client.
func AppendRetry(dst, dcid, scid, odcid, token []byte) []byte {
	start := len(dst)
	dst = append(dst, 0xff, 0, 0, 0, 1, byte(len(dcid)))
	dst = append(dst, dcid...)
	dst = append(dst, byte(len(scid)))
	dst = append(dst, scid...)
	dst = append(dst, token...)
	b, _ := aes.NewCipher(retryKey[:])
	g, _ := cipher.NewGCM(b)
	pseudo := append([]byte{byte(len(odcid))}, odcid...)
	pseudo = append(pseudo, dst[start:]...)
	return append(dst, g.Seal(nil, retryNonce[:], nil, pseudo)...)
}

// DecodePacketNumber expands the truncated packet number pn of pnLen
// bytes given the largest packet number received in its space
// (RFC 9000 §A.3); largest is -1 when none was.
func DecodePacketNumber(largest int64, pn uint64, pnLen int) uint64 {
	expected := uint64(largest + 1)
	win := uint64(1) << (8 * pnLen)
	hwin := win / 2
	mask := win - 1
	cand := expected&^mask | pn
	switch {
	case cand+hwin <= expected && cand+win < 1<<62:
		return cand + win
	case cand > expected+hwin && cand >= win:
		return cand - win
	}
	return cand
}

// PacketNumberLen is how many bytes encode pn when the largest packet
// number the peer acknowledged is largestAcked (-1 for none), RFC 9000
// §A.2.
func PacketNumberLen(pn uint64, largestAcked int64) int {
	var unacked uint64
	if largestAcked < 0 {
		unacked = pn + 1
	} else {
		unacked = pn - uint64(largestAcked)
	}
	switch {
	case unacked < 1<<7:
		return 1
	case unacked < 1<<15:
		return 2
	case unacked < 1<<23:
		return 3
	}
	return 4
}
