// Package testpeer holds the peers tests talk to, and the certificates
// they present. It is imported by tests only.
//
//   - Certificates: one test CA (SharedCA) issues every server certificate
//     (Localhost, NewCert); Cert gives a tls.Config for servers, Roots for
//     clients and PEM files for daemons. NewCA makes another CA, for tests
//     that need a chain refused.
//   - Scripted peers: Listen, ListenTLS and Serve run a script on every
//     connection a loopback listener accepts, and wait for the scripts when
//     the test ends.
//   - H2Server: a minimal, allocation-free HTTP/2 server for benchmarks and
//     allocation budgets.
//   - Real programs (nginx, squid, dante, nghttpd, chromium, ...): Need finds
//     them, and Nginx, Squid, Dante and StartDaemon run them.
//
// A test that needs a real program calls Need. When the program is not installed the
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
