//go:build !unix

package testpeer

import "os/exec"

// newGroup does nothing where there are no process groups (the packages'
// tests build for Windows, for go vet, but run on Linux).
func newGroup(cmd *exec.Cmd) {}

// stopGroup kills cmd alone.
func stopGroup(cmd *exec.Cmd, kill bool) { cmd.Process.Kill() }
