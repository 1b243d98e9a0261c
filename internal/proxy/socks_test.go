package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// socks5Script is a scripted SOCKS5 server: it checks the exact greeting,
// optional RFC 1929 request and CONNECT request bytes, answers with the given
// replies and then echoes.
type socks5Script struct {
	greeting, auth, request []byte // expected client bytes; auth nil = no auth step
	method                  []byte // reply to the greeting
	authReply               []byte
	reply                   []byte // reply to the request
	closeAfter              bool   // close right after the last scripted write
}

func (s socks5Script) run(c net.Conn) error {
	if err := expect(c, s.greeting); err != nil {
		return err
	}
	if _, err := c.Write(s.method); err != nil {
		return err
	}
	if s.auth == nil && s.request == nil {
		if s.closeAfter {
			return nil
		}
		return expectEOF(c)
	}
	if s.auth != nil {
		if err := expect(c, s.auth); err != nil {
			return err
		}
		if _, err := c.Write(s.authReply); err != nil {
			return err
		}
		if s.closeAfter && s.request == nil {
			return nil
		}
		if s.authReply[1] != 0 {
			return expectEOF(c)
		}
	}
	if s.request == nil {
		return expectEOF(c)
	}
	if err := expect(c, s.request); err != nil {
		return err
	}
	if _, err := c.Write(s.reply); err != nil {
		return err
	}
	if s.closeAfter {
		return nil
	}
	if len(s.reply) < 2 || s.reply[1] != 0 {
		return expectEOF(c)
	}
	return echo(c)
}

func be16(p int) []byte { return []byte{byte(p >> 8), byte(p)} }

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

var okReply4 = []byte{5, 0, 0, 1, 127, 0, 0, 1, 0x1f, 0x90}

func TestSOCKS5Success(t *testing.T) {
	name := "origin.example"
	domainReq := cat([]byte{5, 1, 0, 3, byte(len(name))}, []byte(name), be16(443))
	for _, tc := range []struct {
		name   string
		url    string // without host
		target string
		s      socks5Script
	}{
		{"socks5h name", "socks5h://", name + ":443", socks5Script{
			greeting: []byte{5, 1, 0}, method: []byte{5, 0}, request: domainReq, reply: okReply4}},
		{"socks5h IPv4 literal", "socks5h://", "192.0.2.7:80", socks5Script{
			greeting: []byte{5, 1, 0}, method: []byte{5, 0}, request: []byte{5, 1, 0, 1, 192, 0, 2, 7, 0, 80}, reply: okReply4}},
		{"socks5h IPv6 literal", "socks5h://", "[2001:db8::1]:443", socks5Script{
			greeting: []byte{5, 1, 0}, method: []byte{5, 0},
			request: cat([]byte{5, 1, 0, 4}, netip.MustParseAddr("2001:db8::1").AsSlice(), be16(443)), reply: okReply4}},
		{"socks5 resolves locally", "socks5://", name + ":443", socks5Script{
			greeting: []byte{5, 1, 0}, method: []byte{5, 0}, request: []byte{5, 1, 0, 1, 198, 51, 100, 9, 1, 0xbb}, reply: okReply4}},
		{"auth", "socks5h://alice:s3cret@", name + ":443", socks5Script{
			greeting: []byte{5, 2, 0, 2}, method: []byte{5, 2},
			auth: cat([]byte{1, 5}, []byte("alice"), []byte{6}, []byte("s3cret")), authReply: []byte{1, 0},
			request: domainReq, reply: okReply4}},
		{"auth offered, none chosen", "socks5h://alice:s3cret@", name + ":443", socks5Script{
			greeting: []byte{5, 2, 0, 2}, method: []byte{5, 0}, request: domainReq, reply: okReply4}},
		{"BND domain", "socks5h://", name + ":443", socks5Script{
			greeting: []byte{5, 1, 0}, method: []byte{5, 0}, request: domainReq,
			reply: cat([]byte{5, 0, 0, 3, 9}, []byte("bound.zzz"), be16(1))}},
		{"BND IPv6", "socks5h://", name + ":443", socks5Script{
			greeting: []byte{5, 1, 0}, method: []byte{5, 0}, request: domainReq,
			reply: cat([]byte{5, 0, 0, 4}, make([]byte, 16), be16(1))}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := serve(t, tc.s.run)
			d := &Dialer{URL: mustURL(t, tc.url+srv.Addr), Resolve: func(ctx context.Context, host string) ([]netip.Addr, error) {
				if host != name {
					return nil, fmt.Errorf("resolve %q", host)
				}
				return []netip.Addr{netip.MustParseAddr("198.51.100.9")}, nil
			}}
			tun, err := d.DialContext(ctxTimeout(t, 5*time.Second), tc.target)
			if err != nil {
				t.Fatal(err)
			}
			defer tun.Close()
			roundTrip(t, tun, "hello")
		})
	}
}

