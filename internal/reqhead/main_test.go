package reqhead

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if any goroutine outlives them
// (RELIABILITY L-01).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
