package proxy

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/guise-http/guise/fields"
	"github.com/guise-http/guise/internal/testpeer"
)

// P-12: bytes sent with the 200 in one write start the tunnel stream.
func TestCONNECTBytesAfter200(t *testing.T) {
	for _, tc := range []struct{ name, reply string }{
		{"same write", "HTTP/1.1 200 Connection established\r\n\r\nfoobar=ready"},
		{"after 1xx", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early\r\nLink: x\r\n\r\nHTTP/1.0 200 OK\r\nVia: 1.1 p\r\n\r\nfoobar=ready"},
		{"bare LF", "HTTP/1.1 200 OK\nX: y\n\nfoobar=ready"},
		{"no reason", "HTTP/1.1 204\r\n\r\nfoobar=ready"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := serve(t, func(c net.Conn) error {
				if _, err := readHead(c); err != nil {
					return err
				}
				if _, err := io.WriteString(c, tc.reply); err != nil {
					return err
				}
				return echo(c)
			})
			d := &Dialer{URL: mustURL(t, "http://"+srv.Addr)}
			tun, err := d.DialContext(ctxTimeout(t, 5*time.Second), "example.com:443")
			if err != nil {
				t.Fatal(err)
			}
			defer tun.Close()
			tun.SetDeadline(time.Now().Add(5 * time.Second))
			got := make([]byte, len("foobar=ready"))
			if _, err := io.ReadFull(tun, got); err != nil || string(got) != "foobar=ready" {
				t.Fatalf("first tunnel bytes %q, %v; want foobar=ready", got, err)
			}
			roundTrip(t, tun, "ping")
		})
	}
}

// P-04: CONNECT carries exactly Host, ConnectHeader in order and the
// Proxy-Authorization from the URL, and nothing else.
func TestCONNECTRequestHead(t *testing.T) {
	heads := make(chan string, 1)
	srv := serve(t, func(c net.Conn) error {
		h, err := readHead(c)
		heads <- h
		if err != nil {
			return err
		}
		if _, err := io.WriteString(c, "HTTP/1.1 200 OK\r\n\r\n"); err != nil {
			return err
		}
		return echo(c)
	})
	hdr := fields.Header{
		{Name: "Host", Value: "evil.example"},
		{Name: "Proxy-Connection", Value: "keep-alive"},
		{Name: "Proxy-Authorization", Value: "Bearer stale"},
		{Name: "User-Agent", Value: "Mozilla/5.0 test"},
	}
	orig := hdr.Clone()
	d := &Dialer{URL: mustURL(t, "http://Aladdin:open%20sesame@"+srv.Addr), ConnectHeader: hdr}
	tun, err := d.DialContext(ctxTimeout(t, 5*time.Second), "origin.example:8443")
	if err != nil {
		t.Fatal(err)
	}
	roundTrip(t, tun, "GET / HTTP/1.1\r\nCookie: a=b\r\n\r\n")
	tun.Close()
	want := "CONNECT origin.example:8443 HTTP/1.1\r\n" +
		"Host: origin.example:8443\r\n" +
		"Proxy-Connection: keep-alive\r\n" +
		"User-Agent: Mozilla/5.0 test\r\n" +
		"Proxy-Authorization: Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==\r\n" +
		"\r\n"
	if got := <-heads; got != want {
		t.Errorf("CONNECT head\n got %q\nwant %q", got, want)
	}
	if fmt.Sprint(hdr) != fmt.Sprint(orig) {
		t.Errorf("ConnectHeader mutated: %v, was %v", hdr, orig)
	}

	// Without credentials in the URL, a Proxy-Authorization in ConnectHeader
	// is the caller's choice and is sent; IPv6 targets keep their brackets.
	heads2 := make(chan string, 1)
	srv2 := serve(t, func(c net.Conn) error {
		h, err := readHead(c)
		heads2 <- h
		io.WriteString(c, "HTTP/1.1 200 OK\r\n\r\n")
		return err
	})
	d2 := &Dialer{URL: mustURL(t, "http://"+srv2.Addr), ConnectHeader: fields.Header{{Name: "proxy-authorization", Value: "Bearer t"}}}
	tun, err = d2.DialContext(ctxTimeout(t, 5*time.Second), "[2001:db8::1]:443")
	if err != nil {
		t.Fatal(err)
	}
	tun.Close()
	want = "CONNECT [2001:db8::1]:443 HTTP/1.1\r\nHost: [2001:db8::1]:443\r\nproxy-authorization: Bearer t\r\n\r\n"
	if got := <-heads2; got != want {
		t.Errorf("CONNECT head\n got %q\nwant %q", got, want)
	}
}

