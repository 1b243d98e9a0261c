package tlsfp

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math/big"
	"net"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/guise-http/guise/internal/testpeer"
)

// TestExpiredCertificate is RELIABILITY T-03's expired case.
func TestExpiredCertificate(t *testing.T) {
	tmpl := testpeer.Template("fp.test")
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-48*time.Hour), time.Now().Add(-24*time.Hour)
	cert, err := testpeer.SharedCA(t).Issue(tmpl)
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(t, cert.ServerConfig())
	_, _, err = dial(t, s, "fp.test", &Config{Profile: lookup(t, "firefox"), RootCAs: cert.Roots})
	var ci x509.CertificateInvalidError
	var ce *CertificateError
	if !errors.As(err, &ce) || !errors.As(err, &ci) || ci.Reason != x509.Expired {
		t.Fatalf("err = %v; want an expired x509.CertificateInvalidError in a *CertificateError", err)
	}
}

// TestServerClosesDuringHandshake is RELIABILITY T-06: a typed error, and
// the connection closed.
func TestServerClosesDuringHandshake(t *testing.T) {
	addr := fakeServer(t, func(c net.Conn, _ []byte) {}) // reads the hello, closes
	_, err := handshakeTo(t, addr, context.Background(), &Config{Profile: lookup(t, "chrome")})
	var he *HandshakeError
	if !errors.As(err, &he) || he.Timeout() {
		t.Fatalf("err = %v; want a non-timeout *HandshakeError", err)
	}
	if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Logf("cause: %v", he.Err) // a reset is acceptable too; the type is what matters
	}
}

