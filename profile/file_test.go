package profile

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// capturedFile is chrome156-linux as a capture without an HTTP/1.1 visit
// and without the flow page would write it: its h2 sets only, a newer
// version, a reference, and chrome156-linux as the fallback.
func capturedFile(t *testing.T) []byte {
	t.Helper()
	ref, err := Lookup("chrome156-linux")
	if err != nil {
		t.Fatal(err)
	}
	p := ref.Clone()
	p.Version, p.Name = 157, "chrome157-linux"
	var own []HeaderSet
	for _, hs := range p.Headers {
		if hs.Proto == H2 && !hs.Body && !hs.Redirect {
			for i, f := range hs.Header {
				if f.Name == "user-agent" {
					hs.Header[i].Value = strings.ReplaceAll(f.Value, "156.", "157.")
				}
			}
			own = append(own, hs)
		}
	}
	p.Headers = own
	p.QUIC, p.HTTP3 = nil, nil
	p.Fallback = "chrome156-linux"
	p.Reference = &Reference{JA4: "t13d1516h2_8daaf6152771_d8a2da3f94cd", JA3N: "x", Akamai: "1:65536|15663105|0|m,a,s,p",
		PseudoOrder: []string{":method", ":authority", ":scheme", ":path"}, HeaderOrder: []string{"user-agent"}}
	b, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestLoadFallback: RELIABILITY PF-03.
func TestLoadFallback(t *testing.T) {
	b := capturedFile(t)
	path := filepath.Join(t.TempDir(), "mine.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if p.Name != "chrome157-linux" || p.Reference == nil || p.Reference.JA4 == "" {
		t.Fatalf("loaded %s, reference %v", p.Name, p.Reference)
	}
	hs := p.HeaderSet(Navigate, HTTP1)
	if hs == nil {
		t.Fatal("no HTTP/1.1 navigation set from the fallback")
	}
	if ua := hs.Header.Get("User-Agent"); !strings.Contains(ua, "Chrome/157.") {
		t.Errorf("fallback HTTP/1.1 User-Agent %q, want the file's own (157)", ua)
	}
	if p.BodyHeaderSet(Fetch, H2) == nil {
		t.Error("no h2 fetch set with a body from the fallback")
	}
	filled := p.Filled()
	if len(filled) == 0 || !strings.Contains(strings.Join(filled, ","), "http/1.1 navigate") {
		t.Errorf("Filled() = %q", filled)
	}
	// Marshal writes the file's own sets only, and round-trips.
	out, err := p.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, b) {
		t.Error("Marshal of the loaded profile differs from the file")
	}
	q, err := Parse(out)
	if err != nil || !reflect.DeepEqual(p, q) {
		t.Fatalf("Parse(Marshal(p)) != p: %v", err)
	}
	if !reflect.DeepEqual(p.Clone(), p) {
		t.Error("Clone differs")
	}
	if IsEmbedded(p) {
		t.Error("a loaded profile reported embedded")
	}
	if e, _ := Lookup("chrome"); !IsEmbedded(e) {
		t.Error("Lookup's profile not reported embedded")
	}
}

// TestLoadRefuses checks that bad files fail at load time with the field
// and the reason (RELIABILITY PF-01, PF-02).
func TestLoadRefuses(t *testing.T) {
	good := string(capturedFile(t))
	dir := t.TempDir()
	for _, tc := range []struct {
		name, file, field string
	}{
		{"not json", "hello", ""},
		{"unknown field", strings.Replace(good, `"format"`, `"bogus": 1, "format"`, 1), ""},
		{"bad fallback", strings.Replace(good, `"fallback": "chrome156-linux"`, `"fallback": "chrome999-linux"`, 1), "fallback"},
		{"other browser's fallback", strings.Replace(good, `"fallback": "chrome156-linux"`, `"fallback": "firefox153-linux"`, 1), "fallback"},
		{"empty reference ja4", strings.Replace(good, `"ja4": "t13d1516h2_8daaf6152771_d8a2da3f94cd"`, `"ja4": ""`, 1), "reference.ja4"},
		{"bad name", strings.Replace(good, `"name": "chrome157-linux"`, `"name": "mine"`, 1), "name"},
		{"bad settings", strings.Replace(good, `"first_stream_id": 1`, `"first_stream_id": 2`, 1), "http2.first_stream_id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.file == good {
				t.Fatal("the replacement did not apply")
			}
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".json")
			if err := os.WriteFile(path, []byte(tc.file), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(path)
			var le *LoadError
			var pe *ParseError
			if !errors.As(err, &le) || le.Path != path || !errors.As(err, &pe) {
				t.Fatalf("Load: %v, want a *LoadError with a *ParseError", err)
			}
			if pe.Field != tc.field {
				t.Errorf("field %q, want %q (%v)", pe.Field, tc.field, err)
			}
			if !strings.Contains(err.Error(), path) {
				t.Errorf("error %q does not name the file", err)
			}
		})
	}
	if _, err := Load(filepath.Join(dir, "absent.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("absent file: %v", err)
	}
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, bytes.Repeat([]byte(" "), MaxFileSize+1), 0o644); err != nil {
		t.Fatal(err)
	}
	var pe *ParseError
	if _, err := Load(big); !errors.As(err, &pe) || pe.Field != "" {
		t.Errorf("oversized file: %v", err)
	}
}

