package tlsfp

import (
	"bytes"
	"crypto/ecdh"
	"crypto/mlkem"
	"errors"
	"io"

	utls "github.com/refraction-networking/utls"
)

// keySet holds the private keys behind one hello's key shares. tlsfp makes
// them itself instead of leaving it to uTLS, for two reasons:
//
//   - the shape of the keys is the browser's: Firefox puts the same X25519
//     key in its X25519MLKEM768 and X25519 shares, Chrome two different
//     ones (template.reuseX25519, read off the recording), where uTLS
//     always makes two (one scalar multiplication more for Firefox);
//   - uTLS keeps one classic private key per hello, that of the first
//     classic share, and fails ("invalid server key share") when the server
//     picks another (Firefox's P-256 share from a server preferring P-256);
//     forGroup lets Handshake hand uTLS the key of the group the
//     ServerHello names before uTLS reads it (see handshakeConn).
type keySet struct {
	// ecdhe is the classic key uTLS holds until the server's hello names
	// its group: the first classic share's, or placeholderX25519 when that
	// share is X25519 (see x25519Key). mlkemEcdhe is likewise the
	// placeholder for the X25519 half of the hybrid share.
	ecdhe      *ecdh.PrivateKey
	mlkem      *mlkem.DecapsulationKey768
	mlkemEcdhe *ecdh.PrivateKey
	mlkemX     *x25519Key  // the X25519 half of the X25519MLKEM768 share
	classic    [4]groupKey // every classic share's key, in hello order
	n          int
	data       [][]byte // each share's public key, by share index; nil for GREASE
}

// groupKey is a classic share's key: key, or x for X25519.
type groupKey struct {
	group utls.CurveID
	key   *ecdh.PrivateKey
	x     *x25519Key
}

// forGroup returns the classic key for group in crypto/ecdh's form, or
// nil. For X25519 that costs a scalar multiplication.
func (k *keySet) forGroup(group utls.CurveID) (*ecdh.PrivateKey, error) {
	for _, g := range k.classic[:k.n] {
		if g.group == group {
			if g.x != nil {
				return g.x.ecdhKey()
			}
			return g.key, nil
		}
	}
	return nil, nil
}

// x25519For returns the X25519 key of the classic share for X25519, or nil.
func (k *keySet) x25519For() *x25519Key {
	for _, g := range k.classic[:k.n] {
		if g.group == utls.X25519 {
			return g.x
		}
	}
	return nil
}

// picked hands keys, uTLS's keys of this hello, the key of the group the
// server's ServerHello names; until then they hold placeholders.
func (k *keySet) picked(keys *utls.KeySharePrivateKeys, group utls.CurveID) {
	if group == utls.X25519MLKEM768 {
		if k.mlkemX != nil {
			if key, err := k.mlkemX.ecdhKey(); err == nil {
				keys.MlkemEcdhe = key
			}
		}
		return
	}
	if key, err := k.forGroup(group); err == nil && key != nil {
		keys.Ecdhe = key
	}
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

// newKeySet makes the private keys for a hello whose key shares are for
// groups, in that order (GREASE groups are skipped), and their public
// halves (keySet.data, by share index). When reuse is set the X25519 share
// carries the X25519 half of the X25519MLKEM768 share. Randomness is drawn
// in share order from r (the ML-KEM and X25519 seeds) and from crypto/ecdh's
// source for the other curves (which ignores r).
func newKeySet(groups []utls.CurveID, r io.Reader, reuse bool) (*keySet, error) {
	k := &keySet{data: make([][]byte, len(groups))}
	hybrid := -1
	for i, g := range groups {
		switch {
		case isGREASE(uint16(g)):
		case g == utls.X25519MLKEM768:
			if hybrid >= 0 {
				return nil, errKeyShareGroup // two hybrid shares
			}
			hybrid = i
			var seed [mlkem.SeedSize]byte
			if _, err := io.ReadFull(r, seed[:]); err != nil {
				return nil, errors.New("tlsfp: reading randomness: " + err.Error())
			}
			var err error
			if k.mlkem, err = mlkem.NewDecapsulationKey768(seed[:]); err != nil {
				return nil, err
			}
			if x := k.x25519For(); reuse && x != nil {
				k.mlkemX = x
				continue
			}
			if k.mlkemX, err = newX25519Key(r); err != nil {
				return nil, err
			}
		default:
			c := curveFor(g)
			if c == nil || k.n == len(k.classic) {
				return nil, errKeyShareGroup
			}
			gk := groupKey{group: g}
			if g == utls.X25519 {
				gk.x = k.mlkemX
				if !reuse || gk.x == nil {
					var err error
					if gk.x, err = newX25519Key(r); err != nil {
						return nil, err
					}
				}
				k.data[i] = bytes.Clone(gk.x.pub[:])
			} else {
				var err error
				if gk.key, err = c.GenerateKey(r); err != nil {
					return nil, err
				}
				k.data[i] = gk.key.PublicKey().Bytes()
			}
			k.classic[k.n] = gk
			k.n++
		}
	}
	placeholder, err := placeholderX25519()
	if err != nil {
		return nil, err
	}
	if hybrid >= 0 {
		ek := k.mlkem.EncapsulationKey().Bytes()
		k.data[hybrid] = append(append(make([]byte, 0, len(ek)+32), ek...), k.mlkemX.pub[:]...)
		k.mlkemEcdhe = placeholder
	}
	switch {
	case k.n > 0 && k.classic[0].key != nil:
		k.ecdhe = k.classic[0].key
	default:
		// uTLS insists on a classic key; an X25519 one is made once the
		// server has picked it.
		k.ecdhe = placeholder
	}
	return k, nil
}

// fill writes the public keys into ks, whose shares are for the groups k
// was made for. GREASE shares keep their recorded body.
func (k *keySet) fill(ks *utls.KeyShareExtension) {
	for i := range ks.KeyShares {
		if i < len(k.data) && k.data[i] != nil {
			ks.KeyShares[i].Data = k.data[i]
		}
	}
}

// shareGroups returns the groups of ks's shares, in order.
func shareGroups(ks *utls.KeyShareExtension) []utls.CurveID {
	g := make([]utls.CurveID, len(ks.KeyShares))
	for i, s := range ks.KeyShares {
		g[i] = s.Group
	}
	return g
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
