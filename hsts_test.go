package guise

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/guise-http/guise/internal/testpeer"
)

// RELIABILITY R-17: HSTS, per Session (hsts.go).

func TestParseHSTS(t *testing.T) {
	for _, c := range []struct {
		in  string
		age int64
		sub bool
		ok  bool
	}{
		{"max-age=31536000", 31536000, false, true},
		{"max-age=0", 0, false, true},
		{"max-age=60; includeSubDomains", 60, true, true},
		{"includesubdomains;max-age=60", 60, true, true},
		{"MAX-AGE=60;INCLUDESUBDOMAINS", 60, true, true},
		{`max-age="60"`, 60, false, true},
		{" \tmax-age = 60 ;; ; includeSubDomains ; ", 60, true, true},
		{"max-age=60; preload", 60, false, true},                        // unknown: ignored
		{`max-age=60; foo="a;b\"c"; bar=baz`, 60, false, true},          // quoted ';' and escapes
		{"max-age=99999999999999999999999999", maxHSTSAge, false, true}, // capped, as Chromium
		{"max-age=31536001", maxHSTSAge, false, true},
		{"max-age=0031", 31, false, true},

		{"", 0, false, false},
		{"includeSubDomains", 0, false, false}, // no max-age
		{"max-age", 0, false, false},
		{"max-age=", 0, false, false},
		{"max-age=-1", 0, false, false},
		{"max-age=+1", 0, false, false},
		{"max-age=1.5", 0, false, false},
		{"max-age=0x10", 0, false, false},
		{`max-age=""`, 0, false, false},
		{`max-age="1`, 0, false, false},
		{"max-age=1 2", 0, false, false},
		{"max-age=1; max-age=2", 0, false, false},
		{"max-age=1; max-age=1", 0, false, false},
		{"max-age=1; includeSubDomains; includeSubDomains", 0, false, false},
		{"max-age=1; includeSubDomains=yes", 0, false, false},
		{"max-age=1, max-age=2", 0, false, false}, // two fields joined
		{"max-age=1; =x", 0, false, false},
		{"max-age=1; f\x00o", 0, false, false},
		{"max-age=1; é=1", 0, false, false},
		{"max-age=1; foo=\"\x01\"", 0, false, false},
		{"max-age=1;foo=", 0, false, false},
	} {
		age, sub, ok := parseHSTS(c.in)
		if ok != c.ok || ok && (age != c.age || sub != c.sub) {
			t.Errorf("parseHSTS(%q) = %d, %v, %v; want %d, %v, %v", c.in, age, sub, ok, c.age, c.sub, c.ok)
		}
	}
}

// FuzzParseHSTS: any field value parses or is refused without panic; a
// parsed max-age is within [0, a year]; ASCII case does not matter (the
// only values read are digits); the result written back parses to itself.
func FuzzParseHSTS(f *testing.F) {
	for _, s := range []string{"max-age=31536000; includeSubDomains; preload", `max-age="5"`, "max-age=1;;", `a="\"";max-age=2`, "max-age=99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		age, sub, ok := parseHSTS(v)
		if !ok {
			if age != 0 || sub {
				t.Fatalf("refused %q but returned %d, %v", v, age, sub)
			}
		} else if age < 0 || age > maxHSTSAge {
			t.Fatalf("%q: max-age %d out of range", v, age)
		}
		a2, s2, ok2 := parseHSTS(strings.ToUpper(v))
		if ok2 != ok || a2 != age || s2 != sub {
			t.Fatalf("%q and its upper case parse apart: %d %v %v, %d %v %v", v, age, sub, ok, a2, s2, ok2)
		}
		if ok {
			back := "max-age=" + strconv.FormatInt(age, 10)
			if sub {
				back += "; includeSubDomains"
			}
			if a3, s3, ok3 := parseHSTS(back); !ok3 || a3 != age || s3 != sub {
				t.Fatalf("%q: written back as %q, parses to %d %v %v", v, back, a3, s3, ok3)
			}
		}
	})
}

