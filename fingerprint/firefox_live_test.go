package fingerprint

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// firefoxProfile makes a Firefox profile in a new temporary directory
// that trusts the echo server's CA (ca, PEM) through certutil and carries
// the live tests' preferences (firefoxPrefs); it returns the directory,
// Firefox's HOME, and the profile within it.
func firefoxProfile(t *testing.T, certutil string, ca []byte) (dir, prof string) {
	t.Helper()
	dir = t.TempDir()
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, ca, 0o644); err != nil {
		t.Fatal(err)
	}
	prof = filepath.Join(dir, "profile")
	if err := os.Mkdir(prof, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"-N", "-d", "sql:" + prof, "--empty-password"},
		{"-A", "-n", "guise-echo", "-t", "C,,", "-i", caFile, "-d", "sql:" + prof},
	} {
		if out, err := exec.Command(certutil, args...).CombinedOutput(); err != nil {
			t.Fatalf("certutil %v: %v\n%s", args, err, out)
		}
	}
	if err := os.WriteFile(filepath.Join(prof, "user.js"), []byte(firefoxPrefs), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, prof
}
