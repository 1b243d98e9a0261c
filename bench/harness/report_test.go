package harness

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func sample(ops int64, wall time.Duration, cpu time.Duration, mallocs uint64, bytes int64) Sample {
	return Sample{Ops: ops, Wall: wall, CPU: cpu, Mallocs: mallocs, Bytes: bytes, ServerCPU: -1}
}

func TestMarkdown(t *testing.T) {
	small := Scenario{Name: "small-c1", Conc: 1, Want: 100}
	up32 := Scenario{Name: "upload-32m", Conc: 1, Upload: Upload32M, Bytes: true}
	up64 := Scenario{Name: "upload-scaling", Conc: 1, Upload: Upload64M, Bytes: true, Paired: true}
	paired := func(n32 int64, t32 time.Duration, n64 int64, t64 time.Duration) Sample {
		s := sample(n32+n64, t32+t64, time.Second, 10, n32*Upload32M+n64*Upload64M)
		s.Sizes = [2]SizeTime{{n32, t32}, {n64, t64}}
		return s
	}
	fb := Scenario{Name: "first-byte-close", Conc: 4, Mode: FirstByte, Want: 1, Count: 10000}
	results := []Result{
		{Scenario: small, Client: "guise", Conns: 1, Samples: []Sample{
			sample(2000, time.Second, 20*time.Millisecond, 16000, 0),
			sample(1000, time.Second, 10*time.Millisecond, 8000, 0), // median
			sample(500, time.Second, 5*time.Millisecond, 4000, 0),
		}},
		{Scenario: small, Client: "net/http", Conns: 1, Samples: []Sample{
			{Ops: 500, Wall: time.Second, CPU: 20 * time.Millisecond, Mallocs: 20000, ServerCPU: 30 * time.Millisecond},
		}},
		{Scenario: small, Client: "tls-client", Err: errors.New("boom | bad")},
		{Scenario: up32, Client: "guise", Conns: 1, Samples: []Sample{sample(10, time.Second, time.Second, 10, 10*Upload32M)}},
		{Scenario: up64, Client: "guise", Conns: 1, Samples: []Sample{paired(4, 400*time.Millisecond, 4, time.Second)}}, // 2.5
		{Scenario: up32, Client: "net/http", Conns: 1, Samples: []Sample{sample(10, time.Second, time.Second, 10, 10*Upload32M)}},
		{Scenario: up64, Client: "net/http", Conns: 1, Samples: []Sample{
			paired(5, 500*time.Millisecond, 5, time.Second),          // 2.0
			paired(2, 200*time.Millisecond, 2, 360*time.Millisecond), // 1.8
			paired(3, 300*time.Millisecond, 3, 900*time.Millisecond), // 3.0
			paired(1, 100*time.Millisecond, 0, 0),                    // no pair: left out
		}},
		{Scenario: fb, Client: "guise", Conns: 4, Samples: []Sample{sample(5000, time.Second, 0, 0, 5000), sample(5000, time.Second, 0, 0, 5000)}},
	}
	var b strings.Builder
	if err := Markdown(&b, Meta{Command: "go run ./compare", Date: time.Date(2026, 11, 29, 23, 5, 0, 0, time.UTC), Rounds: 3}, results); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"command: `go run ./compare`",
		"2026-11-29 23:05 UTC",
		// guise: median 1000 req/s = 2× net/http's 500; 10 µs vs 40 µs;
		// 8 allocs vs 40.
		"| small-c1 | guise | 1000 req/s | 500–2000 | 2.00 | 10.0 | 0.25 | 8.0 | 0.20 | 1 (1) | – |",
		"| small-c1 | net/http | 500 req/s | 500–500 | 1.00 | 40.0 | 1.00 | 40.0 | 1.00 | 1 (1) | 60.0 |",
		`| small-c1 | tls-client | error: boom \| bad |`,
		"| upload-32m | guise | 336 MB/s | 336–336 | 1.00 |",
		"- guise: 2.50, TOO HIGH (> 2.2); rounds 2.50–2.50",
		"- net/http: 2.00, ok (<= 2.2); rounds 1.80–3.00",
		"- guise: 4 connections for 10000 requests, pool size 4",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}
