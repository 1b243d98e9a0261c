// Package wsbench compares guise's WebSocket client with coder/websocket's
// and gorilla/websocket's (both over net/http's dialer): an echo of 1 KiB
// text messages on one connection, against one loopback echo server of
// coder/websocket without compression in a child process on CPU 0, so the
// three clients talk to the same peer and the client's CPU (getrusage of
// its own process) is its own. Alternating rounds, the client on CPU 1:
//
//	for i in 1 2 3 4 5; do for c in Guise Coder Gorilla; do
//	  taskset -c 1 go test -run XXX -bench "Echo$c\$" -benchtime 10000x ./wsbench
//	done; done
package wsbench

import (
	"bytes"
	"context"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	gorilla "github.com/gorilla/websocket"
	"github.com/guise-http/guise"
	"github.com/guise-http/guise/bench/internal/peer"
	"github.com/guise-http/guise/bench/internal/pin"
)

// echoServer starts the echo server (TestMain's serve) in a child process
// on CPU 0, and returns its ws:// URL. Run the benchmarks under taskset -c
// 1 so that the client has the other core.
func echoServer(b *testing.B) string {
	if cpus := pin.Current(); len(cpus) != 1 || cpus[0] != 1 {
		b.Logf("the client runs on CPUs %v, not 1 alone: run under taskset -c 1", cpus)
	}
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	p, err := peer.SpawnOn(exe, nil, []string{serverEnv + "=1"}, []int{0})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { p.Stop() })
	return strings.Replace(p.URL, "http", "ws", 1)
}

var msg = bytes.Repeat([]byte("x"), 1024)

// cpu is the client process's user and system CPU time (the server is
// another process).
func cpu() (user, sys time.Duration) {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
}

type cpuStart struct{ user, sys time.Duration }

func startCPU() cpuStart {
	u, s := cpu()
	return cpuStart{u, s}
}

// report gives the client's CPU per message (one message written and its
// echo read), and its user and system parts.
func report(b *testing.B, start cpuStart) {
	u, s := cpu()
	n := float64(b.N)
	b.ReportMetric(float64(u-start.user+s-start.sys)/n, "cpu-ns/msg")
	b.ReportMetric(float64(u-start.user)/n, "user-ns/msg")
	b.ReportMetric(float64(s-start.sys)/n, "sys-ns/msg")
}

func BenchmarkEchoGuise(b *testing.B) {
	u := echoServer(b)
	ctx := context.Background()
	c, err := guise.DialWebSocket(ctx, u+"/", &guise.WebSocketOptions{PingInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close(guise.CloseNormal, "")
	b.ReportAllocs()
	b.ResetTimer()
	start := startCPU()
	for range b.N {
		if err := c.Write(ctx, guise.MessageText, msg); err != nil {
			b.Fatal(err)
		}
		if _, p, err := c.Read(ctx); err != nil || len(p) != len(msg) {
			b.Fatal(err)
		}
	}
	report(b, start)
}

func BenchmarkEchoCoder(b *testing.B) {
	u := echoServer(b)
	ctx := context.Background()
	c, _, err := websocket.Dial(ctx, u+"/", nil)
	if err != nil {
		b.Fatal(err)
	}
	defer c.CloseNow()
	b.ReportAllocs()
	b.ResetTimer()
	start := startCPU()
	for range b.N {
		if err := c.Write(ctx, websocket.MessageText, msg); err != nil {
			b.Fatal(err)
		}
		if _, p, err := c.Read(ctx); err != nil || len(p) != len(msg) {
			b.Fatal(err)
		}
	}
	report(b, start)
}

func BenchmarkEchoGorilla(b *testing.B) {
	u := echoServer(b)
	c, _, err := gorilla.DefaultDialer.Dial(u+"/", nil)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	b.ReportAllocs()
	b.ResetTimer()
	start := startCPU()
	for range b.N {
		if err := c.WriteMessage(gorilla.TextMessage, msg); err != nil {
			b.Fatal(err)
		}
		if _, p, err := c.ReadMessage(); err != nil || len(p) != len(msg) {
			b.Fatal(err)
		}
	}
	report(b, start)
}
