package harness

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/guise-http/guise/bench/internal/peer"
)

// startPeer serves the benchmark endpoints on 127.0.0.1 in this process
// until the test ends, and returns the base URL.
func startPeer(t *testing.T) string {
	t.Helper()
	s := peer.New()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln, nil) }()
	t.Cleanup(func() {
		if err := s.Shutdown(5 * time.Second); err != nil {
			t.Errorf("server shutdown: %v", err)
		}
		<-done
	})
	return "http://" + ln.Addr().String()
}

// testScenarios are the standard ones with smaller uploads, plus the
// concurrent variants the test needs.
func testScenarios() []Scenario {
	var out []Scenario
	for _, sc := range Scenarios() {
		switch sc.Upload {
		case Upload32M:
			sc.Upload = 1 << 20
		case Upload64M:
			sc.Upload = 5<<20 + 3
		}
		out = append(out, sc)
		if sc.Conc == 1 && !sc.Paired {
			sc.Name += "-c4"
			sc.Conc = 4
			out = append(out, sc)
		}
	}
	return out
}

func TestClientsMoveTheRightBytes(t *testing.T) {
	base := startPeer(t)
	cc := NewConnCounter(base)
	defer cc.Close()
	ctx := context.Background()
	for _, name := range Names {
		for _, sc := range testScenarios() {
			t.Run(name+"/"+sc.Name, func(t *testing.T) {
				c, err := New(name, Config{Conns: sc.Conc})
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				count := 3 * sc.Conc
				s, err := Round(ctx, c, &sc, base, 0, count, cc.Accepted)
				if err != nil {
					t.Fatal(err)
				}
				want := int64(count) * sc.Payload()
				if sc.Paired { // the smaller, the larger, the smaller
					want = int64(sc.Upload/2)*2 + int64(sc.Upload)
					if s.Sizes[0].Ops != 2 || s.Sizes[1].Ops != 1 || s.PairRatio() <= 0 {
						t.Errorf("sizes %+v", s.Sizes)
					}
				}
				if s.Ops != int64(count) || s.Bytes != want {
					t.Errorf("ops %d, bytes %d; want %d, %d", s.Ops, s.Bytes, count, want)
				}
				if s.Conns < 1 {
					t.Errorf("server accepted %d connections", s.Conns)
				}
				// guise never opens more connections than its
				// limit, and keeps them after an early Close of a
				// small body (it drains it). The other clients'
				// counts are theirs to report, not to test.
				if s.Conns > int64(sc.Conc) {
					if name == "guise" {
						t.Errorf("server accepted %d connections, limit %d", s.Conns, sc.Conc)
					} else if sc.Mode != FirstByte {
						t.Logf("%s opened %d connections, limit %d", name, s.Conns, sc.Conc)
					}
				}
				if s.Wall <= 0 || s.CPU < 0 || s.Mallocs == 0 {
					t.Errorf("implausible sample %+v", s)
				}
			})
		}
	}
}

func TestNewRejects(t *testing.T) {
	if _, err := New("curl", Config{Conns: 1}); err == nil {
		t.Error("New(curl) succeeded")
	}
	if _, err := New("guise", Config{}); err == nil {
		t.Error("New with Conns 0 succeeded")
	}
}

// fakeClient answers without a network; fail makes the n-th call fail.
type fakeClient struct {
	calls atomic.Int64
	n     int64 // body length to report
	fail  int64 // the call that fails; 0: none
	block chan struct{}
	// echo makes Post answer its body's length, after perByte for each
	// byte.
	echo    bool
	perByte time.Duration
	// uncancelled counts calls after the failing one that were not ended
	// by the round's context within 5 s.
	uncancelled atomic.Int64
}

var errFake = errors.New("fake failure")

