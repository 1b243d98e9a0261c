package tlsfp

import (
	"bytes"
	"crypto/ecdh"
	"crypto/mlkem"
	"errors"
	"io"
	"runtime"

	utls "github.com/refraction-networking/utls"
)

// keySet holds the private keys behind one hello's key shares. tlsfp makes
// them itself instead of leaving it to uTLS, for three reasons:
//
//   - the shape of the keys is the browser's: Firefox puts the same X25519
//     key in its X25519MLKEM768 and X25519 shares, Chrome two different
//     ones (keySet.reuse, read off the recording), where uTLS always makes
//     two;
//   - uTLS keeps one classic private key per hello, that of the first
//     classic share, and fails ("invalid server key share") when the server
//     picks another (Firefox's P-256 share from a server preferring P-256);
//     forGroup lets Handshake hand uTLS the key of the group the
//     ServerHello names before uTLS reads it (see handshakeConn);
//   - the ML-KEM key, the costliest, is made on a second goroutine while
//     the X25519 keys are made on this one.
type keySet struct {
	ecdhe      *ecdh.PrivateKey // the first classic share's key, as uTLS picks it
	mlkem      *mlkem.DecapsulationKey768
	mlkemEcdhe *ecdh.PrivateKey
	classic    [4]groupKey // every classic share's key, in hello order
	n          int
}

type groupKey struct {
	group utls.CurveID
	key   *ecdh.PrivateKey
}

// forGroup returns the classic key for group, or nil.
func (k *keySet) forGroup(group utls.CurveID) *ecdh.PrivateKey {
	for _, g := range k.classic[:k.n] {
		if g.group == group {
			return g.key
		}
	}
	return nil
}

// public returns the keys in uTLS's form.
func (k *keySet) public() *utls.KeySharePrivateKeys {
	return &utls.KeySharePrivateKeys{Ecdhe: k.ecdhe, Mlkem: k.mlkem, MlkemEcdhe: k.mlkemEcdhe}
}

// curveFor returns the crypto/ecdh curve of a classic group.
func curveFor(g utls.CurveID) ecdh.Curve {
	switch g {
	case utls.X25519:
		return ecdh.X25519()
	case utls.CurveP256:
		return ecdh.P256()
	case utls.CurveP384:
		return ecdh.P384()
	case utls.CurveP521:
		return ecdh.P521()
	}
	return nil
}

// errKeyShareGroup reports a recorded key share for a group tlsfp cannot
// make keys for.
var errKeyShareGroup = errors.New("tlsfp: key share for an unsupported group")

// parallelKEM reports whether the ML-KEM key is made on a second
// goroutine: only when a second CPU can run it.
var parallelKEM = runtime.GOMAXPROCS(0) > 1

// makeKeyShares makes the private keys for ks's shares (GREASE shares keep
// their recorded body) and writes the public keys into them. When reuse is
// set the X25519 share carries the X25519 half of the X25519MLKEM768 share.
// Randomness is drawn in share order from r (the ML-KEM seed) and from
// crypto/ecdh's source (which ignores r), all on this goroutine, so a fixed
// Rand still gives a fixed hello.
func makeKeyShares(ks *utls.KeyShareExtension, r io.Reader, reuse bool) (*keySet, error) {
	k := &keySet{}
	var seed [mlkem.SeedSize]byte
	var kem chan struct{} // closed when k.mlkem is made on another goroutine
	var kemErr error
	hybrid := -1
	for i := range ks.KeyShares {
		s := &ks.KeyShares[i]
		switch g := s.Group; {
		case isGREASE(uint16(g)):
		case g == utls.X25519MLKEM768:
			if hybrid >= 0 {
				return nil, errKeyShareGroup // two hybrid shares
			}
			hybrid = i
			if _, err := io.ReadFull(r, seed[:]); err != nil {
				return nil, errors.New("tlsfp: reading randomness: " + err.Error())
			}
			if parallelKEM {
				kem = make(chan struct{})
				go func() {
					defer close(kem)
					k.mlkem, kemErr = mlkem.NewDecapsulationKey768(seed[:])
				}()
			} else if k.mlkem, kemErr = mlkem.NewDecapsulationKey768(seed[:]); kemErr != nil {
				return nil, kemErr
			}
			if key := k.forGroup(utls.X25519); reuse && key != nil {
				k.mlkemEcdhe = key
				continue
			}
			key, err := ecdh.X25519().GenerateKey(r)
			if err != nil {
				return nil, joinKEM(kem, err)
			}
			k.mlkemEcdhe = key
		default:
			c := curveFor(g)
			if c == nil || k.n == len(k.classic) {
				return nil, joinKEM(kem, errKeyShareGroup)
			}
			var key *ecdh.PrivateKey
			if g == utls.X25519 && reuse && k.mlkemEcdhe != nil {
				key = k.mlkemEcdhe
			} else {
				var err error
				if key, err = c.GenerateKey(r); err != nil {
					return nil, joinKEM(kem, err)
				}
			}
			s.Data = key.PublicKey().Bytes()
			k.classic[k.n] = groupKey{group: g, key: key}
			k.n++
		}
	}
	if kem != nil {
		<-kem
	}
	if kemErr != nil {
		return nil, kemErr
	}
	if hybrid >= 0 {
		ek := k.mlkem.EncapsulationKey().Bytes()
		data := make([]byte, 0, len(ek)+32)
		ks.KeyShares[hybrid].Data = append(append(data, ek...), k.mlkemEcdhe.PublicKey().Bytes()...)
	}
	if k.n > 0 {
		k.ecdhe = k.classic[0].key
	} else {
		k.ecdhe = k.mlkemEcdhe // uTLS insists on a classic key
	}
	return k, nil
}

// joinKEM waits for a running ML-KEM key generation before returning err.
func joinKEM(kem chan struct{}, err error) error {
	if kem != nil {
		<-kem
	}
	return err
}

// reusesX25519 reports whether a recorded hello puts the same X25519 key in
// its X25519MLKEM768 and X25519 shares (the X25519 half is the last 32
// bytes of the hybrid share).
func reusesX25519(record []byte) bool {
	body, ok := findExtension(record, 51)
	if !ok || len(body) < 2 {
		return false
	}
	var hybrid, x25519 []byte
	for b := body[2:]; len(b) >= 4; {
		g := uint16(b[0])<<8 | uint16(b[1])
		n := int(b[2])<<8 | int(b[3])
		if len(b) < 4+n {
			return false
		}
		switch utls.CurveID(g) {
		case utls.X25519MLKEM768:
			hybrid = b[4 : 4+n]
		case utls.X25519:
			x25519 = b[4 : 4+n]
		}
		b = b[4+n:]
	}
	return len(x25519) == 32 && len(hybrid) > 32 && bytes.Equal(hybrid[len(hybrid)-32:], x25519)
}
