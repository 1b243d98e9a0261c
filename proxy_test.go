package guise

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/guise-http/guise/fingerprint"
	"github.com/guise-http/guise/internal/testpeer"
)

// echoVisit fetches /api/all from srv (as https://localhost:port) through
// proxy ("" for direct) on s, and returns the record of the connection.
func echoVisit(t *testing.T, s *Session, srv *fingerprint.Server, proxy string) *fingerprint.ConnRecord {
	t.Helper()
	_, port, _ := net.SplitHostPort(srv.ListenAddr())
	before := len(srv.Records())
	resp, err := s.Do(context.Background(), &Request{URL: "https://localhost:" + port + "/api/all", Proxy: proxy})
	if err != nil {
		t.Fatalf("via %q: %v", proxy, err)
	}
	if _, err := resp.Bytes(); err != nil {
		t.Fatal(err)
	}
	if resp.Proto != "HTTP/2.0" {
		t.Fatalf("via %q: %s, want HTTP/2.0", proxy, resp.Proto)
	}
	recs := srv.Records()
	if len(recs) != before+1 {
		t.Fatalf("via %q: %d new connections at the origin", proxy, len(recs)-before)
	}
	return recs[len(recs)-1]
}

func fingerprints(t *testing.T, r *fingerprint.ConnRecord) (ja4, akamai string) {
	t.Helper()
	ch, err := r.ClientHello()
	if err != nil {
		t.Fatal(err)
	}
	h, err := r.HTTP2()
	if err != nil {
		t.Fatal(err)
	}
	return ch.JA4(), h.Akamai()
}

// TestProxiesKeepTheFingerprint sends the same request directly, through
// squid (CONNECT with basic auth) and through dante (SOCKS5, local and
// remote name resolution): the origin sees the same JA4 and Akamai string.
func TestProxiesKeepTheFingerprint(t *testing.T) {
	squid := testpeer.Squid(t, map[string]string{"alice": "pw a", "bob": "pw b"})
	dante := testpeer.Dante(t)
	srv := &fingerprint.Server{}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	// A fresh Session per visit, so every handshake is a full one (a
	// Session's later connections resume, which changes the hello).
	fresh := func() *Session { return &Session{RootCAs: srv.CertPool()} }
	direct := fresh()
	ja4, akamai := fingerprints(t, echoVisit(t, direct, srv, ""))
	direct.Close()
	proxies := []string{"http://alice:pw%20a@" + squid, "socks5://" + dante, "socks5h://" + dante}
	for _, p := range proxies {
		s := fresh()
		gotJA4, gotAkamai := fingerprints(t, echoVisit(t, s, srv, p))
		s.Close()
		if gotJA4 != ja4 || gotAkamai != akamai {
			t.Errorf("via %s: %s %s, direct %s %s", p, gotJA4, gotAkamai, ja4, akamai)
		}
	}

	// One Session: other credentials for the same proxy never share a
	// tunnel; the same proxy and credentials again reuse it.
	tr := &Transport{}
	defer tr.Close()
	s := &Session{RootCAs: srv.CertPool(), Transport: tr}
	echoVisit(t, s, srv, "http://alice:pw%20a@"+squid)
	echoVisit(t, s, srv, "http://bob:pw%20b@"+squid)
	_, port, _ := net.SplitHostPort(srv.ListenAddr())
	before := len(srv.Records())
	resp, err := s.Do(context.Background(), &Request{URL: "https://localhost:" + port + "/api/all", Proxy: "http://alice:pw%20a@" + squid})
	if err != nil {
		t.Fatal(err)
	}
	resp.Bytes()
	if n := len(srv.Records()) - before; n != 0 {
		t.Errorf("a second request through the same proxy opened %d connections", n)
	}

	// Wrong credentials: a typed 407.
	_, err = s.Do(context.Background(), &Request{URL: "https://localhost:" + port + "/", Proxy: "http://alice:wrong@" + squid})
	var pse *ProxyStatusError
	if !errors.As(err, &pse) || pse.StatusCode != 407 {
		t.Fatalf("wrong credentials: %v", err)
	}
}

// TestPlainHTTPThroughProxy sends http:// requests to squid in absolute
// form, with the proxy's credentials and the profile's headers.
func TestPlainHTTPThroughProxy(t *testing.T) {
	squid := testpeer.Squid(t, map[string]string{"alice": "secret"})
	ts := newTestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Proxy-Authorization") != "" {
			w.WriteHeader(500) // the proxy must consume its credentials
		}
		io.WriteString(w, "via proxy "+r.URL.Path)
	}))
	s := &Session{Proxy: "http://alice:secret@" + squid}
	defer s.Close()
	for i := 0; i < 3; i++ {
		resp, err := s.Get(context.Background(), ts.URL+"/x")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := resp.Bytes()
		if resp.StatusCode != 200 || string(b) != "via proxy /x" {
			t.Fatalf("%d %q", resp.StatusCode, b)
		}
	}
	s2 := &Session{Proxy: "http://" + squid}
	defer s2.Close()
	resp, err := s2.Get(context.Background(), ts.URL+"/x")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 407 {
		t.Fatalf("without credentials: %d, want 407 from the proxy", resp.StatusCode)
	}
}

