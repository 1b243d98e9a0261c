// Package pin puts benchmark processes on CPUs of their own, so that the
// client's CPU per request is measured with the server on another core, as
// the speed targets define it (Linux only; elsewhere every call says it is
// unsupported).
package pin

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// ErrUnsupported is returned off Linux and for a CPU number out of range;
// a CPU the machine lacks makes sched_setaffinity fail with EINVAL.
var ErrUnsupported = errors.New("pin: CPU affinity not available here")

func set(cpus []int) (unix.CPUSet, error) {
	var s unix.CPUSet
	if runtime.GOOS != "linux" {
		return s, ErrUnsupported
	}
	if len(cpus) == 0 {
		return s, errors.New("pin: no CPU given")
	}
	for _, c := range cpus {
		if c < 0 || c >= 1024 {
			return s, fmt.Errorf("pin: CPU %d: %w", c, ErrUnsupported)
		}
		s.Set(c)
	}
	return s, nil
}

// Start starts cmd with its affinity set to cpus from its first
// instruction: the fork runs on a thread locked and pinned for the
// moment, and a child inherits its parent thread's mask. A Go child then
// sizes GOMAXPROCS to len(cpus). The calling thread's mask is restored.
func Start(cmd *exec.Cmd, cpus []int) error {
	s, err := set(cpus)
	if err != nil {
		return err
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var old unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		return fmt.Errorf("pin: %w", err)
	}
	if err := unix.SchedSetaffinity(0, &s); err != nil {
		return fmt.Errorf("pin: %w", err)
	}
	startErr := cmd.Start()
	if err := unix.SchedSetaffinity(0, &old); err != nil {
		// The thread stays locked to this goroutine and ends with it
		// rather than run other goroutines on the wrong CPU.
		runtime.Goexit()
	}
	return startErr
}

// Process sets the affinity of every thread of the running process pid to
// cpus. Threads a thread not yet moved creates meanwhile would keep the old
// mask, so the threads are listed again until a pass finds none new (at
// most five passes).
func Process(pid int, cpus []int) error {
	s, err := set(cpus)
	if err != nil {
		return err
	}
	done := map[int]bool{}
	for range 5 {
		ents, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
		if err != nil {
			return fmt.Errorf("pin: %w", err)
		}
		fresh := 0
		for _, e := range ents {
			tid, err := strconv.Atoi(e.Name())
			if err != nil || done[tid] {
				continue
			}
			if err := unix.SchedSetaffinity(tid, &s); err != nil && !errors.Is(err, unix.ESRCH) {
				return fmt.Errorf("pin: thread %d: %w", tid, err)
			}
			done[tid] = true
			fresh++
		}
		if fresh == 0 {
			return nil
		}
		time.Sleep(time.Millisecond)
	}
	return nil
}

// CPUs parses a list such as "1" or "0,1"; "" is none.
func CPUs(list string) ([]int, error) {
	if list == "" {
		return nil, nil
	}
	var out []int
	start := 0
	for i := 0; i <= len(list); i++ {
		if i < len(list) && list[i] != ',' {
			continue
		}
		n, err := strconv.Atoi(list[start:i])
		if err != nil || n < 0 {
			return nil, fmt.Errorf("pin: bad CPU list %q", list)
		}
		out = append(out, n)
		start = i + 1
	}
	return out, nil
}

// Current returns the CPUs this process's calling thread may run on.
func Current() []int {
	var s unix.CPUSet
	if err := unix.SchedGetaffinity(0, &s); err != nil {
		return nil
	}
	var out []int
	for c := range 1024 {
		if s.IsSet(c) {
			out = append(out, c)
		}
	}
	return out
}
