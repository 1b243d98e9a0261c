package bench_test

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/guise-http/guise/bench/internal/peer"
)

// peerEnv, when set to 1, makes the test binary the benchmark server.
const peerEnv = "GUISE_BENCH_PEER"

// server is the benchmark server, a child process: this test binary
// re-executed with peerEnv=1, so its CPU time and allocations are not the
// client's.
var server *peer.Proc

// leakOptions ignores fasthttp's cleaner goroutines: fasthttp.Client starts
// them per host (and its default dialer one per process) and they end by
// themselves long after the last connection, with no way to stop them.
var leakOptions = []goleak.Option{
	goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*Client).mCleaner"),
	goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*HostClient).connsCleaner"),
	goleak.IgnoreAnyFunction("github.com/valyala/fasthttp.(*TCPDialer).tcpAddrsClean"),
}

func TestMain(m *testing.M) {
	if os.Getenv(peerEnv) == "1" {
		if err := peer.Run(nil, os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "peer:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	p, err := peer.Spawn(os.Args[0], nil, []string{peerEnv + "=1"})
	if err != nil {
		fmt.Fprintln(os.Stderr, "start benchmark server:", err)
		os.Exit(1)
	}
	server = p
	code := m.Run()
	if err := p.Stop(); err != nil && code == 0 {
		fmt.Fprintln(os.Stderr, "stop benchmark server:", err)
		code = 1
	}
	if code == 0 {
		if err := goleak.Find(leakOptions...); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
