package quic

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks no test leaves a goroutine behind: tlsfp's QUIC
// handshake runs one until Close.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
