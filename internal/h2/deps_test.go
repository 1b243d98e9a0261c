package h2

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDeps pins the import rules of DESIGN.md: h2 imports neither h1, tlsfp
// nor pool, nor x/net/http2 (whose idna import needs x/text).
func TestDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		switch {
		case strings.HasSuffix(dep, "/internal/h1"), strings.HasSuffix(dep, "/internal/tlsfp"),
			strings.HasSuffix(dep, "/internal/pool"), dep == "golang.org/x/net/http2",
			dep == "github.com/guise-http/guise", dep == "math/rand":
			t.Errorf("h2 imports %s", dep)
		}
	}
}