func TestProxyFromEnvironment(t *testing.T) {
	var seen []string
	fake := newTestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.URL.String()) // absolute form: the proxy sees the whole URL
		io.WriteString(w, "from the fake proxy")
	}))
	t.Setenv("HTTP_PROXY", fake.URL)
	t.Setenv("http_proxy", fake.URL)
	t.Setenv("NO_PROXY", "skip.test")
	t.Setenv("no_proxy", "skip.test")
	// Only the fake proxy may be dialed: a direct attempt fails here
	// without any name lookup.
	proxyAddr := strings.TrimPrefix(fake.URL, "http://")
	var d net.Dialer
	tr := &Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		if addr != proxyAddr {
			return nil, errors.New("direct dial refused by the test")
		}
		return d.DialContext(ctx, network, addr)
	}}
	defer tr.Close()
	// Without the option the environment is ignored (the direct dial
	// fails); with it the request goes to the proxy.
	s := &Session{Transport: tr}
	if _, err := s.Get(context.Background(), "http://example.test:1/x"); err == nil {
		t.Fatal("the environment's proxy was used without ProxyFromEnvironment")
	}
	e := &Session{ProxyFromEnvironment: true, Transport: tr}
	resp, err := e.Get(context.Background(), "http://example.test:1/x")
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := resp.Bytes(); string(b) != "from the fake proxy" || len(seen) != 1 || seen[0] != "http://example.test:1/x" {
		t.Fatalf("%q, proxy saw %q", b, seen)
	}
	if _, err := e.Get(context.Background(), "http://skip.test:1/"); err == nil || len(seen) != 1 {
		t.Fatalf("NO_PROXY host went to the proxy (%v, %q)", err, seen)
	}
}

// TestRedirectToAnotherProxyKeepsCredentialsApart (RELIABILITY P-06): a
// redirect from http to https moves the request from HTTP_PROXY to
// HTTPS_PROXY; the first proxy's credentials go to the first proxy only,
// and the second gets its own, or none.
func TestRedirectToAnotherProxyKeepsCredentialsApart(t *testing.T) {
	origin := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Proxy-Authorization") != "" {
			w.WriteHeader(500)
		}
		io.WriteString(w, "origin")
	}))
	defer origin.Close()
	roots := x509.NewCertPool()
	roots.AddCert(origin.Certificate())

	var mu sync.Mutex
	var seenA, seenB []string // Proxy-Authorization each proxy received
	// Proxy A (HTTP_PROXY): answers the absolute-form request itself with
	// a redirect to the https origin.
	proxyA := newTestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seenA = append(seenA, r.Header.Get("Proxy-Authorization"))
		mu.Unlock()
		// By default a name, not the loopback address the environment's
		// proxies never take (proxy B knows where the name is); ?direct
		// asks for the loopback address, which goes direct.
		to := "https://example.com:" + portOf(origin.Listener.Addr()) + "/landed"
		if r.URL.Query().Has("direct") {
			to = origin.URL + "/landed"
		}
		http.Redirect(w, r, to, http.StatusFound)
	}))
	// Proxy B (HTTPS_PROXY): tunnels CONNECT to the origin.
	proxyB := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seenB = append(seenB, r.Header.Get("Proxy-Authorization"))
		mu.Unlock()
		if r.Method != http.MethodConnect {
			w.WriteHeader(405)
			return
		}
		if r.Host != "example.com:"+portOf(origin.Listener.Addr()) {
			w.WriteHeader(403)
			return
		}
		up, err := net.Dial("tcp", origin.Listener.Addr().String())
		if err != nil {
			w.WriteHeader(502)
			return
		}
		defer up.Close()
		w.WriteHeader(200)
		c, brw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		go io.Copy(up, brw)
		io.Copy(c, up)
	}))
	defer proxyB.Close()

	basic := func(user, pass string) string {
		return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
	}
	for _, tc := range []struct {
		name       string
		path       string
		httpsProxy string
		wantB      []string
	}{
		{"second proxy without credentials", "/go", proxyB.URL, []string{""}},
		{"second proxy with its own", "/go", strings.Replace(proxyB.URL, "http://", "http://bob:two@", 1), []string{basic("bob", "two")}},
		{"loopback hop goes direct", "/go?direct", proxyB.URL, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mu.Lock()
			seenA, seenB = nil, nil
			mu.Unlock()
			t.Setenv("HTTP_PROXY", strings.Replace(proxyA.URL, "http://", "http://alice:one@", 1))
			t.Setenv("http_proxy", "")
			t.Setenv("HTTPS_PROXY", tc.httpsProxy)
			t.Setenv("https_proxy", "")
			t.Setenv("NO_PROXY", "")
			t.Setenv("no_proxy", "")
			s := &Session{ProxyFromEnvironment: true, RootCAs: roots}
			defer s.Close()
			resp, err := s.Get(context.Background(), "http://start.test:1"+tc.path)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := resp.Bytes()
			if resp.StatusCode != 200 || string(b) != "origin" {
				t.Fatalf("%d %q", resp.StatusCode, b)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(seenA) != 1 || seenA[0] != basic("alice", "one") {
				t.Errorf("proxy A saw Proxy-Authorization %q, want alice's once", seenA)
			}
			if !slices.Equal(seenB, tc.wantB) {
				t.Errorf("proxy B saw Proxy-Authorization %q, want %q", seenB, tc.wantB)
			}
		})
	}
}

