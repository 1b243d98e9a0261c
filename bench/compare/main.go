// Command compare benchmarks guise against net/http, fasthttp and
// tls-client in one run: for each scenario the clients take turns
// (round-robin, several rounds) against a benchmark server running in a
// separate process, and the medians go into a markdown table on stdout
// (and -out FILE).
//
// Run from bench/:
//
//	go run ./compare -rounds 5 -d 1s -out results.md
//
// By default it starts the server itself (this program re-executed with
// -serve, the same code as cmd/benchserver); -server URL uses a running
// one instead.
package main

import (
	"bytes"
	"context"
	"crypto/x509"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/guise-http/guise/bench/harness"
	"github.com/guise-http/guise/bench/internal/peer"
	"github.com/guise-http/guise/bench/internal/pin"
	"github.com/guise-http/guise/bench/internal/record"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "-serve" {
		if err := peer.Run(os.Args[2:], os.Stdin, os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "compare -serve:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rounds := fs.Int("rounds", 5, "rounds per scenario; clients alternate within each")
	dur := fs.Duration("d", time.Second, "length of one client's turn in a round")
	warmup := fs.Duration("warmup", 300*time.Millisecond, "unmeasured turn per client before the first round (0: none)")
	clients := fs.String("clients", strings.Join(harness.Names, ","), "clients to compare, comma-separated; besides the default ones: "+strings.Join(harness.Extra, ", "))
	scen := fs.String("scenarios", "", "scenarios to run, comma-separated (default all)")
	server := fs.String("server", "", "base URL of a running benchserver (default: start one)")
	useTLS := fs.Bool("tls", false, "run over https against the server's self-signed TLS listener")
	head := fs.String("head", "browser", "request head of the other clients: browser (the fields guise's profile sends, so every client sends the same head) or own (each client's defaults)")
	out := fs.String("out", "", "also write the report to this file")
	jsonOut := fs.String("json", "", "also write every round's numbers to this file as JSON (bench/internal/record), as bench/all reads them")
	serverCPUs := fs.String("server-cpu", "", "run the server it starts on these CPUs (e.g. 1), for a client pinned elsewhere (see bench/all)")
	quiet := fs.Bool("q", false, "no progress lines on stderr")
	list := fs.Bool("list", false, "list the scenarios and exit")
	var notes []string
	fs.Func("note", "a line for the top of the report (repeatable)", func(v string) error {
		notes = append(notes, v)
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return err
	}
	all := harness.Scenarios()
	if *list {
		for _, s := range all {
			fmt.Fprintf(stdout, "%-18s %s\n", s.Name, s.About)
		}
		return nil
	}
	if *rounds < 1 {
		return fmt.Errorf("-rounds %d < 1", *rounds)
	}
	scenarios, err := pick(all, *scen)
	if err != nil {
		return err
	}
	names := strings.Split(*clients, ",")

	base := *server
	statsBase := base
	var roots *x509.CertPool
	var rootsPEM []byte
	var serverCPU func() (time.Duration, error)
	cpus, err := pin.CPUs(*serverCPUs)
	if err != nil {
		return err
	}
	if base == "" {
		p, pool, pem, err := spawn(*useTLS, cpus)
		if err != nil {
			return err
		}
		defer p.Stop()
		base, statsBase, roots, rootsPEM = p.URL, p.URL, pool, pem
		if _, err := p.CPU(); err == nil {
			serverCPU = p.CPU
		}
		if *useTLS {
			base = p.TLSURL
		}
	} else if *useTLS {
		return fmt.Errorf("-tls needs the server started by compare (its certificate is made at start)")
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	var progress io.Writer
	if !*quiet {
		progress = stderr
	}
	var hdr []harness.Field
	switch *head {
	case "browser":
		if hdr, err = harness.BrowserHeader(); err != nil {
			return err
		}
		notes = append(notes, fmt.Sprintf("request head: every client sends the %d fields of guise's default profile's navigation (-head browser)", len(hdr)+1))
	case "own":
		notes = append(notes, "request head: each client's own defaults; guise sends its profile's navigation fields (-head own)")
	default:
		return fmt.Errorf("-head %q: want browser or own", *head)
	}
	meta := harness.Meta{
		Command:  "go run ./compare " + shellJoin(args),
		Date:     time.Now(),
		Rounds:   *rounds,
		Duration: *dur,
		Warmup:   *warmup,
		Base:     base,
		Notes:    notes,
	}
	results := harness.Compare(ctx, harness.Options{
		Base: base, StatsBase: statsBase, Clients: names, Scenarios: scenarios, Rounds: *rounds,
		Duration: *dur, Warmup: *warmup, RootCAs: roots, Progress: progress, Header: hdr,
		ServerCPU: serverCPU, RootsPEM: rootsPEM,
	})
	var buf bytes.Buffer
	if err := harness.Markdown(&buf, meta, results); err != nil {
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
		srv := "benchserver (fasthttp), its own process at " + base
		if len(cpus) > 0 {
			srv += ", on CPU " + *serverCPUs
		}
		if err := record.Write(*jsonOut, toRecord(meta, srv, results)); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// pick returns the scenarios named in list (all for "").
func pick(all []harness.Scenario, list string) ([]harness.Scenario, error) {
	if list == "" {
		return all, nil
	}
	var out []harness.Scenario
	for _, name := range strings.Split(list, ",") {
		found := false
		for _, s := range all {
			if s.Name == name {
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

// spawn starts the benchmark server as a child process: this program,
// re-executed with -serve.
func spawn(withTLS bool, cpus []int) (*peer.Proc, *x509.CertPool, []byte, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, nil, nil, err
	}
	args := []string{"-serve"}
	var caFile string
	if withTLS {
		dir, err := os.MkdirTemp("", "benchserver")
		if err != nil {
			return nil, nil, nil, err
		}
		defer os.RemoveAll(dir)
		caFile = filepath.Join(dir, "ca.pem")
		args = append(args, "-tls", "-ca", caFile)
	}
	p, err := peer.SpawnOn(exe, args, nil, cpus)
	if err != nil {
		return nil, nil, nil, err
	}
	if !withTLS {
		return p, nil, nil, nil
	}
	pem, err := os.ReadFile(caFile)
	if err != nil {
		p.Stop()
		return nil, nil, nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		p.Stop()
		return nil, nil, nil, fmt.Errorf("no certificate in %s", caFile)
	}
	return p, pool, pem, nil
}

// shellJoin joins args as a POSIX shell would need them typed: arguments
// with spaces or shell characters in single quotes.
func shellJoin(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if a != "" && !strings.ContainsAny(a, " \t\n'\"\\$`;&|<>()*?[]{}~#!") {
			out[i] = a
			continue
		}
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}

// toRecord turns the results into the machine-readable run.
func toRecord(m harness.Meta, server string, results []harness.Result) *record.Run {
	run := &record.Run{Tool: "compare", Command: m.Command, Date: m.Date, Server: server}
	for _, r := range results {
		if n := len(run.Scenarios); n == 0 || run.Scenarios[n-1].Name != r.Scenario.Name {
			run.Scenarios = append(run.Scenarios, record.Scenario{Name: r.Scenario.Name, About: r.Scenario.About})
		}
		c := record.Client{Name: r.Client}
		if r.Err != nil {
			c.Err = r.Err.Error()
		}
		for i, s := range r.Samples {
			srv := -1.0
			if s.ServerCPU >= 0 && s.Ops > 0 {
				srv = float64(s.ServerCPU.Microseconds()) / float64(s.Ops)
			}
			c.Rounds = append(c.Rounds, record.Round{Index: i, Ops: s.Ops, CPU: s.CPUPerOp(), Allocs: s.AllocsPerOp(), Rate: s.Rate(r.Scenario.Bytes), ServerCPU: srv})
		}
		sc := &run.Scenarios[len(run.Scenarios)-1]
		sc.Clients = append(sc.Clients, c)
	}
	return run
}
