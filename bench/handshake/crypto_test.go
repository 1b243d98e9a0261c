// Package handshake measures the public-key and key-schedule work of one
// client TLS 1.3 handshake as guise's Chrome profile does it against the
// binding benchmarks' server (bench/cmd/bindserver: Go's crypto/tls with a
// self-signed ECDSA P-256 certificate, X25519MLKEM768 chosen), each step
// run by the Go standard library alone: no connection, no records, no
// handshake state machine. Its sum is the floor under guise's CPU for a
// request that makes a new connection (the binding benchmark's
// session-per-request and isolated-fetch cases), to set against wreq-js's
// whole request there (BoringSSL's handshake, its HTTP/2 setup and its
// JavaScript). From bench/:
//
//	taskset -c 1 go test -run XXX -bench . -benchtime 2000x -count 5 ./handshake
//
// The client's steps, in the order of a handshake:
//   - ML-KEM-768 key generation (the X25519MLKEM768 share)
//   - X25519 key generation, twice (Chrome sends a second, plain X25519
//     share; guise computes its public keys on the Edwards curve, see
//     internal/tlsfp/x25519.go, which this does not count)
//   - ML-KEM-768 decapsulation of the server's ciphertext
//   - one X25519 shared secret
//   - the ECDSA P-256 verification of the server's CertificateVerify (the
//     benchmark skips chain verification, as does wreq-js's insecure mode)
//   - the TLS 1.3 key schedule with SHA-256: three extracts, the derived
//     secrets, keys and IVs of the two handshake and two application
//     traffic secrets, both Finished MACs, and the transcript hashes
package handshake