// Bad ConnectHeader fields and bad targets are refused before any dial.
func TestCONNECTRefusesBadInput(t *testing.T) {
	dials := 0
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials++
		return nil, errors.New("must not dial")
	}
	for _, h := range []fields.Field{{Name: "X", Value: "a\r\nCookie: x"}, {Name: "Bad Name", Value: "v"}, {Name: "X", Value: "a\x00"}} {
		d := &Dialer{URL: mustURL(t, "http://127.0.0.1:1"), Dial: dial, ConnectHeader: fields.Header{h}}
		_, err := d.DialContext(context.Background(), "a.example:443")
		var pe *Error
		if !errors.Is(err, ErrInvalidHeader) || !errors.As(err, &pe) || pe.Op != "config" {
			t.Errorf("header %q: err = %v, want ErrInvalidHeader in *Error{Op: config}", h, err)
		}
	}
	d := &Dialer{URL: mustURL(t, "http://127.0.0.1:1"), Dial: dial}
	for _, addr := range []string{"a.example", "a.example:0", "a.example:65536", "a b:443", "a\r\nX: y:443", ":443", "a.example:+1", "a.example:http"} {
		if _, err := d.DialContext(context.Background(), addr); !errors.Is(err, ErrInvalidTarget) {
			t.Errorf("target %q: err = %v, want ErrInvalidTarget", addr, err)
		}
	}
	for _, u := range []*url.URL{
		mustURL(t, "ftp://127.0.0.1:1"), mustURL(t, "http://"), mustURL(t, "http://127.0.0.1:99999"),
		{Scheme: "http", Host: "127.0.0.1:x"}, {Scheme: "socks5", Host: "a b:1"}, mustURL(t, "https://127.0.0.1:1"),
	} {
		d := &Dialer{URL: u, Dial: dial}
		_, err := d.DialContext(context.Background(), "a.example:443")
		if !errors.Is(err, ErrUnsupportedScheme) && !errors.Is(err, ErrInvalidURL) && !errors.Is(err, ErrNoTLS) {
			t.Errorf("proxy %q: err = %v, want ErrUnsupportedScheme, ErrInvalidURL or ErrNoTLS", u, err)
		}
	}
	if _, err := (&Dialer{}).DialContext(context.Background(), "a.example:443"); !errors.Is(err, ErrInvalidURL) {
		t.Errorf("zero Dialer: err = %v, want ErrInvalidURL", err)
	}
	if dials != 0 {
		t.Errorf("%d dials for refused input", dials)
	}
}

// P-02: a non-2xx reply is a *StatusError; its body is not tunnel bytes and
// the connection is closed.
func TestCONNECTNon2xx(t *testing.T) {
	for _, tc := range []struct {
		code   int
		status string
		extra  string
	}{
		{407, "407 Proxy Authentication Required", "Proxy-Authenticate: Basic realm=\"p\"\r\n"},
		{403, "403 Forbidden", ""},
		{502, "502 Bad Gateway", ""},
		{101, "101 Switching Protocols", ""},
		{301, "301 Moved", "Location: http://x/\r\n"},
	} {
		t.Run(tc.status, func(t *testing.T) {
			body := strings.Repeat("<html>denied</html>", 100)
			srv := serve(t, func(c net.Conn) error {
				if _, err := readHead(c); err != nil {
					return err
				}
				reply := fmt.Sprintf("HTTP/1.1 %s\r\n%sContent-Length: %d\r\n\r\n%s", tc.status, tc.extra, len(body), body)
				if _, err := io.WriteString(c, reply); err != nil {
					return err
				}
				return expectEOF(c)
			})
			d := &Dialer{URL: mustURL(t, "http://u:secret@"+srv.Addr)}
			tun, err := d.DialContext(ctxTimeout(t, 5*time.Second), "example.com:443")
			if tun != nil {
				t.Fatal("got a tunnel")
			}
			var se *StatusError
			var pe *Error
			if !errors.As(err, &se) || !errors.As(err, &pe) {
				t.Fatalf("err = %v, want *StatusError inside *Error", err)
			}
			if se.StatusCode != tc.code || se.Status != tc.status || pe.Op != "connect" {
				t.Errorf("got %d %q op %q", se.StatusCode, se.Status, pe.Op)
			}
			if errors.Is(err, ErrAuthRequired) != (tc.code == 407) {
				t.Errorf("%d: errors.Is(err, ErrAuthRequired) = %v", tc.code, tc.code != 407)
			}
			if tc.code == 407 && se.Header.Get("proxy-authenticate") != `Basic realm="p"` {
				t.Errorf("Proxy-Authenticate = %q", se.Header.Get("proxy-authenticate"))
			}
			if strings.Contains(err.Error(), "secret") || !strings.Contains(err.Error(), "xxxxx") {
				t.Errorf("password not masked: %v", err)
			}
		})
	}
}

