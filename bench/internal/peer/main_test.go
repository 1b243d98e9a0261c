package peer

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks for leaked goroutines. fasthttp's worker-pool cleaner
// sleeps up to 10s before it sees the server stopped; it ends by itself.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*workerPool).Start.func2"))
}
