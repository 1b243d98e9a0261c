package bench_test

import (
	"context"
	"strings"
	"testing"

	"github.com/guise-http/guise/bench/harness"
	"github.com/guise-http/guise/bench/internal/peer"
)

// TestPeerProcess checks the benchmark server child process: it answers,
// and counts this test's connection.
func TestPeerProcess(t *testing.T) {
	if !strings.HasPrefix(server.URL, "http://127.0.0.1:") {
		t.Fatalf("server URL %q", server.URL)
	}
	cc := harness.NewConnCounter(server.URL)
	defer cc.Close()
	before, err := cc.Accepted()
	if err != nil {
		t.Fatal(err)
	}
	c, err := harness.New("net/http", harness.Config{Conns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for range 3 {
		n, err := c.Get(context.Background(), server.URL+"/small", harness.ReadAll)
		if err != nil || n != peer.SmallSize {
			t.Fatalf("GET /small: %d bytes, %v", n, err)
		}
	}
	after, err := cc.Accepted()
	if err != nil {
		t.Fatal(err)
	}
	if after-before != 1 {
		t.Errorf("server accepted %d connections for 3 kept-alive requests, want 1", after-before)
	}
}