// P-03: a proxy that never answers makes DialContext return ctx's error, typed
// as a proxy-phase timeout, and close the socket.
func TestCONNECTSilence(t *testing.T) {
	srv := serve(t, func(c net.Conn) error {
		if _, err := readHead(c); err != nil {
			return err
		}
		return expectEOF(c)
	})
	d := &Dialer{URL: mustURL(t, "http://"+srv.Addr)}
	start := time.Now()
	_, err := d.DialContext(ctxTimeout(t, 100*time.Millisecond), "example.com:443")
	var pe *Error
	if !errors.As(err, &pe) || pe.Op != "connect" || !errors.Is(err, context.DeadlineExceeded) || !pe.Timeout() {
		t.Fatalf("err = %v, want *Error{Op: connect} wrapping context.DeadlineExceeded", err)
	}
	if el := time.Since(start); el > 3*time.Second {
		t.Errorf("took %v", el)
	}

	// Cancellation (not a deadline) works the same and keeps context.Canceled.
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	_, err = d.DialContext(ctx, "example.com:443")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
}

// P-01: endless header lines hit the cap.
func TestCONNECTEndlessHeaders(t *testing.T) {
	for _, max := range []int{0, 8 << 10} {
		srv := serve(t, func(c net.Conn) error {
			if _, err := readHead(c); err != nil {
				return err
			}
			line := []byte("X-Filler: " + strings.Repeat("a", 1000) + "\r\n")
			if _, err := io.WriteString(c, "HTTP/1.1 200 OK\r\n"); err != nil {
				return nil
			}
			for range 10_000 { // 10 MB at most
				if _, err := c.Write(line); err != nil {
					return nil // the client gave up and closed: expected
				}
			}
			return errors.New("client read 10 MB of headers")
		})
		d := &Dialer{URL: mustURL(t, "http://"+srv.Addr), MaxResponseHeaderBytes: max}
		_, err := d.DialContext(ctxTimeout(t, 5*time.Second), "example.com:443")
		var pe *Error
		if !errors.Is(err, ErrHeaderTooLarge) || !errors.As(err, &pe) || pe.Op != "connect" {
			t.Fatalf("max %d: err = %v, want ErrHeaderTooLarge", max, err)
		}
	}
}

// The cap is exact: a head of exactly max bytes passes, one more byte fails;
// 1xx heads count towards it.
func TestCONNECTHeadCapBoundary(t *testing.T) {
	head := func(n int) string {
		h := "HTTP/1.1 200 OK\r\nX: "
		return h + strings.Repeat("a", n-len(h)-4) + "\r\n\r\n"
	}
	const max = 300
	for _, tc := range []struct {
		in   string
		fail bool
	}{
		{head(max) + "tail", false},
		{head(max + 1), true},
		{"HTTP/1.1 100 Continue\r\n\r\n" + head(max-25), false},
		{"HTTP/1.1 100 Continue\r\n\r\n" + head(max-24), true},
	} {
		rest, err := readConnectReply(&chunkReader{b: []byte(tc.in), n: 7}, nil, max)
		if tc.fail != errors.Is(err, ErrHeaderTooLarge) || (!tc.fail && err != nil) {
			t.Errorf("len %d: err = %v, want fail=%v", len(tc.in), err, tc.fail)
		}
		if !tc.fail && !strings.HasSuffix(tc.in, string(rest)) {
			t.Errorf("rest %q", rest)
		}
	}
}

