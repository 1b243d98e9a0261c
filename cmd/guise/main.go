// Command guise fetches URLs as a real browser would, checks guise's own
// fingerprints against recordings of real browsers, and serves the echo
// server that shows what a client sent.
//
// Usage:
//
//	guise fingerprint [--profile NAME|FILE,... | --all]
//	guise get [flags] URL
//	guise serve [--addr HOST:PORT] [--ca-out FILE]
//	guise capture --out FILE [--addr HOST:PORT] [--ca-out FILE]
//	guise profiles
//	guise version [--short]
//
// fingerprint starts the echo server on loopback, visits it as each profile
// named (the default one unless named) and prints the JA4, JA3N, JA3, Akamai
// HTTP/2 string, pseudo-header order and header order it saw beside the
// recording's, marking each as a match or not. It needs no network. The exit
// status is 1 when anything differs.
//
// get is curl-like: -X, -H, -d, -o, -i, -I, -v, -s, -k, -f, -L, -m, -b, -c,
// -x, -e, --max-redirs, --resolve and --cacert mean what curl's flags of the
// same name mean; --profile picks the browser (a name, a profile file from
// capture, or a weighted set such as chrome:3,firefox:1, drawn from with
// --seed), --kind the kind of request,
// and --raw hands the body over without undoing its Content-Encoding
// ('guise get --help' lists them all). Where curl has an exit code for a failure,
// get exits with the same one: 3 bad URL, 6 resolve, 7 connect, 8 a reply
// guise cannot parse, 22 an HTTP error under -f, 23 write error, 28 timeout,
// 35 TLS handshake, 47 too many redirects, 56 receive error, 60 certificate
// not verified, 77 unreadable --cacert file; 2 is a usage error and 130 an
// interrupt.
//
// serve runs the echo server (package fingerprint's Server): TLS from an
// in-memory CA, written out with --ca-out so a browser can trust it, and
// plain HTTP on the same port. /api/all answers with what the calling
// request and its connection sent; /api/conns lists every connection.
//
// capture runs the same server, waits for a real browser's visits (HTTP/2
// and HTTP/1.1, first and resumed connections, and the /flow/start pages
// whose fetch() POST and form submission give the header sets of requests
// with a body) and writes one profile file in the format package profile
// embeds, with what the browser sent as its reference and the embedded
// profile whose sets stand in for those the visits did not show. It prints
// the steps for Chrome, Edge, Firefox and Safari.
//
// profiles lists the embedded profiles, their browser, version, OS and
// whether they were recorded.
//
// version prints guise's version, its C ABI version, the commit it was
// built from and the browser versions of the embedded profiles.
package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

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
		newWSCmd(),
		newVersionCmd(),
	)
	return root
}

func main() {
	err := newRootCmd().Execute()
	if err == nil {
		return
	}
	fmt.Fprintln(os.Stderr, errorLine(err))
	os.Exit(exitCode(err))
}

// errorLine is the line main prints for err: prefixed with "guise: " once,
// since a request's *guise.Error already begins with it.
func errorLine(err error) string {
	msg := err.Error()
	if strings.HasPrefix(msg, "guise: ") {
		return msg
	}
	return "guise: " + msg
}

// exitCode is the process exit status for a command's error: its
// exitError's code, 1 for any other error, 0 for none.
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	return 1
}
