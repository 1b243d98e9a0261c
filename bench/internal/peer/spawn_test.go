package peer

import (
	"os"
	"strconv"
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
