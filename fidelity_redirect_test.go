package guise

import (
	"context"
	"slices"
	"testing"

	"github.com/guise-http/guise/fields"
	"github.com/guise-http/guise/fingerprint"
)

// TestRedirectHopOrderMatchesRecordings: a typed navigation to the flow's
// start page, which sets a cookie and redirects (302) to /flow/, goes out
// as the real browser sent both requests (profile/testdata/recordings/
// *-flows.json): Chrome moves its client hints after sec-fetch-dest on the
// redirected hop, Firefox keeps its order; over h2 and HTTP/1.1.
func TestRedirectHopOrderMatchesRecordings(t *testing.T) {
	for _, name := range []string{"chrome", "firefox"} {
		rec := readFlowRecording(t, name)
		for _, h2 := range []bool{true, false} {
			t.Run(name+map[bool]string{true: "/h2", false: "/h1"}[h2], func(t *testing.T) {
				got := followFlowStart(t, name, h2)
				for i, path := range []string{fingerprint.FlowStart, "/flow/"} {
					want := names(rec.request(t, h2, "GET", path))
					if g := withoutUserActivation(t, name, path, names(got[i]), want); !sameOrder(g, want) {
						t.Errorf("%s:\n got %v\nwant %v", path, g, want)
					}
				}
				if v := got[1].Get("cookie"); v != fingerprint.FlowCookie {
					t.Errorf("redirected hop: cookie %q, want %q", v, fingerprint.FlowCookie)
				}
			})
		}
	}
}

// followFlowStart navigates a fresh Session of profile name to the echo
// server's FlowStart, following its redirect, and returns the fields of
// the requests the server received.
func followFlowStart(t *testing.T, name string, h2 bool) []fields.Header {
	t.Helper()
	return followFlowStartAs(t, name, h2, false)
}

// followFlowStartAs is followFlowStart with Request.Scripted set to scripted.
func followFlowStartAs(t *testing.T, name string, h2, scripted bool) []fields.Header {
	t.Helper()
	e := newEchoSession(t, name, h2)
	resp, err := e.s.Do(context.Background(), &Request{URL: e.origin + fingerprint.FlowStart, Scripted: scripted})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := resp.Bytes(); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.URL != e.origin+"/flow/" {
		t.Fatalf("%d at %s, want 200 at %s/flow/", resp.StatusCode, resp.URL, e.origin)
	}
	return e.received(t, 2) // the start page and its redirect
}

// TestUserNavigationMatchesFirefoxActivation: guise's firefox navigation,
// and the hop after its redirect, go out as Firefox sent them when a user
// started the navigation (profile/testdata/recordings/firefox-esr-153-activation.json:
// Sec-Fetch-User after Sec-Fetch-Site, kept on the redirected hop), which
// the headless flow recordings cannot show; over h2 and HTTP/1.1.
func TestUserNavigationMatchesFirefoxActivation(t *testing.T) {
	rec := readFlowRecording(t, "firefox-activation")
	for _, h2 := range []bool{true, false} {
		t.Run(map[bool]string{true: "h2", false: "h1"}[h2], func(t *testing.T) {
			got := followFlowStart(t, "firefox", h2)
			for i, path := range []string{fingerprint.FlowStart, "/flow/"} {
				want := rec.request(t, h2, "GET", path)
				if !want.Has("sec-fetch-user") {
					t.Fatalf("%s: the recording has no Sec-Fetch-User", path)
				}
				if g, w := names(got[i]), names(want); !slices.Equal(g, w) {
					t.Errorf("%s:\n got %v\nwant %v", path, g, w)
				}
				if v := got[i].Get("sec-fetch-user"); v != "?1" {
					t.Errorf("%s: sec-fetch-user %q, want ?1", path, v)
				}
			}
		})
	}
}

// TestScriptedRedirectMatchesFirefox: a scripted navigation and the hop
// after its redirect go out without Sec-Fetch-User, exactly as headless
// Firefox (no user activation) sent them in
// profile/testdata/recordings/firefox-esr-153-flows.json.
func TestScriptedRedirectMatchesFirefox(t *testing.T) {
	rec := readFlowRecording(t, "firefox")
	for _, h2 := range []bool{true, false} {
		t.Run(map[bool]string{true: "h2", false: "h1"}[h2], func(t *testing.T) {
			got := followFlowStartAs(t, "firefox", h2, true)
			for i, path := range []string{fingerprint.FlowStart, "/flow/"} {
				if g, w := names(got[i]), names(rec.request(t, h2, "GET", path)); !slices.Equal(g, w) {
					t.Errorf("%s:\n got %v\nwant %v", path, g, w)
				}
			}
		})
	}
}