// P-09: every refusal and every malformed or cut reply is a typed error and
// the connection is closed.
func TestSOCKS5Failures(t *testing.T) {
	req := []byte{5, 1, 0, 1, 192, 0, 2, 7, 0, 80}
	type tc struct {
		name  string
		url   string
		s     socks5Script
		check func(error) bool
	}
	socksErr := func(stage SOCKSStage, reply byte) func(error) bool {
		return func(err error) bool {
			var se *SOCKSError
			return errors.As(err, &se) && se.Version == 5 && se.Stage == stage && se.Reply == reply &&
				errors.Is(err, ErrAuthRequired) == (stage == SOCKSAuth)
		}
	}
	malformed := func(err error) bool { return errors.Is(err, ErrMalformedReply) }
	cut := func(err error) bool { return errors.Is(err, io.ErrUnexpectedEOF) }
	cases := []tc{
		{"method 0xFF", "socks5h://", socks5Script{greeting: []byte{5, 1, 0}, method: []byte{5, 0xFF}}, socksErr(SOCKSMethod, 0xFF)},
		{"method not offered", "socks5h://", socks5Script{greeting: []byte{5, 1, 0}, method: []byte{5, 2}}, socksErr(SOCKSMethod, 2)},
		{"auth failure", "socks5h://u:p@", socks5Script{greeting: []byte{5, 2, 0, 2}, method: []byte{5, 2},
			auth: []byte{1, 1, 'u', 1, 'p'}, authReply: []byte{1, 1}}, socksErr(SOCKSAuth, 1)},
		{"auth reply version", "socks5h://u:p@", socks5Script{greeting: []byte{5, 2, 0, 2}, method: []byte{5, 2},
			auth: []byte{1, 1, 'u', 1, 'p'}, authReply: []byte{5, 0}}, malformed},
		{"auth reply cut", "socks5h://u:p@", socks5Script{greeting: []byte{5, 2, 0, 2}, method: []byte{5, 2},
			auth: []byte{1, 1, 'u', 1, 'p'}, authReply: []byte{1}, closeAfter: true}, cut},
		{"wrong VER in method reply", "socks5h://", socks5Script{greeting: []byte{5, 1, 0}, method: []byte{4, 0}}, malformed},
		{"FIN before method reply", "socks5h://", socks5Script{greeting: []byte{5, 1, 0}, method: []byte{}, closeAfter: true}, cut},
		{"FIN mid method reply", "socks5h://", socks5Script{greeting: []byte{5, 1, 0}, method: []byte{5}, closeAfter: true}, cut},
		{"wrong VER in reply", "socks5h://", socks5Script{greeting: []byte{5, 1, 0}, method: []byte{5, 0}, request: req,
			reply: []byte{4, 0, 0, 1, 0, 0, 0, 0, 0, 0}}, malformed},
		{"unknown ATYP", "socks5h://", socks5Script{greeting: []byte{5, 1, 0}, method: []byte{5, 0}, request: req,
			reply: []byte{5, 0, 0, 2, 0, 0, 0, 0, 0, 0}}, malformed},
		{"truncated BND IPv4", "socks5h://", socks5Script{greeting: []byte{5, 1, 0}, method: []byte{5, 0}, request: req,
			reply: []byte{5, 0, 0, 1, 127, 0}, closeAfter: true}, cut},
		{"truncated BND domain", "socks5h://", socks5Script{greeting: []byte{5, 1, 0}, method: []byte{5, 0}, request: req,
			reply: []byte{5, 0, 0, 3, 10, 'a', 'b'}, closeAfter: true}, cut},
		{"truncated BND port", "socks5h://", socks5Script{greeting: []byte{5, 1, 0}, method: []byte{5, 0}, request: req,
			reply: []byte{5, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, closeAfter: true}, cut},
		{"FIN mid reply", "socks5h://", socks5Script{greeting: []byte{5, 1, 0}, method: []byte{5, 0}, request: req,
			reply: []byte{5, 0}, closeAfter: true}, cut},
		{"FIN instead of reply", "socks5h://", socks5Script{greeting: []byte{5, 1, 0}, method: []byte{5, 0}, request: req,
			reply: []byte{}, closeAfter: true}, cut},
	}
	names := map[byte]string{1: "general SOCKS server failure", 2: "connection not allowed by ruleset", 3: "network unreachable",
		4: "host unreachable", 5: "connection refused", 6: "TTL expired", 7: "command not supported", 8: "address type not supported",
		9: "unknown reply", 0xff: "unknown reply"}
	for rep := range names {
		cases = append(cases, tc{fmt.Sprintf("REP %d", rep), "socks5h://", socks5Script{greeting: []byte{5, 1, 0}, method: []byte{5, 0}, request: req,
			reply: []byte{5, rep, 0, 1, 0, 0, 0, 0, 0, 0}}, func(err error) bool {
			var se *SOCKSError
			return socksErr(SOCKSRequest, rep)(err) && errors.As(err, &se) && se.Reason() == names[rep] &&
				strings.Contains(err.Error(), names[rep])
		}})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := serve(t, c.s.run)
			d := &Dialer{URL: mustURL(t, c.url+srv.Addr)}
			tun, err := d.DialContext(ctxTimeout(t, 5*time.Second), "192.0.2.7:80")
			var pe *Error
			if tun != nil || !errors.As(err, &pe) || pe.Op != "socks" || !c.check(err) {
				t.Fatalf("err = %v (%T), tunnel %v", err, errors.Unwrap(err), tun)
			}
		})
	}
}

