// Package proxy opens tunnels through HTTP CONNECT proxies (http:// and
// https://), SOCKS5 proxies (with RFC 1929 username/password) and SOCKS4 and
// SOCKS4a proxies.
//
// A Dialer is built once per proxy URL and returns, for a target host:port, a
// net.Conn that is a byte tunnel to the target; the caller then speaks TLS or
// plain HTTP over it. ForURL picks a proxy from HTTP_PROXY-style environment
// variables when the user asks for that.
package proxy

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/guise-http/guise/fields"
)

// Dialer opens tunnels through one proxy.
//
// Build one per proxy URL and reuse it: the URL, credentials and CONNECT head
// are prepared once, at first use. A Dialer is safe for concurrent use; its
// fields are read at first use and must not be changed afterwards. The zero
// value has no URL and fails every dial with ErrInvalidURL.
type Dialer struct {
	// URL is the proxy: http://[user:pass@]host[:port] (default port 80),
	// https://... (443), socks5://, socks5h://, socks4://, socks4a:// (1080).
	// For http and https the userinfo becomes a Basic Proxy-Authorization
	// header on CONNECT; for socks5 it is RFC 1929 username/password (offered
	// when the username is not empty); for socks4 the username is the user id
	// and a password is ignored.
	URL *url.URL

	// Dial opens the TCP connection to the proxy. nil means a net.Dialer.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)

	// TLS wraps the connection to an https:// proxy: it must do a verified TLS
	// handshake for serverName (the proxy's host) with a session cache of its
	// own, never the origin's (CVE-2021-22890), and should offer no ALPN other
	// than http/1.1. Required for https:// proxies.
	TLS func(ctx context.Context, nc net.Conn, serverName string) (net.Conn, error)

	// Resolve looks up the target host for socks5:// and socks4:// proxies,
	// which get an address rather than a name. nil means
	// net.DefaultResolver.LookupNetIP(ctx, "ip", host).
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)

	// ConnectHeader is sent with CONNECT after Host, in order and case as
	// given (for example the User-Agent a browser sends to a proxy). A Host
	// field in it is ignored; a Proxy-Authorization field is ignored when URL
	// carries credentials. Origin headers (Cookie, Authorization, ...) never
	// belong here (CVE-2015-3153). The Dialer does not modify it.
	ConnectHeader fields.Header

	// MaxResponseHeaderBytes caps the CONNECT reply head, 1xx heads included.
	// Zero means 64 KiB.
	MaxResponseHeaderBytes int

	once sync.Once
	cfg  *config
	err  error
}

type scheme uint8

const (
	schemeHTTP scheme = iota + 1
	schemeHTTPS
	schemeSOCKS5
	schemeSOCKS5H
	schemeSOCKS4
	schemeSOCKS4A
)

// config is what a Dialer prepares once from its fields.
type config struct {
	scheme      scheme
	addr        string // proxy host:port to dial
	serverName  string // proxy host, for TLS
	redacted    string // proxy URL with the password masked
	key         string // Key(URL)
	connectTail []byte // CONNECT head after the Host line, ending in the blank line
	maxHead     int
	user, pass  string // socks credentials
	hasAuth     bool
}

const defaultMaxHead = 64 << 10

var defaultPorts = [...]string{schemeHTTP: "80", schemeHTTPS: "443", schemeSOCKS5: "1080",
	schemeSOCKS5H: "1080", schemeSOCKS4: "1080", schemeSOCKS4A: "1080"}

func parseScheme(s string) scheme {
	switch strings.ToLower(s) {
	case "http":
		return schemeHTTP
	case "https":
		return schemeHTTPS
	case "socks5":
		return schemeSOCKS5
	case "socks5h":
		return schemeSOCKS5H
	case "socks4":
		return schemeSOCKS4
	case "socks4a":
		return schemeSOCKS4A
	}
	return 0
}

