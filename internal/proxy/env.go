package proxy

import (
	"errors"
	"net"
	"net/netip"
	"net/url"
	"strings"
)

// Env looks up an environment variable; os.Getenv fits. It returns "" for an
// unset variable.
type Env func(name string) string

// ErrCGIProxy is returned by ForURL when HTTP_PROXY (upper case) would be used
// inside a CGI process (REQUEST_METHOD set), where a request's "Proxy:" header
// can set it (httpoxy).
var ErrCGIProxy = errors.New("proxy: refusing to use HTTP_PROXY in a CGI environment")

// ForURL returns the proxy that the environment names for target, or nil for
// a direct connection. Only call it when the user asked for proxies from the
// environment.
//
// The proxy for an http target is http_proxy, else HTTP_PROXY, else
// all_proxy, else ALL_PROXY; for https the same with https_proxy and
// HTTPS_PROXY. Lower case wins over upper case, as in curl and Go. Inside a
// CGI process (REQUEST_METHOD set) HTTP_PROXY is refused with ErrCGIProxy. A
// value without a scheme is taken as http://. Other target schemes get nil.
//
// no_proxy (else NO_PROXY) is a list of entries separated by commas or
// spaces; a target matching one gets nil. Matching works on the target's
// parsed host: lower-cased, one trailing dot dropped, an IPv6 zone id
// stripped (GO-2025-3503: the zone never takes part in
// a name match). Entries:
//
//   - "*" matches every host;
//   - an IP address ("10.1.2.3", "::1", "[::1]") matches that address, and a
//     CIDR prefix ("10.0.0.0/8") matches the addresses in it;
//   - a name ("example.com") matches that name and its subdomains, a name
//     with a leading dot or "*." (".example.com") only its subdomains;
//   - an address or name may carry a port ("example.com:8080",
//     "[::1]:443"); it then matches only targets on that port (the scheme's
//     default port when the target has none).
//
// As in Go, "localhost" and loopback addresses are never proxied.
func ForURL(target *url.URL, env Env) (*url.URL, error) {
	if target == nil || env == nil {
		return nil, nil
	}
	var raw string
	switch strings.ToLower(target.Scheme) {
	case "http":
		raw = env("http_proxy")
		if raw == "" {
			if raw = env("HTTP_PROXY"); raw != "" && env("REQUEST_METHOD") != "" {
				return nil, ErrCGIProxy
			}
		}
	case "https":
		raw = first(env, "https_proxy", "HTTPS_PROXY")
	default:
		return nil, nil
	}
	if raw == "" {
		raw = first(env, "all_proxy", "ALL_PROXY")
	}
	if raw == "" {
		return nil, nil
	}
	if bypass(target, first(env, "no_proxy", "NO_PROXY")) {
		return nil, nil
	}
	return parseProxyURL(raw)
}

func first(env Env, names ...string) string {
	for _, n := range names {
		if v := env(n); v != "" {
			return v
		}
	}
	return ""
}

// parseProxyURL parses an environment value, defaulting the scheme to http.
func parseProxyURL(raw string) (*url.URL, error) {
	raw = strings.TrimSpace(raw)
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return nil, &Error{Op: "config", Err: ErrInvalidURL}
	}
	return u, nil
}

// normHost lower-cases h and drops one trailing dot. (IDNA conversion is
// left to the caller: golang.org/x/net/idna needs golang.org/x/text, which
// go.mod does not list.)
func normHost(h string) string {
	return strings.ToLower(strings.TrimSuffix(h, "."))
}

var schemePorts = map[string]string{"http": "80", "https": "443"}

// bypass reports whether target must not be proxied under noProxy.
func bypass(target *url.URL, noProxy string) bool {
	host := target.Hostname()
	port := target.Port()
	if port == "" {
		port = schemePorts[strings.ToLower(target.Scheme)]
	}
	var ip netip.Addr
	if strings.Contains(host, ":") || strings.Contains(host, "%") {
		// An IPv6 literal, perhaps with a zone; anything else with these
		// bytes is not a name and matches no name entry.
		addr, _, _ := strings.Cut(host, "%")
		a, err := netip.ParseAddr(addr)
		if err != nil {
			return false
		}
		ip = a
	} else if a, err := netip.ParseAddr(host); err == nil {
		ip = a
	}
	host = normHost(host)
	if host == "localhost" || (ip.IsValid() && ip.Unmap().IsLoopback()) {
		return true
	}
	for _, e := range strings.FieldsFunc(noProxy, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
		if matchEntry(e, host, port, ip) {
			return true
		}
	}
	return false
}

func matchEntry(e, host, port string, ip netip.Addr) bool {
	e = strings.ToLower(strings.TrimSpace(e))
	if e == "*" {
		return true
	}
	if pfx, err := netip.ParsePrefix(e); err == nil {
		return ip.IsValid() && pfx.Contains(ip.Unmap().WithZone(""))
	}
	ehost, eport := e, ""
	if h, p, err := net.SplitHostPort(e); err == nil {
		ehost, eport = h, p
	} else if strings.HasPrefix(e, "[") && strings.HasSuffix(e, "]") {
		ehost = e[1 : len(e)-1]
	}
	if eport != "" && eport != port {
		return false
	}
	if eip, err := netip.ParseAddr(ehost); err == nil {
		return ip.IsValid() && eip.Unmap().WithZone("") == ip.Unmap().WithZone("")
	}
	if ip.IsValid() || ehost == "" {
		return false
	}
	subOnly := false
	if strings.HasPrefix(ehost, "*.") {
		ehost, subOnly = ehost[2:], true
	} else if strings.HasPrefix(ehost, ".") {
		ehost, subOnly = ehost[1:], true
	}
	ehost = normHost(ehost)
	if ehost == "" {
		return false
	}
	if host == ehost {
		return !subOnly
	}
	return strings.HasSuffix(host, ehost) && host[len(host)-len(ehost)-1] == '.'
}
