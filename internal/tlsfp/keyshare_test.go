package tlsfp

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"net"
	"os"
	"sync"
	"testing"
	"time"
)

// shareData returns each key share's data by group (GREASE masked).
func shareData(t *testing.T, rec []byte) map[uint16][]byte {
	t.Helper()
	body, ok := parseHelloRecord(t, rec).ext(51)
	if !ok {
		t.Fatal("hello has no key_share")
	}
	out := map[uint16][]byte{}
	for b := body[2:]; len(b) >= 4; {
		g, n := binary.BigEndian.Uint16(b), int(binary.BigEndian.Uint16(b[2:]))
		out[maskID(g)] = b[4 : 4+n]
		b = b[4+n:]
	}
	return out
}

// TestKeyShareReuseFollowsRecording: Firefox sends the X25519 half of its
// X25519MLKEM768 share again as its X25519 share, Chrome two different
// keys; both as recorded, and every key fresh per connection.
func TestKeyShareReuseFollowsRecording(t *testing.T) {
	for _, tc := range []struct {
		name  string
		reuse bool
	}{{"chrome", false}, {"firefox", true}} {
		p := lookup(t, tc.name)
		if got := reusesX25519(p.TLS.Hello); got != tc.reuse {
			t.Fatalf("%s: recording reuses the X25519 key: %v, want %v", tc.name, got, tc.reuse)
		}
		var last []byte
		for i := 0; i < 3; i++ {
			s := shareData(t, buildHello(t, "fp.test", &Config{Profile: p}))
			hybrid, x := s[uint16(X25519MLKEM768)], s[uint16(X25519)]
			if len(hybrid) != 1216 || len(x) != 32 {
				t.Fatalf("%s: share lengths %d and %d", tc.name, len(hybrid), len(x))
			}
			if same := bytes.Equal(hybrid[1184:], x); same != tc.reuse {
				t.Errorf("%s: X25519 key reused: %v, want %v", tc.name, same, tc.reuse)
			}
			if bytes.Equal(x, last) {
				t.Errorf("%s: the same X25519 key on two connections", tc.name)
			}
			last = x
			if p256, ok := s[uint16(P256)]; ok && (len(p256) != 65 || p256[0] != 4) {
				t.Errorf("%s: P-256 share is not an uncompressed point: %x", tc.name, p256)
			}
		}
	}
}

// TestServerPicksAnyOfferedGroup: the server may pick any group the hello
// carries a share for, or ask for another with a HelloRetryRequest. uTLS
// alone keeps only the first classic key and failed when a P-256-preferring
// server (nghttpd on OpenSSL 3.0) picked Firefox's P-256 share.
func TestServerPicksAnyOfferedGroup(t *testing.T) {
	for _, g := range []tls.CurveID{tls.X25519MLKEM768, tls.X25519, tls.CurveP256, tls.CurveP384} {
		s := newServer(t, &tls.Config{CurvePreferences: []tls.CurveID{g}})
		for _, name := range []string{"chrome", "firefox"} {
			st, _, err := dial(t, s, "fp.test", &Config{Profile: lookup(t, name), RootCAs: testCerts(t).Roots})
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

// writeCounter counts the writes that reach the socket.
type writeCounter struct {
	net.Conn
	mu     sync.Mutex
	writes []int
}

func (c *writeCounter) Write(p []byte) (int, error) {
	c.mu.Lock()
	c.writes = append(c.writes, len(p))
	c.mu.Unlock()
	return c.Conn.Write(p)
}

// TestFlightInOneWrite: after a HelloRetryRequest the change_cipher_spec and
// the second ClientHello leave in one write, as BoringSSL sends a flight;
// the handshake writes twice (hello, retried hello) and holds its last
// flight (the Finished), with the records written after it, until the
// first read, which sends them in one write. From then on writes go
// straight through.
func TestFlightInOneWrite(t *testing.T) {
	s := newServer(t, &tls.Config{CurvePreferences: []tls.CurveID{tls.CurveP384}}) // not in Chrome's shares
	nc, err := net.Dial("tcp", s.addr())
	if err != nil {
		t.Fatal(err)
	}
	wc := &writeCounter{Conn: nc}
	c, st, err := Handshake(context.Background(), wc, "fp.test", &Config{Profile: lookup(t, "chrome"), RootCAs: testCerts(t).Roots})
	<-s.hellos
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if st.Group != P384 {
		t.Fatalf("group %v, want a retry to secp384r1", st.Group)
	}
	writes := func() []int {
		wc.mu.Lock()
		defer wc.mu.Unlock()
		return append([]int(nil), wc.writes...)
	}
	if w := writes(); len(w) != 2 {
		t.Fatalf("handshake wrote %v: want 2 writes, the Finished held", w)
	} else if w[1] <= 6 {
		// The second write starts with the 6-byte change_cipher_spec
		// record and carries the retried hello after it.
		t.Errorf("second write is %d bytes: change_cipher_spec alone", w[1])
	}
	c.SetDeadline(time.Now().Add(5 * time.Second))
	for _, p := range []string{"x", "yz"} {
		if _, err := c.Write([]byte(p)); err != nil {
			t.Fatal(err)
		}
	}
	if w := writes(); len(w) != 2 {
		t.Fatalf("writes before the first read went out: %v", w)
	}
	// The read sends the Finished and both records in one write (a
	// TLS 1.3 record of n bytes is 5+n+1+16 on the wire). Whatever the
	// server answers, if anything, the read ends by its deadline.
	c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if _, err := c.Read(make([]byte, 16)); err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read: %v", err)
	}
	w := writes()
	if len(w) != 3 {
		t.Fatalf("writes after the first read: %v, want one more", w)
	}
	if records := (5 + 1 + 1 + 16) + (5 + 2 + 1 + 16); w[2] <= records {
		t.Errorf("the first read wrote %d bytes: not the Finished and both records (%d bytes without the Finished)", w[2], records)
	}
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if w := writes(); len(w) != 4 {
		t.Errorf("a write after the first read was held: %v", w)
	}
}
