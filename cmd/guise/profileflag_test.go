package main

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/guise-http/guise"
	"github.com/guise-http/guise/profile"
)

// TestUseProfile: RELIABILITY PF-01, PF-06, PF-07.
func TestUseProfile(t *testing.T) {
	emb, err := profile.Lookup("firefox")
	if err != nil {
		t.Fatal(err)
	}
	b, err := emb.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "mine.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var s guise.Session
	if err := useProfile(&s, "chrome-macos", 0); err != nil || s.Profile != "chrome156-macos" || s.Browser != nil {
		t.Errorf("name: %q %v", s.Profile, err)
	}
	s = guise.Session{}
	if err := useProfile(&s, path, 0); err != nil || s.Browser == nil || profile.IsEmbedded(s.Browser) {
		t.Errorf("file: %v", err)
	}
	if got := profileName(&s); got != "firefox153-linux (from a file)" {
		t.Errorf("profileName %q", got)
	}
	pick := func() string {
		var s guise.Session
		if err := useProfile(&s, "chrome:1,safari:1,"+path+":1", 99); err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		p, err := s.ProfileInUse()
		if err != nil {
			t.Fatal(err)
		}
		return p.Name
	}
	if a, b := pick(), pick(); a != b {
		t.Errorf("--seed 99 drew %s then %s", a, b)
	}
	for _, bad := range []string{"netscape4", filepath.Join(dir, "absent.json"), "chrome:0", "{"} {
		var s guise.Session
		var ee *exitError
		if err := useProfile(&s, bad, 0); !errors.As(err, &ee) || ee.code != exitUsage {
			t.Errorf("useProfile(%q): %v, want a usage error", bad, err)
		}
	}
}
