package main

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeServed is a client whose every request costs a fake server 7 µs of
// CPU, so that the server's CPU per request is known exactly.
type fakeServed struct {
	want int64
	used atomic.Int64 // fake server CPU, ns
}

func (f *fakeServed) get(context.Context, string) (int64, string, error) {
	f.used.Add(int64(7 * time.Microsecond))
	return f.want, "HTTP/2.0", nil
}
func (f *fakeServed) dials() int64 { return -1 }
func (f *fakeServed) close()       {}

// TestServerCPUPerRequest runs a scenario against a fake client and a fake
// server CPU clock: the column holds the median µs per request when every
// reading succeeds, and "–" when the clock is absent or a reading fails.
func TestServerCPUPerRequest(t *testing.T) {
	sc := scenarios()[2] // isolated-https-c1: one goroutine
	sc.specs = func() []clientSpec { return []clientSpec{{name: "fake", fam: famGuise}} }
	var calls atomic.Int64
	for _, tc := range []struct {
		name   string
		clock  func(f *fakeServed) func() (time.Duration, error)
		want   float64
		wantOK bool
		cell   string
	}{
		{"measured", func(f *fakeServed) func() (time.Duration, error) {
			return func() (time.Duration, error) { return time.Duration(f.used.Load()), nil }
		}, 7, true, "| 7.0 |"},
		{"absent", func(*fakeServed) func() (time.Duration, error) { return nil }, 0, false, "| – |"},
		{"second reading fails", func(f *fakeServed) func() (time.Duration, error) {
			return func() (time.Duration, error) {
				if calls.Add(1) == 4 { // the second round's closing reading
					return 0, errors.New("gone")
				}
				return time.Duration(f.used.Load()), nil
			}
		}, 0, false, "| – |"},
	} {
		f := &fakeServed{want: sc.want}
		mk := func(clientSpec) (client, error) { return f, nil }
		rs := runScenario(context.Background(), &sc, "https://127.0.0.1:1", mk, 3, time.Millisecond, 0, tc.clock(f), nil)
		r := rs[0]
		if r.err != nil || r.rounds != 3 {
			t.Fatalf("%s: %d rounds, error %v", tc.name, r.rounds, r.err)
		}
		if r.srvOK != tc.wantOK || r.srvCPU != tc.want {
			t.Errorf("%s: server CPU %v µs/req (ok %v), want %v (ok %v)", tc.name, r.srvCPU, r.srvOK, tc.want, tc.wantOK)
		}
		var b bytes.Buffer
		if err := markdown(&b, meta{}, []scenario{sc}, [][]*result{rs}); err != nil {
			t.Fatal(err)
		}
		row := ""
		for _, l := range strings.Split(b.String(), "\n") {
			if strings.HasPrefix(l, "| fake |") {
				row = l
			}
		}
		if !strings.HasSuffix(row, tc.cell) {
			t.Errorf("%s: row %q does not end with %q", tc.name, row, tc.cell)
		}
		if !strings.Contains(b.String(), "| server CPU µs/req |\n") {
			t.Errorf("%s: no server CPU column in:\n%s", tc.name, b.String())
		}
	}
}

func TestSrvMedian(t *testing.T) {
	s := func(ops int64, cpu time.Duration, ok bool) sample {
		return sample{ops: ops, srvCPU: cpu, srvOK: ok}
	}
	for _, tc := range []struct {
		in     []sample
		want   float64
		wantOK bool
	}{
		{nil, 0, false},
		{[]sample{s(100, time.Millisecond, true)}, 10, true},
		{[]sample{s(100, 3*time.Millisecond, true), s(10, 0, true), s(1000, 10*time.Millisecond, true)}, 10, true},
		{[]sample{s(100, time.Millisecond, true), s(100, time.Millisecond, false)}, 0, false},
		{[]sample{s(0, time.Millisecond, true)}, 0, false},
	} {
		got, ok := srvMedian(tc.in)
		if got != tc.want || ok != tc.wantOK {
			t.Errorf("srvMedian(%+v) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.wantOK)
		}
	}
}
