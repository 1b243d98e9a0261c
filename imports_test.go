package guise_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// This file pins the whole import graph of the module, after the model of
// go/build's deps_test.go: every package of the module has a rule below that
// names its layer and everything it may import, and TestImportGraph fails on
// any import the rules do not allow. docs/DESIGN.md explains the layers.
//
// To add a package (say a new internal/headers), add a rule with its layer,
// the module packages and third-party packages it imports, and, for a low
// layer, the exact standard packages it imports. A module package may only
// import packages of a lower layer. To add an edge, add the import to the
// importer's rule; the failure message names the rule to edit.

const module = "github.com/guise-http/guise"

// importRule is what one package of the module may import.
type importRule struct {
	pkg   string // path relative to the module; "." is the root package
	layer int    // module imports must come from lower layers

	// mod lists the module packages it may import (relative paths, "." for
	// the root); ext the third-party packages, by exact import path.
	mod, ext string

	// std, when set, is the exact set of standard packages it may import:
	// the low layers must not grow new standard dependencies unnoticed
	// (net/http above all). When empty, any standard package but those in
	// denyStd and stdDenied may be imported.
	std     string
	denyStd string
}

// importRules, lowest layer first. Lists are space-separated.
var importRules = []importRule{
	// Layer 0: leaves.
	{pkg: "fields", layer: 0, std: "strings"},
	{pkg: "internal/pool", layer: 0, std: "context errors strconv sync time"},
	{pkg: "internal/decode", layer: 0,
		ext: "github.com/andybalholm/brotli github.com/klauspost/compress/flate github.com/klauspost/compress/gzip " +
			"github.com/klauspost/compress/zlib github.com/klauspost/compress/zstd",
		std: "bufio errors io strconv sync"},
	// QUIC and HTTP/3 wire formats: no state, no I/O.
	{pkg: "internal/quicwire", layer: 0, ext: "golang.org/x/crypto/chacha20 golang.org/x/crypto/chacha20poly1305",
		std: "crypto/aes crypto/cipher crypto/hkdf crypto/sha256 crypto/sha512 encoding/binary errors hash strconv"},
	{pkg: "internal/h3wire", layer: 1, mod: "internal/quicwire", std: "errors io strconv"},
	// Alt-Svc (RFC 7838) and the broken-alternative memory: no HTTP.
	{pkg: "internal/altsvc", layer: 0, std: "errors strconv strings sync time"},
	// guise's release and C ABI versions, and what the go command stamped.
	{pkg: "internal/version", layer: 0, std: "runtime/debug sync"},
	// go generate's writer of the version into the bindings' sources.
	{pkg: "internal/version/stamp", layer: 1, mod: "internal/version", std: "bytes fmt log os regexp"},
	{pkg: "internal/testpeer", layer: 0, denyStd: "net/http"}, // test helpers only: no non-test importer
	{pkg: "internal/testpeer/tls13", layer: 1, mod: "internal/testpeer",
		ext:     "github.com/andybalholm/brotli github.com/klauspost/compress/zlib github.com/klauspost/compress/zstd",
		denyStd: "net/http crypto/tls"}, // a TLS 1.3 server of its own, not crypto/tls's

	// Layer 1: profile data, and the engines built on fields alone.
	{pkg: "profile", layer: 1, mod: "fields",
		std: "bytes crypto/rand embed encoding/binary encoding/hex encoding/json errors fmt io os slices strconv strings sync"},
	{pkg: "internal/h1", layer: 1, mod: "fields",
		std: "bytes context errors fmt io math net os strconv strings sync sync/atomic syscall time unsafe"},
	{pkg: "internal/h2", layer: 1, mod: "fields",
		ext: "golang.org/x/net/http2 golang.org/x/net/http2/hpack",
		std: "bufio context errors fmt io net os runtime slices strconv strings sync sync/atomic time unsafe"},
	{pkg: "internal/proxy", layer: 1, mod: "fields",
		std: "bytes context crypto/sha256 encoding/base64 encoding/binary encoding/hex errors fmt io net net/netip net/url os strconv strings sync time"},
	{pkg: "cookie", layer: 1, ext: "golang.org/x/net/publicsuffix"}, // net/http for HTTPJar's http.CookieJar
	// WebSocket framing over a stream the handshake opened: no HTTP.
	{pkg: "internal/ws", layer: 1, ext: "github.com/klauspost/compress/flate",
		std: "bytes context crypto/rand crypto/sha1 encoding/base64 encoding/binary errors fmt io strconv strings sync sync/atomic time unicode/utf8"},

	// Layer 2: TLS (the one uTLS importer) and the fingerprint oracle.
	{pkg: "internal/tlsfp", layer: 2, mod: "profile",
		ext: "github.com/refraction-networking/utls golang.org/x/crypto/cryptobyte golang.org/x/crypto/x509roots/fallback/bundle golang.org/x/sys/unix",
		std: "bytes container/list context crypto/ecdh crypto/ed25519 crypto/mlkem crypto/rand crypto/sha256 crypto/sha512 crypto/x509 " +
			"encoding/binary errors fmt io math/big net os reflect slices strconv strings sync sync/atomic syscall time unsafe"},
	// The HTTP/3 engine over a QUIC interface of its own: no QUIC stack, no
	// TLS, no pool, no profile (the root turns the profile into its Config).
	{pkg: "internal/h3", layer: 2, mod: "fields internal/quicwire internal/h3wire",
		ext: "golang.org/x/net/http2/hpack",
		std: "bufio context crypto/rand encoding/binary errors fmt io os slices strconv strings sync sync/atomic time"},
	// Header assembly from profile data alone: no engine, no TLS.
	{pkg: "internal/reqhead", layer: 2, mod: "fields profile", std: "fmt strconv strings"},
	// quic-go/qpack's decoder, for the recorder and internal/h3's tests
	// only: the client never builds it (the bench module pins qpack v0.5).
	{pkg: "internal/qpackref", layer: 2, mod: "internal/quicwire internal/h3wire", ext: "github.com/quic-go/qpack",
		std: "errors io"},
	{pkg: "fingerprint", layer: 3, mod: "fields profile internal/ws internal/quicwire internal/h3wire internal/qpackref internal/h3",
		ext: "golang.org/x/net/http2/hpack github.com/quic-go/quic-go github.com/quic-go/quic-go/qlog github.com/quic-go/quic-go/qlogwriter"},

	// Layer 3: the QUIC client connection: its packets from profile data,
	// its TLS from tlsfp (never uTLS itself), two goroutines per connection
	// (reading and timers; sending), x/sys/unix for recvmmsg and GSO.
	{pkg: "internal/quic", layer: 3, mod: "profile internal/quicwire internal/tlsfp",
		std: "bytes context crypto/rand encoding/binary errors fmt io math net net/netip os runtime sort strconv sync syscall time unsafe",
		ext: "golang.org/x/sys/unix"},

	// Layer 4: the public client. It reaches net/http only through nethttp.
	{pkg: ".", layer: 4,
		mod:     "fields profile cookie internal/altsvc internal/decode internal/h1 internal/h2 internal/h3 internal/pool internal/proxy internal/quic internal/reqhead internal/tlsfp internal/version internal/ws",
		ext:     "golang.org/x/net/idna golang.org/x/net/publicsuffix",
		denyStd: "net/http"},

	// quic-go as internal/h3's QUIC and its HTTP/3 server: tests only (the
	// testpeer rule keeps it out of every non-test importer).
	{pkg: "internal/testpeer/quicgo", layer: 3, mod: "internal/h3 internal/testpeer",
		ext: "github.com/quic-go/quic-go github.com/quic-go/quic-go/http3"},

	// Layer 5: adapters and the command.
	{pkg: "nethttp", layer: 5, mod: ". fields"},
	// The C ABI (go build -buildmode=c-shared ./ffi) under bindings/.
	// internal/h1 for WithHostThread only: its blocking calls run on the host's thread.
	{pkg: "ffi", layer: 5, mod: ". cookie profile internal/h1 internal/version", denyStd: "net/http"},
	{pkg: "cmd/guise", layer: 5, mod: ". cookie fields fingerprint profile internal/version",
		ext: "github.com/schollz/progressbar/v3 github.com/spf13/cobra golang.org/x/term"},
}