func TestOpen(t *testing.T) {
	b := capturedFile(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "mine.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, spec := range []string{path, string(b), "  " + string(b)} {
		p, err := Open(spec)
		if err != nil || p.Name != "chrome157-linux" {
			t.Fatalf("Open(%.20q): %v", spec, err)
		}
	}
	if p, err := Open("firefox"); err != nil || p.Browser != Firefox {
		t.Fatalf("Open(firefox): %v", err)
	}
	if _, err := Open("nonesuch"); !errors.Is(err, ErrUnknown) {
		t.Errorf("Open(nonesuch): %v, want ErrUnknown", err)
	}
	t.Chdir(dir)
	if err := os.WriteFile("plain", b, 0o644); err != nil {
		t.Fatal(err)
	}
	if p, err := Open("plain"); err != nil || p.Name != "chrome157-linux" {
		t.Errorf("Open of a file without a path separator: %v", err)
	}
}

// TestSet: RELIABILITY PF-05, PF-06.
func TestSet(t *testing.T) {
	set, err := ParseSet("chrome:3, firefox:1,safari")
	if err != nil {
		t.Fatal(err)
	}
	if len(set) != 3 || set[0].Weight != 3 || set[1].Profile.Browser != Firefox || set[2].Weight != 1 {
		t.Fatalf("ParseSet: %+v", set)
	}
	count := map[Browser]int{}
	r := rand.NewChaCha8([32]byte{1})
	for range 5000 {
		p, err := set.Draw(r)
		if err != nil {
			t.Fatal(err)
		}
		count[p.Browser]++
	}
	// 3:1:1 of 5000 is 3000, 1000, 1000.
	if c := count[Chrome]; c < 2800 || c > 3200 || count[Firefox] < 850 || count[Safari] < 850 {
		t.Errorf("draws %v, want about 3000/1000/1000", count)
	}
	// The same seed draws the same.
	a, b := rand.NewChaCha8([32]byte{7}), rand.NewChaCha8([32]byte{7})
	for range 50 {
		x, _ := set.Draw(a)
		y, _ := set.Draw(b)
		if x != y {
			t.Fatal("one seed, two draws")
		}
	}
	for _, bad := range []string{"", "chrome:0", "chrome:x,", "nonesuch:2", "chrome:99999999999"} {
		if _, err := ParseSet(bad); err == nil {
			t.Errorf("ParseSet(%q) accepted", bad)
		}
	}
	if err := (Set{{Profile: set[0].Profile}}).Check(); err == nil {
		t.Error("weight 0 accepted")
	}
	if _, err := (Set{}).Draw(nil); err == nil {
		t.Error("empty set drawn from")
	}
}

func FuzzParseSet(f *testing.F) {
	for _, s := range []string{"chrome:3,firefox:1", "safari", "chrome-macos:2, edge", "a.json:1", "chrome:", ":3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		if strings.ContainsAny(spec, `/\`) || strings.Contains(strings.ToLower(spec), ".json") {
			return // no file system from the fuzzer
		}
		set, err := ParseSet(spec)
		if err != nil {
			return
		}
		if err := set.Check(); err != nil {
			t.Fatalf("ParseSet(%q) gave a set Check refuses: %v", spec, err)
		}
		if _, err := set.Draw(rand.NewChaCha8([32]byte{})); err != nil {
			t.Fatal(err)
		}
	})
}
