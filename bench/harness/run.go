package harness

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Sample is what one client did in one round.
type Sample struct {
	Ops   int64         // requests completed
	Bytes int64         // payload bytes moved (uploaded or body bytes read)
	Wall  time.Duration // elapsed time
	CPU   time.Duration // user+system CPU time of this process
	// ServerCPU is the server process's CPU time over the turn, when the
	// caller measured it (Options.ServerCPU); 0 or -1 otherwise.
	ServerCPU time.Duration
	Mallocs   uint64 // heap allocations of this process
	Conns     int64  // TCP connections the server accepted (-1: unknown)
	// External says CPU is another process's (a client outside Go that
	// measured itself) and Mallocs is unknown.
	External bool
	// Sizes are, for a Paired scenario, the requests and their time of
	// the smaller size [0] and the larger [1].
	Sizes [2]SizeTime
}

// SizeTime is the number of requests of one size and the time they took.
type SizeTime struct {
	Ops  int64
	Time time.Duration
}

// PairRatio returns, for a Paired scenario's sample, the time per request
// of the larger size over that of the smaller, 0 when either is missing.
func (s Sample) PairRatio() float64 {
	a, b := s.Sizes[0], s.Sizes[1]
	if a.Ops == 0 || b.Ops == 0 || a.Time == 0 {
		return 0
	}
	return (b.Time.Seconds() / float64(b.Ops)) / (a.Time.Seconds() / float64(a.Ops))
}

// CPUPerOp returns the CPU time per request in microseconds.
func (s Sample) CPUPerOp() float64 {
	if s.Ops == 0 {
		return 0
	}
	return float64(s.CPU.Microseconds()) / float64(s.Ops)
}

// AllocsPerOp returns the allocations per request, -1 when unknown
// (External).
func (s Sample) AllocsPerOp() float64 {
	if s.External {
		return -1
	}
	if s.Ops == 0 {
		return 0
	}
	return float64(s.Mallocs) / float64(s.Ops)
}

// Rate returns requests per second, or MB/s (10^6 bytes) of payload when
// bytes is true.
func (s Sample) Rate(bytes bool) float64 {
	sec := s.Wall.Seconds()
	if sec == 0 {
		return 0
	}
	if bytes {
		return float64(s.Bytes) / 1e6 / sec
	}
	return float64(s.Ops) / sec
}

// Round runs sc against base with c, either until d has elapsed (when
// count is 0) or for exactly count requests, and measures it. conns, if
// not nil, reports the server's accepted-connection count. Round collects
// garbage before it starts so that one client's garbage is not collected
// on another's time.
func Round(ctx context.Context, c Client, sc *Scenario, base string, d time.Duration, count int, conns func() (int64, error)) (Sample, error) {
	url := base + sc.Path
	if sc.Paired && (sc.Conc != 1 || sc.Upload < 2) {
		return Sample{}, fmt.Errorf("harness: %s: a paired scenario needs one worker and an upload", sc.Name)
	}
	var bodies [2][]byte // the smaller size's, for Paired, and Upload's
	var wants [2]string
	if sc.Upload > 0 {
		bodies[1], wants[1] = uploadBody(sc.Upload), strconv.Itoa(sc.Upload)
		if sc.Paired {
			bodies[0], wants[0] = uploadBody(sc.Upload/2), strconv.Itoa(sc.Upload/2)
		}
	}
	var sizes [2]SizeTime
	runtime.GC()
	if tr, ok := c.(turnRunner); ok {
		return externalRound(ctx, tr, sc, url, d, count, conns)
	}

	var s Sample
	c0 := int64(-1)
	if conns != nil {
		n, err := conns()
		if err != nil {
			return s, err
		}
		c0 = n
	}
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	cpu0 := cpuTime()
	start := time.Now()

	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var stop atomic.Bool
	if count == 0 {
		t := time.AfterFunc(d, func() { stop.Store(true) })
		defer t.Stop()
	}
	var claimed atomic.Int64
	var ops, moved atomic.Int64
	var once sync.Once
	var firstErr error
	var wg sync.WaitGroup
	for range sc.Conc {
		wg.Go(func() {
			var n, b int64
			defer func() { ops.Add(n); moved.Add(b) }()
			for {
				size := 1
				if sc.Paired {
					size = int(n % 2) // the smaller first
				}
				if count > 0 {
					if claimed.Add(1) > int64(count) {
						return
					}
				} else if stop.Load() && (!sc.Paired || size == 0) { // a pair is not cut
					return
				}
				if ctx.Err() != nil {
					return
				}
				t0 := time.Now()
				k, err := one(ctx, c, sc, url, bodies[size], wants[size])
				if err != nil {
					once.Do(func() { firstErr = err; cancel() })
					return
				}
				if sc.Paired { // one worker: no other goroutine writes sizes
					sizes[size].Ops++
					sizes[size].Time += time.Since(t0)
				}
				n++
				b += k
			}
		})
	}
	wg.Wait()
	s.Wall = time.Since(start)
	s.CPU = cpuTime() - cpu0
	runtime.ReadMemStats(&ms1)
	s.Mallocs = ms1.Mallocs - ms0.Mallocs
	s.Ops = ops.Load()
	s.Bytes = moved.Load()
	s.Sizes = sizes
	s.Conns = -1
	if firstErr != nil {
		return s, firstErr
	}
	if err := parent.Err(); err != nil {
		// Cancelled, maybe before the first request (workers then stop
		// without one failing): the round is not a measurement.
		return s, err
	}
	if conns != nil {
		n, err := conns()
		if err != nil {
			return s, err
		}
		s.Conns = n - c0
	}
	return s, nil
}

// externalRound is Round for a client that runs its turns itself.
func externalRound(ctx context.Context, tr turnRunner, sc *Scenario, url string, d time.Duration, count int, conns func() (int64, error)) (Sample, error) {
	if count > 0 || sc.Paired {
		return Sample{}, fmt.Errorf("harness: %s: a client outside Go runs timed turns only", sc.Name)
	}
	c0 := int64(-1)
	if conns != nil {
		n, err := conns()
		if err != nil {
			return Sample{}, err
		}
		c0 = n
	}
	s, err := tr.runTurn(ctx, sc, url, d)
	s.Conns = -1
	if err != nil {
		return s, err
	}
	if err := ctx.Err(); err != nil {
		return s, err
	}
	if conns != nil {
		n, err := conns()
		if err != nil {
			return s, err
		}
		s.Conns = n - c0
	}
	return s, nil
}

// one makes one request of sc and checks what came back. It returns the
// payload bytes moved.
func one(ctx context.Context, c Client, sc *Scenario, url string, body []byte, want string) (int64, error) {
	if sc.Upload > 0 {
		got, err := c.Post(ctx, url, body)
		if err != nil {
			return 0, err
		}
		if string(got) != want {
			return 0, fmt.Errorf("harness: %s: server counted %q bytes, sent %s", sc.Name, got, want)
		}
		return int64(len(body)), nil
	}
	n, err := c.Get(ctx, url, sc.Mode)
	if err != nil {
		return n, err
	}
	if n != sc.Want {
		return n, fmt.Errorf("harness: %s: read %d body bytes, want %d", sc.Name, n, sc.Want)
	}
	return n, nil
}

var uploads sync.Map // int -> []byte

// uploadBody returns a shared read-only body of n bytes.
func uploadBody(n int) []byte {
	if b, ok := uploads.Load(n); ok {
		return b.([]byte)
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('A' + i%26)
	}
	v, _ := uploads.LoadOrStore(n, b)
	return v.([]byte)
}

// cpuTime returns the user+system CPU time this process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