func TestCONNECTMalformedReply(t *testing.T) {
	for _, in := range []string{
		"HTTP/2 200 OK\r\n\r\n",
		"ICY 200 OK\r\n\r\n",
		"HTTP/1.1 2000 OK\r\n\r\n",
		"HTTP/1.1 20 OK\r\n\r\n",
		"HTTP/1.1 099 x\r\n\r\n",
		"HTTP/1.1 2x0 OK\r\n\r\n",
		"HTTP/1.1 200 OK\r\nno colon\r\n\r\n",
		"HTTP/1.1 200 OK\r\n: empty name\r\n\r\n",
		"HTTP/1.1 200 OK\r\nBad Name: v\r\n\r\n",
		"HTTP/1.1 200 OK\r\nX: a\rb\r\n\r\n",
		"\r\nHTTP/1.1 200 OK\r\n\r\n",
	} {
		_, err := readConnectReply(strings.NewReader(in), nil, 1024)
		if !errors.Is(err, ErrMalformedReply) {
			t.Errorf("%q: err = %v, want ErrMalformedReply", in, err)
		}
	}
	for _, in := range []string{"", "HTTP/1.1 200 OK\r\n", "HTTP/1.1 200 OK\r\nX: y\r\n\r", "HTTP/1.1 100 Continue\r\n\r\n"} {
		_, err := readConnectReply(strings.NewReader(in), nil, 1024)
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("%q: err = %v, want io.ErrUnexpectedEOF", in, err)
		}
	}
}

// P-10: a failed dial keeps the *net.OpError and names the proxy hop.
func TestDialFailureKeepsCause(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	for _, scheme := range []string{"http", "https", "socks5h", "socks4a"} {
		d := &Dialer{URL: mustURL(t, scheme+"://user:hunter2@"+addr), TLS: tlsFunc(nil)}
		_, err := d.DialContext(ctxTimeout(t, 5*time.Second), "example.com:443")
		var pe *Error
		var oe *net.OpError
		if !errors.As(err, &pe) || pe.Op != "dial" || !errors.As(err, &oe) {
			t.Fatalf("%s: err = %v, want *Error{Op: dial} holding *net.OpError", scheme, err)
		}
		if !strings.Contains(err.Error(), addr) || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: error %q must name the proxy and mask the password", scheme, err)
		}
		if pe.Timeout() {
			t.Errorf("refused dial reported as timeout")
		}
	}
	// A dial ended by ctx reports ctx's error.
	d := &Dialer{URL: mustURL(t, "http://"+addr), Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		<-ctx.Done()
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: os.ErrDeadlineExceeded}
	}}
	_, err = d.DialContext(ctxTimeout(t, 20*time.Millisecond), "example.com:443")
	var pe *Error
	if !errors.As(err, &pe) || pe.Op != "dial" || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want dial timeout", err)
	}
}