// TestTimeoutClosesConnection is RELIABILITY T-04's "socket closed".
func TestTimeoutClosesConnection(t *testing.T) {
	closed := make(chan error, 1)
	addr := fakeServer(t, func(c net.Conn, _ []byte) {
		_, err := c.Read(make([]byte, 1)) // returns when the client closes
		closed <- err
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	if _, err := handshakeTo(t, addr, ctx, &Config{Profile: lookup(t, "chrome")}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v", err)
	}
	select {
	case err := <-closed:
		if !errors.Is(err, io.EOF) {
			t.Logf("server read: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("client did not close the connection after the timeout")
	}
}

// TestOversizedHandshakeMessage is RELIABILITY T-07: a handshake message
// longer than 64 KiB is rejected before it is buffered.
func TestOversizedHandshakeMessage(t *testing.T) {
	random := make([]byte, 32)
	random[0] = 2
	addr := fakeServer(t, func(c net.Conn, _ []byte) {
		c.Write(serverHello12(t, random, ""))
		// A Certificate message announcing 1 MiB, in a record of 4 bytes.
		c.Write([]byte{0x16, 0x03, 0x03, 0x00, 0x04, 11, 0x10, 0x00, 0x00})
		io.Copy(io.Discard, c)
	})
	_, err := handshakeTo(t, addr, context.Background(), &Config{Profile: lookup(t, "firefox"), InsecureSkipVerify: true})
	var he *HandshakeError
	// uTLS reports the limit only as text; the test pins that it is the
	// size check that fired, not some later failure.
	if !errors.As(err, &he) || !strings.Contains(err.Error(), "exceeds maximum") {
		t.Fatalf("err = %v; want a *HandshakeError for the oversized message", err)
	}
}

// TestCertificateFailuresDoNotGrowHeap is RELIABILITY T-11, scaled to CI:
// repeated verification failures keep nothing.
func TestCertificateFailuresDoNotGrowHeap(t *testing.T) {
	s := newServer(t, nil)
	cfg := &Config{Profile: lookup(t, "chrome"), Sessions: NewSessionCache()} // Mozilla roots: fails
	fail := func(n int) {
		for i := 0; i < n; i++ {
			if _, _, err := dial(t, s, "fp.test", cfg); err == nil {
				t.Fatal("handshake with an unknown CA succeeded")
			}
		}
	}
	fail(20) // warm caches (trust pool, template)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fail(200)
	runtime.GC()
	runtime.ReadMemStats(&after)
	if grow := int64(after.HeapAlloc) - int64(before.HeapAlloc); grow > 2<<20 {
		t.Errorf("heap grew %d bytes over 200 failed handshakes", grow)
	}
	if cfg.Sessions.Len() != 0 {
		t.Errorf("failed handshakes stored %d sessions", cfg.Sessions.Len())
	}
}

// hugeRSACert is a certificate for fp.test whose public key is an RSA
// modulus of bits bits (odd, top bit set, not a product of two primes: no
// private key exists), signed by a throwaway ECDSA key. It parses, and a
// client that only looks at the key's size cannot tell it from a real one.
func hugeRSACert(t *testing.T, bits int) []byte {
	t.Helper()
	n := new(big.Int).Lsh(big.NewInt(1), uint(bits-1))
	n.Or(n, big.NewInt(3))
	signer, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := testpeer.Template("fp.test")
	tmpl.SerialNumber = big.NewInt(int64(bits))
	tmpl.NotBefore, tmpl.NotAfter = time.Now().Add(-time.Hour), time.Now().Add(time.Hour)
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &rsa.PublicKey{N: n, E: 65537}, signer)
	if err != nil {
		t.Fatal(err)
	}
	if c, err := x509.ParseCertificate(der); err != nil || c.PublicKey.(*rsa.PublicKey).N.BitLen() != bits {
		t.Fatalf("the %d-bit certificate does not parse back: %v", bits, err)
	}
	return der
}

// TestHugeRSAKeyInChainT07 is RELIABILITY T-07's huge key: a server whose
// chain carries an RSA key of more than 8192 bits, as the leaf or as an
// extra certificate, is refused before the key is used, verified or not,
// in bounded time, with a *CertificateError matching ErrKeyTooLarge. A
// key of exactly 8192 bits in the chain is no reason to refuse.
func TestHugeRSAKeyInChainT07(t *testing.T) {
	real := testCerts(t)
	for _, c := range []struct {
		bits   int
		leaf   bool // the huge key is the leaf's, else an extra certificate after the chain
		refuse bool
	}{
		{8192, false, false},
		{8193, false, true},
		{16384, false, true},
		{16384, true, true},
		{65536, false, true}, // an 8 KiB modulus: the cost CVE-2023-29409 was about
		{65536, true, true},
	} {
		chain := slices.Clone(real.Chain)
		huge := hugeRSACert(t, c.bits)
		where := "extra"
		if c.leaf {
			chain[0], where = huge, "leaf"
		} else {
			chain = append(chain, huge)
		}
		for _, verify := range []bool{true, false} {
			t.Run(fmt.Sprintf("%d/%s/verify=%t", c.bits, where, verify), func(t *testing.T) {
				// The leaf's ECDSA key signs CertificateVerify: with the
				// huge leaf the client must stop before checking it.
				s := newServer(t, &tls.Config{Certificates: []tls.Certificate{{Certificate: chain, PrivateKey: real.Key}}})
				cfg := &Config{Profile: lookup(t, "chrome"), RootCAs: real.Roots, InsecureSkipVerify: !verify}
				start := time.Now()
				_, _, err := dial(t, s, "fp.test", cfg)
				took := time.Since(start)
				if !c.refuse {
					if err != nil {
						t.Fatalf("a chain with an extra %d-bit key: %v", c.bits, err)
					}
					return
				}
				var he *HandshakeError
				var ce *CertificateError
				if !errors.As(err, &he) || !errors.As(err, &ce) || !errors.Is(err, ErrKeyTooLarge) || ce.ServerName != "fp.test" {
					t.Fatalf("got %v (%T), want a *HandshakeError holding a *CertificateError for fp.test matching ErrKeyTooLarge", err, err)
				}
				if took > 3*time.Second {
					t.Fatalf("refusing the %d-bit key took %v", c.bits, took)
				}
			})
		}
	}
}
