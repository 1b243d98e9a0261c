package guise

import (
	"bytes"
	"testing"

	"github.com/guise-http/guise/fields"
	"github.com/guise-http/guise/profile"
)

// render writes h as HTTP/1.1 field lines.
func render(h fields.Header) []byte {
	var b []byte
	for _, f := range h {
		b = append(b, f.Name+": "+f.Value+"\r\n"...)
	}
	return b
}

// TestHeadBlockEqualsHeaderFor: for every profile and request kind, the
// pre-rendered fields of a request with nothing of its own are byte for
// byte what headerFor assembles, and any request with something of its own
// (a caller field, a cookie, a body, a redirect hop) is not given them.
func TestHeadBlockEqualsHeaderFor(t *testing.T) {
	host := fields.Header{{Name: "Host", Value: "fp.test:8443"}}
	blocks := 0
	for _, name := range profile.Names() {
		c, err := compile(name)
		if err != nil {
			t.Fatal(err)
		}
		for k := profile.Navigate; int(k) < kindCount; k++ {
			if !c.hdr[protoH1][k].present {
				continue
			}
			want, err := c.headerFor(nil, protoH1, k, nil, host, 0, "", 0)
			if err != nil {
				t.Fatal(err)
			}
			h, blk, ok := c.headBlock(k, nil, host, 0, 0)
			if !ok {
				t.Errorf("%s %v: no block", name, k)
				continue
			}
			blocks++
			if got := append(render(fields.Header{h}), blk...); !bytes.Equal(got, render(want)) {
				t.Errorf("%s %v:\n got %q\nwant %q", name, k, got, render(want))
			}
			for _, tc := range []struct {
				what   string
				user   fields.Header
				extra  fields.Header
				length int64
				nav    navFlags
			}{
				{"caller field", fields.Header{{Name: "X-A", Value: "1"}}, host, 0, 0},
				{"cookie", nil, append(host[:1:1], fields.Field{Name: "Cookie", Value: "a=1"}), 0, 0},
				{"body", nil, host, 5, 0},
				{"empty POST", nil, host, emptyBody, 0},
				{"redirect hop", nil, host, 0, navRedirected},
				{"scripted navigation", nil, host, 0, navScripted},
			} {
				if _, _, ok := c.headBlock(k, tc.user, tc.extra, tc.length, tc.nav); ok {
					t.Errorf("%s %v: a request with a %s got the block", name, k, tc.what)
				}
			}
		}
	}
	if blocks == 0 {
		t.Fatal("no profile has a block")
	}
}
