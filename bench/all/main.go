// Command all runs every comparison of the bench module in one go and
// prints, for each workload and client, the client's CPU per request
// (getrusage of the client process; the Node process's own for wreq-js),
// allocations per request, and its ratio against net/http and the other
// references the speed targets name, each a median with its min–max over
// rounds. The ratios are taken round by round: within a round the clients
// run one after the other, seconds apart.
//
// The h3 group is the root package's BenchmarkH3Compare (issue 15), its
// servers in a child process on -server-cpu.
//
// Run from bench/:
//
//	go run ./all -out /tmp/all.md
//
// It builds compare, h2compare and the root package's test binary, then
// runs each group as a child process on -client-cpu with its server on
// -server-cpu (sched_setaffinity from the fork on; the server moved there
// by compare and h2compare), so that client and server do not share a
// core. It writes one chart per workload group, SVG and PNG, into -charts,
// with a README.md saying which command drew them.
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/guise-http/guise/bench/internal/pin"
	"github.com/guise-http/guise/bench/internal/record"
	"github.com/guise-http/guise/bench/internal/wreqjs"
)

func main() {
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "all:", err)
		os.Exit(1)
	}
}

// groupNames are the groups in the order they run.
var groupNames = []string{"h1", "h1-tls", "bulk", "upload", "h2", "h3", "inproc"}

