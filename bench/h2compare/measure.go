package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// scenario is one workload every client of its kind runs in turns.
type scenario struct {
	name  string
	about string
	path  string // file on the server
	want  int64  // body length
	conc  int    // goroutines
	rate  bool   // report MB/s rather than requests/s
	specs func() []clientSpec
}

func scenarios() []scenario {
	return []scenario{
		{"h2-small-c16", "16 goroutines GET the 100-byte file; pooled clients, one h2 connection each", "/small", smallSize, 16, false, keptSpecs},
		{"h2-download-8m", "1 goroutine downloads the 8 MiB file again and again; pooled clients", "/big", bigSize, 1, true, keptSpecs},
		{"isolated-https-c1", "1 goroutine GETs the 100-byte file, each on a new TCP+TLS connection", "/small", smallSize, 1, false, isolatedSpecs},
		{"isolated-https-c4", "4 goroutines GET the 100-byte file, each on a new TCP+TLS connection", "/small", smallSize, 4, false, isolatedSpecs},
	}
}

// sample is what one client did in one turn.
type sample struct {
	ops     int64
	bytes   int64
	wall    time.Duration
	cpu     time.Duration // user+system CPU of this process
	mallocs uint64
	// srvCPU is the server process's user+system CPU over the turn, valid
	// when srvOK (the zero value: not measured).
	srvCPU time.Duration
	srvOK  bool
	// external: cpu is another process's (a client outside Go measured
	// itself) and mallocs is unknown.
	external bool
}

func (s sample) perSec(bytes bool) float64 {
	if s.wall <= 0 {
		return 0
	}
	if bytes {
		return float64(s.bytes) / 1e6 / s.wall.Seconds()
	}
	return float64(s.ops) / s.wall.Seconds()
}

func (s sample) cpuPerOp() float64 {
	if s.ops == 0 {
		return 0
	}
	return float64(s.cpu.Nanoseconds()) / 1e3 / float64(s.ops)
}

// srvCPUPerOp returns the server's CPU µs per request, and false when the
// turn did not measure it or made no request.
func (s sample) srvCPUPerOp() (float64, bool) {
	if !s.srvOK || s.ops == 0 {
		return 0, false
	}
	return float64(s.srvCPU.Nanoseconds()) / 1e3 / float64(s.ops), true
}

func (s sample) allocsPerOp() float64 {
	if s.external {
		return -1
	}
	if s.ops == 0 {
		return 0
	}
	return float64(s.mallocs) / float64(s.ops)
}

// turn runs sc with c for d (at least one request per goroutine) and
// measures it. It collects garbage first so that an earlier client's
// garbage is not collected on this one's time. srvCPU, if not nil, returns
// the server process's CPU time so far; it is read before and after the
// requests, and the sample's server CPU is valid only when both readings
// succeed.
func turn(ctx context.Context, c client, sc *scenario, base string, d time.Duration, srvCPU func() (time.Duration, error)) (sample, string, error) {
	url := base + sc.path
	runtime.GC()
	if tr, ok := c.(turnRunner); ok {
		var srv0 time.Duration
		srvErr := errNoServerCPU
		if srvCPU != nil {
			srv0, srvErr = srvCPU()
		}
		s, err := tr.runTurn(ctx, sc, url, d)
		if srvErr == nil {
			if srv1, err := srvCPU(); err == nil {
				s.srvCPU, s.srvOK = srv1-srv0, true
			}
		}
		return s, "", err
	}
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	var srv0 time.Duration
	srvErr := errNoServerCPU
	if srvCPU != nil {
		srv0, srvErr = srvCPU()
	}
	cpu0 := cpuTime()
	start := time.Now()
	deadline := start.Add(d)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var ops, moved atomic.Int64
	var once sync.Once
	var firstErr error
	var proto atomic.Value
	var wg sync.WaitGroup
	for range sc.conc {
		wg.Go(func() {
			for ctx.Err() == nil {
				n, p, err := c.get(ctx, url)
				if err == nil && n != sc.want {
					err = fmt.Errorf("read %d body bytes, want %d", n, sc.want)
				}
				if err != nil {
					once.Do(func() { firstErr = err; cancel() })
					return
				}
				if proto.Load() == nil { // boxing p allocates: once only
					proto.CompareAndSwap(nil, p)
				}
				ops.Add(1)
				moved.Add(n)
				if !time.Now().Before(deadline) {
					return
				}
			}
		})
	}
	wg.Wait()
	var s sample
	s.wall = time.Since(start)
	s.cpu = cpuTime() - cpu0
	if srvErr == nil {
		if srv1, err := srvCPU(); err == nil {
			s.srvCPU, s.srvOK = srv1-srv0, true
		}
	}
	runtime.ReadMemStats(&ms1)
	s.mallocs = ms1.Mallocs - ms0.Mallocs
	s.ops, s.bytes = ops.Load(), moved.Load()
	p, _ := proto.Load().(string)
	return s, p, firstErr
}

