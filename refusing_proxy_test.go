//go:build unix

package guise

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"
)

// refusingProxy is a loopback proxy that refuses every client: an HTTP
// proxy answering each CONNECT with 403, or a SOCKS5 proxy answering each
// greeting with "no acceptable method". Close stops it and waits for its
// connections.
type refusingProxy struct {
	ln net.Listener
	wg sync.WaitGroup
}

func newRefusingProxy(t *testing.T, socks bool) *refusingProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &refusingProxy{ln: ln}
	p.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.wg.Go(func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(5 * time.Second))
				if socks {
					var greet [2]byte
					if _, err := io.ReadFull(c, greet[:]); err == nil {
						io.CopyN(io.Discard, c, int64(greet[1]))
						c.Write([]byte{5, 0xff})
					}
					return
				}
				br := bufio.NewReader(c)
				for {
					line, err := br.ReadSlice('\n')
					if err != nil || len(line) <= 2 {
						break
					}
				}
				io.WriteString(c, "HTTP/1.1 403 Forbidden\r\nContent-Length: 7\r\nConnection: close\r\n\r\nrefused")
			})
		}
	})
	t.Cleanup(func() { ln.Close(); p.wg.Wait() })
	return p
}

// TestRefusingProxyDoesNotGrowThePool (RELIABILITY S-3): thousands of
// requests through proxies that refuse them (a closed port, an HTTP proxy
// answering CONNECT with 403, a SOCKS5 proxy accepting no method), over
// https and http, each fail with a typed error, and leave the shared
// Transport's pool without a key, the open fds and the goroutines where
// they were. The target is an address literal, so that socks5:// (which
// resolves names on this side) looks nothing up.
func TestRefusingProxyDoesNotGrowThePool(t *testing.T) {
	const perProxy = 1000
	proxies := map[string]string{
		"closed port http":   "http://" + deadAddr(t),
		"closed port socks5": "socks5://" + deadAddr(t),
		"http 403":           "http://" + newRefusingProxy(t, false).ln.Addr().String(),
		"socks5 no method":   "socks5://" + newRefusingProxy(t, true).ln.Addr().String(),
	}
	tr := &Transport{}
	defer tr.Close()
	s := &Session{Transport: tr}
	defer s.Close()
	// One round first, so that what the first requests set up once (the
	// runtime's and the resolver's own) is in the baseline.
	for _, p := range proxies {
		s.Do(context.Background(), &Request{URL: "https://192.0.2.1/", Proxy: p, Timeout: 5 * time.Second})
	}
	fds0, g0 := openFDs(t), runtime.NumGoroutine()
	for name, p := range proxies {
		start := time.Now()
		for i := range perProxy {
			url := "https://192.0.2.1/"
			if i%2 == 1 {
				url = "http://192.0.2.1/"
			}
			resp, err := s.Do(context.Background(), &Request{URL: url, Proxy: p, Timeout: 5 * time.Second})
			if err == nil {
				resp.Body.Close()
				if name != "http 403" || url[:5] == "https" {
					t.Fatalf("%s, %s: a response (%d) through a refusing proxy", name, url, resp.StatusCode)
				}
				continue // plain http through an HTTP proxy: its 403 is the answer
			}
			var ge *Error
			if !errors.As(err, &ge) {
				t.Fatalf("%s: %v is not a *guise.Error", name, err)
			}
			if label, typed := errorLabel(err); !typed {
				t.Fatalf("%s, %s: untyped error %s: %v", name, url, label, err)
			}
		}
		t.Logf("%s: %d requests in %v", name, perProxy, time.Since(start))
	}
	if keys := tr.init().pool.Keys(); keys != 0 {
		t.Errorf("the pool keeps %d keys after requests through refusing proxies", keys)
	}
	var fds1, g1 int
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		fds1, g1 = openFDs(t), runtime.NumGoroutine()
		if fds1 <= fds0 && g1 <= g0 || time.Now().After(deadline) {
			break
		}
	}
	if fds1 > fds0 {
		t.Errorf("open fds %d → %d", fds0, fds1)
	}
	if g1 > g0 {
		t.Errorf("goroutines %d → %d", g0, g1)
	}
}
