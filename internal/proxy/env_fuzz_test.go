package proxy

import (
	"errors"
	"net/url"
	"strings"
	"testing"
)

// FuzzForURL feeds ForURL a target URL and the environment's proxy and
// NO_PROXY values. Invariants: no panic; an error is ErrCGIProxy or an
// *Error wrapping ErrInvalidURL; a proxy returned has a host; a target
// "*" bypasses, localhost and loopback literals are never proxied; more
// NO_PROXY entries never turn a bypassed target into a proxied one; the
// ASCII case of NO_PROXY does not matter; an entry naming the target's host
// bypasses it.
func FuzzForURL(f *testing.F) {
	f.Add("https://api.example.com/x", "proxy.local:3128", "example.com,.internal", "extra.example", false)
	f.Add("http://10.1.2.3:8080/", "http://p:1", "10.0.0.0/8 192.168.0.0/16", "::1", true)
	f.Add("https://[fe80::1%25eth0]:443/", "socks5://u:p@p:1080", "[fe80::1]:443,*.example", "fe80::/10", false)
	f.Add("http://EXAMPLE.COM./", "p", "example.com.", "*", false)
	f.Add("https://localhost:8443/", "p:1", "", "", false)
	f.Add("https://a.example/", "://", "a.example:444", ".a.example", false)
	f.Add("ftp://a.example/", "p:1", "", "", false)
	f.Add("https://xn--bcher-kva.example/", "http://[::1]:3128", "*.xn--bcher-kva.example, bücher.example", "\t", false)
	f.Fuzz(func(t *testing.T, target, proxyVal, noProxy, extra string, cgi bool) {
		tu, err := url.Parse(target)
		if err != nil {
			return
		}
		env := func(np string) Env {
			return func(name string) string {
				switch name {
				case "http_proxy", "HTTPS_PROXY":
					return proxyVal
				case "HTTP_PROXY":
					if cgi {
						return proxyVal
					}
				case "no_proxy":
					return np
				case "REQUEST_METHOD":
					if cgi {
						return "GET"
					}
				}
				return ""
			}
		}
		p, err := ForURL(tu, env(noProxy))
		if err != nil {
			var pe *Error
			if !errors.Is(err, ErrCGIProxy) && !(errors.As(err, &pe) && errors.Is(err, ErrInvalidURL)) {
				t.Fatalf("%q via %q: error %v (%T)", target, proxyVal, err, err)
			}
			return
		}
		if p != nil && p.Host == "" {
			t.Fatalf("%q via %q: proxy %v without a host", target, proxyVal, p)
		}
		scheme := strings.ToLower(tu.Scheme)
		if scheme != "http" && scheme != "https" {
			if p != nil {
				t.Fatalf("%q: a %s target proxied", target, scheme)
			}
			return
		}
		bypassed := bypass(tu, noProxy)
		if bypass(tu, "*") != true {
			t.Fatalf("%q: NO_PROXY=* does not bypass it", target)
		}
		if !bypassed && p == nil && strings.TrimSpace(proxyVal) != "" && !cgi {
			t.Fatalf("%q: not bypassed, a proxy %q set, and no proxy", target, proxyVal)
		}
		if bypassed {
			if p != nil {
				t.Fatalf("%q: bypassed by %q but proxied through %v", target, noProxy, p)
			}
			if !bypass(tu, noProxy+","+extra) || !bypass(tu, extra+" "+noProxy) {
				t.Fatalf("%q: bypassed by %q, not once %q is added", target, noProxy, extra)
			}
		}
		if bypass(tu, asciiUpper(noProxy)) != bypassed {
			t.Fatalf("%q: NO_PROXY %q and %q disagree", target, noProxy, asciiUpper(noProxy))
		}
		host := tu.Hostname()
		if h := strings.ToLower(host); h == "localhost" || h == "127.0.0.1" || h == "::1" {
			if !bypass(tu, "") {
				t.Fatalf("%q: a loopback target not bypassed", target)
			}
		}
		if host != "" && !strings.ContainsAny(host, ", \t%") && !strings.HasPrefix(host, ".") && !strings.HasPrefix(host, "*.") && strings.TrimSuffix(host, ".") != "" {
			entry := host
			if strings.Contains(host, ":") {
				entry = "[" + host + "]"
			}
			if !bypass(tu, entry) {
				t.Fatalf("%q: NO_PROXY %q naming its host does not bypass it", target, entry)
			}
		}
	})
}

func asciiUpper(s string) string {
	return strings.Map(func(r rune) rune {
		if 'a' <= r && r <= 'z' {
			return r - 'a' + 'A'
		}
		return r
	}, s)
}