func TestHSTSHost(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"example.com", "example.com"},
		{"Example.COM", "example.com"},
		{"example.com.", "example.com"},
		{"bücher.example", "xn--bcher-kva.example"},
		{"BÜCHER.example.", "xn--bcher-kva.example"},
		{"xn--bcher-kva.example", "xn--bcher-kva.example"},
		{"ｅｘａｍｐｌｅ．ｃｏｍ", "example.com"},        // full-width, mapped as the URL Standard does
		{"faß.example", "xn--fa-hia.example"}, // non-transitional, as Chromium and Firefox
		{"my_host.example", "my_host.example"},
		{"127.0.0.1", ""},
		{"::1", ""},
		{"１２７.0.0.1", ""}, // maps to an address
		{"", ""},
		{".", ""},
		{"xn--a.example", ""}, // not Punycode of anything
	} {
		got, ok := hstsHost(c.in)
		if ok != (c.want != "") || got != c.want {
			t.Errorf("hstsHost(%q) = %q, %v; want %q", c.in, got, ok, c.want)
		}
	}
}

func TestHSTSStoreRules(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	s := &hstsStore{now: func() time.Time { return now }}
	s.observe("a.example", "max-age=60")
	s.observe("sub.example", "max-age=60; includeSubDomains")
	s.observe("10.0.0.1", "max-age=60") // an IP literal: never
	s.observe("bad.example", "max-age=60; max-age=60")
	for h, want := range map[string]bool{
		"a.example": true, "A.EXAMPLE.": true, "x.a.example": false, "example": false,
		"sub.example": true, "x.sub.example": true, "y.x.sub.example": true, "xsub.example": false,
		"10.0.0.1": false, "bad.example": false,
	} {
		if got := s.known(h); got != want {
			t.Errorf("known(%q) = %v, want %v", h, got, want)
		}
	}
	// A later field replaces the entry: includeSubDomains can be taken back.
	s.observe("sub.example", "max-age=60")
	if s.known("x.sub.example") || !s.known("sub.example") {
		t.Error("includeSubDomains not taken back by a later field")
	}
	// max-age=0 forgets; a subdomain's own entry does not cover its parent.
	s.observe("a.example", "max-age=0")
	if s.known("a.example") {
		t.Error("max-age=0 did not forget the host")
	}
	// Expiry, and expired entries are dropped when met.
	now = now.Add(61 * time.Second)
	if s.known("sub.example") || s.len() != 0 {
		t.Errorf("expired entry still known (%d stored)", s.len())
	}
	// The cap: past it, the store stays at its size.
	for i := range maxHSTSHosts + 10 {
		s.observe("h"+strconv.Itoa(i)+".example", "max-age=60")
	}
	if n := s.len(); n != maxHSTSHosts {
		t.Errorf("%d hosts stored, want the cap %d", n, maxHSTSHosts)
	}
}

// hstsRig is an https origin (mode m) answering for *.hsts.test on ports
// 443 and 8443 and a plain HTTP one on 80 and 8080, behind a DialContext
// that maps the port to the server and records the ports dialed. The https
// origin's /sts sets Strict-Transport-Security to the query's v and, with
// to, redirects there; every response says which server sent it.
type hstsRig struct {
	tr     *Transport
	roots  *testpeer.Cert
	plain  atomic.Int64 // requests the plain server got
	mu     sync.Mutex
	dialed []string
}

func newHSTSRig(t *testing.T, m mode) *hstsRig {
	t.Helper()
	rig := &hstsRig{}
	h := func(scheme string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if scheme == "http" {
				rig.plain.Add(1)
			}
			if v := r.URL.Query().Get("v"); v != "" {
				w.Header().Set("Strict-Transport-Security", v)
			}
			body, _ := io.ReadAll(r.Body)
			if to := r.URL.Query().Get("to"); to != "" {
				w.Header().Set("Location", to)
				w.WriteHeader(http.StatusFound)
				return
			}
			io.WriteString(w, scheme+" "+r.Method+" "+r.Host+" "+string(body))
		}
	}
	plain := httptest.NewServer(h("http"))
	t.Cleanup(plain.Close)
	tlsSrv := httptest.NewUnstartedServer(h("https"))
	cert := testpeer.NewCert(t, "hsts.test", "*.hsts.test", "*.other.hsts.test", "a.b.hsts.test", "xn--bcher-kva.test")
	tlsSrv.TLS = cert.ServerConfig(m.alpn())
	tlsSrv.EnableHTTP2 = m == modeH2
	tlsSrv.StartTLS()
	t.Cleanup(tlsSrv.Close)
	rig.roots = cert
	to := map[string]string{"80": plain.Listener.Addr().String(), "8080": plain.Listener.Addr().String(),
		"443": tlsSrv.Listener.Addr().String(), "8443": tlsSrv.Listener.Addr().String()}
	rig.tr = &Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, _ := net.SplitHostPort(addr)
		rig.mu.Lock()
		rig.dialed = append(rig.dialed, host+":"+port)
		rig.mu.Unlock()
		var d net.Dialer
		return d.DialContext(ctx, network, to[port])
	}}
	t.Cleanup(func() { rig.tr.Close() })
	return rig
}