// P-11: TLS to an https:// proxy verifies the proxy's name; through it, TLS to
// the origin works (TLS in TLS).
func TestHTTPSProxy(t *testing.T) {
	proxyCert := testpeer.NewCert(t, "proxy.test")
	originCert := testpeer.NewCert(t, "origin.test")
	proxyPool, originPool := proxyCert.Roots, originCert.Roots

	origin := serveOn(t, tlsListen(t, originCert.TLS()), func(c net.Conn) error {
		return echo(c)
	})
	ln := tlsListen(t, proxyCert.TLS())
	srv := serveOn(t, ln, func(c net.Conn) error {
		if c.(*tls.Conn).Handshake() != nil {
			return nil // the wrong-SNI client rejects the certificate
		}
		return connectProxy(c)
	})
	_, port, _ := net.SplitHostPort(srv.Addr)
	toLoopback := func(ctx context.Context, network, addr string) (net.Conn, error) {
		_, p, _ := net.SplitHostPort(addr)
		var nd net.Dialer
		return nd.DialContext(ctx, network, "127.0.0.1:"+p)
	}

	// Wrong name: the proxy's certificate is for proxy.test, not 127.0.0.1.
	d := &Dialer{URL: mustURL(t, "https://127.0.0.1:"+port), TLS: tlsFunc(proxyPool)}
	_, err := d.DialContext(ctxTimeout(t, 5*time.Second), origin.Addr)
	var pe *Error
	if !errors.As(err, &pe) || pe.Op != "tls" {
		t.Fatalf("wrong SNI: err = %v, want *Error{Op: tls}", err)
	}

	d = &Dialer{URL: mustURL(t, "https://proxy.test:"+port), Dial: toLoopback, TLS: tlsFunc(proxyPool)}
	tun, err := d.DialContext(ctxTimeout(t, 5*time.Second), origin.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer tun.Close()
	oc, err := tlsFunc(originPool)(ctxTimeout(t, 5*time.Second), tun, "origin.test")
	if err != nil {
		t.Fatalf("TLS in TLS: %v", err)
	}
	defer oc.Close()
	roundTrip(t, oc, "hello through two TLS layers")
}

// RELIABILITY L-11.
func TestKey(t *testing.T) {
	k := func(s string) string { return Key(mustURL(t, s)) }
	same := [][2]string{
		{"http://proxy:8080", "HTTP://PROXY:8080"},
		{"http://proxy", "http://proxy:80"},
		{"https://proxy", "https://proxy:443"},
		{"socks5h://proxy", "socks5h://proxy:1080"},
		{"http://u:p@proxy:8080", "http://u:p@proxy:8080/"},
	}
	for _, p := range same {
		if k(p[0]) != k(p[1]) {
			t.Errorf("Key(%s) != Key(%s)", p[0], p[1])
		}
	}
	// P-05: different credentials, scheme, host or port never share a key.
	distinct := []string{
		"http://proxy:8080", "http://u:p@proxy:8080", "http://u:q@proxy:8080", "http://v:p@proxy:8080",
		"http://u:@proxy:8080", "http://u%3Ap@proxy:8080", "http://u:p%3A@proxy:8080",
		"http://a%00b@proxy:8080", "http://a:%00b@proxy:8080", "http://ab@proxy:8080", "http://a:b@proxy:8080",
		"https://proxy:8080", "socks5://proxy:8080", "socks5h://proxy:8080", "http://proxy2:8080", "http://proxy:8081",
	}
	seen := map[string]string{}
	for _, s := range distinct {
		key := k(s)
		if prev, ok := seen[key]; ok {
			t.Errorf("Key(%s) == Key(%s)", s, prev)
		}
		seen[key] = s
		if strings.Contains(key, ":p@") || strings.Contains(key, ":q@") {
			t.Errorf("Key(%s) = %q holds the password", s, key)
		}
	}
	// A username without a password and with an empty one send the same
	// credentials, as does an empty userinfo and none at all.
	if k("http://u@proxy") != k("http://u:@proxy") || k("http://@proxy") != k("http://proxy") {
		t.Error("equivalent credentials keyed apart")
	}
	if Key(nil) != "" {
		t.Error("Key(nil) not empty")
	}
	if (&Dialer{URL: mustURL(t, "http://u:p@proxy")}).Key() != k("http://u:p@proxy:80") {
		t.Error("Dialer.Key differs from Key")
	}
}

// P-05 end to end: two Dialers that differ only in credentials open two
// tunnels with their own Proxy-Authorization each.
func TestCredentialsNeverShared(t *testing.T) {
	auths := make(chan string, 2)
	srv := serve(t, func(c net.Conn) error {
		h, err := readHead(c)
		for _, l := range strings.Split(h, "\r\n") {
			if v, ok := strings.CutPrefix(l, "Proxy-Authorization: "); ok {
				auths <- v
			}
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\n\r\n")
		return err
	})
	for _, u := range []string{"http://a:1@" + srv.Addr, "http://b:2@" + srv.Addr} {
		tun, err := (&Dialer{URL: mustURL(t, u)}).DialContext(ctxTimeout(t, 5*time.Second), "x.example:443")
		if err != nil {
			t.Fatal(err)
		}
		tun.Close()
	}
	a, b := <-auths, <-auths
	if a != "Basic YTox" || b != "Basic Yjoy" || srv.Conns.Load() != 2 {
		t.Errorf("auths %q %q over %d connections", a, b, srv.Conns.Load())
	}
}

func tlsListen(t testing.TB, cert tls.Certificate) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{cert}})
}

// One Dialer used from many goroutines at once, including its first use.
func TestDialerConcurrent(t *testing.T) {
	target := serve(t, echo)
	srv := serve(t, connectProxy)
	d := &Dialer{URL: mustURL(t, "http://u:p@"+srv.Addr)}
	const n = 8
	errs := make(chan error, n)
	for i := range n {
		go func() {
			tun, err := d.DialContext(ctxTimeout(t, 5*time.Second), target.Addr)
			if err == nil {
				msg := fmt.Sprintf("client %d", i)
				tun.Write([]byte(msg))
				got := make([]byte, len(msg))
				_, err = io.ReadFull(tun, got)
				if err == nil && string(got) != msg {
					err = fmt.Errorf("got %q", got)
				}
				tun.Close()
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
