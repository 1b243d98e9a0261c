package peer

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
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
	if err := cmd.Start(); err != nil {
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
