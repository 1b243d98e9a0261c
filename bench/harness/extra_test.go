package harness

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/guise-http/guise/bench/internal/wreqjs"
)

// TestRaw checks the raw client moves the right bytes where it fits (the
// Content-Length scenarios), keeps its connections, and refuses a chunked
// body with an error rather than misreading it.
func TestRaw(t *testing.T) {
	base := startPeer(t)
	cc := NewConnCounter(base)
	defer cc.Close()
	ctx := context.Background()
	hdr, err := BrowserHeader()
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range testScenarios() {
		if sc.Name != "small-c16" && sc.Name != "upload-32m" && sc.Name != "download-1m" {
			continue
		}
		c, err := New("raw", Config{Conns: sc.Conc, Header: hdr})
		if err != nil {
			t.Fatal(err)
		}
		count := 3 * sc.Conc
		s, err := Round(ctx, c, &sc, base, 0, count, cc.Accepted)
		c.Close()
		if err != nil {
			t.Fatalf("%s: %v", sc.Name, err)
		}
		if s.Ops != int64(count) || s.Bytes != int64(count)*sc.Payload() || s.Conns < 1 || s.Conns > int64(sc.Conc) {
			t.Errorf("%s: %+v", sc.Name, s)
		}
	}
	c, _ := New("raw", Config{Conns: 1})
	defer c.Close()
	if _, err := c.Get(ctx, base+"/chunked4k", ReadAll); !errors.Is(err, errRawFraming) {
		t.Errorf("chunked body: %v, want errRawFraming", err)
	}
}

// TestWreqJS runs one short wreq-js turn when node and the package are
// installed (bench/node: npm install), and skips otherwise.
func TestWreqJS(t *testing.T) {
	if _, _, err := wreqjs.Find(); err != nil {
		if os.Getenv("GUISE_REQUIRE_PEERS") == "1" {
			t.Fatal(err) // .ci/run installs it
		}
		t.Skip(err)
	}
	base := startPeer(t)
	cc := NewConnCounter(base)
	defer cc.Close()
	c, err := New("wreq-js", Config{Conns: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sc := Scenario{Name: "small-c4", Path: "/small", Want: 100, Conc: 4}
	s, err := Round(context.Background(), c, &sc, base, 200*time.Millisecond, 0, cc.Accepted)
	if err != nil {
		t.Fatal(err)
	}
	if s.Ops < 4 || s.Bytes != 100*s.Ops || s.CPU <= 0 || !s.External || s.AllocsPerOp() != -1 || s.Conns < 1 {
		t.Errorf("implausible sample %+v", s)
	}
	up := Scenario{Name: "up", Path: "/upload", Upload: 10, Conc: 1}
	if _, err := Round(context.Background(), c, &up, base, time.Millisecond, 0, nil); err == nil {
		t.Error("wreq-js ran an upload")
	}
}
