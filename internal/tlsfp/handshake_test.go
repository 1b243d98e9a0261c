package tlsfp

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"slices"
	"sync"
	"testing"
	"time"
)

func TestCertificateErrors(t *testing.T) {
	s := newServer(t, nil)
	p := lookup(t, "chrome")

	// Unknown authority: the embedded Mozilla roots do not know the test CA.
	_, _, err := dial(t, s, "fp.test", &Config{Profile: p})
	var ce *CertificateError
	var ua x509.UnknownAuthorityError
	if !errors.As(err, &ce) || !errors.As(err, &ua) {
		t.Errorf("unknown CA: %v; want *CertificateError wrapping x509.UnknownAuthorityError", err)
	}
	var he *HandshakeError
	if !errors.As(err, &he) || he.Timeout() {
		t.Errorf("unknown CA: %v is not a non-timeout *HandshakeError", err)
	}

	// Wrong name.
	_, _, err = dial(t, s, "other.test", &Config{Profile: p, RootCAs: testCerts(t).Roots})
	var hn x509.HostnameError
	if !errors.As(err, &ce) || !errors.As(err, &hn) {
		t.Errorf("wrong name: %v; want x509.HostnameError", err)
	}

	// InsecureSkipVerify accepts both.
	if _, _, err := dial(t, s, "other.test", &Config{Profile: p, InsecureSkipVerify: true}); err != nil {
		t.Errorf("InsecureSkipVerify: %v", err)
	}
	// An IP address is verified against the IP SAN.
	if _, _, err := dial(t, s, "127.0.0.1", &Config{Profile: p, RootCAs: testCerts(t).Roots}); err != nil {
		t.Errorf("IP address: %v", err)
	}
}

// fakeServer accepts one connection on 127.0.0.1, reads the ClientHello
// and then runs script.
func fakeServer(t *testing.T, script func(c net.Conn, hello []byte)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		rec, err := readRecord(c)
		if err != nil {
			return
		}
		script(c, rec)
	}()
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	return ln.Addr().String()
}

func handshakeTo(t *testing.T, addr string, ctx context.Context, cfg *Config) (State, error) {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c, st, err := Handshake(ctx, nc, "fp.test", cfg)
	if err == nil {
		c.Close()
	}
	return st, err
}

func TestHandshakeTimeout(t *testing.T) {
	done := make(chan struct{})
	addr := fakeServer(t, func(c net.Conn, _ []byte) { <-done }) // never answers
	defer close(done)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := handshakeTo(t, addr, ctx, &Config{Profile: lookup(t, "chrome")})
	var he *HandshakeError
	if !errors.As(err, &he) || !he.Timeout() || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v; want a timeout *HandshakeError wrapping context.DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("handshake returned after %v", d)
	}
}

