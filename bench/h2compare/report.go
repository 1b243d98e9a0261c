package main

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// meta is what the report says about the run.
type meta struct {
	command string
	date    time.Time
	machine string // nproc, Go version, OS/arch
	server  string // the server's version
	kex     string // how the server's TLS key exchange is set up
	rounds  int
	d       time.Duration
	warmup  time.Duration
	head    string // which request head the clients send
}

// ratios are a client's numbers over the references'.
type ratios struct {
	rateNet, rateTLS float64 // requests/s (or MB/s) over net/http's, over the best tls-client's
	cpuNet, cpuTLS   float64 // requests per CPU second over net/http's, over the best tls-client's
}

// refs computes every client's ratios in one scenario. The tls-client
// reference is the best tls-client row of that scenario, separately for
// throughput and for CPU, so that a ratio is never flattered by picking
// the slower variant. A ratio is 0 when a side has no number.
func refs(rs []*result) []ratios {
	var net *result
	var tlsRate, tlsCPU *result
	for _, r := range rs {
		if r.rounds == 0 {
			continue
		}
		switch r.spec.fam {
		case famNetHTTP:
			net = r
		case famTLSClient:
			if tlsRate == nil || r.rate > tlsRate.rate {
				tlsRate = r
			}
			if tlsCPU == nil || r.cpu < tlsCPU.cpu {
				tlsCPU = r
			}
		}
	}
	out := make([]ratios, len(rs))
	for i, r := range rs {
		if r.rounds == 0 {
			continue
		}
		if net != nil {
			out[i].rateNet = div(r.rate, net.rate)
			out[i].cpuNet = div(net.cpu, r.cpu)
		}
		if tlsRate != nil {
			out[i].rateTLS = div(r.rate, tlsRate.rate)
			out[i].cpuTLS = div(tlsCPU.cpu, r.cpu)
		}
	}
	return out
}

func div(a, b float64) float64 {
	if a == 0 || b == 0 {
		return 0
	}
	return a / b
}

// markdown writes the report: the run's facts, then one table per scenario.
func markdown(w io.Writer, m meta, scs []scenario, results [][]*result) error {
	var b strings.Builder
	fmt.Fprintf(&b, "# h2compare results\n\n")
	fmt.Fprintf(&b, "- command: `%s` (from bench/)\n", m.command)
	fmt.Fprintf(&b, "- date: %s\n", m.date.UTC().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(&b, "- machine: %s\n", m.machine)
	if m.head != "" {
		fmt.Fprintf(&b, "- %s\n", m.head)
	}
	fmt.Fprintf(&b, "- server: %s, a separate process on 127.0.0.1, TLS with a self-signed ECDSA P-256 certificate\n", m.server)
	if m.kex != "" {
		fmt.Fprintf(&b, "- server key exchange: %s\n", m.kex)
	}
	fmt.Fprintf(&b, "- %d rounds of one %v turn per client (order rotated each round), after one %v warm-up turn each; medians of the rounds\n", m.rounds, m.d, m.warmup)
	fmt.Fprintf(&b, "- CPU: getrusage user+system of the client process per request; allocs: runtime.MemStats.Mallocs per request (whole process)\n")
	fmt.Fprintf(&b, "- server CPU: the server's user+system CPU per request, read from /proc/PID/stat before and after the same turns (10 ms ticks, so short turns are coarse; the server shares the cores with the client), – when a round lacks it\n")
	fmt.Fprintf(&b, "- conns: TCP connections the client dialed over its first request, the warm-up and all rounds (a counting net.Dialer), n/a where the client takes no dialer\n")
	fmt.Fprintf(&b, "- ×: the client's throughput over net/http's and over the best tls-client row's; \"per CPU\": requests per CPU second, likewise\n")
	for i := range scs {
		sc := &scs[i]
		rs := results[i]
		rt := refs(rs)
		fmt.Fprintf(&b, "\n## %s\n\n%s.\n\n", sc.name, sc.about)
		fmt.Fprintf(&b, "| client | proto | %s | CPU µs/req | allocs/req | conns | × net/http | × tls-client | × net/http per CPU | × tls-client per CPU | server CPU µs/req |\n", unit(sc.rate))
		b.WriteString("|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
		for j, r := range rs {
			if r.rounds == 0 {
				msg := "no rounds"
				if r.err != nil {
					msg = "failed: " + strings.ReplaceAll(r.err.Error(), "|", "/")
				}
				fmt.Fprintf(&b, "| %s | %s | %s | | | | | | | | |\n", r.spec.name, r.proto, msg)
				continue
			}
			allocs := fmt.Sprintf("%.1f", r.allocs)
			if r.allocs < 0 {
				allocs = "–" // a client outside Go
			}
			fmt.Fprintf(&b, "| %s | %s | %.1f | %.1f | %s | %s | %s | %s | %s | %s | %s |\n",
				r.spec.name, r.proto, r.rate, r.cpu, allocs, conns(r),
				x(rt[j].rateNet, r.spec.fam == famNetHTTP), x(rt[j].rateTLS, r.spec.fam == famTLSClient),
				x(rt[j].cpuNet, r.spec.fam == famNetHTTP), x(rt[j].cpuTLS, r.spec.fam == famTLSClient), srvCell(r))
		}
		b.WriteString("\n")
		for _, r := range rs {
			fmt.Fprintf(&b, "- %s: %s", r.spec.name, r.spec.about)
			if r.err != nil && r.rounds > 0 {
				fmt.Fprintf(&b, " (failed after %d rounds: %v)", r.rounds, r.err)
			}
			b.WriteString("\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// x formats a ratio; same-family rows show "-" (a tls-client variant over
// the best tls-client row says nothing about the targets).
func x(v float64, own bool) string {
	if own || v == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", v)
}

// srvCell formats the server's CPU µs per request, "–" when not measured
// in every round.
func srvCell(r *result) string {
	if !r.srvOK {
		return "–"
	}
	return fmt.Sprintf("%.1f", r.srvCPU)
}

// conns formats the dial count, per request where connections are not
// kept.
func conns(r *result) string {
	if r.dials < 0 {
		return "n/a"
	}
	if r.total > 0 && r.dials > 2 {
		return fmt.Sprintf("%d (%.2f/req)", r.dials, float64(r.dials)/float64(r.total))
	}
	return fmt.Sprint(r.dials)
}
