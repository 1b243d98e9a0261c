//go:build cgo

package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guise-http/guise/fingerprint"
	"github.com/guise-http/guise/profile"
)

// TestProfileOption checks that the options take a profile file's path
// or its JSON (as a string or as the object) wherever they take a name,
// and a weighted set with a seed; and that a bad file fails when the
// Session is made, naming the field (RELIABILITY PF-01, PF-06).
func TestProfileOption(t *testing.T) {
	emb, err := profile.Lookup("firefox153-linux")
	if err != nil {
		t.Fatal(err)
	}
	b, err := emb.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "mine.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	quoted := func(s string) string {
		return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(s) + `"`
	}
	srv := &fingerprint.Server{DisableQUIC: true}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	for _, opt := range []string{quoted(path), quoted(string(b)), string(b)} {
		ss, err := newSession([]byte(`{"profile":` + opt + `,"caPem":` + quoted(string(srv.CAPEM())) + `}`))
		if err != nil {
			t.Fatalf("profile %.40s: %v", opt, err)
		}
		if ss.s.Browser == nil || ss.s.Browser.Name != "firefox153-linux" || profile.IsEmbedded(ss.s.Browser) {
			t.Fatalf("profile %.40s: Session.Browser %v", opt, ss.s.Browser)
		}
		resp, err := ss.s.Get(context.Background(), srv.URL()+"/api/all")
		if err != nil {
			t.Fatal(err)
		}
		resp.Bytes()
		ss.close()
	}
	recs := srv.Records()
	want, _ := fingerprint.ParseClientHello(emb.TLS.Hello)
	for _, r := range recs {
		ch, err := r.ClientHello()
		if err != nil {
			t.Fatal(err)
		}
		// An IP address gets no SNI: compare the cipher and extension
		// hashes, which leave SNI out.
		_, got, _ := strings.Cut(ch.JA4(), "_")
		_, exp, _ := strings.Cut(want.JA4(), "_")
		if got != exp {
			t.Errorf("connection #%d: JA4 %s, the file's %s", r.ID, ch.JA4(), want.JA4())
		}
	}
	if len(recs) != 3 {
		t.Errorf("%d connections for 3 sessions", len(recs))
	}

	// A set, with a seed: the same pick every time.
	var first string
	for i := range 3 {
		ss, err := newSession([]byte(`{"profile":"chrome:1,firefox:1,` + filepath.ToSlash(path) + `:1","seed":42}`))
		if err != nil {
			t.Fatal(err)
		}
		p, err := ss.s.ProfileInUse()
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = p.Name
		} else if p.Name != first {
			t.Errorf("seed 42 drew %s, then %s", first, p.Name)
		}
		ss.close()
	}
	tr, err := newTransport([]byte(`{"profile":` + quoted(path) + `}`))
	if err != nil || tr.Browser == nil {
		t.Fatalf("transport: %v", err)
	}
	tr.Close()

	// A bad file fails at once, naming the file and the field.
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(strings.Replace(string(b), `"first_stream_id": 3`, `"first_stream_id": 4`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = newSession([]byte(`{"profile":` + quoted(bad) + `}`))
	if err == nil || !strings.Contains(err.Error(), "bad.json") || !strings.Contains(err.Error(), "http2.first_stream_id") {
		t.Errorf("bad file: %v", err)
	}
	if _, err := newTransport([]byte(`{"profile":"chrome:0"}`)); err == nil {
		t.Error("a weight of 0 accepted")
	}
}
