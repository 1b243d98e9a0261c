package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/guise-http/guise/fingerprint"
	"github.com/guise-http/guise/profile"
)

// TestFingerprintCommand runs the README's main job for every profile and
// requires every row to match the profile's recording.
func TestFingerprintCommand(t *testing.T) {
	for _, name := range profile.Names() {
		var out bytes.Buffer
		ok, err := runFingerprint(context.Background(), mustLookup(t, name), &out)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !ok || strings.Contains(out.String(), "DIFFERS") || !strings.Contains(out.String(), ": all match") {
			t.Fatalf("%s: fingerprints differ:\n%s", name, out.String())
		}
		if !strings.Contains(out.String(), "over h2") {
			t.Fatalf("%s: not visited over h2:\n%s", name, out.String())
		}
		t.Logf("%s: all match", name)
	}
	if len(profile.Names()) < 2 {
		t.Fatalf("only %d profiles", len(profile.Names()))
	}
}

// TestFingerprintH3 is the HTTP/3 half of the command for the profiles
// with a QUIC recording: the visit reaches the echo server over h3 and
// every QUIC and HTTP/3 row matches.
func TestFingerprintH3(t *testing.T) {
	for _, name := range []string{"chrome156-linux", "firefox153-linux"} {
		var out bytes.Buffer
		ok, err := runFingerprint(context.Background(), mustLookup(t, name), &out)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		o := out.String()
		if !ok || strings.Contains(o, "DIFFERS") || strings.Contains(o, "not reached") || !strings.Contains(o, " over h3\n") {
			t.Fatalf("%s:\n%s", name, o)
		}
		for _, row := range []string{"QUIC JA4 ", "first flight datagrams ", "h3 pseudo-headers ", "transport parameters (", "h3 SETTINGS (in order): match", "header order (navigation, h3): match"} {
			i := strings.Index(o, row)
			if i < 0 {
				t.Fatalf("%s: no %q row:\n%s", name, row, o)
			}
			if line, _, _ := strings.Cut(o[i:], "\n"); !strings.Contains(line, "match") {
				t.Errorf("%s: %s", name, line)
			}
		}
	}
}

// TestFingerprintH3Recordings checks the command's "recording" column
// against the recordings themselves: the facts expectedH3 takes from the
// profile equal those observeH3 reads from every in-repo first-connection
// h3 recording of the browser, <browser>-h3-NN.json (the transport
// parameters as a set where the browser shuffles them). The -h3-resumed-
// recordings resume a session, with a pre_shared_key hello and 0-RTT.
func TestFingerprintH3Recordings(t *testing.T) {
	for name, browser := range map[string]string{"chrome156-linux": "chromium-156", "firefox153-linux": "firefox-esr-153"} {
		p, err := profile.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		want, err := expectedH3(p)
		if err != nil || want == nil {
			t.Fatalf("%s: %v %v", name, want, err)
		}
		paths, _ := filepath.Glob(filepath.Join("..", "..", "fingerprint", "testdata", "recordings", browser+"-h3-[0-9]*.json"))
		if len(paths) == 0 {
			t.Fatalf("%s: no recordings", browser)
		}
		for _, path := range paths {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			rec, err := fingerprint.DecodeRecord(b)
			if err != nil {
				t.Fatal(err)
			}
			got, err := observeH3(rec)
			if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
			params := func(s []string) []string {
				if p.QUIC.ShuffleTransportParameters {
					return slices.Sorted(slices.Values(s))
				}
				return s
			}
			for what, eq := range map[string]bool{
				"ja4":      got.ja4 == want.ja4,
				"params":   slices.Equal(params(got.params), params(want.params)),
				"settings": slices.Equal(got.settings, want.settings),
				"pseudo":   slices.Equal(got.pseudo, want.pseudo),
				"order":    slices.Equal(got.order, want.order),
				"sizes":    len(got.sizes) > 0 && !slices.ContainsFunc(got.sizes, func(n int) bool { return n != p.QUIC.DatagramSize }),
			} {
				if !eq {
					t.Errorf("%s: %s differs from the profile\n recording %+v\n profile   %+v", filepath.Base(path), what, got, want)
				}
			}
		}
	}
}

// TestFingerprintNoUDP (RELIABILITY Q-72): on a machine where the echo server has no UDP
// side, the command still checks TCP, says HTTP/3 was not reached, and
// does not fail (the dial is refused at once: Q-33).
func TestFingerprintNoUDP(t *testing.T) {
	echoNoUDP = true
	defer func() { echoNoUDP = false }()
	var out bytes.Buffer
	start := time.Now()
	ok, err := runFingerprint(context.Background(), mustLookup(t, "chrome156-linux"), &out)
	if err != nil || !ok {
		t.Fatalf("%v %v:\n%s", ok, err, out.String())
	}
	if o := out.String(); !strings.Contains(o, "HTTP/3: not reached") || strings.Contains(o, " over h3\n") || !strings.Contains(o, ": all match") {
		t.Fatalf("output:\n%s", o)
	}
	if el := time.Since(start); el > h3Timeout {
		t.Errorf("took %v", el)
	}
}

func mustLookup(t *testing.T, name string) *profile.Profile {
	t.Helper()
	p, err := profile.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestFingerprintFileWithoutReference checks an embedded profile's file
// loaded as a user's would be: every row, HTTP/3 included, matches, and
// the output says the file has no recorded reference.
func TestFingerprintFileWithoutReference(t *testing.T) {
	for _, name := range []string{"chrome156-linux", "firefox153-linux"} {
		p, err := profile.Load(filepath.Join("..", "..", "profile", "data", name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		ok, err := runFingerprint(context.Background(), p, &out)
		if err != nil {
			t.Fatal(err)
		}
		if o := out.String(); !ok || !strings.Contains(o, "without a recorded reference") || !strings.Contains(o, ": all match") || !strings.Contains(o, " over h3\n") {
			t.Fatalf("%s:\n%s", name, o)
		}
	}
}
