package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"testing"

	"github.com/guise-http/guise"
)

// TestErrorLine: the line main prints names guise once, whether or not the
// error is a *guise.Error (whose text already starts with "guise: ").
func TestErrorLine(t *testing.T) {
	reqErr := &guise.Error{Op: "Get", URL: "http://x/", Err: errors.New("boom")}
	for _, tc := range []struct {
		err  error
		want string
	}{
		{reqErr, `guise: Get "http://x/": boom`},
		{&exitError{exitRecv, reqErr}, `guise: Get "http://x/": boom`},
		{errors.New("unknown flag: --nope"), "guise: unknown flag: --nope"},
	} {
		if got := errorLine(tc.err); got != tc.want {
			t.Errorf("errorLine(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

// TestUnknownProfile: an unknown --profile is a usage error (exit 2) found
// before any connection is made, in get and in ws.
func TestUnknownProfile(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	target := ln.Addr().String()
	for _, args := range [][]string{
		{"get", "--profile", "nope", "http://" + target + "/"},
		{"get", "--profile", "nope", "--resolve", "a.test:1:127.0.0.1", "http://a.test:1/"},
		{"ws", "--profile", "nope", "ws://" + target + "/"},
		{"fingerprint", "--profile", "nope"},
	} {
		if code := runRoot(args...); code != exitUsage {
			t.Errorf("guise %q: exit %d, want %d", args, code, exitUsage)
		}
	}
	// Nothing reached the listener: the first connection it accepts is
	// this sentinel, dialled after the commands returned.
	sentinel, err := net.Dial("tcp", target)
	if err != nil {
		t.Fatal(err)
	}
	defer sentinel.Close()
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.RemoteAddr().String() != sentinel.LocalAddr().String() {
		t.Errorf("a command connected to %s before failing", target)
	}
}

// runRoot runs the guise command line and returns its exit status.
func runRoot(args ...string) int {
	cmd := newRootCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetIn(&bytes.Buffer{})
	cmd.SetArgs(args)
	return exitCode(cmd.ExecuteContext(context.Background()))
}
