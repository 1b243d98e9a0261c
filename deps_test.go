package guise

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportDirection pins the dependency rules of DESIGN.md: no internal
// package imports the root; h1 and h2 import neither each other nor tlsfp or
// pool; reqhead imports none of them; profile imports neither uTLS nor an
// internal package; only internal/tlsfp imports uTLS.
func TestImportDirection(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go tool not in PATH")
	}
	const mod = "github.com/guise-http/guise"
	const utls = "github.com/refraction-networking/utls"
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}:{{join .Imports \",\"}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	forbidden := map[string][]string{
		mod + "/internal/h1": {mod + "/internal/h2", mod + "/internal/tlsfp", mod + "/internal/pool"},
		mod + "/internal/h2": {mod + "/internal/h1", mod + "/internal/tlsfp", mod + "/internal/pool"},
		mod + "/profile":     {utls},
		// reqhead assembles headers from profile data alone.
		mod + "/internal/reqhead": {mod + "/internal/h1", mod + "/internal/h2", mod + "/internal/tlsfp", mod + "/internal/pool", utls},
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		pkg, imports, _ := strings.Cut(line, ":")
		if !strings.HasPrefix(pkg, mod) {
			continue
		}
		for _, imp := range strings.Split(imports, ",") {
			if imp == "" {
				continue
			}
			if pkg == mod+"/profile" && strings.HasPrefix(imp, mod+"/internal/") {
				t.Errorf("profile imports %s; it must stay a leaf", imp)
			}
			if strings.HasPrefix(pkg, mod+"/internal/") && imp == mod {
				t.Errorf("%s imports the root package", pkg)
			}
			if (imp == utls || strings.HasPrefix(imp, utls+"/")) && pkg != mod+"/internal/tlsfp" {
				t.Errorf("%s imports uTLS; only internal/tlsfp may", pkg)
			}
			for _, f := range forbidden[pkg] {
				if imp == f {
					t.Errorf("%s imports %s", pkg, f)
				}
			}
			if imp == "math/rand" {
				t.Errorf("%s imports math/rand (v1); use math/rand/v2 or crypto/rand", pkg)
			}
		}
	}
}
