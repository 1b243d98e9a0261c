package tlsfp

import (
	"context"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"runtime"
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
