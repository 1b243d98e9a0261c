//go:build cgo

package main

import (
	"testing"

	"go.uber.org/goleak"
)

// Idle workers (spawn.go) exit by themselves a second after their last
// work.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("main.idle")) }
