package peer

import (
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestStatCPU reads utime+stime after a command name holding spaces and
// parentheses, and this process's own /proc line.
func TestStatCPU(t *testing.T) {
	line := []byte("4242 (bench (x) srv) S 1 4242 4242 0 -1 4194560 100 0 0 0 123 77 0 0 20 0 9 0 1000 0 0\n")
	d, err := statCPU(line)
	if err != nil || d != 2000*time.Millisecond {
		t.Fatalf("statCPU = %v, %v; want 2s", d, err)
	}
	if _, err := statCPU([]byte("1 (x) S 1 2")); err == nil {
		t.Fatal("a short line parsed")
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(os.Getpid()) + "/stat")
	if err != nil {
		t.Skip("no /proc:", err)
	}
	if _, err := statCPU(b); err != nil {
		t.Fatal(err)
	}
}

// TestProcessCPU reads this process's CPU time, which must agree with
// getrusage to within a few clock ticks, and fails for a pid that cannot
// exist (pid_max is at most 2^22).
func TestProcessCPU(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc:", err)
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	before := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	got, err := ProcessCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	after := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	const slack = 50 * time.Millisecond // ticks, and rounding between the two accounts
	if got < before-slack || got > after+slack {
		t.Errorf("ProcessCPU = %v; getrusage said %v before and %v after", got, before, after)
	}
	if _, err := ProcessCPU(1 << 30); err == nil {
		t.Error("ProcessCPU of a pid that cannot exist succeeded")
	}
}

// FuzzStatCPU: any /proc stat line gives a duration of at least zero or an
// error, never a panic.
func FuzzStatCPU(f *testing.F) {
	f.Add([]byte("4242 (bench (x) srv) S 1 4242 4242 0 -1 4194560 100 0 0 0 123 77 0 0 20 0 9 0 1000 0 0\n"))
	f.Add([]byte("1 (x) S 1 2"))
	f.Add([]byte(")"))
	f.Add([]byte("1 (x) S 1 2 3 4 5 6 7 8 9 10 -5 0"))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := statCPU(b)
		if err == nil && d < 0 {
			t.Fatalf("statCPU(%q) = %v", b, d)
		}
	})
}