func (rig *hstsRig) session(t *testing.T) *Session {
	s := &Session{Transport: rig.tr, RootCAs: rig.roots.Roots}
	t.Cleanup(func() { s.Close() })
	return s
}

// fetch does req with s (nil: isolated) and returns the body, or fails.
func (rig *hstsRig) fetch(t *testing.T, s *Session, req *Request) (string, *Response) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var resp *Response
	var err error
	if s == nil {
		req.RootCAs = rig.roots.Roots
		resp, err = Do(ctx, req)
	} else {
		resp, err = s.Do(ctx, req)
	}
	if err != nil {
		t.Fatalf("%s %s: %v", req.method(), req.URL, err)
	}
	b, err := resp.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return string(b), resp
}

func sts(host, v string) string {
	return "https://" + host + "/sts?v=" + url.QueryEscape(v)
}

func TestHSTSSession(t *testing.T) {
	run(t, func(t *testing.T, m mode) {
		rig := newHSTSRig(t, m)
		s := rig.session(t)
		get := func(u string) (string, *Response) { return rig.fetch(t, s, &Request{URL: u}) }
		want := func(u, body, url string) {
			t.Helper()
			got, resp := get(u)
			if got != body || resp.URL != url {
				t.Fatalf("GET %s: %q from %s, want %q from %s", u, got, resp.URL, body, url)
			}
		}
		want("http://hsts.test/", "http GET hsts.test ", "http://hsts.test/")
		// Over plain http, the field means nothing (RFC 6797 8.1).
		rig.fetch(t, s, &Request{URL: "http://hsts.test/sts?v=max-age%3D60"})
		want("http://hsts.test/", "http GET hsts.test ", "http://hsts.test/")

		get(sts("hsts.test", "max-age=60"))
		plainBefore := rig.plain.Load()
		want("http://hsts.test/x?q=1", "https GET hsts.test ", "https://hsts.test/x?q=1")
		want("http://HSTS.test./", "https GET HSTS.test. ", "https://HSTS.test./") // case and trailing dot
		want("http://hsts.test:80/", "https GET hsts.test ", "https://hsts.test/")
		want("http://hsts.test:8443/", "https GET hsts.test:8443 ", "https://hsts.test:8443/") // RFC 6797 8.3: the port stays
		// Method, body and fields go as they were: no redirect.
		got, _ := rig.fetch(t, s, &Request{Method: "POST", URL: "http://hsts.test/p", Body: bytes.NewBufferString("form=1"), Redirect: RedirectError})
		if got != "https POST hsts.test form=1" {
			t.Fatalf("POST upgraded: %q", got)
		}
		// A redirect to http:// of the host goes to https://; the upgrade
		// is not a hop (MaxRedirects 1 suffices for one real redirect).
		s1 := &Session{Transport: rig.tr, RootCAs: rig.roots.Roots, MaxRedirects: 1}
		defer s1.Close()
		rig.fetch(t, s1, &Request{URL: sts("hsts.test", "max-age=60")})
		got, resp := rig.fetch(t, s1, &Request{URL: "http://hsts.test/sts?to=" + url.QueryEscape("http://hsts.test/final")})
		if got != "https GET hsts.test " || resp.URL != "https://hsts.test/final" {
			t.Fatalf("redirect to http of a known host: %q from %s", got, resp.URL)
		}
		if n := rig.plain.Load() - plainBefore; n != 0 {
			t.Fatalf("the plain server got %d requests for a known host", n)
		}
		// No includeSubDomains: subdomains stay on http; the subdomain's
		// own entry does not cover its parent.
		want("http://sub.hsts.test/", "http GET sub.hsts.test ", "http://sub.hsts.test/")
		get(sts("other.hsts.test", "max-age=60; includeSubDomains"))
		want("http://x.other.hsts.test/", "https GET x.other.hsts.test ", "https://x.other.hsts.test/")
		want("http://other.hsts.test/", "https GET other.hsts.test ", "https://other.hsts.test/")
		get(sts("hsts.test", "max-age=60; includeSubDomains"))
		want("http://sub.hsts.test/", "https GET sub.hsts.test ", "https://sub.hsts.test/")
		want("http://a.b.hsts.test/", "https GET a.b.hsts.test ", "https://a.b.hsts.test/")
		// IDN: learnt from the A-label, applied to the U-label, which goes
		// out as its A-label (request.go) and so verifies.
		get(sts("xn--bcher-kva.test", "max-age=60"))
		want("http://bücher.test/", "https GET xn--bcher-kva.test ", "https://b%C3%BCcher.test/")
		want("http://BÜCHER.test./", "https GET xn--bcher-kva.test. ", "https://B%C3%9CCHER.test./")
		// max-age=0 forgets; expiry forgets.
		get(sts("hsts.test", "max-age=0"))
		want("http://hsts.test/", "http GET hsts.test ", "http://hsts.test/")
		get(sts("hsts.test", "max-age=60"))
		later := time.Now().Add(61 * time.Second)
		s.state.hsts.now = func() time.Time { return later }
		want("http://hsts.test/", "http GET hsts.test ", "http://hsts.test/")
		s.state.hsts.now = nil

		// Another Session, even on the same Transport, knows nothing.
		s2 := rig.session(t)
		get(sts("hsts.test", "max-age=60"))
		if got, _ := rig.fetch(t, s2, &Request{URL: "http://hsts.test/"}); got != "http GET hsts.test " {
			t.Fatalf("a second Session on the Transport was upgraded: %q", got)
		}
		// A connection whose certificate was not verified teaches nothing.
		s3 := &Session{Transport: rig.tr, InsecureSkipVerify: true}
		defer s3.Close()
		rig.fetch(t, s3, &Request{URL: sts("hsts.test", "max-age=60")})
		if got, _ := rig.fetch(t, s3, &Request{URL: "http://hsts.test/"}); got != "http GET hsts.test " {
			t.Fatalf("a field over an unverified connection was kept: %q", got)
		}
	}, modeH1, modeH2)
}

