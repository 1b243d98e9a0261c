package guise

import (
	"os"
	"strings"
	"syscall"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// Go's HTTP/2 server announces SETTINGS_ENABLE_CONNECT_PROTOCOL (RFC
	// 8441), which the WebSocket tests need, only when the process starts
	// with this GODEBUG: the test binary runs itself again with it.
	if g := os.Getenv("GODEBUG"); !strings.Contains(g, "http2xconnect=1") {
		if self, err := os.Executable(); err == nil {
			env := append(os.Environ(), "GODEBUG="+strings.TrimPrefix(g+",http2xconnect=1", ","))
			syscall.Exec(self, os.Args, env)
		}
	}
	goleak.VerifyTestMain(m)
}
