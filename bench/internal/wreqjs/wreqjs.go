// Package wreqjs runs wreq-js (npm, a Rust engine on BoringSSL with a
// Node API) as a benchmark client: bench/node/driver.mjs in a child
// process, which runs a whole turn itself and reports its requests and its
// own process CPU (process.cpuUsage), so that the Node process's CPU, not
// the Go benchmark's, is what the column shows.
//
// The driver needs node on $PATH (or $NODE) and `npm install` done in
// bench/node (wreq-js 3.1.0, pinned in its package.json); without them
// Start returns ErrMissing and the benchmarks leave the column out.
package wreqjs

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"time"
)

// ErrMissing says node or the wreq-js package is not installed.
var ErrMissing = errors.New("wreqjs: node or bench/node/node_modules/wreq-js missing (cd bench/node && npm install)")

// Version is the wreq-js version bench/node/package.json pins.
const Version = "3.1.0"

// Dir returns bench/node, found from this source file's directory (the
// benchmarks run from bench/ or a package directory under it), or from
// $GUISE_BENCH_NODE.
func Dir() string {
	if d := os.Getenv("GUISE_BENCH_NODE"); d != "" {
		return d
	}
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return filepath.Join("bench", "node")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "node")
}

// Find returns node's path and the driver's, or ErrMissing.
func Find() (node, driver string, err error) {
	node = os.Getenv("NODE")
	if node == "" {
		if node, err = exec.LookPath("node"); err != nil {
			return "", "", ErrMissing
		}
	}
	dir := Dir()
	driver = filepath.Join(dir, "driver.mjs")
	for _, p := range []string{driver, filepath.Join(dir, "node_modules", "wreq-js", "package.json")} {
		if _, err := os.Stat(p); err != nil {
			return "", "", ErrMissing
		}
	}
	return node, driver, nil
}

// Driver is one running driver process. Turn may be called from one
// goroutine at a time; Close ends the process.
type Driver struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	out   *bufio.Reader
	mu    sync.Mutex
	caDir string
}

// Start starts a driver whose certificate checks trust only the PEM
// certificates in caPEM (nil: none, for plain HTTP).
func Start(caPEM []byte) (*Driver, error) {
	node, driver, err := Find()
	if err != nil {
		return nil, err
	}
	d := &Driver{}
	cmd := exec.Command(node, driver)
	cmd.Dir = filepath.Dir(driver)
	cmd.Env = os.Environ()
	if caPEM != nil {
		if d.caDir, err = os.MkdirTemp("", "wreqjs"); err != nil {
			return nil, err
		}
		ca := filepath.Join(d.caDir, "ca.pem")
		if err := os.WriteFile(ca, caPEM, 0o644); err != nil {
			os.RemoveAll(d.caDir)
			return nil, err
		}
		cmd.Env = append(cmd.Env, "SSL_CERT_FILE="+ca, "SSL_CERT_DIR="+d.caDir)
	}
	cmd.Stderr = os.Stderr
	if d.in, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(d.caDir)
		return nil, err
	}
	d.cmd, d.out = cmd, bufio.NewReader(stdout)
	return d, nil
}

// Turn is one turn's request to the driver.
type Turn struct {
	URL      string
	Conc     int           // concurrent requests
	D        time.Duration // the turn ends with the first request finished after D
	Isolated bool          // a new connection and handshake per request (package-level fetch)
	Want     int64         // body length every response must have
}

// Result is what the driver measured over a turn.
type Result struct {
	Ops   int64
	Bytes int64
	CPU   time.Duration // the Node process's user+system CPU
	Wall  time.Duration
}

type wireResult struct {
	Ops    int64   `json:"ops"`
	Bytes  int64   `json:"bytes"`
	CPUUs  float64 `json:"cpuUs"`
	WallUs float64 `json:"wallUs"`
	Err    string  `json:"err"`
}

// Run runs one turn. A cancelled ctx ends the driver (a turn cannot be
// stopped half-way), so the Driver is useless afterwards.
func (d *Driver) Run(ctx context.Context, t Turn) (Result, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	cmd, err := json.Marshal(map[string]any{"url": t.URL, "conc": t.Conc, "ms": t.D.Seconds() * 1000, "isolated": t.Isolated, "want": t.Want})
	if err != nil {
		return Result{}, err
	}
	if _, err := d.in.Write(append(cmd, '\n')); err != nil {
		return Result{}, fmt.Errorf("wreqjs: %w", err)
	}
	type line struct {
		b   []byte
		err error
	}
	got := make(chan line, 1)
	go func() {
		b, err := d.out.ReadBytes('\n')
		got <- line{b, err}
	}()
	var l line
	select {
	case l = <-got:
	case <-ctx.Done():
		d.cmd.Process.Kill()
		<-got
		return Result{}, ctx.Err()
	}
	if l.err != nil {
		return Result{}, fmt.Errorf("wreqjs: driver: %w", l.err)
	}
	var w wireResult
	if err := json.Unmarshal(l.b, &w); err != nil {
		return Result{}, fmt.Errorf("wreqjs: driver answered %q: %w", l.b, err)
	}
	if w.Err != "" {
		return Result{}, fmt.Errorf("wreqjs: %s", w.Err)
	}
	return Result{Ops: w.Ops, Bytes: w.Bytes, CPU: time.Duration(w.CPUUs * 1e3), Wall: time.Duration(w.WallUs * 1e3)}, nil
}

// Close ends the driver (closing its stdin; killing it after 5s) and
// removes its certificate file.
func (d *Driver) Close() error {
	d.in.Close()
	t := time.AfterFunc(5*time.Second, func() { d.cmd.Process.Kill() })
	err := d.cmd.Wait()
	t.Stop()
	os.RemoveAll(d.caDir)
	return err
}