// errNoServerCPU stands for a server CPU reading not taken.
var errNoServerCPU = errors.New("h2compare: server CPU not measured")

// cpuTime returns the user+system CPU time of this process.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// result is one client's medians over the rounds of one scenario.
type result struct {
	spec    clientSpec
	rounds  int
	rate    float64 // requests/s or MB/s
	cpu     float64 // µs per request
	srvCPU  float64 // server's CPU µs per request, valid when srvOK
	srvOK   bool    // every round measured the server's CPU
	allocs  float64 // per request
	ops     int64   // requests in all measured turns
	dials   int64   // connections opened over warm-up and all turns, -1 unknown
	total   int64   // requests over warm-up and all turns
	proto   string
	err     error
	samples []sample
}

// runScenario builds sc's clients, has each make one request alone and
// then an unmeasured warm-up turn,
// then runs rounds in which every client takes one turn of d, the order
// rotated by one each round. A client that fails is dropped from later
// turns and reported with its error. srvCPU, if not nil, reads the server
// process's CPU time, which each turn then measures too.
func runScenario(ctx context.Context, sc *scenario, base string, mk func(clientSpec) (client, error), rounds int, d, warmup time.Duration, srvCPU func() (time.Duration, error), progress io.Writer) []*result {
	specs := sc.specs()
	res := make([]*result, len(specs))
	clients := make([]client, len(specs))
	for i, sp := range specs {
		res[i] = &result{spec: sp, dials: -1}
		c, err := mk(sp)
		if err != nil {
			res[i].err = err
			continue
		}
		clients[i] = c
	}
	defer func() {
		for _, c := range clients {
			if c != nil {
				c.close()
			}
		}
	}()
	record := func(i int, d time.Duration, measured bool) {
		c := clients[i]
		if c == nil || res[i].err != nil || ctx.Err() != nil {
			return
		}
		s, p, err := turn(ctx, c, sc, base, d, srvCPU)
		res[i].total += s.ops
		if res[i].proto == "" {
			res[i].proto = p
		}
		if err != nil {
			res[i].err = err
			return
		}
		if measured {
			res[i].samples = append(res[i].samples, s)
			if progress != nil {
				srv := "–"
				if v, ok := s.srvCPUPerOp(); ok {
					srv = fmt.Sprintf("%.1f", v)
				}
				fmt.Fprintf(progress, "%s %-24s %10.1f %s %8.1f µs/req %7.1f allocs/req, server %s µs/req\n",
					sc.name, specs[i].name, s.perSec(sc.rate), unit(sc.rate), s.cpuPerOp(), s.allocsPerOp(), srv)
			}
		}
	}
	// One request alone first, so that the concurrent turns find the
	// connection made: cold, guise (like net/http) dials one connection per
	// concurrent request before ALPN is known.
	for i, c := range clients {
		if c == nil || ctx.Err() != nil {
			continue
		}
		if _, ok := c.(turnRunner); ok {
			continue // its warm-up turn makes its connection
		}
		_, p, err := c.get(ctx, base+sc.path)
		res[i].total++
		res[i].proto = p
		if err != nil {
			res[i].err = fmt.Errorf("first request: %w", err)
		}
	}
	if warmup > 0 {
		for i := range specs {
			record(i, warmup, false)
		}
	}
	for r := range rounds {
		for k := range specs {
			record((k+r)%len(specs), d, true)
		}
	}
	for i, c := range clients {
		if c == nil {
			continue
		}
		res[i].dials = c.dials()
		s := res[i].samples
		res[i].rounds = len(s)
		if len(s) == 0 {
			continue
		}
		res[i].rate = median(s, func(x sample) float64 { return x.perSec(sc.rate) })
		res[i].cpu = median(s, sample.cpuPerOp)
		res[i].allocs = median(s, sample.allocsPerOp)
		res[i].srvCPU, res[i].srvOK = srvMedian(s)
		for _, x := range s {
			res[i].ops += x.ops
		}
	}
	return res
}

// median returns the median of f over s (the mean of the middle two for
// an even count); 0 for none.
func median(s []sample, f func(sample) float64) float64 {
	if len(s) == 0 {
		return 0
	}
	v := make([]float64, len(s))
	for i, x := range s {
		v[i] = f(x)
	}
	slices.Sort(v)
	m := len(v) / 2
	if len(v)%2 == 1 {
		return v[m]
	}
	return (v[m-1] + v[m]) / 2
}

// srvMedian returns the median of the server's CPU µs per request over s,
// and false when s is empty or any sample lacks it.
func srvMedian(s []sample) (float64, bool) {
	for _, x := range s {
		if _, ok := x.srvCPUPerOp(); !ok {
			return 0, false
		}
	}
	if len(s) == 0 {
		return 0, false
	}
	return median(s, func(x sample) float64 { v, _ := x.srvCPUPerOp(); return v }), true
}

func unit(bytes bool) string {
	if bytes {
		return "MB/s"
	}
	return "req/s"
}
