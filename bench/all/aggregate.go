package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/guise-http/guise/bench/internal/record"
)

// runs holds every command's record, by group name.
type runs map[string]*record.Run

// find returns the client's rounds in scenario key "group/scenario".
func (rs runs) find(key, client string) *record.Client {
	g, name, _ := strings.Cut(key, "/")
	run := rs[g]
	if run == nil {
		return nil
	}
	for i := range run.Scenarios {
		if run.Scenarios[i].Name != name {
			continue
		}
		for j := range run.Scenarios[i].Clients {
			if c := &run.Scenarios[i].Clients[j]; c.Name == client && len(c.Rounds) > 0 {
				return c
			}
		}
	}
	return nil
}

// spread is a median and the range over rounds.
type spread struct {
	med, lo, hi float64
	n           int
}

func (s spread) ok() bool { return s.n > 0 }

func (s spread) String() string {
	if !s.ok() {
		return "–"
	}
	if s.n == 1 {
		return trim(s.med)
	}
	return fmt.Sprintf("%s (%s–%s)", trim(s.med), trim(s.lo), trim(s.hi))
}

func (s spread) ratio() string {
	if !s.ok() {
		return "–"
	}
	if s.n == 1 {
		return fmt.Sprintf("%.2fx", s.med)
	}
	return fmt.Sprintf("%.2fx (%.2f–%.2f)", s.med, s.lo, s.hi)
}

// trim formats a figure with three significant digits or so.
func trim(v float64) string {
	switch a := math.Abs(v); {
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

func spreadOf(xs []float64) spread {
	if len(xs) == 0 {
		return spread{}
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	m := len(s) / 2
	med := s[m]
	if len(s)%2 == 0 {
		med = (s[m-1] + s[m]) / 2
	}
	return spread{med: med, lo: s[0], hi: s[len(s)-1], n: len(s)}
}

// metric picks a number out of a round.
type metric func(record.Round) float64

func cpuOf(r record.Round) float64    { return r.CPU }
func allocsOf(r record.Round) float64 { return r.Allocs }

// stat is the spread of m over c's rounds; none for a missing client or
// an unknown figure (negative).
func stat(c *record.Client, m metric) spread {
	if c == nil {
		return spread{}
	}
	var xs []float64
	for _, r := range c.Rounds {
		if v := m(r); v >= 0 {
			xs = append(xs, v)
		}
	}
	return spreadOf(xs)
}

// ratio is the spread of a's figure over b's, round by round: the rounds
// of one index ran seconds apart (the clients alternate within a round),
// so each ratio compares like with like. Rounds only one side has are
// left out.
func ratio(a, b *record.Client, m metric) spread {
	if a == nil || b == nil {
		return spread{}
	}
	var xs []float64
	for _, ra := range a.Rounds {
		for _, rb := range b.Rounds {
			if ra.Index == rb.Index && m(rb) > 0 && m(ra) >= 0 {
				xs = append(xs, m(ra)/m(rb))
			}
		}
	}
	return spreadOf(xs)
}

// workload is one row group of the report: a scenario, the clients shown,
// and the references their CPU is divided by.
type workload struct {
	key     string // "group/scenario"
	title   string
	unit    string // of the CPU figure
	clients []string
	refs    []string
}

// ref is a client in a workload, for targets that compare across runs.
type ref struct{ key, client string }

// target is one of the speed targets (issues 16 and 15).
type target struct {
	what   string
	a, b   ref     // a's figure over b's (b.client "" : a's own figure)
	m      metric  // CPU unless allocs
	limit  float64 // met when the median is at most this
	remark string
}

func (t target) eval(rs runs) (spread, string) {
	a := rs.find(t.a.key, t.a.client)
	var s spread
	if t.b.client == "" {
		s = stat(a, t.m)
	} else {
		s = ratio(a, rs.find(t.b.key, t.b.client), t.m)
	}
	switch {
	case !s.ok():
		return s, "not measured"
	case s.med <= t.limit && s.hi <= t.limit:
		return s, "met (every round)"
	case s.med <= t.limit:
		return s, "met (median)"
	}
	return s, "**not met**"
}

// report writes the markdown: a table per workload, then the targets.
func report(w io.Writer, rs runs, wls []workload, ts []target, header []string) error {
	var b strings.Builder
	for _, h := range header {
		fmt.Fprintf(&b, "%s\n", h)
	}
	for _, wl := range wls {
		fmt.Fprintf(&b, "\n### %s\n\n", wl.title)
		b.WriteString("| client | CPU " + wl.unit + "/req, median (min–max) | allocs/req |")
		for _, r := range wl.refs {
			fmt.Fprintf(&b, " CPU × %s |", r)
		}
		b.WriteString("\n|---|--:|--:|" + strings.Repeat("--:|", len(wl.refs)) + "\n")
		for _, name := range wl.clients {
			c := rs.find(wl.key, name)
			if c == nil {
				continue
			}
			cpu := stat(c, cpuOf)
			if wl.unit == "ms" {
				cpu = spread{cpu.med / 1e3, cpu.lo / 1e3, cpu.hi / 1e3, cpu.n}
			}
			allocs := stat(c, allocsOf)
			a := "–"
			if allocs.ok() {
				a = fmt.Sprintf("%.1f", allocs.med)
			}
			fmt.Fprintf(&b, "| %s | %s | %s |", name, cpu, a)
			for _, r := range wl.refs {
				if r == name {
					b.WriteString(" 1 |")
					continue
				}
				fmt.Fprintf(&b, " %s |", ratio(c, rs.find(wl.key, r), cpuOf).ratio())
			}
			b.WriteString("\n")
		}
		if g, _, _ := strings.Cut(wl.key, "/"); rs[g] != nil {
			fmt.Fprintf(&b, "\n`%s`; server: %s.\n", rs[g].Command, rs[g].Server)
		}
	}
	b.WriteString("\n### Targets (issue 16; the h3 rows issue 15)\n\n| target | measured, median (min–max over rounds) | |\n|---|--:|---|\n")
	for _, t := range ts {
		s, verdict := t.eval(rs)
		v := s.ratio()
		if t.b.client == "" {
			v = s.String()
		}
		if t.remark != "" {
			verdict += "; " + t.remark
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", t.what, v, verdict)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// barsOf returns a workload's bars of CPU per request (scaled by div),
// or, with ref set, of CPU over ref's, round by round.
func barsOf(rs runs, key string, clients []string, refName string, div float64) []bar {
	var out []bar
	refC := rs.find(key, refName)
	for _, name := range clients {
		c := rs.find(key, name)
		var s spread
		if refName == "" {
			s = stat(c, cpuOf)
		} else if name != refName {
			s = ratio(c, refC, cpuOf)
		}
		if !s.ok() {
			continue
		}
		out = append(out, bar{client: name, med: s.med / div, lo: s.lo / div, hi: s.hi / div})
	}
	return out
}
