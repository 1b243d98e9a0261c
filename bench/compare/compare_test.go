package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guise-http/guise/bench/harness"
	"github.com/guise-http/guise/bench/internal/peer"
)

func TestPick(t *testing.T) {
	all := harness.Scenarios()
	got, err := pick(all, "")
	if err != nil || len(got) != len(all) {
		t.Errorf("pick all: %d, %v", len(got), err)
	}
	got, err = pick(all, "upload-scaling,small-c1")
	if err != nil || len(got) != 2 || got[0].Name != "upload-scaling" || got[1].Name != "small-c1" {
		t.Errorf("pick two: %v, %v", got, err)
	}
	if _, err := pick(all, "small-c1,nope"); err == nil {
		t.Error("unknown scenario accepted")
	}
}

func TestRunWritesReport(t *testing.T) {
	s := peer.New()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln, nil) }()
	defer func() {
		s.Shutdown(5 * time.Second)
		<-done
	}()
	out := filepath.Join(t.TempDir(), "r.md")
	var stdout, stderr strings.Builder
	args := []string{"-server", "http://" + ln.Addr().String(), "-rounds", "1", "-d", "20ms", "-warmup", "0",
		"-clients", "guise,net/http", "-scenarios", "small-c1", "-q", "-out", out, "-note", "guise at abc123"}
	if err := run(args, &stdout, &stderr); err != nil {
		t.Fatalf("run: %v; stderr %s", err, stderr.String())
	}
	file, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if string(file) != stdout.String() {
		t.Error("-out file differs from stdout")
	}
	for _, want := range []string{"command: `go run ./compare -server", "| small-c1 | guise |", "| small-c1 | net/http |", "go1.", "\n\nguise at abc123\n\n"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, stdout.String())
		}
	}
	if stderr.Len() != 0 {
		t.Errorf("-q printed progress: %q", stderr.String())
	}
	if err := run([]string{"-tls", "-server", "http://127.0.0.1:1"}, &stdout, &stderr); err == nil {
		t.Error("-tls with -server accepted")
	}
	if err := run([]string{"-rounds", "0"}, &stdout, &stderr); err == nil {
		t.Error("-rounds 0 accepted")
	}
}

func TestShellJoin(t *testing.T) {
	got := shellJoin([]string{"-d", "1s", "-note", "it's a note", ""})
	want := `-d 1s -note 'it'\''s a note' ''`
	if got != want {
		t.Errorf("shellJoin = %s, want %s", got, want)
	}
}
