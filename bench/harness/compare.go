package harness

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"
)

// Options configures Compare.
type Options struct {
	// Base is the benchmark server's base URL ("http://127.0.0.1:PORT").
	Base string
	// StatsBase is the plain-HTTP base URL /stats is read from (the
	// server counts the connections of all its listeners); "" means Base.
	StatsBase string
	// Clients names the clients to compare (see Names).
	Clients []string
	// Scenarios are run one after the other.
	Scenarios []Scenario
	// Rounds is how many times each client runs each scenario; the
	// clients alternate within every round.
	Rounds int
	// Duration is the length of one client's turn in a round, for
	// scenarios without a Count.
	Duration time.Duration
	// Warmup is an unmeasured turn per client before the first round, for
	// scenarios without a Count; 0 means none.
	Warmup time.Duration
	// RootCAs verifies an https Base.
	RootCAs *x509.CertPool
	// RootsPEM is RootCAs as PEM, for clients outside Go (wreq-js).
	RootsPEM []byte
	// Header is Config.Header for every client.
	Header []Field
	// Progress, if not nil, receives a line per turn.
	Progress io.Writer
	// ServerCPU, if not nil, returns the CPU time the server process has
	// used so far; each turn then records the server's share.
	ServerCPU func() (time.Duration, error)
}

// Result is one client's measurements in one scenario.
type Result struct {
	Scenario Scenario
	Client   string
	Samples  []Sample // one per round
	// Conns is the number of connections the server accepted from the
	// client during the whole scenario, warm-up included.
	Conns int64
	// Err is the error that stopped the client, if any.
	Err error
}

// Compare runs every scenario with every client, alternating the clients
// round-robin within each round (the starting client rotates from round to
// round), and returns one Result per scenario and client, in order.
func Compare(ctx context.Context, o Options) []Result {
	sb := o.StatsBase
	if sb == "" {
		sb = o.Base
	}
	cc := NewConnCounter(sb)
	defer cc.Close()
	var out []Result
	for i := range o.Scenarios {
		out = append(out, compareOne(ctx, &o, &o.Scenarios[i], cc)...)
	}
	return out
}

func compareOne(ctx context.Context, o *Options, sc *Scenario, cc *ConnCounter) []Result {
	res := make([]Result, len(o.Clients))
	clients := make([]Client, len(o.Clients))
	for i, name := range o.Clients {
		res[i] = Result{Scenario: *sc, Client: name}
		c, err := New(name, Config{Conns: sc.Conc, RootCAs: o.RootCAs, RootsPEM: o.RootsPEM, Header: o.Header})
		if err != nil {
			res[i].Err = err
			continue
		}
		clients[i] = c
	}
	defer func() {
		for _, c := range clients {
			if c != nil {
				c.Close()
			}
		}
	}()
	turn := func(i, count int, d time.Duration, label string) {
		if clients[i] == nil || res[i].Err != nil {
			return
		}
		var srv0 time.Duration
		srvErr := errors.New("no server CPU")
		if o.ServerCPU != nil {
			srv0, srvErr = o.ServerCPU()
		}
		s, err := Round(ctx, clients[i], sc, o.Base, d, count, cc.Accepted)
		s.ServerCPU = -1
		if srvErr == nil {
			if srv1, err := o.ServerCPU(); err == nil {
				s.ServerCPU = srv1 - srv0
			}
		}
		if s.Conns > 0 {
			res[i].Conns += s.Conns
		}
		if err != nil {
			res[i].Err = err
		} else if label != "warmup" {
			res[i].Samples = append(res[i].Samples, s)
		}
		if o.Progress != nil {
			status := "ok"
			if err != nil {
				status = err.Error()
			}
			fmt.Fprintf(o.Progress, "%-16s %-10s %-7s ops=%-6d wall=%-8v cpu/op=%.1fµs allocs/op=%.1f conns=%d %s\n",
				sc.Name, o.Clients[i], label, s.Ops, s.Wall.Round(time.Millisecond), s.CPUPerOp(), s.AllocsPerOp(), s.Conns, status)
		}
	}
	if sc.Count == 0 && o.Warmup > 0 {
		for i := range clients {
			turn(i, 0, o.Warmup, "warmup")
		}
	}
	for r := range o.Rounds {
		count := 0
		if sc.Count > 0 {
			count = sc.Count / o.Rounds
			if r == o.Rounds-1 {
				count = sc.Count - count*(o.Rounds-1)
			}
		}
		for k := range clients {
			turn((r+k)%len(clients), count, o.Duration, fmt.Sprintf("round%d", r+1))
		}
		if ctx.Err() != nil {
			break
		}
	}
	return res
}

// Median returns the median of xs (the mean of the middle two for an even
// count), or 0 for none.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}

// Summary holds the medians of one Result, and the fastest round's time
// per request.
type Summary struct {
	Rate, CPUPerOp, AllocsPerOp, SecPerOp float64
	MinSecPerOp                           float64
	// ServerCPUPerOp is the server's CPU µs per request, -1 when a round
	// lacks it.
	ServerCPUPerOp float64
}

// Summarize returns the medians over r's rounds.
func (r *Result) Summarize() Summary {
	var rate, cpu, srv, allocs, sec []float64
	srvKnown := true
	for _, s := range r.Samples {
		rate = append(rate, s.Rate(r.Scenario.Bytes))
		cpu = append(cpu, s.CPUPerOp())
		if s.ServerCPU < 0 || s.Ops == 0 {
			srvKnown = false
		} else {
			srv = append(srv, float64(s.ServerCPU.Microseconds())/float64(s.Ops))
		}
		allocs = append(allocs, s.AllocsPerOp())
		if s.Ops > 0 {
			sec = append(sec, s.Wall.Seconds()/float64(s.Ops))
		}
	}
	s := Summary{Rate: Median(rate), CPUPerOp: Median(cpu), AllocsPerOp: Median(allocs), SecPerOp: Median(sec), ServerCPUPerOp: -1}
	if srvKnown && len(srv) > 0 {
		s.ServerCPUPerOp = Median(srv)
	}
	if len(sec) > 0 {
		s.MinSecPerOp = slices.Min(sec)
	}
	return s
}