import (
	"crypto/ecdh"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/mlkem"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// cpu is the process's user and system time: the benchmarks report it per
// operation (cpu-ns/op) next to the wall time, as the machine may be shared.
func cpu() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// loop runs f b.N times and reports its CPU per operation.
func loop(b *testing.B, f func()) {
	b.ReportAllocs()
	c0 := cpu()
	n := 0
	for b.Loop() {
		f()
		n++
	}
	b.ReportMetric(float64(cpu()-c0)/float64(n), "cpu-ns/op")
}

// peer is the server's side of one handshake, made once.
type peer struct {
	ct      []byte // ML-KEM-768 ciphertext for the client's key
	dk      *mlkem.DecapsulationKey768
	x25519  *ecdh.PublicKey
	sigPub  *ecdsa.PublicKey
	sig     []byte
	digest  [32]byte
	message []byte // about a handshake's transcript: hellos, certificate, verify, finished
}

func newPeer(tb testing.TB) *peer {
	p := new(peer)
	var err error
	if p.dk, err = mlkem.GenerateKey768(); err != nil {
		tb.Fatal(err)
	}
	_, p.ct = p.dk.EncapsulationKey().Encapsulate()
	srv, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	p.x25519 = srv.PublicKey()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	p.sigPub = &key.PublicKey
	p.message = make([]byte, 4500) // a Chrome hello of ~1.8 KB, server flight ~2.7 KB
	p.digest = sha256.Sum256(p.message)
	if p.sig, err = ecdsa.SignASN1(rand.Reader, key, p.digest[:]); err != nil {
		tb.Fatal(err)
	}
	return p
}

func mlkemKeyGen(tb testing.TB) *mlkem.DecapsulationKey768 {
	dk, err := mlkem.GenerateKey768()
	if err != nil {
		tb.Fatal(err)
	}
	return dk
}

func x25519KeyGen(tb testing.TB) *ecdh.PrivateKey {
	k, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	return k
}

// expandLabel is TLS 1.3's HKDF-Expand-Label with SHA-256.
func expandLabel(tb testing.TB, secret []byte, label string, context []byte, n int) []byte {
	info := make([]byte, 0, 4+6+len(label)+1+len(context))
	info = binary.BigEndian.AppendUint16(info, uint16(n))
	info = append(info, byte(6+len(label)))
	info = append(info, "tls13 "...)
	info = append(info, label...)
	info = append(info, byte(len(context)))
	info = append(info, context...)
	out, err := hkdf.Expand(sha256.New, secret, string(info), n)
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// keySchedule runs RFC 8446 7.1 with SHA-256 for a full handshake without
// PSK, with the traffic keys and IVs (AES-128-GCM) and both Finished MACs,
// hashing the transcript as it grows.
func keySchedule(tb testing.TB, shared, transcript []byte) []byte {
	th := sha256.New()
	snapshot := func(h hash.Hash, upto int) []byte {
		h.Reset()
		h.Write(transcript[:upto])
		return h.Sum(nil)
	}
	empty := sha256.Sum256(nil)
	zeros := make([]byte, 32)
	early, err := hkdf.Extract(sha256.New, zeros, nil)
	if err != nil {
		tb.Fatal(err)
	}
	derived := expandLabel(tb, early, "derived", empty[:], 32)
	hs, err := hkdf.Extract(sha256.New, shared, derived)
	if err != nil {
		tb.Fatal(err)
	}
	helloHash := snapshot(th, 2000)
	chs := expandLabel(tb, hs, "c hs traffic", helloHash, 32)
	shs := expandLabel(tb, hs, "s hs traffic", helloHash, 32)
	for _, s := range [][]byte{chs, shs} {
		expandLabel(tb, s, "key", nil, 16)
		expandLabel(tb, s, "iv", nil, 12)
	}
	// The server's Finished, checked; the client's, made.
	serverFinished := expandLabel(tb, shs, "finished", nil, 32)
	mac := hmac.New(sha256.New, serverFinished)
	mac.Write(snapshot(th, 4400))
	mac.Sum(nil)
	derived = expandLabel(tb, hs, "derived", empty[:], 32)
	master, err := hkdf.Extract(sha256.New, zeros, derived)
	if err != nil {
		tb.Fatal(err)
	}
	serverDone := snapshot(th, 4450)
	cap := expandLabel(tb, master, "c ap traffic", serverDone, 32)
	sap := expandLabel(tb, master, "s ap traffic", serverDone, 32)
	for _, s := range [][]byte{cap, sap} {
		expandLabel(tb, s, "key", nil, 16)
		expandLabel(tb, s, "iv", nil, 12)
	}
	clientFinished := expandLabel(tb, chs, "finished", nil, 32)
	mac = hmac.New(sha256.New, clientFinished)
	mac.Write(serverDone)
	return mac.Sum(nil)
}

func BenchmarkMLKEM768KeyGen(b *testing.B) {
	loop(b, func() {
		mlkemKeyGen(b)
	})
}

func BenchmarkMLKEM768Decapsulate(b *testing.B) {
	p := newPeer(b)
	loop(b, func() {
		if _, err := p.dk.Decapsulate(p.ct); err != nil {
			b.Fatal(err)
		}
	})
}

func BenchmarkX25519KeyGen(b *testing.B) {
	loop(b, func() {
		x25519KeyGen(b)
	})
}

func BenchmarkX25519SharedSecret(b *testing.B) {
	p := newPeer(b)
	k := x25519KeyGen(b)
	loop(b, func() {
		if _, err := k.ECDH(p.x25519); err != nil {
			b.Fatal(err)
		}
	})
}

func BenchmarkECDSAP256Verify(b *testing.B) {
	p := newPeer(b)
	loop(b, func() {
		d := sha256.Sum256(p.message) // the transcript hash it signs
		if !ecdsa.VerifyASN1(p.sigPub, d[:], p.sig) {
			b.Fatal("signature does not verify")
		}
	})
}

func BenchmarkKeySchedule(b *testing.B) {
	p := newPeer(b)
	shared := make([]byte, 64)
	loop(b, func() {
		keySchedule(b, shared, p.message)
	})
}

// BenchmarkClientHandshakeCrypto is all of the above, once each as a
// handshake does them (X25519 key generation twice).
func BenchmarkClientHandshakeCrypto(b *testing.B) {
	p := newPeer(b)
	loop(b, func() {
		dk := mlkemKeyGen(b)
		x1 := x25519KeyGen(b)
		x25519KeyGen(b)
		ssK, err := p.dk.Decapsulate(p.ct) // the server's ciphertext, for a key of the same size
		if err != nil {
			b.Fatal(err)
		}
		_ = dk
		ssX, err := x1.ECDH(p.x25519)
		if err != nil {
			b.Fatal(err)
		}
		d := sha256.Sum256(p.message)
		if !ecdsa.VerifyASN1(p.sigPub, d[:], p.sig) {
			b.Fatal("signature does not verify")
		}
		keySchedule(b, append(ssK, ssX...), p.message)
	})
}