// P-08: names over 255 bytes are an error for socks5h and socks4a (never a
// local resolve, never a dial); 255 bytes go through. Credentials over 255
// bytes are refused.
func TestSOCKSLengthLimits(t *testing.T) {
	dials := 0
	noDial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials++
		return nil, errors.New("must not dial")
	}
	resolves := 0
	noResolve := func(ctx context.Context, host string) ([]netip.Addr, error) {
		resolves++
		return nil, errors.New("must not resolve")
	}
	long := strings.Repeat("a", 253) + ".zz" // 256 bytes
	for _, scheme := range []string{"socks5h", "socks4a"} {
		d := &Dialer{URL: mustURL(t, scheme+"://127.0.0.1:1"), Dial: noDial, Resolve: noResolve}
		_, err := d.DialContext(context.Background(), long+":443")
		if !errors.Is(err, ErrHostTooLong) {
			t.Errorf("%s: err = %v, want ErrHostTooLong", scheme, err)
		}
	}
	for _, u := range []string{
		"socks5h://" + strings.Repeat("u", 256) + ":p@127.0.0.1:1",
		"socks5h://u:" + strings.Repeat("p", 256) + "@127.0.0.1:1",
		"socks5://" + strings.Repeat("u", 256) + "@127.0.0.1:1",
		"socks4a://" + strings.Repeat("u", 256) + "@127.0.0.1:1",
	} {
		d := &Dialer{URL: mustURL(t, u), Dial: noDial, Resolve: noResolve}
		_, err := d.DialContext(context.Background(), "a.example:443")
		var pe *Error
		if !errors.Is(err, ErrCredentialsTooLong) || !errors.As(err, &pe) || pe.Op != "config" {
			t.Errorf("%.20s...: err = %v, want ErrCredentialsTooLong", u, err)
		}
	}
	if dials != 0 || resolves != 0 {
		t.Errorf("%d dials, %d resolves", dials, resolves)
	}

	// Exactly 255: sent as is, with length byte 255.
	max := strings.Repeat("b", 251) + ".zz"
	user, pass := strings.Repeat("u", 255), strings.Repeat("p", 255)
	srv := serve(t, socks5Script{
		greeting: []byte{5, 2, 0, 2}, method: []byte{5, 2},
		auth: cat([]byte{1, 255}, []byte(user), []byte{255}, []byte(pass)), authReply: []byte{1, 0},
		request: cat([]byte{5, 1, 0, 3, 254}, []byte(max), be16(443)), reply: okReply4,
	}.run)
	d := &Dialer{URL: mustURL(t, "socks5h://"+user+":"+pass+"@"+srv.Addr)}
	tun, err := d.DialContext(ctxTimeout(t, 5*time.Second), max+":443")
	if err != nil {
		t.Fatal(err)
	}
	tun.Close()
	max = strings.Repeat("c", 255)
	srv = serve(t, socks5Script{greeting: []byte{5, 1, 0}, method: []byte{5, 0},
		request: cat([]byte{5, 1, 0, 3, 255}, []byte(max), be16(443)), reply: okReply4}.run)
	tun, err = (&Dialer{URL: mustURL(t, "socks5h://"+srv.Addr)}).DialContext(ctxTimeout(t, 5*time.Second), max+":443")
	if err != nil {
		t.Fatal(err)
	}
	tun.Close()
}

