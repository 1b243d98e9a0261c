package guise

import (
	"context"
	"net"
	"testing"

	"github.com/guise-http/guise/fingerprint"
	"github.com/guise-http/guise/internal/fields"
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
					if g := names(got[i]); !sameOrder(g, want) {
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
	srv := &fingerprint.Server{}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.ListenAddr())
	origin := "http://fp.test:" + port
	if h2 {
		origin = "https://fp.test:" + port
	}
	addr := srv.ListenAddr()
	var d net.Dialer
	s := &Session{Profile: name, RootCAs: srv.CertPool(), Transport: &Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return d.DialContext(ctx, network, addr)
		}}}
	defer s.Transport.Close()
	resp, err := s.Do(context.Background(), &Request{URL: origin + fingerprint.FlowStart})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := resp.Bytes(); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || resp.URL != origin+"/flow/" {
		t.Fatalf("%d at %s, want 200 at %s/flow/", resp.StatusCode, resp.URL, origin)
	}
	s.Transport.Close()
	srv.Close()
	var got []fields.Header
	for _, rec := range srv.Records() {
		for _, q := range rec.HTTPRequests() {
			got = append(got, q.Header)
		}
	}
	if len(got) != 2 {
		t.Fatalf("the server saw %d requests, want 2 (the start page and its redirect)", len(got))
	}
	return got
}
