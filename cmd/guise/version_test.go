package main

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/guise-http/guise/internal/version"
)

func TestVersionCmd(t *testing.T) {
	run := func(args ...string) string {
		cmd := newRootCmd()
		var out bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetArgs(args)
		if err := cmd.Execute(); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	if got := run("version", "--short"); got != version.Version+"\n" {
		t.Errorf("version --short = %q, want %q", got, version.Version+"\n")
	}
	s := run("version")
	for _, want := range []string{
		"guise " + version.Version + " (C ABI 1)\n", "chrome 156", "firefox 153", "safari 18", "go       go1.",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("version output lacks %q:\n%s", want, s)
		}
	}
	if !regexp.MustCompile(`(?m)^(commit   ([0-9a-f]{40}|unknown)|module   v)`).MatchString(s) {
		t.Errorf("version output names no commit or module version:\n%s", s)
	}
}

// TestVersionStamped checks that the version in the Python and Node
// packages' sources is internal/version's (go generate writes them; this
// catches a hand edit, and a run of the tests before go generate).
func TestVersionStamped(t *testing.T) {
	for file, want := range map[string]string{
		"../../bindings/python/guise/_version.py": `__version__ = "` + version.Version + `"`,
		"../../bindings/node/version.js":          `version: '` + version.Version + `'`,
		"../../bindings/node/package.json":        `"version": "` + version.Version + `"`,
	} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %s: run go generate .", file, want)
		}
	}
	// The README's install lines name the artifacts of this version.
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range regexp.MustCompile(`guise-(\d+\.\d+\.\d+)`).FindAllStringSubmatch(string(b), -1) {
		if m[1] != version.Version {
			t.Errorf("README.md names %s; the version is %s", m[0], version.Version)
		}
	}
}
