package guise

import (
	"bytes"
	"context"
	"math/rand/v2"
	"net"
	"slices"
	"testing"

	"github.com/guise-http/guise/fingerprint"
	"github.com/guise-http/guise/profile"
)

// echoWire visits a fresh echo server with each Session made by mk, one
// request each, and returns one record per Session.
func echoWire(t *testing.T, n int, mk func(tr *Transport) *Session) []*fingerprint.ConnRecord {
	t.Helper()
	srv := &fingerprint.Server{DisableQUIC: true}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.ListenAddr())
	addr := srv.ListenAddr()
	var d net.Dialer
	tr := &Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return d.DialContext(ctx, network, addr)
	}}
	defer tr.Close()
	roots := srv.CertPool()
	for range n {
		s := mk(tr)
		s.RootCAs = roots
		resp, err := s.Get(context.Background(), "https://fp.test:"+port+"/api/all")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := resp.Bytes(); err != nil {
			t.Fatal(err)
		}
	}
	tr.Close()
	srv.Close()
	return srv.Records()
}

// wireOf is the fingerprint of one record: JA4, Akamai, pseudo-header and
// header order of its first request.
func wireOf(t *testing.T, rec *fingerprint.ConnRecord) []string {
	t.Helper()
	ch, err := rec.ClientHello()
	if err != nil {
		t.Fatal(err)
	}
	h, err := rec.HTTP2()
	if err != nil || len(h.Requests) == 0 {
		t.Fatalf("h2: %v", err)
	}
	q := h.Requests[0]
	return append([]string{ch.JA4(), ch.JA3N(), h.Akamai()}, append(q.PseudoOrder, q.HeaderOrder()...)...)
}

// TestSessionBrowserFromFile checks that a Session with a profile parsed
// from a file sends what the same Session with the embedded one sends, and
// that two loaded profiles of one name never share a connection
// (RELIABILITY PF-04).
func TestSessionBrowserFromFile(t *testing.T) {
	for _, name := range []string{"chrome156-linux", "firefox153-linux"} {
		t.Run(name, func(t *testing.T) {
			emb, err := profile.Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			b, err := emb.Marshal()
			if err != nil {
				t.Fatal(err)
			}
			loaded, err := profile.Parse(b)
			if err != nil {
				t.Fatal(err)
			}
			first := true
			recs := echoWire(t, 2, func(tr *Transport) *Session {
				if first {
					first = false
					return &Session{Profile: name, Transport: tr}
				}
				return &Session{Browser: loaded, Transport: tr}
			})
			if len(recs) != 2 {
				t.Fatalf("%d connections, want 2 (a loaded profile is not the embedded one's pool)", len(recs))
			}
			if a, b := wireOf(t, recs[0]), wireOf(t, recs[1]); !slices.Equal(a, b) {
				t.Errorf("loaded profile's wire differs from the embedded one's\n embedded %q\n   loaded %q", a, b)
			}
		})
	}
	// Two loaded copies, one name, one Transport: two connections.
	emb, _ := profile.Lookup("chrome")
	b, _ := emb.Marshal()
	p1, _ := profile.Parse(b)
	p2, _ := profile.Parse(b)
	i := 0
	recs := echoWire(t, 3, func(tr *Transport) *Session {
		i++
		if i == 2 {
			return &Session{Browser: p2, Transport: tr}
		}
		return &Session{Browser: p1, Transport: tr}
	})
	if len(recs) != 2 {
		t.Errorf("%d connections for sessions of p1, p2, p1 on one Transport, want 2", len(recs))
	}
}

// TestSessionProfilesDraw checks that a Session draws once from its set,
// keeps the pick, and that a seed gives the same picks (RELIABILITY PF-05,
// PF-06).
func TestSessionProfilesDraw(t *testing.T) {
	set, err := profile.ParseSet("chrome:1,firefox:1")
	if err != nil {
		t.Fatal(err)
	}
	picks := func(seed byte) []string {
		r := rand.NewChaCha8([32]byte{seed})
		var out []string
		for range 20 {
			s := &Session{Profiles: set, Rand: r}
			p, err := s.ProfileInUse()
			if err != nil {
				t.Fatal(err)
			}
			q, _ := s.ProfileInUse()
			if q != p {
				t.Fatal("a Session's profile changed between calls")
			}
			out = append(out, p.Name)
			s.Close()
		}
		return out
	}
	a, b := picks(3), picks(3)
	if !slices.Equal(a, b) {
		t.Errorf("one seed, different draws:\n%v\n%v", a, b)
	}
	if !slices.Contains(a, "chrome156-linux") || !slices.Contains(a, "firefox153-linux") {
		t.Errorf("20 draws of an even set gave %v", a)
	}
	// A Transport's set serves the Sessions that name no profile; a
	// Session's own name wins.
	tr := &Transport{Profiles: set, Rand: rand.NewChaCha8([32]byte{3})}
	defer tr.Close()
	s := &Session{Transport: tr}
	if p, _ := s.ProfileInUse(); p.Name != a[0] {
		t.Errorf("Transport's set drew %s, want %s", p.Name, a[0])
	}
	if p, _ := (&Session{Transport: tr, Profile: "safari"}).ProfileInUse(); p.Browser != profile.Safari {
		t.Errorf("Session.Profile lost to the Transport's set: %s", p.Name)
	}
	// A bad set fails the request, not the program.
	bad := &Session{Profiles: profile.Set{{Profile: set[0].Profile}}}
	if _, err := bad.Get(context.Background(), "https://fp.test/"); err == nil {
		t.Error("a set with weight 0 sent a request")
	}
	// The drawn browser's cookies, tickets and connections are the
	// Session's: the wire of a drawn Session is its pick's.
	recs := echoWire(t, 4, func(tr *Transport) *Session {
		return &Session{Profiles: set, Rand: rand.NewChaCha8([32]byte{9}), Transport: tr}
	})
	seen := map[string]bool{}
	for _, r := range recs {
		seen[string(bytes.Join(func() [][]byte {
			var o [][]byte
			for _, s := range wireOf(t, r)[:3] {
				o = append(o, []byte(s))
			}
			return o
		}(), nil))] = true
	}
	if len(seen) != 1 || len(recs) != 1 {
		t.Errorf("4 Sessions with one seed: %d connections, %d wires; want 1 and 1 (same pick, shared pool)", len(recs), len(seen))
	}
}
