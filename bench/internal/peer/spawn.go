package peer

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/guise-http/guise/bench/internal/pin"
)

// Proc is a benchmark server running in a child process.
type Proc struct {
	// URL is the plain HTTP base URL, "http://127.0.0.1:PORT".
	URL string
	// TLSURL is the HTTPS base URL when the server was started with -tls.
	TLSURL string

	cmd   *exec.Cmd
	stdin io.WriteCloser
}

// Spawn starts name with args (the server's flags, after any the program
// itself needs), with env added to the environment, and waits up to 30s for
// its address lines.
func Spawn(name string, args, env []string) (*Proc, error) {
	return SpawnOn(name, args, env, nil)
}

// SpawnOn is Spawn with the server's process on the CPUs listed (see
// package pin), none meaning wherever the caller runs.
func SpawnOn(name string, args, env []string, cpus []int) (*Proc, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	start := cmd.Start
	if len(cpus) > 0 {
		start = func() error { return pin.Start(cmd, cpus) }
	}
	if err := start(); err != nil {
		return nil, err
	}
	p := &Proc{cmd: cmd, stdin: stdin}
	wantTLS := false
	for _, a := range args {
		if a == "-tls" || a == "--tls" {
			wantTLS = true
		}
	}
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	timer := time.NewTimer(30 * time.Second)
	defer timer.Stop()
	for p.URL == "" || (wantTLS && p.TLSURL == "") {
		select {
		case l, ok := <-lines:
			if !ok {
				p.Stop()
				return nil, errors.New("peer: server exited before printing its address")
			}
			switch {
			case strings.HasPrefix(l, "http://"):
				p.URL = l
			case strings.HasPrefix(l, "https://"):
				p.TLSURL = l
			}
		case <-timer.C:
			p.Stop()
			return nil, fmt.Errorf("peer: no address from %s within 30s", name)
		}
	}
	// Drain the rest so the child never blocks on a full pipe.
	go func() {
		for range lines {
		}
	}()
	return p, nil
}

// CPU returns the user+system CPU time the server process has used, read
// from /proc (Linux only; in clock ticks, 10 ms on Linux).
func (p *Proc) CPU() (time.Duration, error) {
	return ProcessCPU(p.cmd.Process.Pid)
}

// ProcessCPU returns the user+system CPU time process pid has used so far,
// read from /proc/PID/stat (Linux only). The resolution is one clock tick,
// 10 ms on Linux, so a difference of two readings is exact only to ±10 ms.
// It is an error when /proc is missing, the process has gone, or its line
// does not parse. It is safe for concurrent use.
func ProcessCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	return statCPU(b)
}

// statCPU reads utime and stime (fields 14 and 15) from a /proc/PID/stat
// line. The command name, field 2, is in parentheses and may hold spaces:
// fields are counted from the last ')'.
func statCPU(b []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("peer: /proc stat without a command name")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 { // fields 3..15
		return 0, errors.New("peer: short /proc stat line")
	}
	ut, err1 := strconv.ParseUint(f[11], 10, 32) // 2^32 ticks: 497 days of CPU
	st, err2 := strconv.ParseUint(f[12], 10, 32)
	if err1 != nil || err2 != nil {
		return 0, errors.New("peer: bad CPU times in /proc stat")
	}
	const tick = 10 * time.Millisecond // USER_HZ is 100 on Linux
	return time.Duration(ut+st) * tick, nil
}

// Stop closes the server's stdin, which ends it, and waits up to 5s before
// killing it.
func (p *Proc) Stop() error {
	_ = p.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	t := time.NewTimer(5 * time.Second)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		_ = p.cmd.Process.Kill()
		return <-done
	}
}
