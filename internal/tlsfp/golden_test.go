package tlsfp

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/guise-http/guise/profile"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the current hellos")

// renderHello prints a hello with every per-connection random part masked:
// random, session id, GREASE values, key share keys, ECH GREASE bytes and
// (for a shuffling profile) the extension order, which is printed sorted.
func renderHello(h *hello, p *profile.Profile, sorted bool) string {
	var b strings.Builder
	fmt.Fprintf(&b, "legacy_version %04x\nsession_id_len %d\ncompression %x\nciphers", h.version, len(h.sessionID), h.comp)
	for _, c := range h.ciphers {
		fmt.Fprintf(&b, " %s", u16(c))
	}
	b.WriteString("\n")
	exts := slices.Clone(h.exts)
	if sorted {
		b.WriteString("# extensions sorted by id: the profile shuffles them per connection\n")
		slices.SortStableFunc(exts, func(x, y ext) int {
			return int(maskID(x.id)) - int(maskID(y.id))
		})
	}
	for _, e := range exts {
		fmt.Fprintf(&b, "ext %s len=%s ", u16(e.id), lenOf(e))
		switch {
		case isGREASE(e.id):
			fmt.Fprintf(&b, "body=%x", e.body)
		case e.id == 0:
			fmt.Fprintf(&b, "sni=%q", e.body[5:])
		case e.id == 51:
			fmt.Fprintf(&b, "shares=%s", strings.Join(keyShares(e.body), ","))
		case e.id == extECH:
			shape, _ := echShapeOf(e.body)
			if p.TLS.ECHAEADs != nil {
				shape = strings.Replace(shape, fmt.Sprintf("aead=%d", e.body[4]), fmt.Sprintf("aead_in=%v", p.TLS.ECHAEADs), 1)
			}
			lens := p.TLS.ECHPayloadLengths
			if lens == nil {
				_, l := echShapeOf(e.body)
				lens = []int{l}
			}
			fmt.Fprintf(&b, "%s payload_in=%v", shape, lens)
		case e.id == 10 || e.id == 13:
			fmt.Fprintf(&b, "list=%s", u16list(e.body[2:]))
		case e.id == 43:
			fmt.Fprintf(&b, "list=%s", u16list(e.body[1:]))
		default:
			fmt.Fprintf(&b, "body=%x", e.body)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func maskID(id uint16) uint16 {
	if isGREASE(id) {
		return 0x0a0a
	}
	return id
}

func lenOf(e ext) string {
	if e.id == extECH {
		return "*"
	}
	return fmt.Sprint(len(e.body))
}

func u16(v uint16) string {
	if isGREASE(v) {
		return "GREASE"
	}
	return fmt.Sprintf("%04x", v)
}

func u16list(b []byte) string {
	var parts []string
	for i := 0; i+1 < len(b); i += 2 {
		parts = append(parts, u16(binary.BigEndian.Uint16(b[i:])))
	}
	return strings.Join(parts, ",")
}

// TestGolden compares every profile's hello, randomness masked, with
// testdata/golden/<profile>.txt, for a full and a resumed handshake shape.
// Regenerate with go test -run TestGolden -update.
//
// RELIABILITY T-02.
func TestGolden(t *testing.T) {
	for _, name := range profile.Names() {
		p := lookup(t, name)
		h := parseHelloRecord(t, buildHello(t, "fp.test", &Config{Profile: p}))
		got := "# " + name + " ClientHello, random parts masked (see golden_test.go)\n" + renderHello(h, p, p.TLS.ShuffleExtensions)
		// The recorded hello, rendered the same way, must agree: the golden
		// file is the recording's structure, not just whatever we send.
		if want := renderHello(parseHelloRecord(t, p.TLS.Hello), p, p.TLS.ShuffleExtensions); !strings.HasSuffix(got, want) {
			t.Errorf("%s: sent hello differs from the recording:\n%s\nrecording:\n%s", name, got, want)
		}
		path := filepath.Join("testdata", "golden", name+".txt")
		if *update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -run TestGolden -update)", err)
		}
		if !bytes.Equal([]byte(got), want) {
			t.Errorf("%s: hello differs from %s:\n%s", name, path, got)
		}
	}
}
