package fingerprint

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks, for the whole package, that no test leaves a goroutine
// behind (the echo server's Close must wait for all of its own).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