func (f *fakeClient) Get(ctx context.Context, url string, mode Mode) (int64, error) {
	k := f.calls.Add(1)
	if f.fail > 0 && k > f.fail {
		// After the failure, a call waits for the round to cancel it, as
		// a request in flight would: each worker then makes at most one
		// call after the failure, however the goroutines are scheduled.
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(5 * time.Second):
			f.uncancelled.Add(1)
			return 0, errors.New("not cancelled")
		}
	}
	if f.block != nil {
		select {
		case <-f.block:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	if k == f.fail {
		return 0, errFake
	}
	return f.n, nil
}

func (f *fakeClient) Post(ctx context.Context, url string, body []byte) ([]byte, error) {
	f.calls.Add(1)
	if f.echo {
		if f.perByte > 0 {
			time.Sleep(time.Duration(len(body)) * f.perByte)
		}
		return []byte(strconv.Itoa(len(body))), nil
	}
	return []byte("7"), nil
}

// TestRoundPaired: a paired upload scenario sends the smaller size, then
// the larger, in turn; a turn ends only after a larger one; each size's
// requests and time are recorded, and their time ratio is the servers'.
func TestRoundPaired(t *testing.T) {
	sc := Scenario{Name: "p", Path: "/upload", Upload: 4000, Conc: 1, Bytes: true, Paired: true}
	// 3 µs a byte: 6 ms for the smaller, 12 ms for the larger.
	f := &fakeClient{echo: true, perByte: 3 * time.Microsecond}
	s, err := Round(context.Background(), f, &sc, "http://h", 40*time.Millisecond, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Sizes[0].Ops == 0 || s.Sizes[0].Ops != s.Sizes[1].Ops || s.Ops != s.Sizes[0].Ops+s.Sizes[1].Ops {
		t.Errorf("ops %d, sizes %+v: want whole pairs", s.Ops, s.Sizes)
	}
	if s.Bytes != s.Sizes[0].Ops*2000+s.Sizes[1].Ops*4000 {
		t.Errorf("bytes %d for sizes %+v", s.Bytes, s.Sizes)
	}
	if r := s.PairRatio(); r < 1.5 || r > 2.5 {
		t.Errorf("pair ratio %.2f, want about 2", r)
	}
	bad := sc
	bad.Conc = 2
	if _, err := Round(context.Background(), f, &bad, "http://h", 0, 2, nil); err == nil {
		t.Error("a paired scenario with 2 workers ran")
	}
}

func (f *fakeClient) Close() error { return nil }

func TestRoundCountIsExact(t *testing.T) {
	sc := Scenario{Name: "x", Path: "/x", Want: 10, Conc: 3}
	f := &fakeClient{n: 10}
	s, err := Round(context.Background(), f, &sc, "http://h", 0, 100, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Ops != 100 || f.calls.Load() != 100 || s.Bytes != 1000 || s.Conns != -1 {
		t.Errorf("ops %d calls %d bytes %d conns %d; want 100 100 1000 -1", s.Ops, f.calls.Load(), s.Bytes, s.Conns)
	}
}

func TestRoundDurationStops(t *testing.T) {
	sc := Scenario{Name: "x", Path: "/x", Want: 1, Conc: 2}
	f := &fakeClient{n: 1}
	s, err := Round(context.Background(), f, &sc, "http://h", 30*time.Millisecond, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.Ops == 0 || s.Wall < 30*time.Millisecond || s.Wall > 10*time.Second {
		t.Errorf("ops %d in %v", s.Ops, s.Wall)
	}
}

func TestRoundErrors(t *testing.T) {
	ctx := context.Background()
	sc := Scenario{Name: "x", Path: "/x", Want: 10, Conc: 4}
	// A failing request stops every worker, blocked ones included.
	f := &fakeClient{n: 10, fail: 5}
	if _, err := Round(ctx, f, &sc, "http://h", 0, 1000, nil); !errors.Is(err, errFake) {
		t.Errorf("err = %v, want errFake", err)
	}
	if got := f.calls.Load(); got > 5+int64(sc.Conc)-1 {
		t.Errorf("%d calls, with the failure at 5 and %d workers", got, sc.Conc)
	}
	if n := f.uncancelled.Load(); n > 0 {
		t.Errorf("%d calls in flight after the failure were not cancelled", n)
	}
	// A short body is an error.
	f = &fakeClient{n: 9}
	if _, err := Round(ctx, f, &sc, "http://h", 0, 10, nil); err == nil || !strings.Contains(err.Error(), "read 9 body bytes, want 10") {
		t.Errorf("short body: err = %v", err)
	}
	// An upload whose size the server misreports is an error.
	up := Scenario{Name: "u", Path: "/upload", Upload: 8, Conc: 1}
	if _, err := Round(ctx, &fakeClient{}, &up, "http://h", 0, 1, nil); err == nil || !strings.Contains(err.Error(), `"7"`) {
		t.Errorf("upload: err = %v", err)
	}
	// A failing connection counter is reported.
	bad := func() (int64, error) { return 0, errFake }
	if _, err := Round(ctx, &fakeClient{n: 10}, &sc, "http://h", 0, 1, bad); !errors.Is(err, errFake) {
		t.Errorf("counter: err = %v", err)
	}
	// Cancelling the context ends a round stuck in requests.
	cctx, cancel := context.WithCancel(ctx)
	f = &fakeClient{n: 10, block: make(chan struct{})}
	time.AfterFunc(20*time.Millisecond, cancel)
	if _, err := Round(cctx, f, &sc, "http://h", time.Minute, 0, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v", err)
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{3}, 3},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
		{[]float64{9, 9, 1, 1, 5}, 5},
	} {
		if got := Median(tc.in); got != tc.want {
			t.Errorf("Median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
	in := []float64{3, 1, 2}
	Median(in)
	if in[0] != 3 {
		t.Error("Median sorted its argument")
	}
}

func TestCompareAlternatesClients(t *testing.T) {
	base := startPeer(t)
	var progress strings.Builder
	sc := Scenarios()[0] // small-c1
	res := Compare(context.Background(), Options{
		Base: base, Clients: []string{"guise", "net/http", "nope"}, Scenarios: []Scenario{sc},
		Rounds: 2, Duration: 20 * time.Millisecond, Warmup: 10 * time.Millisecond, Progress: &progress,
	})
	if len(res) != 3 {
		t.Fatalf("%d results, want 3", len(res))
	}
	for _, r := range res[:2] {
		if r.Err != nil || len(r.Samples) != 2 || r.Conns != 1 {
			t.Errorf("%s: err %v, %d samples, %d conns; want nil, 2, 1", r.Client, r.Err, len(r.Samples), r.Conns)
		}
	}
	if res[2].Err == nil {
		t.Error("unknown client: no error")
	}
	var order []string
	for _, l := range strings.Split(strings.TrimSpace(progress.String()), "\n") {
		f := strings.Fields(l)
		order = append(order, f[1]+"/"+f[2])
	}
	want := "guise/warmup net/http/warmup guise/round1 net/http/round1 net/http/round2 guise/round2"
	if got := strings.Join(order, " "); got != want {
		t.Errorf("turns %q, want %q", got, want)
	}
}

func TestCompareOverTLS(t *testing.T) {
	cfg, pool, err := peer.SelfSigned()
	if err != nil {
		t.Fatal(err)
	}
	s := peer.New()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 2)
	go func() { done <- s.Serve(ln, nil) }()
	go func() { done <- s.Serve(tln, cfg) }()
	defer func() {
		s.Shutdown(5 * time.Second)
		<-done
		<-done
	}()
	sc := Scenarios()[0]
	sc.Count = 4
	res := Compare(context.Background(), Options{
		Base: "https://" + tln.Addr().String(), StatsBase: "http://" + ln.Addr().String(),
		Clients: Names, Scenarios: []Scenario{sc}, Rounds: 2, RootCAs: pool,
	})
	for _, r := range res {
		if r.Err != nil || len(r.Samples) != 2 || r.Conns != 1 {
			t.Errorf("%s over TLS: err %v, %d samples, %d conns; want nil, 2, 1", r.Client, r.Err, len(r.Samples), r.Conns)
		}
	}
}
