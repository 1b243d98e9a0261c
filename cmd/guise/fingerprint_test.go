package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestFingerprintCommand runs the README's main job for the two recorded
// browsers and requires every row to match the recording.
func TestFingerprintCommand(t *testing.T) {
	for _, name := range []string{"chrome", "firefox"} {
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
	}
}
