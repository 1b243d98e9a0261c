package fingerprint

import (
	"regexp"
	"slices"
	"strconv"
	"testing"

	"github.com/guise-http/guise/fields"
	"github.com/guise-http/guise/profile"
)

var majorRE = regexp.MustCompile(`(?:Chrome|Firefox)/(\d+)`)

// checkDrift compares what a live browser sent with the embedded profile
// guise impersonates it with (profileName): JA4, the Akamai string, the
// pseudo-header order and the navigation's header order. A browser newer
// than the profile is not a failure of guise: the test skips, asking for a
// new recording.
func checkDrift(t *testing.T, recs []*ConnRecord, profileName string) {
	t.Helper()
	p, err := profile.Lookup(profileName)
	if err != nil {
		t.Fatal(err)
	}
	var nav *HTTP2Request
	var live *ConnRecord
	for _, r := range recs {
		if r.Transport != TransportTLS || r.Protocol != ProtoH2 || r.Negotiated == nil || r.Negotiated.Resumed {
			continue
		}
		h, err := r.HTTP2()
		if err != nil {
			continue // a connection the browser opened and never used
		}
		for i := range h.Requests {
			if h.Requests[i].Path() == "/" {
				nav, live = &h.Requests[i], r
				break
			}
		}
		if nav != nil {
			break
		}
	}
	if nav == nil {
		t.Fatal("no h2 navigation to / among the live connections")
	}
	if m := majorRE.FindStringSubmatch(live.UserAgent()); m != nil {
		if v, _ := strconv.Atoi(m[1]); v > p.Version {
			t.Skipf("the installed browser is version %d, newer than profile %s: record a new profile (guise capture)", v, p.Name)
		}
	}
	want, err := ParseClientHello(p.TLS.Hello)
	if err != nil {
		t.Fatal(err)
	}
	got, err := live.ClientHello()
	if err != nil {
		t.Fatal(err)
	}
	if got.JA4() != want.JA4() {
		t.Errorf("drift: live JA4 %s, profile %s %s", got.JA4(), p.Name, want.JA4())
	}
	h, _ := live.HTTP2()
	wantH := &HTTP2{ConnWindowUpdate: p.HTTP2.ConnWindowUpdate, Requests: []HTTP2Request{{PseudoOrder: p.HTTP2.PseudoOrder}}}
	for _, s := range p.HTTP2.Settings {
		wantH.Settings = append(wantH.Settings, Setting{ID: uint16(s.ID), Value: s.Value})
	}
	if h.Akamai() != wantH.Akamai() {
		t.Errorf("drift: live Akamai %s, profile %s %s", h.Akamai(), p.Name, wantH.Akamai())
	}
	var order []string
	hs := p.HeaderSet(profile.Navigate, profile.H2)
	for _, f := range hs.Header {
		if f.Value == "" && slices.ContainsFunc(hs.PerRequest, func(n string) bool { return fields.EqualFold(n, f.Name) }) {
			continue
		}
		order = append(order, f.Name)
	}
	liveOrder := nav.HeaderOrder()
	if order = withoutUnrecordedActivation(liveOrder, order); !slices.Equal(liveOrder, order) {
		t.Errorf("drift: live navigation header order %v, profile %s %v", liveOrder, p.Name, order)
	}
}