// hostPort returns the proxy's lower-cased host and its port (the scheme's
// default when absent), or ok false when the URL has no usable host or port.
func hostPort(u *url.URL, s scheme) (host, port string, ok bool) {
	host = strings.ToLower(u.Hostname())
	if host == "" || !validHost(host) {
		return "", "", false
	}
	if i := strings.LastIndexByte(u.Host, ':'); i > strings.LastIndexByte(u.Host, ']') {
		port = u.Host[i+1:]
	}
	if port == "" {
		port = defaultPorts[s]
	} else if _, ok := parsePort(port); !ok {
		return "", "", false
	}
	return host, port, true
}

func (d *Dialer) init() {
	d.cfg, d.err = d.build()
}

func (d *Dialer) build() (*config, error) {
	u := d.URL
	if u == nil {
		return nil, &Error{Op: "config", Err: ErrInvalidURL}
	}
	c := &config{redacted: u.Redacted(), scheme: parseScheme(u.Scheme)}
	if c.scheme == 0 {
		return nil, &Error{Proxy: c.redacted, Op: "config", Err: ErrUnsupportedScheme}
	}
	host, port, ok := hostPort(u, c.scheme)
	if !ok {
		return nil, &Error{Proxy: c.redacted, Op: "config", Err: ErrInvalidURL}
	}
	if c.scheme == schemeHTTPS && d.TLS == nil {
		return nil, &Error{Proxy: c.redacted, Op: "config", Err: ErrNoTLS}
	}
	c.addr = net.JoinHostPort(host, port)
	c.serverName = host
	c.maxHead = d.MaxResponseHeaderBytes
	if c.maxHead <= 0 {
		c.maxHead = defaultMaxHead
	}
	c.key = Key(u)
	if hasCreds(u) {
		c.user = u.User.Username()
		c.pass, _ = u.User.Password()
	}
	switch c.scheme {
	case schemeHTTP, schemeHTTPS:
		tail, err := connectTail(d.ConnectHeader, u)
		if err != nil {
			return nil, &Error{Proxy: c.redacted, Op: "config", Err: err}
		}
		c.connectTail = tail
	case schemeSOCKS5, schemeSOCKS5H:
		c.hasAuth = c.user != ""
		if len(c.user) > 255 || len(c.pass) > 255 {
			return nil, &Error{Proxy: c.redacted, Op: "config", Err: ErrCredentialsTooLong}
		}
	case schemeSOCKS4, schemeSOCKS4A:
		if len(c.user) > 255 || strings.IndexByte(c.user, 0) >= 0 {
			return nil, &Error{Proxy: c.redacted, Op: "config", Err: ErrCredentialsTooLong}
		}
	}
	return c, nil
}

// connectTail builds the part of the CONNECT head after the Host line.
func connectTail(h fields.Header, u *url.URL) ([]byte, error) {
	creds := hasCreds(u)
	var b []byte
	for _, f := range h {
		if !fields.ValidName(f.Name) || !fields.ValidValue(f.Value) {
			return nil, ErrInvalidHeader
		}
		if fields.EqualFold(f.Name, "Host") || (creds && fields.EqualFold(f.Name, "Proxy-Authorization")) {
			continue
		}
		b = append(b, f.Name...)
		b = append(b, ": "...)
		b = append(b, f.Value...)
		b = append(b, "\r\n"...)
	}
	if creds {
		pass, _ := u.User.Password()
		cred := u.User.Username() + ":" + pass
		b = append(b, "Proxy-Authorization: Basic "...)
		b = base64.StdEncoding.AppendEncode(b, []byte(cred))
		b = append(b, "\r\n"...)
	}
	return append(b, "\r\n"...), nil
}

// hasCreds reports whether u carries proxy credentials: a non-empty
// username or a password.
func hasCreds(u *url.URL) bool {
	if u.User == nil {
		return false
	}
	_, has := u.User.Password()
	return has || u.User.Username() != ""
}

// Key returns the key under which connections through d's proxy may be
// pooled: Key(d.URL), computed once.
func (d *Dialer) Key() string {
	d.once.Do(d.init)
	if d.cfg != nil {
		return d.cfg.key
	}
	return Key(d.URL)
}

