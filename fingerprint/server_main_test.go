package fingerprint

import (
	"os"
	"strings"
	"syscall"
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks, for the whole package, that no test leaves a goroutine
// behind (the echo server's Close must wait for all of its own). Go's
// HTTP/2 server announces SETTINGS_ENABLE_CONNECT_PROTOCOL (RFC 8441),
// which a browser needs to send a WebSocket over h2, only when the process
// starts with GODEBUG=http2xconnect=1: the test binary runs itself again
// with it.
func TestMain(m *testing.M) {
	if g := os.Getenv("GODEBUG"); !strings.Contains(g, "http2xconnect=1") {
		if self, err := os.Executable(); err == nil {
			env := append(os.Environ(), "GODEBUG="+strings.TrimPrefix(g+",http2xconnect=1", ","))
			syscall.Exec(self, os.Args, env)
		}
	}
	goleak.VerifyTestMain(m)
}
