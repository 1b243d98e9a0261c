package guise_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// readmeExample returns the README's example in the given language: the
// fenced block after the line "Go:", "Python:" or "Node:".
func readmeExample(t *testing.T, lang, fence string) string {
	t.Helper()
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)\n" + lang + ":\n\n```" + fence + "\n(.*?)\n```\n").FindSubmatch(b)
	if m == nil {
		t.Fatalf("README.md has no %s example (a line %q, then a ```%s block)", lang, lang+":", fence)
	}
	return string(m[1])
}

// TestReadmeGoExample runs the README's Go example as printed, in a module
// of its own that requires guise from this checkout, with example.com
// replaced by a loopback server.
func TestReadmeGoExample(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a program")
	}
	src := readmeExample(t, "Go", "go")
	if !strings.Contains(src, `"https://example.com/"`) {
		t.Fatal("the README's Go example no longer visits https://example.com/")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "hello from the README test")
	}))
	defer srv.Close()
	src = strings.ReplaceAll(src, `"https://example.com/"`, `"`+srv.URL+`/"`)

	root, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	gomod := "module example\n\ngo 1.26\n\nrequire github.com/guise-http/guise v0.0.0\n\nreplace github.com/guise-http/guise => " + root + "\n"
	sum, err := os.ReadFile("go.sum")
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"go.mod": []byte(gomod), "go.sum": sum, "main.go": []byte(src)} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("go", "run", "-mod=mod", ".")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go run: %v\n%s", err, out)
	}
	if got, want := strings.TrimSpace(string(out)), "200 HTTP/1.1 26 <nil>"; got != want {
		t.Fatalf("the example printed %q, want %q", got, want)
	}
}
