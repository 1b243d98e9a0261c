package cookie

import (
	"errors"
	"testing"
)

// TestDomainAttribute covers RELIABILITY and curl
// CVE-2023-46218, CVE-2022-27779, CVE-2014-3620, CVE-2014-3613 and the
// trailing-dot super cookie (CVE-2026-8924).
func TestDomainAttribute(t *testing.T) {
	tests := []struct {
		url, line string
		err       error
		domain    string
		hostOnly  bool
	}{
		{"https://www.example.com/", "a=1", nil, "www.example.com", true},
		{"https://www.example.com/", "a=1; Domain=example.com", nil, "example.com", false},
		{"https://www.example.com/", "a=1; Domain=.example.com", nil, "example.com", false},
		{"https://www.example.com/", "a=1; domain=EXAMPLE.COM", nil, "example.com", false},
		{"https://www.example.com/", "a=1; Domain=example.com.", nil, "example.com", false},
		{"https://www.example.com/", "a=1; Domain=www.example.com", nil, "www.example.com", false},
		{"https://WWW.Example.COM/", "a=1; Domain=example.com", nil, "example.com", false},
		{"https://www.example.com./", "a=1; Domain=example.com", nil, "example.com", false},
		{"https://www.example.com/", "a=1; Domain=", nil, "www.example.com", true},
		{"https://www.example.com/", "a=1; Domain=other.com", ErrDomainMismatch, "", false},
		{"https://www.example.com/", "a=1; Domain=ample.com", ErrDomainMismatch, "", false},
		{"https://www.example.com/", "a=1; Domain=sub.www.example.com", ErrDomainMismatch, "", false},
		{"https://www.example.com/", "a=1; Domain=.", ErrDomain, "", false},
		{"https://www.example.com/", "a=1; Domain=..example.com", ErrDomain, "", false},
		{"https://www.example.com/", "a=1; Domain=exa mple.com", ErrDomain, "", false},
		// Public suffixes, after case and dot normalisation.
		{"https://www.example.com/", "a=1; Domain=com", ErrPublicSuffix, "", false},
		{"https://www.example.com/", "a=1; Domain=COM", ErrPublicSuffix, "", false},
		{"https://www.example.com/", "a=1; Domain=com.", ErrPublicSuffix, "", false},
		{"https://www.example.com/", "a=1; Domain=.com", ErrPublicSuffix, "", false},
		{"https://www.example.com./", "a=1; Domain=com.", ErrPublicSuffix, "", false},
		{"https://www.bbc.co.uk/", "a=1; Domain=co.uk", ErrPublicSuffix, "", false},
		{"https://www.bbc.co.uk/", "a=1; Domain=CO.UK", ErrPublicSuffix, "", false},
		{"https://www.bbc.co.uk/", "a=1; Domain=.co.uk.", ErrPublicSuffix, "", false},
		{"https://www.bbc.co.uk/", "a=1; Domain=uk", ErrPublicSuffix, "", false},
		{"https://curl.co.UK/", "a=1; Domain=co.UK", ErrPublicSuffix, "", false},
		{"https://www.bbc.co.uk/", "a=1; Domain=bbc.co.uk", nil, "bbc.co.uk", false},
		// The suffix host itself gets a host-only cookie.
		{"https://co.uk/", "a=1; Domain=co.uk", nil, "co.uk", true},
		{"https://com./", "a=1; Domain=com", nil, "com", true},
		{"http://localhost/", "a=1; Domain=localhost", nil, "localhost", true},
		// IDNA.
		{"https://www.bücher.de/", "a=1; Domain=bücher.de", nil, "xn--bcher-kva.de", false},
		{"https://www.bücher.de/", "a=1; Domain=BÜCHER.de", nil, "xn--bcher-kva.de", false},
		{"https://www.bücher.de/", "a=1; Domain=xn--bcher-kva.de", nil, "xn--bcher-kva.de", false},
		{"https://xn--bcher-kva.de/", "a=1; Domain=bücher.de", nil, "xn--bcher-kva.de", false},
		{"https://www.bücher.de/", "a=1", nil, "www.xn--bcher-kva.de", true},
		{"https://www.example.com/", "a=1; Domain=xn--example-.com", ErrDomain, "", false},
		{"https://xn--example-.com/", "a=1", ErrURL, "", false},
		{"https://münchen.de/", "a=1; Domain=xn--mnchen-3ya.de", nil, "xn--mnchen-3ya.de", false},
		// IP addresses: host-only, never a parent.
		{"https://192.168.0.1/", "a=1; Domain=192.168.0.1", nil, "192.168.0.1", true},
		{"https://192.168.0.1/", "a=1; Domain=.192.168.0.1", nil, "192.168.0.1", true},
		{"https://192.168.0.1/", "a=1; Domain=168.0.1", ErrDomainMismatch, "", false},
		{"https://192.168.0.1/", "a=1; Domain=0.1", ErrDomainMismatch, "", false},
		{"https://192.168.0.1/", "a=1; Domain=1", ErrDomainMismatch, "", false},
		{"https://[::1]/", "a=1; Domain=::1", nil, "::1", true},
		{"https://[::1]/", "a=1; Domain=[::1]", nil, "::1", true},
		{"https://[2001:db8::1]/", "a=1; Domain=db8::1", ErrDomainMismatch, "", false},
		{"https://x.1.2.3.4/", "a=1; Domain=1.2.3.4", ErrDomainMismatch, "", false},
		{"https://www.example.com/", "a=1; Domain=1.2.3.4", ErrDomainMismatch, "", false},
		// Non-HTTP URLs.
		{"ftp://www.example.com/", "a=1", ErrURL, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.url+" "+tt.line, func(t *testing.T) {
			j, _ := newTestJar(t, nil)
			err := j.SetCookie(mustURL(t, tt.url), tt.line)
			if !errors.Is(err, tt.err) {
				t.Fatalf("SetCookie = %v, want %v", err, tt.err)
			}
			all := j.All()
			if tt.err != nil {
				if len(all) != 0 {
					t.Fatalf("rejected cookie stored: %+v", all[0])
				}
				return
			}
			if len(all) != 1 {
				t.Fatalf("stored %d cookies, want 1", len(all))
			}
			if c := all[0]; c.Domain != tt.domain || c.HostOnly != tt.hostOnly {
				t.Fatalf("domain %q hostOnly %v, want %q %v", c.Domain, c.HostOnly, tt.domain, tt.hostOnly)
			}
		})
	}
}