func TestSOCKS4(t *testing.T) {
	type script struct {
		req   []byte
		reply []byte
	}
	run := func(s script) func(net.Conn) error {
		return func(c net.Conn) error {
			if err := expect(c, s.req); err != nil {
				return err
			}
			if _, err := c.Write(s.reply); err != nil {
				return err
			}
			if len(s.reply) == 8 && s.reply[1] == 0x5A {
				return echo(c)
			}
			if len(s.reply) < 8 {
				return nil // cut: close now
			}
			return expectEOF(c)
		}
	}
	granted := []byte{0, 0x5A, 0, 0, 0, 0, 0, 0}
	for _, tc := range []struct {
		name, url, target string
		s                 script
		check             func(error) bool
	}{
		{"4a name", "socks4a://", "origin.example:443",
			script{cat([]byte{4, 1, 1, 0xbb, 0, 0, 0, 1, 0}, []byte("origin.example\x00")), granted}, nil},
		{"4a user id", "socks4a://bob@", "origin.example:443",
			script{cat([]byte{4, 1, 1, 0xbb, 0, 0, 0, 1}, []byte("bob\x00origin.example\x00")), granted}, nil},
		{"4a IPv4 literal", "socks4a://", "192.0.2.7:80", script{[]byte{4, 1, 0, 80, 192, 0, 2, 7, 0}, granted}, nil},
		{"4 resolves locally", "socks4://", "origin.example:80", script{[]byte{4, 1, 0, 80, 198, 51, 100, 9, 0}, granted}, nil},
		{"VN 4 tolerated", "socks4a://", "192.0.2.7:80", script{[]byte{4, 1, 0, 80, 192, 0, 2, 7, 0}, []byte{4, 0x5A, 0, 0, 0, 0, 0, 0}}, nil},
		{"rejected", "socks4a://", "origin.example:443",
			script{cat([]byte{4, 1, 1, 0xbb, 0, 0, 0, 1, 0}, []byte("origin.example\x00")), []byte{0, 0x5B, 0, 0, 0, 0, 0, 0}},
			func(err error) bool {
				var se *SOCKSError
				return errors.As(err, &se) && se.Version == 4 && se.Reply == 0x5B && strings.Contains(err.Error(), "rejected")
			}},
		{"identd", "socks4://", "192.0.2.7:80", script{[]byte{4, 1, 0, 80, 192, 0, 2, 7, 0}, []byte{0, 0x5C, 0, 0, 0, 0, 0, 0}},
			func(err error) bool { var se *SOCKSError; return errors.As(err, &se) && se.Reply == 0x5C }},
		{"bad VN", "socks4://", "192.0.2.7:80", script{[]byte{4, 1, 0, 80, 192, 0, 2, 7, 0}, []byte{5, 0x5A, 0, 0, 0, 0, 0, 0}},
			func(err error) bool { return errors.Is(err, ErrMalformedReply) }},
		{"cut", "socks4://", "192.0.2.7:80", script{[]byte{4, 1, 0, 80, 192, 0, 2, 7, 0}, []byte{0, 0x5A, 0}},
			func(err error) bool { return errors.Is(err, io.ErrUnexpectedEOF) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := serve(t, run(tc.s))
			d := &Dialer{URL: mustURL(t, tc.url+srv.Addr), Resolve: func(ctx context.Context, host string) ([]netip.Addr, error) {
				return []netip.Addr{netip.MustParseAddr("2001:db8::9"), netip.MustParseAddr("198.51.100.9")}, nil
			}}
			tun, err := d.DialContext(ctxTimeout(t, 5*time.Second), tc.target)
			if tc.check == nil {
				if err != nil {
					t.Fatal(err)
				}
				defer tun.Close()
				roundTrip(t, tun, "hi")
				return
			}
			if tun != nil || !tc.check(err) {
				t.Fatalf("err = %v", err)
			}
		})
	}
	// IPv6 cannot be carried by SOCKS4.
	for _, u := range []string{"socks4a://127.0.0.1:1", "socks4://127.0.0.1:1"} {
		_, err := (&Dialer{URL: mustURL(t, u)}).DialContext(context.Background(), "[2001:db8::1]:443")
		if !errors.Is(err, ErrInvalidTarget) {
			t.Errorf("%s IPv6: err = %v", u, err)
		}
	}
}