// Key returns a pool-key string for a proxy URL: its scheme, host and port
// (default port filled in, scheme and host lower-cased) and a SHA-256 digest
// of its credentials, so that different credentials never share a tunnel
// (CVE-2026-3784) and the key never holds the password in clear. A nil URL
// gives "".
func Key(u *url.URL) string {
	if u == nil {
		return ""
	}
	s := parseScheme(u.Scheme)
	host, port, ok := hostPort(u, s)
	if s == 0 || !ok {
		// Unusable URL: it fails to dial, so nothing is ever pooled under it.
		return "invalid:" + u.Redacted()
	}
	k := strings.ToLower(u.Scheme) + "://" + net.JoinHostPort(host, port)
	if hasCreds(u) {
		// Length-prefixed, so that no two (user, password) pairs hash alike.
		user := u.User.Username()
		pass, _ := u.User.Password()
		h := sha256.New()
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(user)))
		h.Write(n[:])
		io.WriteString(h, user)
		io.WriteString(h, pass)
		var sum [sha256.Size]byte
		k += "#" + hex.EncodeToString(h.Sum(sum[:0]))
	}
	return k
}

// DialContext returns a connection tunnelled through the proxy to addr
// (host:port). For http(s) CONNECT, socks5h and socks4a the host name is sent
// to the proxy unresolved; for socks5 and socks4 it is resolved locally first
// (as curl does). ctx bounds the whole proxy hop: dial, TLS and handshake;
// cancelling it afterwards does not affect the returned connection. Bytes the
// proxy sent right after its 2xx CONNECT reply are not lost: the returned
// connection replays them first.
//
// Every error is an *Error; see its Op. On error nothing is left open. The
// caller owns and must close the returned connection.
func (d *Dialer) DialContext(ctx context.Context, addr string) (net.Conn, error) {
	d.once.Do(d.init)
	if d.err != nil {
		return nil, d.err
	}
	c := d.cfg
	host, port, ok := splitTarget(addr)
	if !ok {
		return nil, &Error{Proxy: c.redacted, Op: "config", Err: ErrInvalidTarget}
	}
	var ip netip.Addr
	switch c.scheme {
	case schemeSOCKS5H:
		ip = parseIP(host)
		if !ip.IsValid() && len(host) > 255 {
			return nil, &Error{Proxy: c.redacted, Op: "socks", Err: ErrHostTooLong}
		}
	case schemeSOCKS4A:
		ip = parseIP(host)
		if ip.IsValid() && !ip.Unmap().Is4() {
			return nil, &Error{Proxy: c.redacted, Op: "socks", Err: ErrInvalidTarget}
		}
		if !ip.IsValid() && len(host) > 255 {
			return nil, &Error{Proxy: c.redacted, Op: "socks", Err: ErrHostTooLong}
		}
	case schemeSOCKS5, schemeSOCKS4:
		var err error
		if ip, err = d.resolve(ctx, host, c.scheme == schemeSOCKS4); err != nil {
			return nil, &Error{Proxy: c.redacted, Op: "resolve", Err: ctxErr(ctx, err)}
		}
	}

	nc, err := d.dial(ctx, c.addr)
	if err == nil && nc == nil {
		err = errNilConn
	}
	if err != nil {
		return nil, &Error{Proxy: c.redacted, Op: "dial", Err: ctxErr(ctx, err)}
	}
	// A cancelled ctx unblocks every step below by expiring the connection.
	stop := func() bool { return true }
	if ctx.Done() != nil {
		raw := nc
		stop = context.AfterFunc(ctx, func() { raw.SetDeadline(aLongTimeAgo) })
	}
	op := "tls"
	if c.scheme == schemeHTTPS {
		var tc net.Conn
		if tc, err = d.TLS(ctx, nc, c.serverName); err == nil {
			if tc == nil {
				err = errNilConn
			} else {
				nc = tc
			}
		}
	}
	var tunnel net.Conn = nc
	if err == nil {
		switch c.scheme {
		case schemeHTTP, schemeHTTPS:
			op = "connect"
			tunnel, err = connect(nc, addr, c.connectTail, c.maxHead)
		case schemeSOCKS5, schemeSOCKS5H:
			op = "socks"
			err = socks5(nc, host, ip, port, c)
		case schemeSOCKS4, schemeSOCKS4A:
			op = "socks"
			err = socks4(nc, host, ip, port, c)
		}
	}
	if !stop() {
		// ctx ended: the deadline is (being) set; the conn is unusable.
		if err == nil {
			err = ctx.Err()
		}
	}
	if err != nil {
		nc.Close()
		return nil, &Error{Proxy: c.redacted, Op: op, Err: ctxErr(ctx, err)}
	}
	return tunnel, nil
}

