package guise

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// catalogueRow is one row of docs/RELIABILITY.md: its id and test column.
type catalogueRow struct {
	id, tests string
}

var (
	catalogueRowRE = regexp.MustCompile(`^\|\s*([A-Z][A-Z0-9]*-\d+)\s*\|`)
	testFuncRE     = regexp.MustCompile(`(?m)^func ((?:Test|Fuzz)\w+)\(`)
	testNameRE     = regexp.MustCompile(`\b(?:Test|Fuzz)\w+`)
)

func readCatalogue(t *testing.T) []catalogueRow {
	b, err := os.ReadFile("docs/RELIABILITY.md")
	if err != nil {
		t.Fatal(err)
	}
	var rows []catalogueRow
	for _, line := range strings.Split(string(b), "\n") {
		m := catalogueRowRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		cols := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		rows = append(rows, catalogueRow{id: m[1], tests: strings.TrimSpace(cols[len(cols)-1])})
	}
	return rows
}

// testSources returns every _test.go file of the repository (the bench
// module included) by path.
func testSources(t *testing.T) map[string]string {
	src := map[string]string{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != "." {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, "_test.go") {
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			src[path] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// notYetTested are the rows the catalogue marks "not yet tested", with
// why they stay so; any other such row fails TestCatalogueComplete.
var notYetTested = map[string]string{}

// TestCatalogueComplete keeps docs/RELIABILITY.md and the tests in step:
// every row's test column names tests (or fuzz targets) that exist; every
// id is cited by some test (in its source, as "H2-13", or in its name, as
// TestH2_13GoAway); every id a test cites is in the catalogue; and no row
// is "not yet tested" but those listed in notYetTested.
func TestCatalogueComplete(t *testing.T) {
	rows := readCatalogue(t)
	if len(rows) < 100 {
		t.Fatalf("read %d rows from docs/RELIABILITY.md; the table format changed?", len(rows))
	}
	src := testSources(t)
	funcs := map[string]bool{}
	for _, s := range src {
		for _, m := range testFuncRE.FindAllStringSubmatch(s, -1) {
			funcs[m[1]] = true
		}
	}
	ids := map[string]bool{}
	prefixes := map[string]bool{}
	for _, r := range rows {
		if ids[r.id] {
			t.Errorf("%s: two rows", r.id)
		}
		ids[r.id] = true
		prefixes[r.id[:strings.IndexByte(r.id, '-')]] = true
	}
	var alt []string
	for p := range prefixes {
		alt = append(alt, p)
	}
	// An id cited in a test: a prefix of the catalogue's, a dash, digits;
	// not part of a longer word (P-256 is a curve, not a row).
	citeRE := regexp.MustCompile(`(?:^|[^A-Za-z0-9_.-])((?:` + strings.Join(alt, "|") + `)-\d+)(?:[^0-9A-Za-z]|$)`)
	curves := map[string]bool{"P-256": true, "P-384": true, "P-521": true}
	cited := map[string]bool{}
	for path, s := range src {
		for _, m := range citeRE.FindAllStringSubmatch(s, -1) {
			id := m[1]
			if curves[id] {
				continue
			}
			cited[id] = true
			if !ids[id] {
				t.Errorf("%s cites %s, which docs/RELIABILITY.md does not have", path, id)
			}
		}
	}
	for name := range funcs {
		for id := range ids {
			under := strings.ReplaceAll(id, "-", "_")
			if strings.HasPrefix(name, "Test"+under) && !isDigit(name, len("Test"+under)) {
				cited[id] = true
			}
		}
	}
	for _, r := range rows {
		if why, ok := notYetTested[r.id]; ok {
			if !strings.Contains(r.tests, "not yet tested") {
				t.Errorf("%s is tested now (%s): take it out of notYetTested (%s)", r.id, r.tests, why)
			}
			continue
		}
		if strings.Contains(r.tests, "not yet tested") {
			t.Errorf("%s is not yet tested: %s", r.id, r.tests)
			continue
		}
		names := testNameRE.FindAllString(r.tests, -1)
		if len(names) == 0 && !strings.Contains(r.tests, "goleak.VerifyTestMain") {
			t.Errorf("%s names no test: %q", r.id, r.tests)
		}
		for _, n := range names {
			if !funcs[n] {
				t.Errorf("%s names %s, which no _test.go file defines", r.id, n)
			}
		}
		if !cited[r.id] {
			t.Errorf("%s is cited by no test: name it in the comment of %s", r.id, strings.Join(names, " or "))
		}
	}
}

func isDigit(s string, i int) bool { return i < len(s) && s[i] >= '0' && s[i] <= '9' }

// TestEveryPackageVerifiesLeaks holds RELIABILITY L-01 to the tree: every
// directory of this module with tests has a TestMain that runs
// goleak.VerifyTestMain (bench/ is a module of its own).
func TestEveryPackageVerifiesLeaks(t *testing.T) {
	dirs := map[string]bool{}
	for path, s := range testSources(t) {
		dir := filepath.Dir(path)
		if dir == "bench" || strings.HasPrefix(dir, "bench"+string(filepath.Separator)) {
			continue
		}
		dirs[dir] = dirs[dir] || strings.Contains(s, "goleak.VerifyTestMain(")
	}
	if len(dirs) < 10 {
		t.Fatalf("%d test directories found; the walk is broken?", len(dirs))
	}
	for dir, ok := range dirs {
		if !ok {
			t.Errorf("%s: no TestMain running goleak.VerifyTestMain", dir)
		}
	}
}
