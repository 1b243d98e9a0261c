package guise

import (
	"slices"
	"testing"

	"github.com/guise-http/guise/fingerprint"
	"github.com/guise-http/guise/profile"
)

// TestSafari26OnTheWire visits the echo server as Safari 26 (by its
// canonical names and by the bare aliases, which name it now) and checks
// what the server measures against what real Safari 26.4 devices send
// (profile/testdata/safari26, compared field by field with the profiles in
// profile/safari26_test.go): JA4, JA3, the Akamai string, HEADERS without
// priority, the navigation's header order and zstd in accept-encoding.
// Safari 18 keeps its own hello and its HEADERS priority.
func TestSafari26OnTheWire(t *testing.T) {
	for _, c := range []struct {
		name, canonical, ja4, ja3 string
		headerPriority            bool
	}{
		{"safari26-macos", "safari26-macos", "t13d2013h2_a09f3c656075_7f0f34a4126d", "ecdf4f49dd59effc439639da29186671", false},
		{"safari26-ios", "safari26-ios", "t13d2013h2_a09f3c656075_7f0f34a4126d", "ecdf4f49dd59effc439639da29186671", false},
		{"safari", "safari26-macos", "t13d2013h2_a09f3c656075_7f0f34a4126d", "ecdf4f49dd59effc439639da29186671", false},
		{"safari-ios", "safari26-ios", "t13d2013h2_a09f3c656075_7f0f34a4126d", "ecdf4f49dd59effc439639da29186671", false},
		{"safari18-macos", "safari18-macos", "t13d2014h2_a09f3c656075_e42f34c56612", "773906b0efdefa24a7f2b8eb6985bf37", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, err := profile.Lookup(c.name)
			if err != nil {
				t.Fatal(err)
			}
			if p.Name != c.canonical {
				t.Fatalf("%s names %s, want %s", c.name, p.Name, c.canonical)
			}
			recs := visit(t, c.name, 1, false)
			if len(recs) != 1 {
				t.Fatalf("%d connections", len(recs))
			}
			ch, err := recs[0].ClientHello()
			if err != nil {
				t.Fatal(err)
			}
			if got := ch.JA4(); got != c.ja4 {
				t.Errorf("JA4 %s, want %s (JA4_r %s)", got, c.ja4, ch.JA4R())
			}
			if got := ch.JA3Hash(); got != c.ja3 {
				t.Errorf("JA3 %s, want %s (%s)", got, c.ja3, ch.JA3())
			}
			h2, err := recs[0].HTTP2()
			if err != nil {
				t.Fatal(err)
			}
			if got := h2.Akamai(); got != "2:0;3:100;4:2097152;9:1|10420225|0|m,s,a,p" {
				t.Errorf("Akamai %s", got)
			}
			if len(h2.Requests) != 1 {
				t.Fatalf("%d requests", len(h2.Requests))
			}
			r := h2.Requests[0]
			if got := r.Priority != nil; got != c.headerPriority {
				t.Errorf("HEADERS priority %+v, want priority %v", r.Priority, c.headerPriority)
			}
			hs := p.HeaderSet(profile.Navigate, profile.H2)
			if got, want := r.HeaderOrder(), wantNames(hs); !slices.Equal(got, want) {
				t.Errorf("header order\n got %v\nwant %v", got, want)
			}
			wantAE := "gzip, deflate, br, zstd"
			if p.Version == 18 {
				wantAE = "gzip, deflate, br"
			}
			var ae string
			for _, f := range r.Header {
				if f.Name == "accept-encoding" {
					ae = f.Value
				}
			}
			if ae != wantAE {
				t.Errorf("accept-encoding %q, want %q", ae, wantAE)
			}
			// The hello on the wire is the profile's, but for the bytes
			// drawn per connection.
			want, err := fingerprint.ParseClientHello(p.TLS.Hello)
			if err != nil {
				t.Fatal(err)
			}
			if ch.JA4RO() != want.JA4RO() || !slices.Equal(ch.SupportedVersions[1:], want.SupportedVersions[1:]) || ch.PaddingLen != want.PaddingLen {
				t.Errorf("wire hello %s (versions %x, padding %d), profile %s (versions %x, padding %d)",
					ch.JA4RO(), ch.SupportedVersions, ch.PaddingLen, want.JA4RO(), want.SupportedVersions, want.PaddingLen)
			}
			if len(ch.KeyShares) != len(want.KeyShares) {
				t.Fatalf("key shares %+v, profile %+v", ch.KeyShares, want.KeyShares)
			}
			for i, k := range ch.KeyShares {
				if w := want.KeyShares[i]; k.Len != w.Len || (k.Group != w.Group && !fingerprint.IsGREASE(k.Group)) {
					t.Errorf("key share %d %+v, profile %+v", i, k, w)
				}
			}
		})
	}
}