// TestDomainMatchingOnSend checks which hosts receive host-only and domain
// cookies.
func TestDomainMatchingOnSend(t *testing.T) {
	j, _ := newTestJar(t, nil)
	set(t, j, "https://www.example.com/", "host=1", "dom=1; Domain=example.com")
	set(t, j, "https://co.uk/", "suffix=1; Domain=co.uk")
	set(t, j, "https://192.168.0.1/", "ip=1; Domain=192.168.0.1")
	tests := []struct{ url, want string }{
		{"https://www.example.com/", "host=1; dom=1"},
		{"https://WWW.EXAMPLE.COM./", "host=1; dom=1"},
		{"https://example.com/", "dom=1"},
		{"https://a.b.example.com/", "dom=1"},
		{"https://a.www.example.com/", "dom=1"},
		{"https://notexample.com/", ""},
		{"https://example.com.evil.net/", ""},
		{"https://co.uk/", "suffix=1"},
		{"https://bbc.co.uk/", ""},
		{"https://192.168.0.1/", "ip=1"},
		{"https://1.192.168.0.1/", ""},
		{"https://[::1]/", ""},
	}
	for _, tt := range tests {
		if got := header(t, j, tt.url, SameSiteRequest); got != tt.want {
			t.Errorf("%s: Cookie %q, want %q", tt.url, got, tt.want)
		}
	}
}

func TestCanonicalHost(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"example.com", "example.com", true},
		{"Example.COM.", "example.com", true},
		{"bücher.de", "xn--bcher-kva.de", true},
		{"BÜCHER.DE", "xn--bcher-kva.de", true},
		{"例え.テスト", "xn--r8jz45g.xn--zckzah", true},
		{"xn--r8jz45g.xn--zckzah", "xn--r8jz45g.xn--zckzah", true},
		{"xn--example-", "", false},
		{"xn--zz-zz-zz-!", "", false},
		{"a..b", "", false},
		{"", "", false},
		{".", "", false},
		{"example.com..", "", false},
		{"[::1]", "::1", true},
		{"a b", "", false},
		{"a;b", "", false},
		{"\xff.com", "", false},
	}
	for _, tt := range tests {
		got, ok := canonicalHost(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("canonicalHost(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestPunycodeRoundTrip(t *testing.T) {
	for _, s := range []string{"bücher", "münchen", "例え", "テスト", "ab-ü-cd", "ü", "😀x"} {
		enc, err := punyEncode(s)
		if err != nil {
			t.Fatalf("encode %q: %v", s, err)
		}
		dec, err := punyDecode(enc)
		if err != nil || dec != s {
			t.Fatalf("decode(encode(%q)) = %q, %v (enc %q)", s, dec, err, enc)
		}
	}
	// Known vectors (RFC 3492 section 7.1 style, checked against browsers).
	for in, want := range map[string]string{"bücher": "bcher-kva", "münchen": "mnchen-3ya", "例え": "r8jz45g"} {
		if got, _ := punyEncode(in); got != want {
			t.Errorf("punyEncode(%q) = %q, want %q", in, got, want)
		}
	}
}