type options struct {
	rounds         int
	d, warmup      time.Duration
	clientCPUs     []int
	serverCPU      string
	dir            string // the records
	quiet          bool
	wreq           bool
	stdout, stderr io.Writer
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("all", flag.ContinueOnError)
	fs.SetOutput(stderr)
	rounds := fs.Int("rounds", 5, "rounds per scenario; clients alternate within each")
	dur := fs.Duration("d", time.Second, "length of one client's turn in a round")
	warmup := fs.Duration("warmup", 300*time.Millisecond, "unmeasured turn per client first")
	groups := fs.String("groups", strings.Join(groupNames, ","), "groups to run, comma-separated")
	clientCPU := fs.String("client-cpu", "0", "CPUs the clients run on (\"\": no pinning)")
	serverCPU := fs.String("server-cpu", "1", "CPUs the servers run on (\"\": no pinning)")
	out := fs.String("out", "", "also write the report to this file")
	charts := fs.String("charts", filepath.Join("..", "docs", "charts"), "directory for the charts (\"\": none)")
	keep := fs.String("records", "", "directory for each group's JSON record (default: a temporary one, removed)")
	from := fs.String("from", "", "measure nothing: report and chart the records in this directory (as -records wrote them)")
	quiet := fs.Bool("q", false, "no progress on stderr")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *rounds < 1 || *dur <= 0 {
		return errors.New("-rounds and -d must be positive")
	}
	o := options{rounds: *rounds, d: *dur, warmup: *warmup, serverCPU: *serverCPU, quiet: *quiet, stdout: stdout, stderr: stderr}
	var err error
	if o.clientCPUs, err = pin.CPUs(*clientCPU); err != nil {
		return err
	}
	if _, err := pin.CPUs(*serverCPU); err != nil {
		return err
	}
	_, _, werr := wreqjs.Find()
	o.wreq = werr == nil
	picked := strings.Split(*groups, ",")
	for _, g := range picked {
		if !slices.Contains(groupNames, g) {
			return fmt.Errorf("unknown group %q (want some of %s)", g, strings.Join(groupNames, ","))
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()

	command := strings.TrimSpace("go run ./all " + strings.Join(args, " "))
	load0 := loadavg()
	start := time.Now()
	rs := runs{}
	if *from != "" {
		for _, g := range picked {
			if r, err := record.Read(filepath.Join(*from, g+".json")); err == nil {
				rs[g] = r
			}
		}
	} else {
		o.dir = *keep
		if o.dir == "" {
			if o.dir, err = os.MkdirTemp("", "bench-all"); err != nil {
				return err
			}
			defer os.RemoveAll(o.dir)
		} else if err := os.MkdirAll(o.dir, 0o755); err != nil {
			return err
		}
		bins, err := build(o.dir)
		if err != nil {
			return err
		}
		for _, g := range picked {
			r, err := o.group(ctx, g, bins)
			if err != nil {
				return fmt.Errorf("group %s: %w", g, err)
			}
			rs[g] = r
		}
	}
	header := []string{
		fmt.Sprintf("- command: `%s` (from bench/), %s, %s", command, start.UTC().Format("2006-01-02 15:04 MST"), time.Since(start).Round(time.Second)),
		fmt.Sprintf("- machine: nproc %d, %s, %s/%s; load average %s at the start, %s at the end", runtime.NumCPU(), runtime.Version(), runtime.GOOS, runtime.GOARCH, load0, loadavg()),
		pinNote(o),
		fmt.Sprintf("- %d rounds of one %v turn per client (order rotated each round) after a %v warm-up turn; CPU is user+system of the client process per request (getrusage; wreq-js: the Node process's, process.cpuUsage), allocs are runtime Mallocs per request (– outside Go); a ratio is taken within each round and shown as the median (min–max) over rounds", o.rounds, o.d, o.warmup),
	}
	if !o.wreq && *from == "" {
		header = append(header, "- wreq-js: left out ("+werr.Error()+")")
	}
	var buf bytes.Buffer
	if err := report(&buf, rs, workloads(), targets(), header); err != nil {
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
	if *charts != "" {
		if err := drawCharts(rs, *charts, command, start); err != nil {
			return err
		}
	}
	return ctx.Err()
}

func pinNote(o options) string {
	if len(o.clientCPUs) == 0 || o.serverCPU == "" {
		return "- not pinned: clients and servers share the CPUs"
	}
	return fmt.Sprintf("- pinned: every client process on CPU %s (started with that affinity, so Go sizes GOMAXPROCS to it; wreq-js's Node process inherits it), every server on CPU %s (benchserver started there, nghttpd moved there thread by thread)", cpuList(o.clientCPUs), o.serverCPU)
}

func cpuList(cs []int) string {
	s := make([]string, len(cs))
	for i, c := range cs {
		s[i] = strconv.Itoa(c)
	}
	return strings.Join(s, ",")
}

// binaries are the programs build makes.
type binaries struct{ compare, h2compare, rootTest string }

// build compiles compare, h2compare and the root package's tests into dir,
// so that no build is timed.
func build(dir string) (binaries, error) {
	b := binaries{
		compare:   filepath.Join(dir, "compare"),
		h2compare: filepath.Join(dir, "h2compare"),
		rootTest:  filepath.Join(dir, "guise.test"),
	}
	steps := []*exec.Cmd{
		exec.Command("go", "build", "-o", b.compare, "./compare"),
		exec.Command("go", "build", "-o", b.h2compare, "./h2compare"),
		exec.Command("go", "test", "-c", "-o", b.rootTest, "."),
	}
	steps[2].Dir = ".."
	for _, c := range steps {
		if out, err := c.CombinedOutput(); err != nil {
			return b, fmt.Errorf("%s: %v\n%s", strings.Join(c.Args, " "), err, out)
		}
	}
	return b, nil
}

// group runs one group's command and reads back its record.
func (o *options) group(ctx context.Context, g string, bins binaries) (*record.Run, error) {
	rec := filepath.Join(o.dir, g+".json")
	common := []string{"-q", "-rounds", strconv.Itoa(o.rounds), "-d", o.d.String(), "-warmup", o.warmup.String(), "-json", rec}
	if len(o.clientCPUs) > 0 && o.serverCPU != "" {
		common = append(common, "-server-cpu", o.serverCPU)
	}
	h1 := "guise,net/http,fasthttp,tls-client,raw"
	if o.wreq {
		h1 += ",wreq-js"
	}
	var bin string
	var args []string
	switch g {
	case "h1":
		bin, args = bins.compare, append(common, "-scenarios", "small-c16", "-clients", h1)
	case "h1-tls":
		bin, args = bins.compare, append(common, "-tls", "-scenarios", "small-c16", "-clients", h1)
	case "bulk":
		bin, args = bins.compare, append(common, "-scenarios", "chunked-8m", "-clients", "guise,net/http,fasthttp,tls-client,raw")
	case "upload":
		bin, args = bins.compare, append(common, "-scenarios", "upload-32m", "-clients", "guise,net/http,fasthttp,tls-client,raw")
	case "h2":
		bin, args = bins.h2compare, append(common, "-scenarios", "h2-small-c16,h2-download-8m,isolated-https-c1")
	case "inproc":
		return o.inproc(ctx, bins.rootTest)
	case "h3":
		return o.h3(ctx, bins.rootTest)
	}
	if !o.quiet {
		fmt.Fprintf(o.stderr, "all: %s: %s %s\n", g, filepath.Base(bin), strings.Join(args, " "))
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout = io.Discard
	cmd.Stderr = o.stderr
	if err := o.start(cmd); err != nil {
		return nil, err
	}
	if err := cmd.Wait(); err != nil {
		// h2compare exits non-zero when a guise client failed; its
		// record still says which and why.
		if _, statErr := os.Stat(rec); statErr != nil {
			return nil, err
		}
		fmt.Fprintf(o.stderr, "all: %s: %v (the record says which client failed)\n", g, err)
	}
	r, err := record.Read(rec)
	if err != nil {
		return nil, err
	}
	r.Command = strings.Replace(r.Command, " -json "+rec, "", 1)
	return r, nil
}

// start starts cmd on the client CPUs, or as is when not pinning.
func (o *options) start(cmd *exec.Cmd) error {
	if len(o.clientCPUs) == 0 || o.serverCPU == "" {
		return cmd.Start()
	}
	return pin.Start(cmd, o.clientCPUs)
}

// inproc runs the root package's in-process benchmarks (a canned server
// in the same process): BenchmarkGzip4K (a 4 KiB gzip body, guise against
// net/http's transparent gzip) and BenchmarkSessionDo (a reused Request),
// each round one -test.count.
func (o *options) inproc(ctx context.Context, bin string) (*record.Run, error) {
	args := []string{"-test.run", "XXX", "-test.bench", "^Benchmark(Gzip4K|SessionDo)$", "-test.benchmem", "-test.benchtime", "20000x", "-test.count", strconv.Itoa(o.rounds)}
	if !o.quiet {
		fmt.Fprintf(o.stderr, "all: inproc: guise.test %s\n", strings.Join(args, " "))
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = ".."
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, o.stderr
	if err := o.start(cmd); err != nil {
		return nil, err
	}
	if err := cmd.Wait(); err != nil {
		return nil, fmt.Errorf("%v\n%s", err, out.Bytes())
	}
	run := &record.Run{Tool: "go test", Command: "go test -c -o guise.test . && ./guise.test " + strings.Join(args, " ") + " (in the root)", Date: time.Now(), Server: "a canned HTTP/1.1 server in the same process, on the client's CPU"}
	sc := map[string]*record.Scenario{}
	order := []string{}
	sc1 := func(name, about string) *record.Scenario {
		if s, ok := sc[name]; ok {
			return s
		}
		sc[name] = &record.Scenario{Name: name, About: about}
		order = append(order, name)
		return sc[name]
	}
	benchLines(out.Bytes(), func(name string, ops int64, v map[string]float64) {
		ns := v["ns/op"]
		r := record.Round{Ops: ops, CPU: ns / 1e3, Allocs: v["allocs/op"], Rate: 1e9 / ns, ServerCPU: -1}
		switch {
		case strings.HasPrefix(name, "BenchmarkGzip4K/"):
			addRound(sc1("gzip-4k", "GET of a 4 KiB gzip body, decoded, on a warm connection; wall time per request with the server in the process"), strings.TrimPrefix(name, "BenchmarkGzip4K/"), r)
		case name == "BenchmarkSessionDo":
			addRound(sc1("reused-request", "Session.Do with one Request reused, a 100-byte body; wall time per request with the server in the process"), "guise", r)
		}
	})
	for _, n := range order {
		run.Scenarios = append(run.Scenarios, *sc[n])
	}
	if len(run.Scenarios) == 0 {
		return nil, fmt.Errorf("no benchmark lines in\n%s", out.Bytes())
	}
	return run, record.Write(filepath.Join(o.dir, "inproc.json"), run)
}

// addRound appends r to client's rounds in s, numbering it.
func addRound(s *record.Scenario, client string, r record.Round) {
	for i := range s.Clients {
		if s.Clients[i].Name == client {
			r.Index = len(s.Clients[i].Rounds)
			s.Clients[i].Rounds = append(s.Clients[i].Rounds, r)
			return
		}
	}
	s.Clients = append(s.Clients, record.Client{Name: client, Rounds: []record.Round{r}})
}

// benchLines calls f with each result line of go test -bench output: the
// benchmark's name without its GOMAXPROCS suffix, its iterations, and its
// values by unit ("ns/op", "allocs/op", custom metrics).
func benchLines(out []byte, f func(name string, ops int64, v map[string]float64)) {
	sn := bufio.NewScanner(bytes.NewReader(out))
	for sn.Scan() {
		fs := strings.Fields(sn.Text())
		if len(fs) < 4 || !strings.HasPrefix(fs[0], "Benchmark") {
			continue
		}
		name := fs[0]
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			if _, err := strconv.Atoi(name[i+1:]); err == nil {
				name = name[:i] // the GOMAXPROCS suffix
			}
		}
		ops, err := strconv.ParseInt(fs[1], 10, 64)
		if err != nil {
			continue
		}
		v := map[string]float64{}
		for i := 2; i+1 < len(fs); i += 2 {
			if x, err := strconv.ParseFloat(fs[i], 64); err == nil {
				v[fs[i+1]] = x
			}
		}
		f(name, ops, v)
	}
}

// h3 runs the root package's BenchmarkH3Compare (issue 15): guise's
// HTTP/3 over its own QUIC, quic-go's http3 client and guise's HTTP/2,
// the servers (quic-go's HTTP/3, Go's HTTP/2) in a child process that
// moves itself to -server-cpu; each round one -test.count of -d per
// client.
func (o *options) h3(ctx context.Context, bin string) (*record.Run, error) {
	args := []string{"-test.run", "XXX", "-test.bench", "^BenchmarkH3Compare$", "-test.benchmem", "-test.benchtime", o.d.String(), "-test.count", strconv.Itoa(o.rounds)}
	if !o.quiet {
		fmt.Fprintf(o.stderr, "all: h3: guise.test %s\n", strings.Join(args, " "))
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = ".."
	server := "quic-go's HTTP/3 server and Go's HTTP/2 server in a child process"
	if len(o.clientCPUs) > 0 && o.serverCPU != "" {
		cmd.Env = append(os.Environ(), "GUISE_H3CMP_SERVER_CPU="+o.serverCPU)
		server += " on CPU " + o.serverCPU
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, o.stderr
	if err := o.start(cmd); err != nil {
		return nil, err
	}
	if err := cmd.Wait(); err != nil {
		return nil, fmt.Errorf("%v\n%s", err, out.Bytes())
	}
	run := &record.Run{Tool: "go test", Command: "go test -c -o guise.test . && GUISE_H3CMP_SERVER_CPU=" + o.serverCPU + " ./guise.test " + strings.Join(args, " ") + " (in the root)", Date: time.Now(), Server: server}
	about := map[string]string{
		"small-c16":   "16 goroutines GET 100 bytes over one connection (h3: QUIC; h2: TCP+TLS)",
		"download-8m": "1 goroutine downloads 8 MiB again and again over one connection",
		"handshake":   "1 goroutine GETs 100 bytes, each on a new connection (a new Transport, closed after)",
	}
	sc := map[string]*record.Scenario{}
	var order []string
	benchLines(out.Bytes(), func(name string, ops int64, v map[string]float64) {
		parts := strings.Split(name, "/")
		if len(parts) != 3 || parts[0] != "BenchmarkH3Compare" {
			return
		}
		s, ok := sc[parts[1]]
		if !ok {
			s = &record.Scenario{Name: parts[1], About: about[parts[1]]}
			sc[parts[1]] = s
			order = append(order, parts[1])
		}
		r := record.Round{Ops: ops, CPU: v["cpu-ns/op"] / 1e3, Allocs: v["allocs/op"], Rate: 1e9 / v["ns/op"], ServerCPU: -1}
		if mb, ok := v["mb/cpu-s"]; ok {
			r.Rate = mb
		}
		addRound(s, parts[2], r)
	})
	for _, n := range order {
		run.Scenarios = append(run.Scenarios, *sc[n])
	}
	if len(run.Scenarios) == 0 {
		return nil, fmt.Errorf("no benchmark lines in\n%s", out.Bytes())
	}
	return run, record.Write(filepath.Join(o.dir, "h3.json"), run)
}

// loadavg returns /proc/loadavg's three figures, or "unknown".
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
