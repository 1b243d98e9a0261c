// Package testpeer finds the real programs (nginx, squid, chromium, ...) that
// integration tests run as peers on loopback.
//
// A test that needs a peer calls Need. When the program is not installed the
// test is skipped with a message naming the Debian package, unless the
// environment variable GUISE_REQUIRE_PEERS is set to 1 (as .ci/run does), in
// which case the test fails: CI never passes by skipping.
package testpeer

import (
	"os"
	"os/exec"
	"testing"
)

// RequireEnv is the environment variable that turns a missing peer from a
// skip into a failure.
const RequireEnv = "GUISE_REQUIRE_PEERS"

// Required reports whether missing peers are failures rather than skips.
func Required() bool { return os.Getenv(RequireEnv) == "1" }

// Need returns the path of program, looked up in PATH and then in the
// directories Debian installs daemons to. If it is missing, Need skips the
// test (or fails it when Required), naming pkg, the Debian package that
// provides it.
func Need(t testing.TB, program, pkg string) string {
	t.Helper()
	if p, err := exec.LookPath(program); err == nil {
		return p
	}
	for _, dir := range []string{"/usr/sbin/", "/sbin/", "/usr/bin/", "/usr/lib/chromium/"} {
		if st, err := os.Stat(dir + program); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return dir + program
		}
	}
	Missing(t, program+" is not installed (apt-get install "+pkg+")")
	return ""
}

// Missing skips the test with why, or fails it when Required.
func Missing(t testing.TB, why string) {
	t.Helper()
	if Required() {
		t.Fatalf("%s; %s=1 makes this a failure", why, RequireEnv)
	}
	t.Skip(why)
}