// TestHSTSIsolated: an isolated call remembers nothing once it returns,
// but a hop of its own chain applies what an earlier hop said, as its
// cookies do. The https origin is on localhost; plain HTTP to its port
// gets Go's "400 Bad Request" for HTTP sent to an HTTPS server, so an
// upgrade that did not happen shows.
func TestHSTSIsolated(t *testing.T) {
	o := newOrigin(t, modeH2, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v := r.URL.Query().Get("v"); v != "" {
			w.Header().Set("Strict-Transport-Security", v)
		}
		if to := r.URL.Query().Get("to"); to != "" {
			w.Header().Set("Location", to)
			w.WriteHeader(http.StatusFound)
			return
		}
		io.WriteString(w, "https "+r.URL.Path)
	}))
	port := o.Listener.Addr().(*net.TCPAddr).Port
	base := "localhost:" + strconv.Itoa(port)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	do := func(u string) (int, string, string, error) {
		t.Helper()
		resp, err := Do(ctx, &Request{URL: u, RootCAs: o.roots})
		if err != nil {
			return 0, "", "", err
		}
		b, err := resp.Bytes()
		return resp.StatusCode, string(b), resp.URL, err
	}
	if _, _, _, err := do("https://" + base + "/sts?v=max-age%3D60"); err != nil {
		t.Fatal(err)
	}
	// Plain HTTP to the TLS port: a 400, or a reset while reading it.
	if code, body, _, err := do("http://" + base + "/"); err == nil && (code != 400 || !strings.Contains(body, "HTTPS server")) {
		t.Fatalf("an isolated call remembered HSTS: %d %q", code, body)
	}
	code, body, last, err := do("https://" + base + "/sts?v=max-age%3D60&to=" + url.QueryEscape("http://"+base+"/next"))
	if err != nil || code != 200 || body != "https /next" || last != "https://"+base+"/next" {
		t.Fatalf("the chain's own HSTS was not applied: %d %q from %s (%v)", code, body, last, err)
	}
}
