package fingerprint

import (
	"slices"
	"testing"

	"github.com/guise-http/guise/fields"
	"github.com/guise-http/guise/profile"
)

// checkDriftHTTP1 compares what the live browser sent with HTTP/2 disabled
// with the embedded profile's HTTP/1.1-only data: each full handshake's
// hello offering http/1.1 alone has the JA4 and the extensions (by id;
// in order unless the browser shuffles) of TLS.HelloHTTP1, and no ALPS;
// each resumed one has those plus pre_shared_key (without session_ticket
// where the profile's ResumeOmitsSessionTicket says so), the shape tlsfp
// derives; and the navigation to / has the profile's HTTP/1.1 navigation
// header order, in the browser's case.
func checkDriftHTTP1(t *testing.T, recs []*ConnRecord, profileName string) {
	t.Helper()
	p, err := profile.Lookup(profileName)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ParseClientHello(p.TLS.HelloHTTP1)
	if err != nil {
		t.Fatal(err)
	}
	ids := func(ch *ClientHello) []uint16 {
		var out []uint16
		for _, e := range ch.Extensions {
			if e.Type&0x0f0f == 0x0a0a && e.Type>>8 == e.Type&0xff {
				out = append(out, 0x0a0a)
			} else {
				out = append(out, e.Type)
			}
		}
		if p.TLS.ShuffleExtensions {
			slices.Sort(out)
		}
		return out
	}
	wantResumed := slices.Clone(want.Extensions)
	if p.TLS.ResumeOmitsSessionTicket {
		wantResumed = slices.DeleteFunc(wantResumed, func(e Extension) bool { return e.Type == 35 })
	}
	wantResumed = append(wantResumed, Extension{Type: 41})
	var full, resumed int
	var nav *HTTPRequest
	for _, r := range recs {
		if r.Transport != TransportTLS {
			continue
		}
		ch, err := r.ClientHello()
		if err != nil || !slices.Equal(ch.ALPN, []string{"http/1.1"}) {
			continue
		}
		if ch.ALPS != nil {
			t.Errorf("drift: live h1-only connection #%d sends ALPS", r.ID)
		}
		if ch.HasPreSharedKey {
			resumed++
			if g, w := ids(ch), ids(&ClientHello{Extensions: wantResumed}); !slices.Equal(g, w) {
				t.Errorf("drift: live resumed h1-only hello #%d extensions %v, profile %s derives %v", r.ID, g, p.Name, w)
			}
			continue
		}
		full++
		if ch.JA4() != want.JA4() {
			t.Errorf("drift: live h1-only JA4 %s, profile %s %s", ch.JA4(), p.Name, want.JA4())
		}
		if g, w := ids(ch), ids(want); !slices.Equal(g, w) {
			t.Errorf("drift: live h1-only hello #%d extensions %v, profile %s %v", r.ID, g, p.Name, w)
		}
		for _, q := range r.HTTPRequests() {
			if nav == nil && q.Target == "/" {
				nav = q
			}
		}
	}
	if full == 0 || nav == nil {
		t.Fatalf("no live h1-only connection with a navigation to / (%d full handshakes, %d resumed)", full, resumed)
	}
	t.Logf("%s: %d full and %d resumed h1-only handshakes, ALPN http/1.1, %d extensions (GREASE included)", p.Name, full, resumed, len(want.Extensions))
	hs := p.HeaderSet(profile.Navigate, profile.HTTP1)
	var order []string
	for _, f := range hs.Header {
		if f.Value == "" && !fields.EqualFold(f.Name, "host") {
			continue // a per-request placeholder the first navigation has no value for
		}
		order = append(order, f.Name)
	}
	var live []string
	for _, f := range nav.Header {
		live = append(live, f.Name)
	}
	if order = withoutUnrecordedActivation(live, order); !slices.Equal(live, order) {
		t.Errorf("drift: live h1-only navigation header order %v, profile %s %v", live, p.Name, order)
	}
}
