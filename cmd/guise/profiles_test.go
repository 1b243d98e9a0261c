package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestProfilesCmd(t *testing.T) {
	cmd := newRootCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"profiles"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{
		"NAME", "chrome156-linux (default)", "firefox153-linux", "chrome156-windows", "safari26-macos", "safari26-ios",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		switch {
		case strings.HasPrefix(line, "edge156-windows"):
			if !strings.Contains(line, "derived from chrome156-linux") || !strings.Contains(line, "edge") {
				t.Errorf("edge line %q", line)
			}
		case strings.HasPrefix(line, "chrome156-android"):
			if !strings.Contains(line, "derived from chrome156-linux") || !strings.Contains(line, "android") {
				t.Errorf("android line %q", line)
			}
		case strings.HasPrefix(line, "safari18-ios"):
			if !strings.Contains(line, "public facts") {
				t.Errorf("safari line %q", line)
			}
		case strings.HasPrefix(line, "safari26-ios"), strings.HasPrefix(line, "safari26-macos"):
			if !strings.Contains(line, "public facts") || !strings.Contains(line, "26") {
				t.Errorf("safari 26 line %q", line)
			}
		case strings.HasPrefix(line, "firefox153-linux"):
			if !strings.Contains(line, "recorded") || !strings.Contains(line, "153") || !strings.Contains(line, "linux") {
				t.Errorf("firefox line %q", line)
			}
		}
	}
}
