package guise

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/guise-http/guise/internal/h3"
	"github.com/guise-http/guise/internal/h3wire"
	"github.com/guise-http/guise/internal/testpeer/quicgo"
	"github.com/guise-http/guise/internal/tlsfp"
)

// quicgoDialer is the test seam's QUIC: quic-go's client (never used in
// production, whose QUIC is guise's own), counting its dials.
func quicgoDialer(dials *atomic.Int32) quicDialer {
	return func(ctx context.Context, addr, serverName string, o *options, sessions *tlsfp.SessionCache) (h3.Conn, error) {
		dials.Add(1)
		ua, err := net.ResolveUDPAddr("udp", addr)
		if err != nil {
			return nil, err
		}
		c, err := quicgo.Dial(ctx, nil, ua, o.rootCAs, serverName)
		if err != nil {
			return nil, err
		}
		return c, nil
	}
}

// protoHandler answers with the request's protocol and advertises alt.
func protoHandler(alt *atomic.Value) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v, _ := alt.Load().(string); v != "" {
			w.Header().Set("Alt-Svc", v)
		}
		fmt.Fprint(w, r.Proto)
	})
}

func getProto(t *testing.T, s *Session, url string) (string, time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	resp, err := s.Get(ctx, url)
	if err != nil {
		t.Fatalf("%s: %v", url, err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || string(b) != resp.Proto[:len(string(b))] && resp.Proto != "HTTP/3.0" {
		t.Fatalf("%v %d %q %s", err, resp.StatusCode, b, resp.Proto)
	}
	return resp.Proto, time.Since(start)
}

// TestAltSvcUpgradesToH3 is RELIABILITY Q-59's first half: an h2 origin
// whose Alt-Svc names an h3 alternative (quic-go's HTTP/3 server) serves
// the first request over h2; QUIC then starts, raced against TCP, and
// later requests go over h3. Another Session of the same Transport
// shares the memory; a Session with its own Transport, a Session limited
// to HTTP2 and an isolated call never dial QUIC.
func TestAltSvcUpgradesToH3(t *testing.T) {
	var alt atomic.Value
	h := protoHandler(&alt)
	h3s := quicgo.HTTP3Server(t, h)
	alt.Store(`h3=":` + strconv.Itoa(h3s.Addr.Port) + `"; ma=60`)
	o := newOrigin(t, modeH2, h)
	var dials atomic.Int32
	tr := &Transport{quicDial: quicgoDialer(&dials)}
	defer tr.Close()
	s := o.session(t, tr)
	if p, _ := getProto(t, s, o.URL); p != "HTTP/2.0" {
		t.Fatalf("first request over %s", p)
	}
	got := ""
	for i := 0; i < 200 && got != "HTTP/3.0"; i++ {
		got, _ = getProto(t, s, o.URL)
		if got != "HTTP/3.0" {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if got != "HTTP/3.0" {
		t.Fatalf("never upgraded to h3 (%d QUIC dials)", dials.Load())
	}
	if p, _ := getProto(t, o.session(t, tr), o.URL); p != "HTTP/3.0" {
		t.Errorf("another Session of the Transport: %s", p)
	}
	n := dials.Load()
	if n != 1 {
		t.Errorf("%d QUIC dials, want 1 (one connection, pooled)", n)
	}
	// A Session limited to HTTP2 never tries h3; one with a Transport of
	// its own has no memory of the alternative: its first request goes
	// over h2 without a QUIC dial.
	s2 := &Session{RootCAs: o.roots, Transport: tr, Protocol: HTTP2}
	defer s2.Close()
	for range 3 {
		if p, _ := getProto(t, s2, o.URL); p != "HTTP/2.0" {
			t.Errorf("HTTP2 Session: %s", p)
		}
	}
	own := &Transport{quicDial: quicgoDialer(&dials)}
	defer own.Close()
	if p, _ := getProto(t, o.session(t, own), o.URL); p != "HTTP/2.0" {
		t.Errorf("own Transport: %s", p)
	}
	if dials.Load() != n {
		t.Errorf("%d QUIC dials by Sessions that must not try h3", dials.Load()-n)
	}
	// Isolated calls and proxied requests remember nothing.
	st := (&Transport{quicDial: quicgoDialer(&dials)}).init()
	defer st.close()
	u, _ := (&Request{URL: o.URL}).parse()
	as := Header{{Name: "Alt-Svc", Value: `h3=":443"`}}
	st.rememberAltSvc(u, &options{isolated: true}, as)
	st.rememberAltSvc(u, &options{proxy: &route{}}, as)
	if st.alt.Len() != 0 {
		t.Error("an isolated or proxied response was remembered")
	}
	st.rememberAltSvc(u, &options{}, as)
	if st.alt.Len() != 1 {
		t.Error("a Session's response was not remembered")
	}
}

// swallowUDP is a UDP socket that reads and drops every datagram, as a
// firewall that blocks QUIC does.
func swallowUDP(t *testing.T) int {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		b := make([]byte, 2048)
		for {
			if _, _, err := pc.ReadFrom(b); err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { pc.Close(); <-done })
	return pc.LocalAddr().(*net.UDPAddr).Port
}

// TestH3FallbackUDPBlocked is RELIABILITY Q-59: with the alternative's
// UDP swallowed, every request goes over h2 without an error and within
// a bounded time, whether QUIC is new on the Transport (QUIC and TCP
// start together) or known to work (TCP waits at most 300 ms); the
// failed handshake marks the alternative broken for 5 minutes, after
// which no QUIC dial is tried; HTTP3 forced fails with a timeout.
func TestH3FallbackUDPBlocked(t *testing.T) {
	old := quicHandshakeTimeout
	quicHandshakeTimeout = 500 * time.Millisecond
	defer func() { quicHandshakeTimeout = old }()
	port := swallowUDP(t)
	var alt atomic.Value
	alt.Store(`h3=":` + strconv.Itoa(port) + `"`)
	o := newOrigin(t, modeH2, protoHandler(&alt))
	for _, known := range []bool{false, true} {
		t.Run(fmt.Sprint("quic known to work ", known), func(t *testing.T) {
			var dials atomic.Int32
			tr := &Transport{quicDial: quicgoDialer(&dials)}
			defer tr.Close()
			st := tr.init()
			if known {
				st.h3Works.Store(true)
				st.h3RTT.Store(int64(time.Second)) // 1.5 s, capped at maxTCPDelay
			}
			s := o.session(t, tr)
			for i := range 5 {
				p, d := getProto(t, s, o.URL)
				if p != "HTTP/2.0" || d > maxTCPDelay+time.Second {
					t.Fatalf("request %d: %s after %v", i, p, d)
				}
			}
			u, _ := (&Request{URL: o.URL}).parse()
			deadline := time.Now().Add(5 * time.Second)
			for time.Now().Before(deadline) {
				if _, ok := st.alt.Lookup(u.origin, time.Now()); !ok {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			if _, ok := st.alt.Lookup(u.origin, time.Now()); ok {
				t.Fatal("alternative not marked broken")
			}
			if _, ok := st.alt.Lookup(u.origin, time.Now().Add(5*time.Minute+time.Second)); !ok {
				t.Error("alternative still broken after 5 minutes")
			}
			n := dials.Load()
			for range 3 {
				getProto(t, s, o.URL)
			}
			if dials.Load() != n || n != 1 {
				t.Errorf("%d QUIC dials, then %d more while broken", n, dials.Load()-n)
			}
		})
	}
	for name, dial := range map[string]quicDialer{"quic-go": quicgoDialer(new(atomic.Int32)), "guise": dialGuiseQUIC} {
		t.Run("forced over "+name, func(t *testing.T) { forcedBlocked(t, dial, o.roots, port) })
	}
}

// forcedBlocked: HTTP3 forced to a port whose UDP is swallowed fails with
// a TimeoutError within quicHandshakeTimeout and a margin.
func forcedBlocked(t *testing.T, dial quicDialer, roots *x509.CertPool, port int) {
	tr := &Transport{quicDial: dial}
	defer tr.Close()
	s := &Session{RootCAs: roots, Transport: tr, Protocol: HTTP3}
	defer s.Close()
	start := time.Now()
	_, err := s.Get(context.Background(), "https://127.0.0.1:"+strconv.Itoa(port)+"/")
	var te *TimeoutError
	if !errors.As(err, &te) || time.Since(start) > 3*time.Second {
		t.Errorf("%v after %v, want a TimeoutError", err, time.Since(start))
	}
}

// TestH3Forced: Protocol HTTP3 goes straight to h3 (curl's
// --http3-only), with no TCP listener at all, over one pooled
// connection; through a proxy, for http://, or with a profile that has
// no HTTP/3 recording it is refused before anything is sent.
func TestH3Forced(t *testing.T) {
	var alt atomic.Value
	h3s := quicgo.HTTP3Server(t, protoHandler(&alt))
	var dials atomic.Int32
	tr := &Transport{quicDial: quicgoDialer(&dials)}
	defer tr.Close()
	s := &Session{RootCAs: h3s.Cert.Roots, Transport: tr, Protocol: HTTP3}
	defer s.Close()
	url := "https://127.0.0.1:" + strconv.Itoa(h3s.Addr.Port) + "/"
	for range 5 {
		if p, _ := getProto(t, s, url); p != "HTTP/3.0" {
			t.Fatalf("got %s", p)
		}
	}
	if dials.Load() != 1 {
		t.Errorf("%d QUIC dials for 5 requests", dials.Load())
	}
	for _, c := range []struct{ url, proxy, profile string }{{url, "http://127.0.0.1:1", ""}, {url, "socks5://127.0.0.1:1", ""}, {"http://127.0.0.1:1/", "", ""}, {url, "", "okhttp4-android"}} {
		s2 := &Session{Transport: tr, Protocol: HTTP3, Proxy: c.proxy, Profile: c.profile}
		_, err := s2.Get(context.Background(), c.url)
		if !errors.Is(err, ErrProtocolUnsupported) {
			t.Errorf("%s via %q: %v", c.url, c.proxy, err)
		}
		s2.Close()
	}
	if dials.Load() != 1 {
		t.Errorf("refused requests dialed QUIC")
	}
}

// TestH3GoAwayRetried is RELIABILITY Q-40 through the client: a request
// the server's GOAWAY excluded (GOAWAY(0)
// with stream 0 open, never answered) is sent again, once, on a new
// connection, and the caller sees only the second connection's answer.
func TestH3GoAwayRetried(t *testing.T) {
	l, cert := quicgo.Listen(t)
	var conns atomic.Int32
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := l.Accept(ctx)
			if err != nil {
				return
			}
			n := conns.Add(1)
			go func() {
				ctrl, err := c.OpenUniStream()
				if err != nil {
					return
				}
				ctrl.Write(append([]byte{0}, h3wire.AppendSettings(nil)...))
				s, err := c.AcceptStream(ctx)
				if err != nil {
					return
				}
				if n == 1 {
					ctrl.Write(h3wire.AppendFrame(nil, h3wire.FrameGoAway, []byte{0}))
					<-ctx.Done()
					return
				}
				io.Copy(io.Discard, s)
				s.Write(h3wire.AppendFrame(nil, h3wire.FrameHeaders, h3wire.AppendResponseSection(nil)))
				s.Write(h3wire.AppendFrame(nil, h3wire.FrameData, []byte("second")))
				s.Close()
				<-ctx.Done()
			}()
		}
	}()
	var dials atomic.Int32
	tr := &Transport{quicDial: quicgoDialer(&dials)}
	s := &Session{RootCAs: cert.Roots, Transport: tr, Protocol: HTTP3}
	resp, err := s.Get(ctx, "https://127.0.0.1:"+strconv.Itoa(l.Addr().(*net.UDPAddr).Port)+"/")
	if err != nil {
		t.Fatal(err)
	}
	b, err := resp.Bytes()
	if err != nil || string(b) != "second" || conns.Load() != 2 {
		t.Errorf("%q %v after %d connections", b, err, conns.Load())
	}
	s.Close()
	tr.Close()
	cancel()
	<-done
}
