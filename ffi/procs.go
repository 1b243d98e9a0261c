package main

import (
	"os"
	"runtime"
)

// A host's thread that has called into guise keeps a P while it is back in
// the host (the runtime treats the time between calls as a system call), so
// with GOMAXPROCS at the number of CPUs, Go's own goroutines (the requests)
// have one P fewer than the machine has CPUs: with one CPU, none, and
// every request then waited for sysmon to take the host thread's P back
// (20 µs or more), the host thread blocking for a P on its next call. One
// P more than the default is for the host's thread. The Node binding on
// one CPU (taskset -c 1), keep-alive GETs at c16: 33 to 28 µs of CPU per
// request and twice the requests per second (2026-12-02). An explicit
// GOMAXPROCS is left alone.
func init() {
	if os.Getenv("GOMAXPROCS") == "" {
		runtime.GOMAXPROCS(runtime.GOMAXPROCS(0) + 1)
	}
}
