package proxy

import (
	"errors"
	"testing"
)

func envMap(m map[string]string) Env { return func(k string) string { return m[k] } }

func TestForURL(t *testing.T) {
	for _, tc := range []struct {
		env    map[string]string
		target string
		want   string // "" = direct
		err    error
	}{
		{map[string]string{}, "http://a.example/", "", nil},
		{map[string]string{"HTTP_PROXY": "http://p:1"}, "http://a.example/", "http://p:1", nil},
		{map[string]string{"http_proxy": "http://lower:1", "HTTP_PROXY": "http://upper:1"}, "http://a.example/", "http://lower:1", nil},
		{map[string]string{"HTTP_PROXY": "http://p:1"}, "https://a.example/", "", nil},
		{map[string]string{"HTTPS_PROXY": "https://s:1", "HTTP_PROXY": "http://p:1"}, "https://a.example/", "https://s:1", nil},
		{map[string]string{"https_proxy": "socks5h://s:1"}, "https://a.example/", "socks5h://s:1", nil},
		{map[string]string{"ALL_PROXY": "socks5://all:1"}, "https://a.example/", "socks5://all:1", nil},
		{map[string]string{"all_proxy": "socks5://all:1", "HTTP_PROXY": "http://p:1"}, "http://a.example/", "http://p:1", nil},
		{map[string]string{"HTTP_PROXY": "p:3128"}, "http://a.example/", "http://p:3128", nil},
		{map[string]string{"HTTP_PROXY": "http://p:1"}, "ftp://a.example/", "", nil},
		// httpoxy: HTTP_PROXY is refused inside CGI, http_proxy is not.
		{map[string]string{"HTTP_PROXY": "http://p:1", "REQUEST_METHOD": "GET"}, "http://a.example/", "", ErrCGIProxy},
		{map[string]string{"http_proxy": "http://p:1", "REQUEST_METHOD": "GET"}, "http://a.example/", "http://p:1", nil},
		// localhost and loopback are never proxied.
		{map[string]string{"HTTP_PROXY": "http://p:1"}, "http://localhost:8080/", "", nil},
		{map[string]string{"HTTP_PROXY": "http://p:1"}, "http://LOCALHOST./", "", nil},
		{map[string]string{"HTTP_PROXY": "http://p:1"}, "http://127.0.0.2/", "", nil},
		{map[string]string{"HTTP_PROXY": "http://p:1"}, "http://[::1]/", "", nil},
		{map[string]string{"HTTP_PROXY": "http://p:1"}, "http://[::ffff:127.0.0.1]/", "", nil},
	} {
		u := mustURL(t, tc.target)
		got, err := ForURL(u, envMap(tc.env))
		if !errors.Is(err, tc.err) {
			t.Errorf("%v %s: err = %v, want %v", tc.env, tc.target, err, tc.err)
			continue
		}
		gs := ""
		if got != nil {
			gs = got.String()
		}
		if gs != tc.want {
			t.Errorf("%v %s: got %q, want %q", tc.env, tc.target, gs, tc.want)
		}
	}
	if _, err := ForURL(mustURL(t, "http://a.example/"), envMap(map[string]string{"HTTP_PROXY": "http://[::1"})); err == nil {
		t.Error("broken proxy URL accepted")
	}
}

// P-07: NO_PROXY matching is exact on the parsed host.
func TestNoProxy(t *testing.T) {
	for _, tc := range []struct {
		noProxy, target string
		bypass          bool
	}{
		{"*", "https://anything.example/", true},
		{"example.com", "http://example.com/", true},
		{"example.com", "http://www.example.com/", true},
		{"example.com", "http://notexample.com/", false},
		{"example.com", "http://example.com.evil/", false},
		{".example.com", "http://example.com/", false},
		{".example.com", "http://a.example.com/", true},
		{"*.example.com", "http://example.com/", false},
		{"*.example.com", "http://a.b.example.com/", true},
		// case and trailing dots on either side
		{"EXAMPLE.com", "http://Www.Example.COM/", true},
		{"example.com.", "http://example.com/", true},
		{"example.com", "http://example.com./", true},
		{".example.com.", "http://a.example.com./", true},
		// ports
		{"example.com:8080", "http://example.com:8080/", true},
		{"example.com:8080", "http://example.com/", false},
		{"example.com:80", "http://example.com/", true},
		{"example.com:443", "https://example.com/", true},
		{"example.com:443", "http://example.com/", false},
		// IPs and CIDR
		{"10.1.2.3", "http://10.1.2.3/", true},
		{"10.1.2.3", "http://10.1.2.4/", false},
		{"10.1.2.3:81", "http://10.1.2.3:81/", true},
		{"10.1.2.3:81", "http://10.1.2.3/", false},
		{"10.0.0.0/8", "http://10.200.0.1/", true},
		{"10.0.0.0/8", "http://11.0.0.1/", false},
		{"2001:db8::1", "http://[2001:db8::1]/", true},
		{"[2001:db8::1]", "http://[2001:db8::1]/", true},
		{"[2001:db8::1]:443", "https://[2001:db8::1]/", true},
		{"2001:db8::/32", "http://[2001:db8:ffff::1]/", true},
		{"10.1.2.3", "http://10.1.2.3.example/", false},
		// GO-2025-3503: a zone never takes part in a name match.
		{"*.example.com", "http://[fe80::1%25.example.com]/", false},
		{".example.com", "http://[fe80::1%25.example.com]/", false},
		{"example.com", "http://[fe80::1%25example.com]/", false},
		{"fe80::1", "http://[fe80::1%25eth0]/", true},
		{"fe80::/10", "http://[fe80::1%25eth0]/", true},
		// IP entries never match names and name entries never match IPs.
		{"example.com", "http://93.184.216.34/", false},
		{"93.184.216.34", "http://example.com/", false},
		// lists: commas, spaces, empty entries
		{"a.example, b.example ,,c.example", "http://c.example/", true},
		{"a.example b.example", "http://b.example/", true},
		{"a.example,b.example", "http://d.example/", false},
		{"", "http://d.example/", false},
		{".", "http://d.example/", false},
		{"*.", "http://d.example/", false},
	} {
		for _, name := range []string{"NO_PROXY", "no_proxy"} {
			env := map[string]string{"HTTP_PROXY": "http://p:1", "HTTPS_PROXY": "http://p:1", name: tc.noProxy}
			got, err := ForURL(mustURL(t, tc.target), envMap(env))
			if err != nil {
				t.Fatal(err)
			}
			if (got == nil) != tc.bypass {
				t.Errorf("%s=%q target %s: proxy %v, want bypass=%v", name, tc.noProxy, tc.target, got, tc.bypass)
			}
		}
	}
	// no_proxy wins over NO_PROXY.
	env := map[string]string{"HTTP_PROXY": "http://p:1", "no_proxy": "a.example", "NO_PROXY": "b.example"}
	if got, _ := ForURL(mustURL(t, "http://b.example/"), envMap(env)); got == nil {
		t.Error("NO_PROXY used although no_proxy is set")
	}
}
