package tlsfp

import (
	"bytes"
	"crypto/ecdh"
	"crypto/tls"
	mrand "math/rand/v2"
	"slices"
	"testing"

	"github.com/guise-http/guise/profile"
	utls "github.com/refraction-networking/utls"
)

// checkX25519Key compares a key made by newX25519Key from seed with
// crypto/ecdh's key for the same private key, and their exchanges with a
// peer.
func checkX25519Key(t *testing.T, seed []byte) {
	t.Helper()
	k, err := newX25519Key(bytes.NewReader(seed))
	if err != nil {
		t.Fatal(err)
	}
	ek, err := k.ecdhKey()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ek.PublicKey().Bytes(), k.pub[:]) {
		t.Fatalf("seed %x: public key %x, crypto/ecdh says %x", seed, k.pub, ek.PublicKey().Bytes())
	}
	peer, err := ecdh.X25519().NewPrivateKey(append(seed[16:32:32], seed[:16]...))
	if err != nil {
		t.Fatal(err)
	}
	pub, err := ecdh.X25519().NewPublicKey(k.pub[:])
	if err != nil {
		t.Fatal(err)
	}
	a, err1 := peer.ECDH(pub)
	b, err2 := ek.ECDH(peer.PublicKey())
	if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
		t.Fatalf("seed %x: exchanges differ (%v, %v)", seed, err1, err2)
	}
}

// TestX25519KeyMatchesECDH checks the fixed-base public keys against
// crypto/ecdh's ladder for many seeds, the edge values among them.
func TestX25519KeyMatchesECDH(t *testing.T) {
	rng := mrand.NewChaCha8([32]byte{1})
	seeds := [][]byte{make([]byte, 32), bytes.Repeat([]byte{0xff}, 32)}
	for range 500 {
		s := make([]byte, 32)
		rng.Read(s)
		seeds = append(seeds, s)
	}
	for _, s := range seeds {
		checkX25519Key(t, s)
	}
}

func FuzzX25519Key(f *testing.F) {
	f.Add(make([]byte, 32))
	f.Add(bytes.Repeat([]byte{0x80}, 32))
	f.Fuzz(func(t *testing.T, seed []byte) {
		if len(seed) != 32 {
			if _, err := newX25519Key(bytes.NewReader(seed)); len(seed) < 32 && err == nil {
				t.Fatal("a short seed made a key")
			}
			return
		}
		checkX25519Key(t, seed)
	})
}

// TestEdwardsToMontgomeryIdentity: y = 1 has no u-coordinate.
func TestEdwardsToMontgomeryIdentity(t *testing.T) {
	var u [32]byte
	one := make([]byte, 32)
	one[0] = 1
	if edwardsToMontgomery(&u, one) {
		t.Fatal("the identity converted")
	}
}

// TestEveryProfileEveryGroup runs every profile's handshake against servers
// that each accept one group only: a share the hello carries is used
// directly (its X25519 key made in crypto/ecdh's form only then), any other
// group through a HelloRetryRequest.
func TestEveryProfileEveryGroup(t *testing.T) {
	for _, g := range []tls.CurveID{tls.X25519MLKEM768, tls.X25519, tls.CurveP256, tls.CurveP384} {
		s := newServer(t, &tls.Config{CurvePreferences: []tls.CurveID{g}})
		for _, name := range profile.Names() {
			p := lookup(t, name)
			tpl, err := compile(p, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !supportsGroup(tpl, utls.CurveID(g)) {
				continue
			}
			st, _, err := dial(t, s, "fp.test", &Config{Profile: p, RootCAs: testCerts(t).Roots})
			if err != nil {
				t.Errorf("%s, server wants %v: %v", name, g, err)
				continue
			}
			if st.Group != CurveID(g) {
				t.Errorf("%s, server wants %v: negotiated %v", name, g, st.Group)
			}
		}
	}
}

// TestPlaceholderNeverSent: the keys uTLS holds before the server's hello
// are not the ones whose public halves the hello carries, so an exchange
// made with them cannot complete a handshake.
func TestPlaceholderNeverSent(t *testing.T) {
	k, err := newKeySet([]utls.CurveID{0x0a0a, utls.X25519MLKEM768, utls.X25519}, bytes.NewReader(make([]byte, 200)), false)
	if err != nil {
		t.Fatal(err)
	}
	ph, _ := placeholderX25519()
	for i, d := range k.data {
		if d != nil && bytes.Contains(d, ph.PublicKey().Bytes()) {
			t.Fatalf("share %d carries the placeholder's public key", i)
		}
	}
	if k.ecdhe != ph || k.mlkemEcdhe != ph {
		t.Fatal("uTLS does not hold the placeholder before the server's hello")
	}
	keys := k.public()
	k.picked(keys, utls.X25519)
	if keys.Ecdhe == ph || !bytes.Equal(keys.Ecdhe.PublicKey().Bytes(), k.data[2]) {
		t.Fatal("picking X25519 did not hand uTLS the key of the X25519 share")
	}
	k.picked(keys, utls.X25519MLKEM768)
	if keys.MlkemEcdhe == ph || !bytes.Equal(keys.MlkemEcdhe.PublicKey().Bytes(), k.data[1][len(k.data[1])-32:]) {
		t.Fatal("picking X25519MLKEM768 did not hand uTLS the key of the hybrid share's X25519 half")
	}
}

// supportsGroup reports whether tpl's hello lists group in supported_groups.
func supportsGroup(tpl *template, group utls.CurveID) bool {
	for _, e := range tpl.spec.Extensions {
		if sc, ok := e.(*utls.SupportedCurvesExtension); ok {
			return slices.Contains(sc.Curves, group)
		}
	}
	return false
}
