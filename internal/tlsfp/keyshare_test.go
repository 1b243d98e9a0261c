package tlsfp

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"net"
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
// the handshake writes three times in all (hello, retried hello, finished).
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
	wc.mu.Lock()
	writes := append([]int(nil), wc.writes...)
	wc.mu.Unlock()
	if len(writes) != 3 {
		t.Fatalf("handshake wrote %v: want 3 writes", writes)
	}
	// The second write starts with the 6-byte change_cipher_spec record and
	// carries the retried hello after it.
	if writes[1] <= 6 {
		t.Errorf("second write is %d bytes: change_cipher_spec alone", writes[1])
	}
	// After the handshake, writes go straight through.
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	wc.mu.Lock()
	n := len(wc.writes)
	wc.mu.Unlock()
	if n != 4 {
		t.Errorf("a write after the handshake was held: %d writes", n)
	}
}

// TestHandshakeCanceled: cancelling the context during the handshake (the
// server never answers) ends it with the context's error and closes the
// connection, without uTLS's per-handshake watcher goroutine.
func TestHandshakeCanceled(t *testing.T) {
	closed, hello := make(chan struct{}), make(chan struct{})
	addr := fakeServer(t, func(c net.Conn, _ []byte) {
		close(hello)
		c.Read(make([]byte, 1)) // returns when the client closes
		close(closed)
	})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-hello // the client waits for the server's answer now
		cancel()
	}()
	_, err := handshakeTo(t, addr, ctx, &Config{Profile: lookup(t, "chrome")})
	var he *HandshakeError
	if !errors.As(err, &he) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v; want a *HandshakeError wrapping context.Canceled", err)
	}
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("the connection was not closed")
	}
	// An already ended context sends nothing.
	_, err = handshakeTo(t, addr, ctx, &Config{Profile: lookup(t, "chrome")})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v; want context.Canceled", err)
	}
}

// TestChromeECHKeyLooksReal: Chrome's GREASE ECH carries a real X25519 key
// (BoringSSL makes a key pair for it), whose top bit is always clear;
// Firefox's is random bytes. Over 64 hellos a random top bit is set at
// least once with probability 1 - 2^-64.
func TestChromeECHKeyLooksReal(t *testing.T) {
	for _, tc := range []struct {
		name  string
		clear bool
	}{{"chrome", true}, {"firefox", false}} {
		p := lookup(t, tc.name)
		set := 0
		for i := 0; i < 64; i++ {
			body, ok := parseHelloRecord(t, buildHello(t, "fp.test", &Config{Profile: p})).ext(extECH)
			if !ok {
				t.Fatalf("%s: no ECH extension", tc.name)
			}
			enc := int(binary.BigEndian.Uint16(body[6:]))
			if enc != 32 {
				t.Fatalf("%s: enc length %d", tc.name, enc)
			}
			set += int(body[8+enc-1] >> 7)
		}
		if tc.clear && set != 0 {
			t.Errorf("%s: ECH key top bit set in %d of 64 hellos", tc.name, set)
		}
		if !tc.clear && set == 0 {
			t.Errorf("%s: ECH key top bit never set: not random bytes", tc.name)
		}
	}
}
