package pin

import (
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestCPUs(t *testing.T) {
	got, err := CPUs("0,1,3")
	if err != nil || !slices.Equal(got, []int{0, 1, 3}) {
		t.Fatalf("CPUs: %v %v", got, err)
	}
	for _, bad := range []string{"a", "1,", ",1", "-1"} {
		if _, err := CPUs(bad); err == nil {
			t.Errorf("CPUs(%q) accepted", bad)
		}
	}
}

// TestStartAndProcess starts a child on the last CPU, checks its mask
// from /proc, moves it to CPU 0 and checks again.
func TestStartAndProcess(t *testing.T) {
	if runtime.GOOS != "linux" || runtime.NumCPU() < 2 {
		t.Skip("needs Linux and 2 CPUs")
	}
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep(1)")
	}
	last := runtime.NumCPU() - 1
	before := Current()
	cmd := exec.Command(sleep, "10")
	if err := Start(cmd, []int{last}); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	if got := Current(); !slices.Equal(got, before) {
		t.Errorf("the caller's mask changed: %v, was %v", got, before)
	}
	if got := allowed(t, cmd.Process.Pid); got != strconv.Itoa(last) {
		t.Errorf("child's CPUs %q, want %d", got, last)
	}
	if err := Process(cmd.Process.Pid, []int{0}); err != nil {
		t.Fatal(err)
	}
	if got := allowed(t, cmd.Process.Pid); got != "0" {
		t.Errorf("after Process: CPUs %q, want 0", got)
	}
}

func allowed(t *testing.T, pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatal("no Cpus_allowed_list")
	return ""
}