// stdDenied may be imported by no package and no test.
var stdDenied = map[string]string{
	"math/rand": "use math/rand/v2, or an injected io.Reader where the randomness is on the wire",
}

// testExt are the third-party packages tests may import (no assertion
// frameworks); a test imports uTLS only in internal/tlsfp.
var testExt = "go.uber.org/goleak golang.org/x/net/http2 golang.org/x/net/http2/hpack golang.org/x/net/publicsuffix " +
	"github.com/mccutchen/go-httpbin/v2/httpbin github.com/andybalholm/brotli github.com/klauspost/compress/zstd " +
	"github.com/klauspost/compress/zlib github.com/klauspost/compress/gzip github.com/klauspost/compress/flate " +
	"github.com/quic-go/qpack github.com/quic-go/quic-go github.com/quic-go/quic-go/http3 " + // quic-go: the independent QUIC and HTTP/3 peers of internal/quic's and internal/h3's tests
	"github.com/coder/websocket " + // an independent WebSocket server for the WebSocket tests
	"golang.org/x/sys/unix " + // internal/quic's GSO refusal test (SO_NO_CHECK); BenchmarkH3Compare's server moving to its CPU
	"golang.org/x/net/dns/dnsmessage" // the DNS stub that gives a name both address families (T-03)

const utls = "github.com/refraction-networking/utls"

