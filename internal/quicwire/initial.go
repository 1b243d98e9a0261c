package quicwire

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/sha256"
	"encoding/binary"
	"hash"
)

// initialSalt is QUIC version 1's initial salt (RFC 9001 §5.2).
var initialSalt = []byte{
	0x38, 0x76, 0x2c, 0xf7, 0xf5, 0x59, 0x34, 0xb3, 0x4d, 0x17,
	0x9a, 0xe6, 0xa4, 0xc8, 0x0c, 0xad, 0xcc, 0xbb, 0x7f, 0x0a,
}

// Keys protect the packets of one direction of one packet number space
// with AES-128-GCM and AES header protection, as Initial packets are
// (RFC 9001 §5). Open and Seal are safe for concurrent use; the in-place
// methods (keys.go) are not.
type Keys struct {
	aead cipher.AEAD
	iv   [12]byte
	hp   cipher.Block
	hpx  headerProtector

	// suite, hash and secret make the next key phase's keys.
	suite  uint16
	hash   func() hash.Hash
	secret []byte
	// scratch of the in-place methods
	nonceBuf [12]byte
	maskBuf  [16]byte
}

// ClientInitialKeys returns the keys of the client's Initial packets on a
// connection whose client chose dcid as the first Destination Connection
// ID. Every observer of that packet can derive them.
func ClientInitialKeys(dcid []byte) *Keys { return initialKeys(dcid, "client in") }

// ServerInitialKeys returns the keys of the server's Initial packets on
// the same connection.
func ServerInitialKeys(dcid []byte) *Keys { return initialKeys(dcid, "server in") }

func initialKeys(dcid []byte, label string) *Keys {
	initial, err := hkdf.Extract(sha256.New, dcid, initialSalt)
	if err != nil {
		panic("quicwire: hkdf extract: " + err.Error()) // never: sha256 accepts any input
	}
	secret := expandLabel(initial, label, sha256.Size)
	k := &Keys{suite: SuiteAES128GCMSHA256, hash: sha256.New, secret: secret}
	key := expandLabel(secret, "quic key", 16)
	copy(k.iv[:], expandLabel(secret, "quic iv", 12))
	hp := expandLabel(secret, "quic hp", 16)
	block, _ := aes.NewCipher(key) // a 16-byte key never fails
	k.aead, _ = cipher.NewGCM(block)
	k.hp, _ = aes.NewCipher(hp)
	k.hpx = aesHP{k.hp}
	return k
}

// expandLabel is TLS 1.3's HKDF-Expand-Label with an empty context
// (RFC 8446 §7.1), as RFC 9001 §5.1 uses it.
func expandLabel(secret []byte, label string, n int) []byte {
	info := make([]byte, 0, 4+6+len(label))
	info = append(info, byte(n>>8), byte(n), byte(6+len(label)))
	info = append(info, "tls13 "...)
	info = append(info, label...)
	info = append(info, 0)
	out, err := hkdf.Expand(sha256.New, secret, string(info), n)
	if err != nil {
		panic("quicwire: hkdf expand: " + err.Error()) // never: n is at most 32
	}
	return out
}

// Packet is a long-header packet with its protection removed.
type Packet struct {
	Header
	// Flags is the first byte with header protection removed (the
	// Header's FirstByte is the protected one): its low two bits are the
	// packet number length minus one, bits 0x0c the reserved bits.
	Flags byte
	// PacketNumber is the packet number as sent (truncated to PNLen
	// bytes; for the first packets of a space it is the full number).
	PacketNumber uint64
	PNLen        int
	// Payload is the decrypted frames.
	Payload []byte
}

// hpSampleLen is the size of the header protection sample.
const hpSampleLen = 16

// Open removes header and packet protection from the long-header packet
// pkt (h is ParseHeader's result for it; pkt may hold more coalesced
// packets after h.Size). It copies what it changes and leaves pkt as it is.
func (k *Keys) Open(pkt []byte, h Header) (*Packet, error) {
	if h.Type != PacketInitial && h.Type != Packet0RTT && h.Type != PacketHandshake {
		return nil, &Error{What: h.Type.String() + " packet", Err: ErrFrameNotAllowed}
	}
	if h.Size > len(pkt) || h.PNOffset+4+hpSampleLen > h.Size {
		return nil, truncated("header protection sample", h.PNOffset)
	}
	buf := append([]byte(nil), pkt[:h.Size]...)
	var mask [16]byte
	k.hp.Encrypt(mask[:], buf[h.PNOffset+4:h.PNOffset+4+hpSampleLen])
	buf[0] ^= mask[0] & 0x0f
	pnLen := int(buf[0]&3) + 1
	var pn uint64
	for i := range pnLen {
		buf[h.PNOffset+i] ^= mask[1+i]
		pn = pn<<8 | uint64(buf[h.PNOffset+i])
	}
	hdrLen := h.PNOffset + pnLen
	if h.Size-hdrLen < k.aead.Overhead() {
		return nil, truncated("packet payload", hdrLen)
	}
	payload, err := k.aead.Open(buf[hdrLen:hdrLen], k.nonce(pn), buf[hdrLen:h.Size], buf[:hdrLen])
	if err != nil {
		return nil, &Error{What: h.Type.String() + " packet", Offset: hdrLen, Err: ErrDecrypt}
	}
	return &Packet{Header: h, Flags: buf[0], PacketNumber: pn, PNLen: pnLen, Payload: payload}, nil
}

// Seal appends to dst the protected packet made of header (the long
// header up to and including the pnLen-byte packet number pn, with the
// Length field already counting the packet number, payload and the
// 16-byte tag) and payload. The payload must be long enough for the header
// protection sample: pnLen+len(payload) >= 4 (RFC 9001 §5.4.2); it panics
// otherwise, the caller's invariant.
func (k *Keys) Seal(dst, header []byte, pn uint64, pnLen int, payload []byte) []byte {
	if pnLen+len(payload) < 4 {
		panic("quicwire: payload too short for the header protection sample")
	}
	start := len(dst)
	dst = append(dst, header...)
	hdrLen := len(header)
	dst = k.aead.Seal(dst, k.nonce(pn), payload, dst[start:start+hdrLen])
	pkt := dst[start:]
	pnOffset := hdrLen - pnLen
	var mask [16]byte
	k.hp.Encrypt(mask[:], pkt[pnOffset+4:pnOffset+4+hpSampleLen])
	if pkt[0]&0x80 != 0 {
		pkt[0] ^= mask[0] & 0x0f
	} else {
		pkt[0] ^= mask[0] & 0x1f
	}
	for i := range pnLen {
		pkt[pnOffset+i] ^= mask[1+i]
	}
	return dst
}

// nonce is the IV XORed with the packet number (RFC 9001 §5.3).
func (k *Keys) nonce(pn uint64) []byte {
	n := k.iv
	var p [8]byte
	binary.BigEndian.PutUint64(p[:], pn)
	for i := range p {
		n[4+i] ^= p[i]
	}
	return n[:]
}