// RELIABILITY T-05.
func TestPlainHTTPServer(t *testing.T) {
	addr := fakeServer(t, func(c net.Conn, _ []byte) {
		io.WriteString(c, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
	})
	_, err := handshakeTo(t, addr, context.Background(), &Config{Profile: lookup(t, "firefox")})
	if !errors.Is(err, ErrPlainHTTP) {
		t.Fatalf("err = %v; want ErrPlainHTTP", err)
	}
}

// serverHello12 returns a TLS 1.2 ServerHello record answering hello, with
// the given random and, if alpn is set, an ALPN extension selecting it.
func serverHello12(t *testing.T, random []byte, alpn string) []byte {
	t.Helper()
	var exts []byte
	exts = append(exts, 0xff, 0x01, 0x00, 0x01, 0x00) // renegotiation_info
	exts = append(exts, 0x00, 0x17, 0x00, 0x00)       // extended_master_secret
	if alpn != "" {
		l := len(alpn)
		exts = append(exts, 0x00, 0x10, 0, byte(l+3), 0, byte(l+1), byte(l))
		exts = append(exts, alpn...)
	}
	body := []byte{0x03, 0x03}
	body = append(body, random...)
	body = append(body, 0)          // no session id
	body = append(body, 0xc0, 0x2f) // TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256
	body = append(body, 0)          // no compression
	body = binary.BigEndian.AppendUint16(body, uint16(len(exts)))
	body = append(body, exts...)
	msg := append([]byte{2, 0, byte(len(body) >> 8), byte(len(body))}, body...)
	return append([]byte{0x16, 0x03, 0x03, byte(len(msg) >> 8), byte(len(msg))}, msg...)
}

// TestDowngradeCanary is RELIABILITY T-01: a ServerHello that picks TLS 1.2
// while carrying the TLS 1.3 downgrade canary must abort the handshake.
func TestDowngradeCanary(t *testing.T) {
	random := make([]byte, 32)
	copy(random[24:], "DOWNGRD\x01")
	alerts := make(chan []byte, 1)
	addr := fakeServer(t, func(c net.Conn, _ []byte) {
		c.Write(serverHello12(t, random, "h2"))
		b := make([]byte, 7)
		n, _ := io.ReadFull(c, b)
		alerts <- b[:n]
	})
	_, err := handshakeTo(t, addr, context.Background(), &Config{Profile: lookup(t, "chrome"), InsecureSkipVerify: true})
	if !errors.Is(err, ErrDowngrade) {
		t.Fatalf("err = %v; want ErrDowngrade", err)
	}
	if a := <-alerts; len(a) != 7 || a[0] != 0x15 || a[6] != 47 { // illegal_parameter
		t.Errorf("client sent %x, want an illegal_parameter alert", a)
	}
}

func TestALPNOutsideOffer(t *testing.T) {
	random := make([]byte, 32)
	random[0] = 1
	addr := fakeServer(t, func(c net.Conn, _ []byte) {
		c.Write(serverHello12(t, random, "spdy/3"))
		io.Copy(io.Discard, c)
	})
	_, err := handshakeTo(t, addr, context.Background(), &Config{Profile: lookup(t, "firefox"), InsecureSkipVerify: true})
	if !errors.Is(err, ErrALPN) {
		t.Fatalf("err = %v; want ErrALPN", err)
	}
}

func TestConfigErrors(t *testing.T) {
	a, b := net.Pipe()
	defer b.Close()
	if _, _, err := Handshake(context.Background(), a, "fp.test", &Config{}); err == nil {
		t.Fatal("Handshake without a profile succeeded")
	}
	if _, err := a.Write([]byte{1}); err == nil {
		t.Error("Handshake did not close the connection on a configuration error")
	}
	if _, err := TrustPool(TrustStore(9)); err == nil {
		t.Error("TrustPool accepted an unknown store")
	}
	if TrustStore(9).String() != "TrustStore(9)" || Both.String() != "both" || X25519MLKEM768.String() != "X25519MLKEM768" {
		t.Error("String mismatch")
	}
}

func TestConfigClone(t *testing.T) {
	c := &Config{Profile: lookup(t, "chrome"), ALPN: []string{"h2"}, Sessions: NewSessionCache()}
	d := c.Clone()
	d.ALPN[0] = "x"
	if c.ALPN[0] != "h2" || d.Sessions != c.Sessions || d.Profile != c.Profile {
		t.Error("Clone shares ALPN or lost a field")
	}
	if (*Config)(nil).Clone() != nil {
		t.Error("nil Clone")
	}
}

func TestTrustPoolBuiltOnce(t *testing.T) {
	var cold trustCache // a cache no other test has touched
	var wg sync.WaitGroup
	start := make(chan struct{})
	pools := make([]*x509.CertPool, 8)
	for i := range pools {
		wg.Go(func() {
			<-start
			p, err := cold.pool(Mozilla)
			if err != nil {
				t.Error(err)
			}
			pools[i] = p
		})
	}
	close(start)
	wg.Wait()
	for _, p := range pools {
		if p == nil || p != pools[0] {
			t.Fatal("concurrent callers got different pools")
		}
	}
	if n := cold.builds.Load(); n != 1 {
		t.Errorf("Mozilla pool built %d times by 8 concurrent cold callers", n)
	}
	if len(pools[0].Subjects()) < 100 { //nolint:staticcheck // counting roots only
		t.Errorf("Mozilla pool has %d roots", len(pools[0].Subjects()))
	}
	if n := testing.AllocsPerRun(100, func() { TrustPool(Mozilla) }); n != 0 {
		t.Errorf("TrustPool allocates %v per call once built", n)
	}
	if sys, err := TrustPool(System); err == nil {
		both, err := TrustPool(Both)
		if err != nil || both == sys || both.Equal(sys) {
			t.Errorf("Both pool: %v", err)
		}
	}
}

func TestResumption(t *testing.T) {
	s := newServer(t, &tls.Config{})
	pki := testCerts(t)
	chrome, firefox := lookup(t, "chrome"), lookup(t, "firefox")

	for _, p := range []struct {
		name      string
		ticketExt bool
	}{{"chrome", true}, {"firefox", false}} {
		prof := lookup(t, p.name)
		cache := NewSessionCache()
		cfg := &Config{Profile: prof, RootCAs: pki.Roots, Sessions: cache}
		st, rec, err := dial(t, s, "fp.test", cfg)
		if err != nil || st.Resumed {
			t.Fatalf("%s: first handshake: %v resumed=%v", p.name, err, st.Resumed)
		}
		if _, ok := parseHelloRecord(t, rec).ext(41); ok {
			t.Fatalf("%s: first hello carries a pre_shared_key", p.name)
		}
		if cache.Len() == 0 {
			t.Fatalf("%s: no ticket stored", p.name)
		}
		st, rec, err = dial(t, s, "fp.test", cfg)
		if err != nil || !st.Resumed {
			t.Fatalf("%s: second handshake: %v resumed=%v", p.name, err, st.Resumed)
		}
		h := parseHelloRecord(t, rec)
		ids := h.ids(true)
		if ids[len(ids)-1] != 41 {
			t.Errorf("%s: pre_shared_key not last: %v", p.name, ids)
		}
		if prof.TLS.ShuffleExtensions && ids[len(ids)-2] != 0x0a0a {
			t.Errorf("%s: final GREASE not just before pre_shared_key: %v", p.name, ids)
		}
		if _, ok := h.ext(extSessionTicket); ok != p.ticketExt {
			t.Errorf("%s: session_ticket present=%v, want %v", p.name, ok, p.ticketExt)
		}
		full := parseHelloRecord(t, prof.TLS.Hello)
		want := len(full.exts) + 1
		if !p.ticketExt {
			want--
		}
		if len(h.exts) != want {
			t.Errorf("%s: resumed hello has %d extensions, want %d", p.name, len(h.exts), want)
		}
		// Structure equal to the recorded resumed hello; Firefox's GREASE ECH
		// payload grows with the PSK as a real inner hello would.
		echLens := prof.TLS.ECHPayloadLengths
		if echLens == nil {
			echLens = []int{wantNSSPayload(h)} // see TestNSSGreaseECHRecordings
		}
		compareHelloPSK(t, p.name+" resumed", h, parseHelloRecord(t, prof.TLS.HelloResumed), "fp.test", prof.TLS.ShuffleExtensions, echLens)
	}

	// Other verification settings or another profile never get the ticket.
	cache := NewSessionCache()
	base := &Config{Profile: chrome, RootCAs: pki.Roots, Sessions: cache}
	if _, _, err := dial(t, s, "fp.test", base); err != nil {
		t.Fatal(err)
	}
	otherRoots := x509.NewCertPool()
	otherRoots.AppendCertsFromPEM(pki.CAPEM)
	for name, cfg := range map[string]*Config{
		"other roots":   {Profile: chrome, RootCAs: otherRoots, Sessions: cache},
		"other profile": {Profile: firefox, RootCAs: pki.Roots, Sessions: cache},
		"insecure":      {Profile: chrome, InsecureSkipVerify: true, Sessions: cache},
		"other alpn":    {Profile: chrome, RootCAs: pki.Roots, Sessions: cache, ALPN: []string{"http/1.1"}},
		"no cache":      {Profile: chrome, RootCAs: pki.Roots},
	} {
		st, rec, err := dial(t, s, "fp.test", cfg)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		h := parseHelloRecord(t, rec)
		if _, ok := h.ext(41); ok || st.Resumed {
			t.Errorf("%s: offered or resumed a session of another scope", name)
		}
		if b, _ := h.ext(extSessionTicket); len(b) != 0 {
			t.Errorf("%s: sent a TLS 1.2 ticket", name)
		}
	}
	if st, _, err := dial(t, s, "fp.test", base); err != nil || !st.Resumed {
		t.Errorf("same settings again: %v resumed=%v", err, st.Resumed)
	}
	// TicketsOfDefaultALPN: an http/1.1-only offer takes the ticket of the
	// profile's own offer (a WebSocket's connection after its page's).
	shared := NewSessionCache()
	if _, _, err := dial(t, s, "fp.test", &Config{Profile: chrome, RootCAs: pki.Roots, Sessions: shared}); err != nil {
		t.Fatal(err)
	}
	h1 := &Config{Profile: chrome, RootCAs: pki.Roots, Sessions: shared, ALPN: []string{"http/1.1"}, TicketsOfDefaultALPN: true}
	if st, _, err := dial(t, s, "fp.test", h1); err != nil || !st.Resumed {
		t.Errorf("TicketsOfDefaultALPN: %v resumed=%v", err, st.Resumed)
	}
}

// TestTicketSingleUse checks that a TLS 1.3 ticket is offered once: two
// handshakes that start before either receives a new ticket cannot both
// resume, and the resumed connection's fresh ticket is used next.
func TestTicketSingleUse(t *testing.T) {
	s := newServer(t, &tls.Config{})
	cache := NewSessionCache()
	cfg := &Config{Profile: lookup(t, "chrome"), RootCAs: testCerts(t).Roots, Sessions: cache}
	if _, _, err := dial(t, s, "fp.test", cfg); err != nil {
		t.Fatal(err)
	}
	// Take the ticket as a concurrent handshake would, then hand it back
	// only to check that a second taker gets nothing.
	scope := scopeKey(cfg, cfg.RootCAs)
	e := cache.take(scope+"fp.test", time.Now())
	if e == nil || !e.tls13 || e.pskLen == 0 {
		t.Fatalf("no TLS 1.3 ticket stored: %+v", e)
	}
	if cache.take(scope+"fp.test", time.Now()) != nil {
		t.Fatal("a TLS 1.3 ticket was handed out twice")
	}
	if st, rec, err := dial(t, s, "fp.test", cfg); err != nil || st.Resumed {
		t.Fatalf("resumed without a ticket: %v", err)
	} else if _, ok := parseHelloRecord(t, rec).ext(41); ok {
		t.Fatal("pre_shared_key offered without a ticket")
	}
	for i := 0; i < 3; i++ { // each resumption stores the next ticket
		if st, _, err := dial(t, s, "fp.test", cfg); err != nil || !st.Resumed {
			t.Fatalf("handshake %d: %v resumed=%v", i, err, st.Resumed)
		}
	}
}

// TestResumptionHTTP1Derived checks the resumed shape tlsfp derives when no
// resumed hello was recorded for the offer (here http/1.1 only): Chrome
// keeps session_ticket and puts pre_shared_key after its final GREASE;
// Firefox drops session_ticket and grows its GREASE ECH with the PSK. Both
// match what the browsers sent in profile/record.go's HTTP/1.1 runs.
func TestResumptionHTTP1Derived(t *testing.T) {
	s := newServer(t, &tls.Config{NextProtos: []string{"http/1.1"}})
	for _, name := range []string{"chrome", "firefox"} {
		p := lookup(t, name)
		cfg := &Config{Profile: p, RootCAs: testCerts(t).Roots, Sessions: NewSessionCache(), ALPN: []string{"http/1.1"}}
		if _, _, err := dial(t, s, "fp.test", cfg); err != nil {
			t.Fatal(err)
		}
		st, rec, err := dial(t, s, "fp.test", cfg)
		if err != nil || !st.Resumed || st.ALPN != "http/1.1" {
			t.Fatalf("%s: %v %+v", name, err, st)
		}
		h := parseHelloRecord(t, rec)
		full := parseHelloRecord(t, p.TLS.HelloHTTP1)
		ids := h.ids(true)
		_, ticket := h.ext(extSessionTicket)
		psk, _ := h.ext(41)
		switch name {
		case "chrome":
			if ids[len(ids)-1] != 41 || ids[len(ids)-2] != 0x0a0a || !ticket || len(ids) != len(full.exts)+1 {
				t.Errorf("chrome: %v", ids)
			}
		case "firefox":
			want := append(slices.DeleteFunc(full.ids(true), func(id uint16) bool { return id == extSessionTicket }), 41)
			if !slices.Equal(ids, want) {
				t.Errorf("firefox: %v, want %v", ids, want)
			}
			e, _ := h.ext(extECH)
			if _, n := echShapeOf(e); n != wantNSSPayload(h) {
				t.Errorf("firefox: ECH payload %d with a %d-byte PSK, NSS's is %d", n, 4+len(psk), wantNSSPayload(h))
			}
		}
	}
}

// TestResumptionTLS12 checks that a TLS 1.2 session resumes with the ticket
// in session_ticket, without a pre_shared_key.
func TestResumptionTLS12(t *testing.T) {
	s := newServer(t, &tls.Config{MaxVersion: tls.VersionTLS12})
	cache := NewSessionCache()
	cfg := &Config{Profile: lookup(t, "chrome"), RootCAs: testCerts(t).Roots, Sessions: cache}
	if st, _, err := dial(t, s, "fp.test", cfg); err != nil || st.Version != tls.VersionTLS12 {
		t.Fatalf("first: %v %+v", err, st)
	}
	st, rec, err := dial(t, s, "fp.test", cfg)
	if err != nil || !st.Resumed {
		t.Fatalf("second: %v resumed=%v", err, st.Resumed)
	}
	h := parseHelloRecord(t, rec)
	if b, _ := h.ext(extSessionTicket); len(b) == 0 {
		t.Error("no ticket in session_ticket")
	}
	if _, ok := h.ext(41); ok {
		t.Error("pre_shared_key offered for a TLS 1.2 session")
	}
}

func TestSessionCacheEviction(t *testing.T) {
	c := NewSessionCache()
	c.max = 2
	s := &scopedCache{c: c, scope: "x|"}
	for _, k := range []string{"a", "b", "c"} {
		s.Put(k, new(utlsClientSessionState))
	}
	if c.Len() != 2 || c.take("x|a", time.Now()) != nil || c.take("x|c", time.Now()) == nil {
		t.Errorf("LRU eviction wrong: len %d", c.Len())
	}
	s.Put("c", nil)
	if c.take("x|c", time.Now()) != nil {
		t.Error("Put(nil) did not delete")
	}
	keys := slices.Collect(func(yield func(string) bool) {
		for k := range c.m {
			if !yield(k) {
				return
			}
		}
	})
	if len(keys) != 1 {
		t.Errorf("keys %q", keys)
	}
}
