package tlsfp

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/guise-http/guise/profile"
)

// TestGoldenHTTP1 is TestGolden for the hello of a connection that offers
// http/1.1 alone (guise.HTTP1): testdata/golden/<profile>-http1.txt. Where
// the profile recorded that hello (TLS.HelloHTTP1: the browser with HTTP/2
// disabled), the sent hello must render as the recording does; the others
// are the profile's hello with the ALPN list replaced and ALPS dropped.
// Regenerate with go test -run TestGoldenHTTP1 -update.
func TestGoldenHTTP1(t *testing.T) {
	for _, name := range profile.Names() {
		p := lookup(t, name)
		h := parseHelloRecord(t, buildHello(t, "fp.test", &Config{Profile: p, ALPN: []string{"http/1.1"}}))
		if b, _ := h.ext(16); !bytes.Equal(b, []byte("\x00\x09\x08http/1.1")) {
			t.Errorf("%s: ALPN %q, want http/1.1 alone", name, b)
		}
		for _, id := range []uint16{extALPS, extALPSNew} {
			if _, ok := h.ext(id); ok {
				t.Errorf("%s: ALPS (%d) without h2 in the offer", name, id)
			}
		}
		got := "# " + name + " ClientHello offering http/1.1 alone, random parts masked (see golden_test.go)\n" + renderHello(h, p, p.TLS.ShuffleExtensions)
		if p.TLS.HelloHTTP1 != nil {
			if want := renderHello(parseHelloRecord(t, p.TLS.HelloHTTP1), p, p.TLS.ShuffleExtensions); !strings.HasSuffix(got, want) {
				t.Errorf("%s: sent h1-only hello differs from the recording:\n%s\nrecording:\n%s", name, got, want)
			}
		}
		path := filepath.Join("testdata", "golden", name+"-http1.txt")
		if *update {
			if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -run TestGoldenHTTP1 -update)", err)
		}
		if !bytes.Equal([]byte(got), want) {
			t.Errorf("%s: h1-only hello differs from %s:\n%s", name, path, got)
		}
	}
}

// TestHelloHTTP1MatchesRecording: over a real handshake, the h1-only hello
// of each profile with a recorded one has the recording's structure field
// by field (compareHello), and negotiates http/1.1 with a server that
// would take h2.
func TestHelloHTTP1MatchesRecording(t *testing.T) {
	s := newServer(t, nil)
	for _, name := range profile.Names() {
		p := lookup(t, name)
		if p.TLS.HelloHTTP1 == nil {
			continue
		}
		want := parseHelloRecord(t, p.TLS.HelloHTTP1)
		echLens := p.TLS.ECHPayloadLengths
		if e, ok := want.ext(extECH); ok && echLens == nil {
			_, l := echShapeOf(e)
			echLens = []int{l}
		}
		st, rec, err := dial(t, s, "fp.test", &Config{Profile: p, RootCAs: testCerts(t).Roots, ALPN: []string{"http/1.1"}})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		compareHello(t, name, parseHelloRecord(t, rec), want, "fp.test", p.TLS.ShuffleExtensions, echLens)
		if st.ALPN != "http/1.1" {
			t.Errorf("%s: negotiated %q", name, st.ALPN)
		}
	}
}
