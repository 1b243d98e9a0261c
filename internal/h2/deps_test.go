package h2

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDeps pins the import rules of DESIGN.md: h2 is built on
// golang.org/x/net/http2's Framer and hpack and on nothing else of x/net; it
// depends on neither h1, tlsfp, pool nor the root package; and neither it
// nor its tests import math/rand v1 (x/net and the standard library may).
func TestDeps(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	deps := strings.Fields(string(out))
	seen := map[string]bool{}
	for _, dep := range deps {
		seen[dep] = true
		switch {
		case strings.HasSuffix(dep, "/internal/h1"), strings.HasSuffix(dep, "/internal/tlsfp"),
			strings.HasSuffix(dep, "/internal/pool"), dep == "github.com/guise-http/guise":
			t.Errorf("h2 depends on %s", dep)
		}
	}
	for _, want := range []string{"golang.org/x/net/http2", "golang.org/x/net/http2/hpack"} {
		if !seen[want] {
			t.Errorf("h2 does not import %s", want)
		}
	}
	out, err = exec.Command("go", "list", "-f",
		`{{join .Imports "\n"}}{{"\n"}}{{join .TestImports "\n"}}{{"\n"}}{{join .XTestImports "\n"}}`, ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, imp := range strings.Fields(string(out)) {
		switch {
		case imp == "math/rand":
			t.Errorf("h2 imports %s", imp)
		case strings.HasPrefix(imp, "golang.org/x/net/") &&
			imp != "golang.org/x/net/http2" && imp != "golang.org/x/net/http2/hpack":
			t.Errorf("h2 imports %s: only x/net's http2 Framer and hpack are allowed", imp)
		}
	}
}
