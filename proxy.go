package guise

import (
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"net/url"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/guise-http/guise/internal/proxy"
	"github.com/guise-http/guise/internal/tlsfp"
)

// Proxy errors, re-exported for errors.As and errors.Is.
type (
	// ProxyError is any failure to open a tunnel through a proxy. Op says
	// which step failed: "dial", "tls", "connect", "socks", "config".
	ProxyError = proxy.Error
	// ProxyStatusError is a non-2xx answer to CONNECT (407, 403, 502...).
	ProxyStatusError = proxy.StatusError
	// SOCKSError is a SOCKS server's refusal, with its reply code.
	SOCKSError = proxy.SOCKSError
)

// route is a parsed proxy URL: what the pool key and the dialer need.
type route struct {
	u    *url.URL
	key  string // scheme, host, port and a hash of the credentials
	auth string // Proxy-Authorization for absolute-form requests, "" without credentials
	http bool   // an HTTP(S) proxy, which takes http:// requests in absolute form
}

// routes caches parsed proxy URLs by their text; a Session's requests all
// name the same one. Rotating proxies can name many: past maxRoutes the
// cache starts over.
var (
	routes    sync.Map // string → *route
	routesLen atomic.Int32
)

const maxRoutes = 4096

func parseRoute(raw string) (*route, error) {
	if r, ok := routes.Load(raw); ok {
		return r.(*route), nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("%w: bad proxy URL %q", ErrRefusedToSend, redact(raw))
	}
	r := &route{u: u, key: proxy.Key(u)}
	switch u.Scheme {
	case "http", "https":
		r.http = true
	case "socks5", "socks5h", "socks4", "socks4a":
	default:
		return nil, fmt.Errorf("%w: proxy scheme %q", ErrUnsupportedScheme, u.Scheme)
	}
	if r.http && u.User != nil {
		pw, _ := u.User.Password()
		r.auth = "Basic " + base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+pw))
	}
	if len(raw) < 1024 {
		if routesLen.Add(1) > maxRoutes {
			routes.Clear()
			routesLen.Store(0)
		}
		routes.Store(raw, r)
	}
	return r, nil
}

// dialProxy opens the connection a request for key goes over: a tunnel to
// the origin, or (absolute is true) a connection to an HTTP proxy that
// takes the http:// request itself.
func (st *transportState) dialProxy(ctx context.Context, addr, scheme string, r *route, o *options, dt *dialTimes) (nc net.Conn, absolute bool, err error) {
	oc := *o // the TLS func below keeps a copy, so o does not escape
	d := &proxy.Dialer{
		URL:  r.u,
		Dial: st.dial,
		TLS: func(ctx context.Context, nc net.Conn, serverName string) (net.Conn, error) {
			// The proxy hop has its own TLS sessions, never the origin's.
			cfg := tlsfp.Config{Profile: oc.profile.p, ALPN: []string{"http/1.1"}, RootCAs: oc.rootCAs,
				TrustStore: oc.trust, InsecureSkipVerify: oc.insecure}
			if !oc.isolated {
				cfg.Sessions = st.proxySessions
			}
			tc, _, err := tlsfp.Handshake(ctx, nc, serverName, &cfg)
			return tc, err
		},
	}
	if ua := o.profile.userAgent(); ua != "" {
		d.ConnectHeader = Header{{Name: "User-Agent", Value: ua}}
	}
	start := time.Now()
	defer func() { dt.connect = time.Since(start) }()
	if r.http && scheme == "http" {
		// Plain http:// through an HTTP proxy: no tunnel, the proxy takes
		// the request in absolute form.
		op := "dial"
		nc, err = st.dial(ctx, "tcp", hostPort(r.u))
		if err == nil && r.u.Scheme == "https" {
			op = "tls"
			nc, err = d.TLS(ctx, nc, r.u.Hostname()) // closes nc on failure
		}
		if err != nil {
			return nil, false, &proxy.Error{Proxy: redact(r.u.String()), Op: op, Err: err}
		}
		return nc, true, nil
	}
	// Its errors are *proxy.Error; dialConn tells a timeout's phase.
	nc, err = d.DialContext(ctx, addr)
	return nc, false, err
}

func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	switch u.Scheme {
	case "https":
		return net.JoinHostPort(u.Hostname(), "443")
	case "http":
		return net.JoinHostPort(u.Hostname(), "80")
	}
	return net.JoinHostPort(u.Hostname(), "1080")
}

// envProxy is the proxy the environment names for u, or "".
func envProxy(u *parsedURL) (string, error) {
	pu, err := proxy.ForURL(u.url(), os.Getenv)
	if err != nil || pu == nil {
		return "", err
	}
	return pu.String(), nil
}

// hopOptions returns the options for a redirect hop to u: o itself, or,
// when o's proxy came from the environment, a copy with the proxy the
// environment names for u. An http to https redirect then goes through
// HTTPS_PROXY instead of HTTP_PROXY (with that proxy's credentials, not the
// first one's), and a hop to a NO_PROXY host goes direct (RELIABILITY P-06).
func hopOptions(o *options, u *parsedURL) (*options, error) {
	if !o.proxyEnv {
		return o, nil
	}
	p, err := envProxy(u)
	if err != nil {
		return nil, err
	}
	c := *o
	c.proxy = nil
	if p != "" {
		if c.proxy, err = parseRoute(p); err != nil {
			return nil, err
		}
	}
	return &c, nil
}
