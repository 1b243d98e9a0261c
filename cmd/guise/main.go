// Command guise fetches URLs as a real browser would, checks guise's own
// fingerprints against recordings of real browsers, and serves the echo
// server that shows what a client sent.
package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

// exitError carries a process exit code out of a command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "guise",
		Short:         "An HTTP client that looks like a real browser on the wire",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	// Each subcommand lives in its own file; add it here.
	root.AddCommand(
		newFingerprintCmd(),
		newGetCmd(),
		newServeCmd(),
		newCaptureCmd(),
		newProfilesCmd(),
	)
	return root
}

func main() {
	err := newRootCmd().Execute()
	if err == nil {
		return
	}
	fmt.Fprintln(os.Stderr, "guise:", err)
	var ee *exitError
	if errors.As(err, &ee) {
		os.Exit(ee.code)
	}
	os.Exit(1)
}
