package proxy

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/guise-http/guise/internal/testpeer"
)

// Real peers: squid as an HTTP CONNECT proxy with basic auth, dante as a
// SOCKS5 (and SOCKS4) server. Both are started on 127.0.0.1 with configs
// written by the test, and tunnel to an echo server the test runs.

func TestSquid(t *testing.T) {
	addr := testpeer.Squid(t, map[string]string{"alice": "open sesame"})

	target := serve(t, echo)
	ctx := ctxTimeout(t, 20*time.Second)

	// Right credentials: a working tunnel, twice (a fresh tunnel each time).
	d := &Dialer{URL: mustURL(t, "http://alice:open%20sesame@"+addr)}
	for i := range 2 {
		tun, err := d.DialContext(ctx, target.Addr)
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		roundTrip(t, tun, "through squid "+strconv.Itoa(i))
		tun.Close()
	}

	// No or wrong credentials: 407 with a Basic challenge.
	for _, u := range []string{"http://" + addr, "http://alice:wrong@" + addr} {
		_, err := (&Dialer{URL: mustURL(t, u)}).DialContext(ctx, target.Addr)
		var se *StatusError
		if !errors.As(err, &se) || se.StatusCode != 407 || !strings.HasPrefix(se.Header.Get("Proxy-Authenticate"), "Basic") {
			t.Errorf("%s: err = %v, want 407 with a Basic challenge", u, err)
		}
	}

	// ACL denial: 403. Unreachable target: 503.
	_, err := d.DialContext(ctx, "127.0.0.1:9")
	var se *StatusError
	if !errors.As(err, &se) || se.StatusCode != 403 {
		t.Errorf("blocked port: err = %v, want 403", err)
	}
	_, err = d.DialContext(ctx, "127.0.0.1:"+testpeer.FreePort(t))
	if !errors.As(err, &se) || se.StatusCode != 503 {
		t.Errorf("closed target: err = %v, want 503", err)
	}
	if target.Conns.Load() != 2 {
		t.Errorf("target saw %d connections, want 2", target.Conns.Load())
	}
}

// TestDante runs dante with "socksmethod: none": its username method checks
// system accounts, and the test does not create one. Username/password is
// covered by the scripted server tests.
func TestDante(t *testing.T) {
	addr := testpeer.Dante(t)

	target := serve(t, echo)
	ctx := ctxTimeout(t, 20*time.Second)
	for _, scheme := range []string{"socks5", "socks5h", "socks4"} {
		tun, err := (&Dialer{URL: mustURL(t, scheme+"://"+addr)}).DialContext(ctx, target.Addr)
		if err != nil {
			t.Fatalf("%s: %v", scheme, err)
		}
		roundTrip(t, tun, "through dante with "+scheme)
		tun.Close()
	}
	d := &Dialer{URL: mustURL(t, "socks5h://"+addr)}
	_, err := d.DialContext(ctx, "127.0.0.1:"+testpeer.FreePort(t))
	var se *SOCKSError
	if !errors.As(err, &se) || se.Stage != SOCKSRequest || se.Reply != ReplyConnectionRefused {
		t.Errorf("closed target: err = %v, want REP 5 connection refused", err)
	}
	_, err = d.DialContext(ctx, "127.0.0.1:9")
	if !errors.As(err, &se) || se.Reply != ReplyNotAllowed {
		t.Errorf("blocked target: err = %v, want REP 2 not allowed", err)
	}
}

// The hash matches a known value (from `openssl passwd -apr1 -salt abcdefgh secret`).
func TestAPR1(t *testing.T) {
	if got, want := testpeer.APR1("secret", "abcdefgh"), "$apr1$abcdefgh$h9FWgUz3n9YxylKLlR5SQ/"; got != want {
		t.Fatalf("apr1 = %s, want %s", got, want)
	}
}
