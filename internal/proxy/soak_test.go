package proxy

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// countingDial dials TCP and counts connections opened and closed.
type countingDial struct{ opened, closed atomic.Int64 }

type countedConn struct {
	net.Conn
	cd   *countingDial
	done atomic.Bool
}

func (c *countedConn) Close() error {
	if c.done.CompareAndSwap(false, true) {
		c.cd.closed.Add(1)
	}
	return c.Conn.Close()
}

func (cd *countingDial) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	var nd net.Dialer
	c, err := nd.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	cd.opened.Add(1)
	return &countedConn{Conn: c, cd: cd}, nil
}

// S-11: a proxy fault loop. Every fault gives its typed error every time, and
// every connection to the proxy is closed (the goroutine check is TestMain's
// goleak).
func TestProxyFaultLoop(t *testing.T) {
	const n = 100
	if testing.Short() {
		t.Skip("fault loop")
	}
	connectFault := func(reply string, then func(net.Conn) error) func(net.Conn) error {
		return func(c net.Conn) error {
			if _, err := readHead(c); err != nil {
				return nil // the client gave up early (silence case); its side is checked
			}
			if _, err := io.WriteString(c, reply); err != nil {
				return nil
			}
			return then(c)
		}
	}
	drain := func(c net.Conn) error { io.Copy(io.Discard, c); return nil }
	socksReply := func(reply []byte) func(net.Conn) error {
		return func(c net.Conn) error {
			var b [10]byte
			if _, err := io.ReadFull(c, b[:3]); err != nil {
				return nil // the client gave up early
			}
			c.Write([]byte{5, 0})
			if _, err := io.ReadFull(c, b[:10]); err != nil {
				return err
			}
			c.Write(reply)
			if len(reply) < 10 {
				return nil // truncated: close now
			}
			return drain(c)
		}
	}
	endless := func(c net.Conn) error {
		line := []byte("X: " + strings.Repeat("a", 500) + "\r\n")
		for range 1000 {
			if _, err := c.Write(line); err != nil {
				return nil
			}
		}
		return nil
	}
	type fault struct {
		name    string
		scheme  string
		script  func(net.Conn) error
		timeout time.Duration
		check   func(err error, tun net.Conn) error
	}
	status := func(code int) func(error, net.Conn) error {
		return func(err error, _ net.Conn) error {
			var se *StatusError
			if !errors.As(err, &se) || se.StatusCode != code {
				return fmt.Errorf("err = %v, want status %d", err, code)
			}
			return nil
		}
	}
	is := func(target error) func(error, net.Conn) error {
		return func(err error, _ net.Conn) error {
			if !errors.Is(err, target) {
				return fmt.Errorf("err = %v, want %v", err, target)
			}
			return nil
		}
	}
	faults := []fault{
		{"407", "http", connectFault("HTTP/1.1 407 Proxy Authentication Required\r\nContent-Length: 4\r\n\r\nnope", drain), 0, status(407)},
		{"502", "http", connectFault("HTTP/1.1 502 Bad Gateway\r\nContent-Length: 3\r\n\r\nbad", drain), 0, status(502)},
		{"silence", "http", connectFault("", drain), 5 * time.Millisecond, is(context.DeadlineExceeded)},
		{"endless headers", "http", connectFault("HTTP/1.1 200 OK\r\n", endless), 0, is(ErrHeaderTooLarge)},
		{"close after 200", "http", connectFault("HTTP/1.1 200 OK\r\n\r\n", func(net.Conn) error { return nil }), 0,
			func(err error, tun net.Conn) error {
				if err != nil {
					return err
				}
				defer tun.Close()
				tun.SetReadDeadline(time.Now().Add(5 * time.Second))
				if _, err := tun.Read(make([]byte, 1)); err != io.EOF {
					return fmt.Errorf("tunnel read: %v, want EOF", err)
				}
				return nil
			}},
		{"socks truncated", "socks5h", socksReply([]byte{5, 0, 0, 1, 1}), 0, is(io.ErrUnexpectedEOF)},
		{"socks silence", "socks5h", drain, 5 * time.Millisecond, is(context.DeadlineExceeded)},
	}
	for rep := byte(1); rep <= 8; rep++ {
		faults = append(faults, fault{fmt.Sprintf("socks REP %d", rep), "socks5h", socksReply([]byte{5, rep, 0, 1, 0, 0, 0, 0, 0, 0}), 0,
			func(err error, _ net.Conn) error {
				var se *SOCKSError
				if !errors.As(err, &se) || se.Reply != rep {
					return fmt.Errorf("err = %v, want REP %d", err, rep)
				}
				return nil
			}})
	}
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			srv := serve(t, f.script)
			var cd countingDial
			d := &Dialer{URL: mustURL(t, f.scheme+"://"+srv.Addr), Dial: cd.dial, MaxResponseHeaderBytes: 8 << 10}
			for i := range n {
				timeout := f.timeout
				if timeout == 0 {
					timeout = 10 * time.Second
				}
				ctx, cancel := context.WithTimeout(context.Background(), timeout)
				tun, err := d.DialContext(ctx, "192.0.2.1:443")
				cancel()
				if err == nil && tun == nil || err != nil && tun != nil {
					t.Fatalf("iteration %d: tunnel %v with err %v", i, tun, err)
				}
				if cerr := f.check(err, tun); cerr != nil {
					t.Fatalf("iteration %d: %v", i, cerr)
				}
			}
			// A timed-out dial opens nothing; every opened connection is closed.
			if o, c := cd.opened.Load(), cd.closed.Load(); o != c || o == 0 || f.timeout == 0 && o != n {
				t.Errorf("opened %d, closed %d proxy connections (%d iterations)", o, c, n)
			}
		})
	}
}
