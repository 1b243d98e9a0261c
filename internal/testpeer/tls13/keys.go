package tls13

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
)

// hashLen is the output length of SHA-256, the hash of
// TLS_AES_128_GCM_SHA256 (RFC 8446 B.4).
const hashLen = sha256.Size

// expandLabel is HKDF-Expand-Label (RFC 8446 7.1): HKDF-Expand with the
// info struct HkdfLabel {uint16 length; opaque label<7..255> = "tls13 " +
// label; opaque context<0..255>}.
func expandLabel(secret []byte, label string, context []byte, length int) []byte {
	info := make([]byte, 0, 4+6+len(label)+len(context))
	info = append(info, byte(length>>8), byte(length), byte(6+len(label)))
	info = append(info, "tls13 "...)
	info = append(info, label...)
	info = append(info, byte(len(context)))
	info = append(info, context...)
	out, err := hkdf.Expand(sha256.New, secret, string(info), length)
	if err != nil {
		// Only an output longer than 255*32 bytes fails; every caller
		// here asks for at most 32.
		panic("tls13: hkdf expand: " + err.Error())
	}
	return out
}

// extract is HKDF-Extract(salt, ikm).
func extract(salt, ikm []byte) []byte {
	prk, err := hkdf.Extract(sha256.New, ikm, salt)
	if err != nil {
		panic("tls13: hkdf extract: " + err.Error()) // cannot fail for SHA-256
	}
	return prk
}

// deriveSecret is Derive-Secret(secret, label, messages), given the
// transcript hash of the messages.
func deriveSecret(secret []byte, label string, transcriptHash []byte) []byte {
	return expandLabel(secret, label, transcriptHash, hashLen)
}

// emptyHash is Transcript-Hash("") (the hash of no messages).
func emptyHash() []byte {
	h := sha256.Sum256(nil)
	return h[:]
}

// schedule holds the secrets of a full (EC)DHE handshake without a PSK.
type schedule struct {
	handshake []byte // handshake secret
	clientHS  []byte // client_handshake_traffic_secret
	serverHS  []byte // server_handshake_traffic_secret
	master    []byte // master secret
}

// newSchedule runs the key schedule up to the handshake traffic secrets:
// helloHash is the transcript hash of ClientHello...ServerHello.
func newSchedule(shared, helloHash []byte) *schedule {
	zeros := make([]byte, hashLen)
	early := extract(zeros, zeros) // no PSK: IKM is Hash.length zeros
	hs := extract(deriveSecret(early, "derived", emptyHash()), shared)
	return &schedule{
		handshake: hs,
		clientHS:  deriveSecret(hs, "c hs traffic", helloHash),
		serverHS:  deriveSecret(hs, "s hs traffic", helloHash),
		master:    extract(deriveSecret(hs, "derived", emptyHash()), zeros),
	}
}

// application returns the client and server application traffic secrets:
// finishedHash is the transcript hash through the server's Finished.
func (s *schedule) application(finishedHash []byte) (client, server []byte) {
	return deriveSecret(s.master, "c ap traffic", finishedHash), deriveSecret(s.master, "s ap traffic", finishedHash)
}

// finishedMAC is the verify_data of a Finished message (RFC 8446 4.4.4):
// HMAC(finished_key, transcriptHash) with finished_key derived from the
// sender's handshake traffic secret.
func finishedMAC(trafficSecret, transcriptHash []byte) []byte {
	key := expandLabel(trafficSecret, "finished", nil, hashLen)
	m := hmac.New(sha256.New, key)
	m.Write(transcriptHash)
	return m.Sum(nil)
}

// direction is one direction's record protection: AES-128-GCM with the
// traffic key, the static IV and the record sequence number (RFC 8446 5.3).
type direction struct {
	aead cipher.AEAD
	iv   []byte
	seq  uint64
}

func newDirection(trafficSecret []byte) *direction {
	key := expandLabel(trafficSecret, "key", nil, 16)
	block, err := aes.NewCipher(key)
	if err != nil {
		panic("tls13: aes: " + err.Error()) // a 16-byte key is always valid
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		panic("tls13: gcm: " + err.Error()) // standard nonce and tag sizes
	}
	return &direction{aead: aead, iv: expandLabel(trafficSecret, "iv", nil, 12)}
}

// nonce is the per-record nonce: the sequence number, big-endian and
// left-padded to the IV's length, XORed with the IV. It advances seq.
func (d *direction) nonce() []byte {
	n := make([]byte, len(d.iv))
	copy(n, d.iv)
	for i := 0; i < 8; i++ {
		n[len(n)-1-i] ^= byte(d.seq >> (8 * i))
	}
	d.seq++
	return n
}