// A SOCKS server that accepts and stays silent: ctx's deadline ends the
// handshake with a proxy-phase timeout.
func TestSOCKSSilence(t *testing.T) {
	srv := serve(t, func(c net.Conn) error {
		_, err := io.Copy(io.Discard, c) // read, never answer, until the client closes
		return err
	})
	for _, scheme := range []string{"socks5h", "socks4a"} {
		_, err := (&Dialer{URL: mustURL(t, scheme+"://"+srv.Addr)}).DialContext(ctxTimeout(t, 50*time.Millisecond), "a.example:443")
		var pe *Error
		if !errors.As(err, &pe) || pe.Op != "socks" || !errors.Is(err, context.DeadlineExceeded) || !pe.Timeout() {
			t.Errorf("%s: err = %v", scheme, err)
		}
	}
}

// socks5:// resolution errors name the step and keep the cause.
func TestSOCKS5ResolveError(t *testing.T) {
	d := &Dialer{URL: mustURL(t, "socks5://127.0.0.1:1"), Resolve: func(ctx context.Context, host string) ([]netip.Addr, error) {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}}
	_, err := d.DialContext(context.Background(), "nx.example:443")
	var pe *Error
	var de *net.DNSError
	if !errors.As(err, &pe) || pe.Op != "resolve" || !errors.As(err, &de) {
		t.Fatalf("err = %v", err)
	}
}
