package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/guise-http/guise/profile"
)

// TestFingerprintCommand runs the README's main job for every profile and
// requires every row to match the profile's recording.
func TestFingerprintCommand(t *testing.T) {
	for _, name := range profile.Names() {
		var out bytes.Buffer
		ok, err := runFingerprint(context.Background(), name, &out)
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
