// Command h2compare benchmarks guise against net/http and tls-client over
// HTTP/2 and over isolated HTTPS requests (a TCP+TLS handshake each), with
// nghttpd (Debian nghttp2-server, the default) or nginx (-server nginx) as
// the server in a separate process. For
// each scenario the clients take turns, round-robin over several rounds,
// and the medians go into a markdown table on stdout (and -out FILE).
//
// Run from bench/:
//
//	go run ./h2compare -rounds 5 -d 1s -out h2.md
//
// A client that fails is reported in its table row and on stderr; the exit
// status is non-zero only when a guise client failed (or on interrupt), as
// the peers' failures are results too.
package main

import (
	"bytes"
	"context"
	"crypto/x509"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/guise-http/guise/bench/harness"
	"github.com/guise-http/guise/bench/internal/pin"
	"github.com/guise-http/guise/bench/internal/record"
	"github.com/guise-http/guise/profile"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "h2compare:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("h2compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rounds := fs.Int("rounds", 5, "rounds per scenario; clients alternate within each")
	dur := fs.Duration("d", time.Second, "length of one client's turn in a round")
	warmup := fs.Duration("warmup", 300*time.Millisecond, "unmeasured turn per client before the first round (0: none)")
	scen := fs.String("scenarios", "", "scenarios to run, comma-separated (default all)")
	out := fs.String("out", "", "also write the report to this file")
	kind := fs.String("server", serverNghttpd, "server to run: nghttpd (accepts only P-256, so every browser hello gets a HelloRetryRequest) or nginx (X25519, then P-256)")
	bin := fs.String("nghttpd", "", "path of nghttpd (default: $PATH, /usr/sbin, /usr/bin)")
	nginxBin := fs.String("nginx", "", "path of nginx, with -server nginx (default: $PATH, /usr/sbin, /usr/bin)")
	quiet := fs.Bool("q", false, "no progress lines on stderr")
	list := fs.Bool("list", false, "list the scenarios and exit")
	only := fs.String("clients", "", "clients to run, comma-separated names as in the tables (default all)")
	cpuProf := fs.String("cpuprofile", "", "write a CPU profile of the measured run to this file")
	memProf := fs.String("memprofile", "", "write an allocation profile (every allocation sampled) to this file at the end")
	jsonOut := fs.String("json", "", "also write every round's numbers to this file as JSON (bench/internal/record), as bench/all reads them")
	serverCPUs := fs.String("server-cpu", "", "move the server to these CPUs once started (e.g. 1), for a client pinned elsewhere (see bench/all)")
	head := fs.String("head", "browser", "request head of net/http and tls-client: browser (the h2 fields guise's profile sends, so every client sends the same head) or own (each client's defaults)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	all := scenarios()
	if *list {
		for _, s := range all {
			fmt.Fprintf(stdout, "%-18s %s\n", s.name, s.about)
		}
		return nil
	}
	if *rounds < 1 {
		return fmt.Errorf("-rounds %d < 1", *rounds)
	}
	if *dur <= 0 {
		return fmt.Errorf("-d %v is not positive", *dur)
	}
	picked, err := pick(all, *scen)
	if err != nil {
		return err
	}
	if picked, err = keepClients(picked, *only); err != nil {
		return err
	}
	headNote := ""
	switch *head {
	case "browser":
		hdr, err := harness.BrowserHeaderFor(profile.H2)
		if err != nil {
			return err
		}
		setHead(hdr)
		headNote = fmt.Sprintf("request head: every client sends the %d h2 fields of guise's default profile's navigation (-head browser)", len(hdr))
	case "own":
		setHead(nil)
		headNote = "request head: each client's own defaults; guise sends its profile's navigation fields (-head own)"
	default:
		return fmt.Errorf("-head %q: want browser or own", *head)
	}
	var path string
	switch *kind {
	case serverNghttpd:
		path = *bin
	case serverNginx:
		path = *nginxBin
	default:
		return fmt.Errorf("-server %q: want nghttpd or nginx", *kind)
	}
	if path == "" {
		if path, err = findServer(*kind); err != nil {
			return err
		}
	}
	cpus, err := pin.CPUs(*serverCPUs)
	if err != nil {
		return err
	}
	srv, err := startServer(*kind, path)
	if err != nil {
		return err
	}
	defer srv.Stop()
	rootsPEM = srv.CertPEM
	if len(cpus) > 0 {
		if err := pin.Process(srv.cmd.Process.Pid, cpus); err != nil {
			return err
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var progress io.Writer
	if !*quiet {
		progress = stderr
	}
	m := meta{
		command: strings.TrimSpace("go run ./h2compare " + strings.Join(args, " ")),
		date:    time.Now(),
		machine: fmt.Sprintf("nproc %d, %s, %s/%s, load average at start %s", runtime.NumCPU(), runtime.Version(), runtime.GOOS, runtime.GOARCH, loadavg()),
		head:    headNote,
		rounds:  *rounds,
		d:       *dur,
		warmup:  *warmup,
	}
	m.server, m.kex = describe(*kind, path)
	if len(cpus) > 0 {
		m.server += ", moved to CPU " + *serverCPUs
	}
	results := make([][]*result, len(picked))
	mk := func(roots *x509.CertPool) func(clientSpec) (client, error) {
		return func(sp clientSpec) (client, error) { return sp.make(roots) }
	}(srv.Roots)
	if *memProf != "" {
		runtime.MemProfileRate = 1
	}
	if *cpuProf != "" {
		f, err := os.Create(*cpuProf)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
	}
	var srvCPU func() (time.Duration, error)
	if _, err := srv.CPU(); err == nil {
		srvCPU = srv.CPU
	}
	for i := range picked {
		results[i] = runScenario(ctx, &picked[i], srv.Base, mk, *rounds, *dur, *warmup, srvCPU, progress)
	}
	if *cpuProf != "" {
		pprof.StopCPUProfile()
	}
	if *memProf != "" {
		if err := writeHeapProfile(*memProf); err != nil {
			return err
		}
	}
	var buf bytes.Buffer
	if err := markdown(&buf, m, picked, results); err != nil {
		return err
	}
	if _, err := stdout.Write(buf.Bytes()); err != nil {
		return err
	}
	if *out != "" {
		if err := os.WriteFile(*out, buf.Bytes(), 0o644); err != nil {
			return err
		}
	}
	if *jsonOut != "" {
		if err := record.Write(*jsonOut, toRecord(m, picked, results)); err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	var guiseErr error
	for i, rs := range results {
		for _, r := range rs {
			if r.err == nil {
				continue
			}
			fmt.Fprintf(stderr, "h2compare: %s: %s failed: %v\n", picked[i].name, r.spec.name, r.err)
			if r.spec.fam == famGuise && guiseErr == nil {
				guiseErr = fmt.Errorf("%s: %s: %w", picked[i].name, r.spec.name, r.err)
			}
		}
	}
	return guiseErr
}

// pick returns the scenarios named in list (all for "").
func pick(all []scenario, list string) ([]scenario, error) {
	if list == "" {
		return all, nil
	}
	var out []scenario
	for _, name := range strings.Split(list, ",") {
		found := false
		for _, s := range all {
			if s.name == strings.TrimSpace(name) {
				out = append(out, s)
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("unknown scenario %q (see -list)", name)
		}
	}
	return out, nil
}

// keepClients returns scenarios whose client lists keep only the clients
// named in list (all for ""). A name no scenario has is an error.
func keepClients(scs []scenario, list string) ([]scenario, error) {
	if list == "" {
		return scs, nil
	}
	names := strings.Split(list, ",")
	for i := range names {
		names[i] = strings.TrimSpace(names[i])
	}
	seen := map[string]bool{}
	out := make([]scenario, len(scs))
	for i, sc := range scs {
		var kept []clientSpec
		for _, sp := range sc.specs() {
			if slices.Contains(names, sp.name) {
				kept = append(kept, sp)
				seen[sp.name] = true
			}
		}
		sc.specs = func() []clientSpec { return kept }
		out[i] = sc
	}
	for _, n := range names {
		if !seen[n] {
			return nil, fmt.Errorf("no client %q in the scenarios picked", n)
		}
	}
	return out, nil
}

// writeHeapProfile writes the allocation profile to path.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// describe names the server for the report: its version, and how its TLS
// key exchange is set up.
func describe(kind, path string) (name, kex string) {
	if kind == serverNginx {
		v := "nginx"
		if b, err := exec.Command(path, "-V").CombinedOutput(); err == nil {
			for _, line := range strings.Split(string(b), "\n") {
				if s, ok := strings.CutPrefix(line, "nginx version: "); ok {
					v = s
				} else if s, ok := strings.CutPrefix(line, "built with "); ok {
					v += " (" + strings.TrimSpace(s) + ")"
				}
			}
		}
		return v + " (master_process off: one process)", "TLS groups X25519 then P-256, so a browser's hello completes without a HelloRetryRequest"
	}
	v := "nghttpd"
	if b, err := exec.Command(path, "--version").Output(); err == nil {
		v, _, _ = strings.Cut(strings.TrimSpace(string(b)), "\n")
	}
	return v, "TLS group P-256 only (nghttpd sets it so), so every browser hello gets a HelloRetryRequest"
}

// loadavg returns the 1, 5 and 15 minute load averages from /proc/loadavg,
// or "unknown".
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// toRecord turns the results into the machine-readable run.
func toRecord(m meta, scs []scenario, results [][]*result) *record.Run {
	run := &record.Run{Tool: "h2compare", Command: m.command, Date: m.date, Server: m.server}
	for i, sc := range scs {
		rs := record.Scenario{Name: sc.name, About: sc.about}
		for _, r := range results[i] {
			c := record.Client{Name: r.spec.name}
			if r.err != nil {
				c.Err = r.err.Error()
			}
			for k, s := range r.samples {
				srv := -1.0
				if v, ok := s.srvCPUPerOp(); ok {
					srv = v
				}
				c.Rounds = append(c.Rounds, record.Round{Index: k, Ops: s.ops, CPU: s.cpuPerOp(), Allocs: s.allocsPerOp(), Rate: s.perSec(sc.rate), ServerCPU: srv})
			}
			rs.Clients = append(rs.Clients, c)
		}
		run.Scenarios = append(run.Scenarios, rs)
	}
	return run
}
