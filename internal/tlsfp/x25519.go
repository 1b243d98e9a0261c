package tlsfp

import (
	"crypto/ecdh"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha512"
	"errors"
	"io"
	"math/big"
	"sync"
)

// x25519Key is an X25519 key share whose public key was computed without
// crypto/ecdh. Chrome sends two X25519 public keys per hello (one in its
// X25519MLKEM768 share), and the server uses at most one of them (none
// after a HelloRetryRequest). crypto/ecdh computes a public key with a
// Montgomery ladder, about as costly as the key exchange itself; the
// public key here comes from a fixed-base multiplication on the
// birationally equivalent Edwards curve (crypto/ed25519's, with
// precomputed tables), about twice as fast, and the crypto/ecdh key,
// which uTLS needs for the exchange, is made only for the share the
// server picks.
//
// The private key is SHA-512(seed)[:32] for a random seed (computed only in
// ecdhKey):
// ed25519.NewKeyFromSeed multiplies the base point by that value with the
// same clamping X25519 applies (RFC 8032 5.1.5, RFC 7748 5), so its public
// key is the Edwards form of the X25519 public key. Only the public key
// goes through math/big, which is not constant-time.
type x25519Key struct {
	seed [ed25519.SeedSize]byte
	pub  [32]byte
}

// newX25519Key reads a 32-byte seed from r and makes the key.
func newX25519Key(r io.Reader) (*x25519Key, error) {
	k := new(x25519Key)
	if _, err := io.ReadFull(r, k.seed[:]); err != nil {
		return nil, errors.New("tlsfp: reading randomness: " + err.Error())
	}
	edPriv := ed25519.NewKeyFromSeed(k.seed[:])
	ok := edwardsToMontgomery(&k.pub, edPriv[32:])
	clear(edPriv)
	if !ok {
		return nil, errors.New("tlsfp: X25519 public key at infinity")
	}
	return k, nil
}

// ecdhKey returns the crypto/ecdh form of k, whose private key is
// SHA-512(seed)[:32]; it costs a scalar multiplication (crypto/ecdh
// recomputes the public key), so only the share the server picks pays it.
func (k *x25519Key) ecdhKey() (*ecdh.PrivateKey, error) {
	h := sha512.Sum512(k.seed[:])
	defer clear(h[:])
	return ecdh.X25519().NewPrivateKey(h[:32])
}

// fieldP is 2^255 - 19.
var fieldP = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 255), big.NewInt(19))

// edwardsToMontgomery writes to u the Montgomery u-coordinate, (1+y)/(1-y)
// mod p, of the Edwards point encoded in a (RFC 8032 5.1.2: y little-endian,
// x's sign in the top bit). It returns false for y = 1 (the identity).
func edwardsToMontgomery(u *[32]byte, a []byte) bool {
	var be [32]byte
	for i := range 32 {
		be[31-i] = a[i]
	}
	be[0] &= 0x7f
	y := new(big.Int).SetBytes(be[:])
	num := new(big.Int).Add(big.NewInt(1), y)
	den := new(big.Int).Sub(big.NewInt(1), y)
	den.Mod(den, fieldP)
	if den.Sign() == 0 || den.ModInverse(den, fieldP) == nil {
		return false
	}
	num.Mul(num, den).Mod(num, fieldP)
	num.FillBytes(be[:])
	for i := range 32 {
		u[i] = be[31-i]
	}
	return true
}

// placeholderX25519 is the key uTLS holds for an X25519 share until the
// server's hello names the group it picked: uTLS only asks it for its curve
// (to check a HelloRetryRequest), and Handshake swaps in the real key before
// uTLS reads a ServerHello. Should that ever not happen, the exchange is
// made with this key, whose public half was never sent, and the handshake
// fails: it cannot succeed with a key the server did not get.
var placeholderX25519 = sync.OnceValues(func() (*ecdh.PrivateKey, error) {
	return ecdh.X25519().GenerateKey(rand.Reader)
})
