package main

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guise-http/guise/bench/internal/record"
)

func client(name string, cpu ...float64) record.Client {
	c := record.Client{Name: name}
	for i, v := range cpu {
		c.Rounds = append(c.Rounds, record.Round{Index: i, Ops: 100, CPU: v, Allocs: 2, Rate: 1})
	}
	return c
}

func sample() runs {
	slow := client("net/http", 40, 20, 30)
	fast := client("guise", 10, 10, 12)
	half := client("fasthttp", 20)
	half.Rounds[0].Index = 1 // only round 1: pairs with net/http's 20
	return runs{"h1": {Command: "go run ./compare", Server: "s", Scenarios: []record.Scenario{{Name: "small-c16", Clients: []record.Client{fast, slow, half}}}}}
}

// TestRatioPairsRounds checks a ratio is taken within each round, so its
// spread is the rounds' own, and that rounds one side lacks are skipped.
func TestRatioPairsRounds(t *testing.T) {
	rs := sample()
	g, n := rs.find("h1/small-c16", "guise"), rs.find("h1/small-c16", "net/http")
	s := ratio(g, n, cpuOf)
	if s.n != 3 || s.lo != 0.25 || s.hi != 0.5 || s.med != 0.4 {
		t.Fatalf("ratio %+v, want 0.25, 0.4, 0.5 over 3 rounds", s)
	}
	if s := ratio(rs.find("h1/small-c16", "fasthttp"), n, cpuOf); s.n != 1 || s.med != 1 {
		t.Fatalf("one shared round: %+v", s)
	}
	if rs.find("h1/small-c16", "tls-client") != nil || rs.find("h2/x", "guise") != nil {
		t.Fatal("found a client that is not there")
	}
}

func TestTargetVerdicts(t *testing.T) {
	rs := sample()
	a, b := ref{"h1/small-c16", "guise"}, ref{"h1/small-c16", "net/http"}
	for _, tc := range []struct {
		limit float64
		want  string
	}{{0.5, "met (every round)"}, {0.45, "met (median)"}, {0.3, "**not met**"}} {
		if _, v := (target{a: a, b: b, m: cpuOf, limit: tc.limit}).eval(rs); v != tc.want {
			t.Errorf("limit %v: %q, want %q", tc.limit, v, tc.want)
		}
	}
	if _, v := (target{a: ref{"h2/x", "guise"}, b: b, m: cpuOf, limit: 1}).eval(rs); v != "not measured" {
		t.Errorf("missing: %q", v)
	}
}

func TestReportAndCharts(t *testing.T) {
	rs := sample()
	var b bytes.Buffer
	wl := []workload{{"h1/small-c16", "small", "µs", []string{"guise", "net/http", "fasthttp"}, []string{"net/http"}}}
	if err := report(&b, rs, wl, nil, []string{"- head"}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| guise | 10.0 (10.0–12.0) | 2.0 | 0.40x (0.25–0.50) |", "| net/http | 30.0 (20.0–40.0) | 2.0 | 1 |", "`go run ./compare`"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
	dir := t.TempDir()
	if err := drawCharts(rs, dir, "go run ./all", rs["h1"].Date); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"cpu-vs-nethttp.png", "h1-c16.png"} {
		fh, err := os.Open(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(fh)
		fh.Close()
		if err != nil || img.Bounds().Dx() < 400 {
			t.Fatalf("%s: %v", f, err)
		}
		if _, err := os.Stat(filepath.Join(dir, strings.TrimSuffix(f, ".png")+".svg")); err != nil {
			t.Fatal(err)
		}
	}
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil || !strings.Contains(string(readme), "`go run ./all`") {
		t.Fatalf("README: %v %q", err, readme)
	}
}
