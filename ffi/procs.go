//go:build cgo

package main

import (
	"os"
	"runtime"
)

// A host's thread that has called into guise keeps a P while it is back in
// the host (the runtime treats the time between calls as a system call,
// and sysmon takes the P back only after 20 µs or more). With GOMAXPROCS 1
// (one CPU, or a CPU affinity of one) Go's own goroutines, the requests,
// then had no P: each waited for sysmon to take the host's, and the host
// thread then blocked for a P on its next call. Two Ps leave one for the
// requests. The Node binding under taskset -c 1, keep-alive GETs at c16:
// 33 to 28 µs of CPU per request and twice the requests per second. With
// more CPUs one P more than the default did not pay: on 2 CPUs, 3 Ps gave
// the same keep-alive figures and about 10% more CPU per request where each
// request makes a TLS handshake (more spinning threads and GC workers
// competing for the 2 CPUs). An explicit GOMAXPROCS is left alone.
// (Measured 2026-12-02; see bindings/node/bench/README.md.)
func init() {
	if os.Getenv("GOMAXPROCS") == "" && runtime.GOMAXPROCS(0) < 2 {
		runtime.GOMAXPROCS(2)
	}
}
