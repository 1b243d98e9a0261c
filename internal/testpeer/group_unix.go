//go:build unix

package testpeer

import (
	"os/exec"
	"syscall"
)

// newGroup starts cmd in a process group of its own, which the daemon's
// helpers join.
func newGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// stopGroup signals cmd's process group: SIGTERM, or SIGKILL when kill.
func stopGroup(cmd *exec.Cmd, kill bool) {
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	syscall.Kill(-cmd.Process.Pid, sig)
}
