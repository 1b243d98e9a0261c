package guise

import (
	"context"
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/guise-http/guise/internal/testpeer"
)

// RELIABILITY T-03, the case where another address family failed too: a
// name resolves to 127.0.0.1 and ::1, one family refuses the connection and
// the other serves a certificate that does not verify. net.Dialer's Happy
// Eyeballs (the dialer guise uses) connects to the family that answers; the
// caller must see the CertificateError naming the problem, never the refused
// connect of the other family.

// stubDNS answers every A query with 127.0.0.1 and every AAAA query with
// ::1 over UDP on 127.0.0.1, until the test ends. It returns a Resolver that
// asks only it.
func stubDNS(t *testing.T) *net.Resolver {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if out, ok := stubAnswer(buf[:n]); ok {
				pc.WriteTo(out, from)
			}
		}
	}()
	t.Cleanup(func() { pc.Close(); wg.Wait() })
	addr := pc.LocalAddr().String()
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", addr)
	}}
}

// stubAnswer is the stub's reply to one query message.
func stubAnswer(q []byte) ([]byte, bool) {
	var p dnsmessage.Parser
	h, err := p.Start(q)
	if err != nil {
		return nil, false
	}
	qs, err := p.AllQuestions()
	if err != nil || len(qs) != 1 {
		return nil, false
	}
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionDesired: h.RecursionDesired})
	b.EnableCompression()
	b.StartQuestions()
	b.Question(qs[0])
	b.StartAnswers()
	rh := dnsmessage.ResourceHeader{Name: qs[0].Name, Class: dnsmessage.ClassINET, TTL: 60}
	switch qs[0].Type {
	case dnsmessage.TypeA:
		b.AResource(rh, dnsmessage.AResource{A: [4]byte{127, 0, 0, 1}})
	case dnsmessage.TypeAAAA:
		b.AAAAResource(rh, dnsmessage.AAAAResource{AAAA: [16]byte{15: 1}})
	}
	out, err := b.Finish()
	return out, err == nil
}

// listenOneFamily listens on network's loopback address on a port that
// the other family's loopback does not answer on, so that a connect there
// is refused.
func listenOneFamily(t *testing.T, network, other string) net.Listener {
	t.Helper()
	for range 20 {
		ln, err := net.Listen(network, net.JoinHostPort(map[string]string{"tcp4": "127.0.0.1", "tcp6": "::1"}[network], "0"))
		if err != nil {
			t.Skipf("no %s loopback: %v", network, err)
		}
		port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
		c, err := net.DialTimeout("tcp", net.JoinHostPort(other, port), time.Second)
		if err != nil {
			return ln // refused on the other family, as wanted
		}
		c.Close()
		ln.Close()
	}
	t.Fatalf("no %s port free on %s too", network, other)
	return nil
}

func TestCertificateErrorAcrossFamiliesT03(t *testing.T) {
	res := stubDNS(t)
	// The dialer checks: the stub gives both families for the name.
	addrs, err := res.LookupHost(context.Background(), "dual.test")
	if err != nil || len(addrs) != 2 {
		t.Fatalf("stub lookup: %v %v, want 127.0.0.1 and ::1", addrs, err)
	}
	for _, fam := range []struct{ network, other string }{
		{"tcp4", "::1"},       // ::1 refused, 127.0.0.1 serves
		{"tcp6", "127.0.0.1"}, // 127.0.0.1 refused, ::1 serves
	} {
		for _, m := range []mode{modeH1, modeH2} {
			t.Run(fam.network+"/"+string(m), func(t *testing.T) {
				ln := listenOneFamily(t, fam.network, fam.other)
				ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
				ts.Listener.Close()
				ts.Listener = ln
				cert := testpeer.NewCert(t, "dual.test") // not alias.test
				ts.TLS = cert.ServerConfig(m.alpn())
				ts.EnableHTTP2 = m == modeH2
				ts.Config.ErrorLog = log.New(io.Discard, "", 0) // the failed handshakes
				ts.StartTLS()
				defer ts.Close()
				port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
				url := "https://alias.test:" + port + "/" // the stub gives both families for any name

				// tried counts connect attempts per family. The serving
				// family's connect waits 400 ms when it is tried first (::1
				// sorts first), so that the fallback to the refusing family
				// starts (after 300 ms) and fails before it: both orders of
				// failure and success are then met.
				var refused, connected int
				tried := map[string]int{}
				var mu sync.Mutex
				d := &net.Dialer{Resolver: res, Timeout: 5 * time.Second,
					ControlContext: func(ctx context.Context, network, _ string, _ syscall.RawConn) error {
						mu.Lock()
						tried[network]++
						mu.Unlock()
						if network == "tcp6" && fam.network == "tcp6" {
							select {
							case <-time.After(400 * time.Millisecond):
							case <-ctx.Done():
							}
						}
						return nil
					}}
				dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
					c, err := d.DialContext(ctx, network, addr)
					mu.Lock()
					if err != nil {
						refused++
					} else {
						connected++
					}
					mu.Unlock()
					return c, err
				}
				// The other family really refuses: a direct dial there fails.
				if c, err := net.DialTimeout("tcp", net.JoinHostPort(fam.other, port), time.Second); err == nil {
					c.Close()
					t.Fatalf("%s:%s answers; the test needs it refused", fam.other, port)
				}

				check := func(what string, err error) {
					t.Helper()
					var ce *CertificateError
					var hn x509.HostnameError
					if !errors.As(err, &ce) || !errors.As(err, &hn) {
						t.Fatalf("%s: %v (%T), want a *CertificateError wrapping x509.HostnameError", what, err, err)
					}
					if ce.ServerName != "alias.test" {
						t.Fatalf("%s: CertificateError names %q, want alias.test", what, ce.ServerName)
					}
					var oe *net.OpError
					if errors.As(err, &oe) {
						t.Fatalf("%s: the error carries the dial's %v", what, oe)
					}
					var te *TimeoutError
					if errors.As(err, &te) {
						t.Fatalf("%s: a timeout: %v", what, err)
					}
				}
				tr := &Transport{DialContext: dial}
				defer tr.Close()
				s := &Session{RootCAs: cert.Roots, Transport: tr}
				defer s.Close()
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				_, err := s.Get(ctx, url)
				check("session", err)
				// Again: a failed handshake left nothing in the pool to reuse.
				_, err = s.Get(ctx, url)
				check("session, second request", err)
				// The unknown root, on the same dual-stack name.
				s2 := &Session{Transport: tr}
				defer s2.Close()
				_, err = s2.Get(ctx, "https://dual.test:"+port+"/")
				var ce *CertificateError
				var ua x509.UnknownAuthorityError
				if !errors.As(err, &ce) || !errors.As(err, &ua) {
					t.Fatalf("unknown root: %v, want a *CertificateError wrapping x509.UnknownAuthorityError", err)
				}
				mu.Lock()
				defer mu.Unlock()
				if connected != 3 || refused != 0 {
					t.Fatalf("dials: %d connected, %d failed; want 3 connected (Happy Eyeballs hides the refused family)", connected, refused)
				}
				if tried["tcp4"] != 3 || tried["tcp6"] != 3 {
					t.Fatalf("connect attempts by family: %v, want 3 on each (one refused, one served, per request)", tried)
				}
			})
		}
	}
}