// TestProxyTicketsApart (RELIABILITY T-09, curl CVE-2021-22890): through an
// HTTPS proxy, the proxy hop's TLS session tickets and the origin's go to
// separate caches, so a ticket from one is never offered to the other.
func TestProxyTicketsApart(t *testing.T) {
	origin := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "origin")
	}))
	defer origin.Close()
	cert := testpeer.Localhost(t)
	roots := cert.Roots.Clone() // the shared pool is not ours to add to
	roots.AddCert(origin.Certificate())
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cert.ServerConfig("http/1.1"))
	if err != nil {
		t.Fatal(err)
	}
	// An HTTPS proxy that tunnels CONNECT to the origin.
	testpeer.Serve(t, ln, testpeer.Handle(func(c net.Conn) {
		br := bufio.NewReader(c)
		req, err := http.ReadRequest(br)
		if err != nil || req.Method != http.MethodConnect {
			return
		}
		up, err := net.Dial("tcp", origin.Listener.Addr().String())
		if err != nil {
			return
		}
		defer up.Close()
		io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n")
		go func() { io.Copy(up, br); up.Close() }()
		io.Copy(c, up)
	}))
	tr := &Transport{}
	defer tr.Close()
	s := &Session{Transport: tr, RootCAs: roots, Proxy: "https://localhost:" + portOf(ln.Addr())}
	defer s.Close()
	resp, err := s.Get(context.Background(), origin.URL+"/")
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := resp.Bytes(); string(b) != "origin" {
		t.Fatalf("body %q", b)
	}
	st := tr.init()
	waitFor := time.Now().Add(5 * time.Second)
	for (st.sessions.Len() == 0 || st.proxySessions.Len() == 0) && time.Now().Before(waitFor) {
		time.Sleep(10 * time.Millisecond)
	}
	if st.sessions.Len() == 0 || st.proxySessions.Len() == 0 {
		t.Fatalf("tickets: origin cache %d, proxy cache %d; want one in each", st.sessions.Len(), st.proxySessions.Len())
	}
}

// TestRequestProxyAuthorization (RELIABILITY P-06): a caller's own
// Proxy-Authorization (a Bearer token, say) goes to an HTTP proxy that
// takes an http:// request itself; anywhere it would reach the origin
// (directly, through a CONNECT tunnel) or go twice (the proxy URL has
// credentials) the request is refused before anything is sent.
func TestRequestProxyAuthorization(t *testing.T) {
	var seen []string
	fake := newTestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.Header.Get("Proxy-Authorization"))
		io.WriteString(w, "from the proxy")
	}))
	auth := Header{{Name: "Proxy-Authorization", Value: "Bearer t"}}
	s := &Session{Proxy: fake.URL}
	defer s.Close()
	resp, err := s.Do(context.Background(), &Request{URL: "http://origin.test/x", Header: auth})
	if err != nil {
		t.Fatal(err)
	}
	resp.Bytes()
	if len(seen) != 1 || seen[0] != "Bearer t" {
		t.Fatalf("the proxy saw %q", seen)
	}
	withCreds := &Session{Proxy: strings.Replace(fake.URL, "http://", "http://u:p@", 1)}
	defer withCreds.Close()
	for _, tc := range []struct {
		s   *Session
		url string
	}{
		{s, "https://origin.test/"},        // a tunnel: it would reach the origin
		{withCreds, "http://origin.test/"}, // the URL's credentials go already
		{&Session{}, fake.URL + "/"},       // no proxy at all
	} {
		_, err := tc.s.Do(context.Background(), &Request{URL: tc.url, Header: auth})
		if !errors.Is(err, ErrRefusedToSend) {
			t.Errorf("%s: err = %v, want ErrRefusedToSend", tc.url, err)
		}
	}
	if len(seen) != 1 {
		t.Errorf("refused requests reached the proxy: %q", seen)
	}
}
