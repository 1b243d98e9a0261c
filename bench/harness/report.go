package harness

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"
)

// Meta describes a run for the top of its report.
type Meta struct {
	Command  string    // the command line, as typed
	Date     time.Time // when the run started
	Rounds   int
	Duration time.Duration
	Warmup   time.Duration
	Base     string // the server's base URL
	Notes    []string
}

// Markdown writes the report of results as markdown: the command and
// machine, one table row per scenario and client with medians and ratios to
// net/http, then the upload scaling and early-close connection checks.
func Markdown(w io.Writer, m Meta, results []Result) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "command: `%s`\n\n", m.Command)
	fmt.Fprintf(bw, "machine: %d CPUs (%s), %s/%s, %s, %s\n\n", runtime.NumCPU(), cpuModel(), runtime.GOOS, runtime.GOARCH,
		runtime.Version(), m.Date.UTC().Format("2006-01-02 15:04 MST"))
	fmt.Fprintf(bw, "server: benchserver (fasthttp) in its own process at %s; client and server share the CPUs. "+
		"%d rounds, clients alternating round-robin; each turn %v (after a %v warm-up) unless the scenario fixes a count. Medians over rounds; "+
		"CPU is user+sys of the client process (getrusage), server CPU that of the server process over the same turns (/proc, 10 ms ticks; – when not measured), allocs are runtime Mallocs, conns are TCP connections the server accepted from the client in the whole scenario.\n\n",
		m.Base, m.Rounds, m.Duration, m.Warmup)
	for _, n := range m.Notes {
		fmt.Fprintf(bw, "%s\n\n", n)
	}
	fmt.Fprintln(bw, "| scenario | client | throughput | rounds min–max | ×net/http | CPU µs/req | ×net/http | allocs/req | ×net/http | conns (limit) | server CPU µs/req |")
	fmt.Fprintln(bw, "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	var names []string
	groups := map[string][]*Result{}
	for i := range results {
		n := results[i].Scenario.Name
		if groups[n] == nil {
			names = append(names, n)
		}
		groups[n] = append(groups[n], &results[i])
	}
	for _, n := range names {
		var base *Summary
		for _, r := range groups[n] {
			if r.Client == "net/http" && len(r.Samples) > 0 {
				s := r.Summarize()
				base = &s
			}
		}
		for _, r := range groups[n] {
			writeRow(bw, r, base)
		}
	}
	fmt.Fprintln(bw)
	writeChecks(bw, results)
	return bw.Flush()
}

func writeRow(w io.Writer, r *Result, base *Summary) {
	sc := &r.Scenario
	if len(r.Samples) == 0 {
		msg := "no samples"
		if r.Err != nil {
			msg = r.Err.Error()
		}
		fmt.Fprintf(w, "| %s | %s | error: %s | | | | | | | | |\n", sc.Name, r.Client, cell(msg))
		return
	}
	s := r.Summarize()
	unit := "req/s"
	if sc.Bytes {
		unit = "MB/s"
	}
	ratio := func(a, b float64) string {
		if base == nil || b == 0 {
			return "–"
		}
		return fmt.Sprintf("%.2f", a/b)
	}
	var rb, cb, ab float64
	if base != nil {
		rb, cb, ab = base.Rate, base.CPUPerOp, base.AllocsPerOp
	}
	errNote := ""
	if r.Err != nil {
		errNote = " (stopped: " + cell(r.Err.Error()) + ")"
	}
	lo, hi := s.Rate, s.Rate
	for _, x := range r.Samples {
		lo, hi = min(lo, x.Rate(sc.Bytes)), max(hi, x.Rate(sc.Bytes))
	}
	srv := "–"
	if s.ServerCPUPerOp >= 0 {
		srv = fmt.Sprintf("%.1f", s.ServerCPUPerOp)
	}
	allocs, allocsX := fmt.Sprintf("%.1f", s.AllocsPerOp), ratio(s.AllocsPerOp, ab)
	if s.AllocsPerOp < 0 { // a client outside Go
		allocs, allocsX = "–", "–"
	}
	fmt.Fprintf(w, "| %s | %s | %s %s%s | %s–%s | %s | %.1f | %s | %s | %s | %d (%d) | %s |\n",
		sc.Name, r.Client, num(s.Rate), unit, errNote, num(lo), num(hi), ratio(s.Rate, rb), s.CPUPerOp, ratio(s.CPUPerOp, cb),
		allocs, allocsX, r.Conns, sc.Conc, srv)
}

// writeChecks writes the upload scaling check (the larger size's time per
// request over the smaller's, which must stay at most 2.2: no quadratic
// buffering), from the Paired scenario's rounds, and the early-close
// connection counts.
func writeChecks(w io.Writer, results []Result) {
	var lines []string
	var order []string
	seen := map[string]bool{}
	for i := range results {
		if c := results[i].Client; !seen[c] {
			seen[c] = true
			order = append(order, c)
		}
	}
	per := func(client, scenario string) *Result {
		for i := range results {
			if results[i].Client == client && results[i].Scenario.Name == scenario {
				return &results[i]
			}
		}
		return nil
	}
	for i := range results {
		r := &results[i]
		if !r.Scenario.Paired {
			continue
		}
		var ratios []float64
		for _, s := range r.Samples {
			if x := s.PairRatio(); x > 0 {
				ratios = append(ratios, x)
			}
		}
		if len(ratios) == 0 {
			continue
		}
		med := Median(ratios)
		verdict := "ok (<= 2.2)"
		if med > 2.2 {
			verdict = "TOO HIGH (> 2.2)"
		}
		lines = append(lines, fmt.Sprintf("- %s: %.2f, %s; rounds %.2f–%.2f", r.Client, med, verdict, slices.Min(ratios), slices.Max(ratios)))
	}
	if len(lines) > 0 {
		fmt.Fprintln(w, "Upload time per request, 64 MiB / 32 MiB: each round's ratio comes from the two sizes sent in turn within one turn; the median over the rounds is the verdict:")
		fmt.Fprintln(w)
		fmt.Fprintln(w, strings.Join(lines, "\n"))
		fmt.Fprintln(w)
	}
	lines = lines[:0]
	for _, c := range order {
		r := per(c, "first-byte-close")
		if r == nil {
			continue
		}
		var ops int64
		for _, s := range r.Samples {
			ops += s.Ops
		}
		status := ""
		if r.Err != nil {
			status = " (stopped: " + r.Err.Error() + ")"
		}
		lines = append(lines, fmt.Sprintf("- %s: %d connections for %d requests, pool size %d%s", c, r.Conns, ops, r.Scenario.Conc, status))
	}
	if len(lines) > 0 {
		fmt.Fprintln(w, "Read the first byte of a small chunked body, then Close:")
		fmt.Fprintln(w)
		fmt.Fprintln(w, strings.Join(lines, "\n"))
		fmt.Fprintln(w)
	}
}

// num formats a rate with three significant digits or more.
func num(x float64) string {
	switch {
	case x >= 100:
		return fmt.Sprintf("%.0f", x)
	case x >= 10:
		return fmt.Sprintf("%.1f", x)
	}
	return fmt.Sprintf("%.2f", x)
}

// cell makes s safe inside a markdown table cell.
func cell(s string) string {
	s = strings.ReplaceAll(s, "|", "\\|")
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}

// cpuModel returns the CPU model name from /proc/cpuinfo, or "unknown CPU".
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}
