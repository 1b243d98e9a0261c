package bench_test

import (
	"context"
	"strings"
	"testing"

	"github.com/guise-http/guise/bench/harness"
)

// BenchmarkScenarios runs every scenario with every client against the
// benchmark server in its own process: b.N requests per client, spread over
// the scenario's workers. Metrics: ns/op and allocs/op (this process
// only), req/s, MB/s for payload scenarios, CPU µs/op (getrusage of this
// process) and conns (TCP connections the server accepted for the run,
// the warm-up request included).
//
// Compare clients within one scenario; for alternating rounds and medians
// use `go run ./compare`.
func BenchmarkScenarios(b *testing.B) {
	ctx := context.Background()
	cc := harness.NewConnCounter(server.URL)
	defer cc.Close()
	for _, sc := range harness.Scenarios() {
		b.Run(sc.Name, func(b *testing.B) {
			for _, name := range harness.Names {
				b.Run(strings.ReplaceAll(name, "/", ""), func(b *testing.B) {
					benchOne(ctx, b, &sc, name, cc)
				})
			}
		})
	}
}

func benchOne(ctx context.Context, b *testing.B, sc *harness.Scenario, name string, cc *harness.ConnCounter) {
	c, err := harness.New(name, harness.Config{Conns: sc.Conc})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	before, err := cc.Accepted()
	if err != nil {
		b.Fatal(err)
	}
	// One unmeasured request per worker opens the connections.
	if _, err := harness.Round(ctx, c, sc, server.URL, 0, sc.Conc, nil); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	s, err := harness.Round(ctx, c, sc, server.URL, 0, b.N, nil)
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	if s.Ops != int64(b.N) {
		b.Fatalf("%d requests done, want %d", s.Ops, b.N)
	}
	after, err := cc.Accepted()
	if err != nil {
		b.Fatal(err)
	}
	// Round collects garbage before it starts: report its own wall time
	// per request rather than the timer's.
	b.ReportMetric(float64(s.Wall.Nanoseconds())/float64(b.N), "ns/op")
	b.ReportMetric(float64(s.Ops)/s.Wall.Seconds(), "req/s")
	if sc.Bytes {
		// From the bytes moved, not a size per request: a paired
		// scenario's requests alternate two sizes.
		b.ReportMetric(float64(s.Bytes)/1e6/s.Wall.Seconds(), "MB/s")
	}
	b.ReportMetric(s.CPUPerOp(), "cpu-µs/op")
	b.ReportMetric(float64(after-before), "conns")
}