var errNilConn = errors.New("proxy: Dial or TLS returned neither a connection nor an error")

// aLongTimeAgo is a deadline in the past that makes blocked I/O return now.
var aLongTimeAgo = time.Unix(1, 0)

// ctxErr returns ctx's error when ctx has ended (the step failed because of
// it), else err. A timeout at or after ctx's deadline counts as the deadline
// even if ctx's own timer has not fired yet (net.Dialer applies the deadline
// itself).
func ctxErr(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	var t interface{ Timeout() bool }
	if dl, ok := ctx.Deadline(); ok && !time.Now().Before(dl) && errors.As(err, &t) && t.Timeout() {
		return context.DeadlineExceeded
	}
	return err
}

func (d *Dialer) dial(ctx context.Context, addr string) (net.Conn, error) {
	if d.Dial != nil {
		return d.Dial(ctx, "tcp", addr)
	}
	var nd net.Dialer
	return nd.DialContext(ctx, "tcp", addr)
}

// parseIP parses host as an IP address, or returns the zero Addr. It skips
// the parse (and its error allocation) for hosts that cannot be addresses.
func parseIP(host string) netip.Addr {
	if host == "" || (host[0] < '0' || host[0] > '9') && !strings.Contains(host, ":") {
		return netip.Addr{}
	}
	ip, _ := netip.ParseAddr(host)
	return ip
}

func (d *Dialer) resolve(ctx context.Context, host string, v4only bool) (netip.Addr, error) {
	if ip := parseIP(host); ip.IsValid() {
		if v4only && !ip.Unmap().Is4() {
			return netip.Addr{}, ErrInvalidTarget
		}
		return ip.Unmap(), nil
	}
	var ips []netip.Addr
	var err error
	if d.Resolve != nil {
		ips, err = d.Resolve(ctx, host)
	} else {
		ips, err = net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	}
	if err != nil {
		return netip.Addr{}, err
	}
	for _, ip := range ips {
		ip = ip.Unmap()
		if ip.Is4() || (!v4only && ip.Is6()) {
			return ip.WithZone(""), nil
		}
	}
	return netip.Addr{}, &net.DNSError{Err: "no suitable address", Name: host, IsNotFound: true}
}

// splitTarget splits host:port and checks both.
func splitTarget(addr string) (host, port string, ok bool) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host == "" || !validHost(host) {
		return "", "", false
	}
	if _, ok := parsePort(port); !ok {
		return "", "", false
	}
	return host, port, true
}

// validHost reports whether h holds no byte that could break a request line
// or a SOCKS field: controls, space, DEL, NUL.
func validHost(h string) bool {
	for i := 0; i < len(h); i++ {
		if c := h[i]; c <= ' ' || c == 0x7f {
			return false
		}
	}
	return true
}

func parsePort(p string) (uint16, bool) {
	if p == "" || len(p) > 5 {
		return 0, false
	}
	n, err := strconv.Atoi(p)
	if err != nil || n < 1 || n > 65535 || p[0] == '+' || p[0] == '-' {
		return 0, false
	}
	return uint16(n), true
}