type listedPackage struct {
	ImportPath                         string
	Imports, TestImports, XTestImports []string
}

func TestImportGraph(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("go tool not in PATH")
	}
	out, err := exec.Command("go", "list", "-json=ImportPath,Imports,TestImports,XTestImports", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	rules := map[string]*importRule{}
	for i := range importRules {
		r := &importRules[i]
		if rules[r.pkg] != nil {
			t.Fatalf("imports_test.go: two rules for %s", r.pkg)
		}
		rules[r.pkg] = r
	}
	// The table itself must point down.
	for _, r := range importRules {
		for _, m := range strings.Fields(r.mod) {
			switch to := rules[m]; {
			case to == nil:
				t.Errorf("imports_test.go: the rule for %s allows %s, which has no rule", r.pkg, m)
			case to.layer >= r.layer:
				t.Errorf("imports_test.go: the rule for %s (layer %d) allows %s (layer %d): imports must point to a lower layer",
					r.pkg, r.layer, m, to.layer)
			}
		}
	}

	seen := map[string]bool{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listedPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		rel := relPath(p.ImportPath)
		seen[rel] = true
		r := rules[rel]
		if r == nil {
			t.Errorf("%s has no rule: add one to importRules in imports_test.go (its layer and what it imports)", p.ImportPath)
			continue
		}
		for _, imp := range p.Imports {
			if msg := r.check(imp); msg != "" {
				t.Errorf("new import %s -> %s: %s", rel, imp, msg)
			}
		}
		for _, imp := range slices.Concat(p.TestImports, p.XTestImports) {
			if msg := checkTestImport(rel, imp); msg != "" {
				t.Errorf("new test import %s -> %s: %s", rel, imp, msg)
			}
		}
	}
	for _, r := range importRules {
		if !seen[r.pkg] {
			t.Errorf("imports_test.go has a rule for %s, which no longer exists: remove it", r.pkg)
		}
	}
}

// check returns why imp may not be imported by r's package, or "".
func (r *importRule) check(imp string) string {
	if why, ok := stdDenied[imp]; ok {
		return "no package imports it: " + why
	}
	where := fmt.Sprintf("declare it in the rule for %q in imports_test.go if it belongs", r.pkg)
	switch {
	case imp == module || strings.HasPrefix(imp, module+"/"):
		rel := relPath(imp)
		if rel == "." && strings.HasPrefix(r.pkg, "internal/") {
			return "no internal package imports the root"
		}
		if strings.HasPrefix(rel, "internal/testpeer") && !strings.HasPrefix(r.pkg, "internal/testpeer") {
			return "internal/testpeer is for tests only"
		}
		if !slices.Contains(strings.Fields(r.mod), rel) {
			return "not an allowed module import; " + where + " (and only from a lower layer)"
		}
	case isStd(imp):
		if slices.Contains(strings.Fields(r.denyStd), imp) {
			return "this package must not import it (see its rule in imports_test.go)"
		}
		if r.std != "" && !slices.Contains(strings.Fields(r.std), imp) {
			return "a standard package this low layer did not import before; " + where
		}
	default:
		if (imp == utls || strings.HasPrefix(imp, utls+"/")) && r.pkg != "internal/tlsfp" {
			return "only internal/tlsfp imports uTLS"
		}
		if !slices.Contains(strings.Fields(r.ext), imp) {
			return "not an allowed third-party import; " + where + " (no new module dependency without a reason)"
		}
	}
	return ""
}

// checkTestImport returns why a test of package rel may not import imp, or
// "". Tests may import any module package and any standard package but the
// denied ones.
func checkTestImport(rel, imp string) string {
	if why, ok := stdDenied[imp]; ok {
		return "no test imports it: " + why
	}
	if isStd(imp) || imp == module || strings.HasPrefix(imp, module+"/") {
		return ""
	}
	if imp == utls || strings.HasPrefix(imp, utls+"/") {
		if rel == "internal/tlsfp" {
			return ""
		}
		return "only internal/tlsfp (and its tests) imports uTLS"
	}
	if !slices.Contains(strings.Fields(testExt), imp) {
		return "not in testExt in imports_test.go (tests use the standard testing package, no assertion framework)"
	}
	return ""
}

func relPath(imp string) string {
	if imp == module {
		return "."
	}
	return strings.TrimPrefix(imp, module+"/")
}

// isStd reports whether imp is a standard-library path: as in go/build, one
// whose first element has no dot.
func isStd(imp string) bool {
	first, _, _ := strings.Cut(imp, "/")
	return !strings.Contains(first, ".")
}
