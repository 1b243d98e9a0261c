package tlsfp

import (
	"testing"

	"github.com/guise-http/guise/fingerprint"
)

// TestJA4MatchesRecording checks the built hellos with the fingerprint
// package's independent parser: JA4 and JA3N (extensions sorted) equal the
// recording's for every connection, and JA4_o too when the order is fixed.
func TestJA4MatchesRecording(t *testing.T) {
	for _, name := range []string{"chrome", "firefox"} {
		p := lookup(t, name)
		rec, err := fingerprint.ParseClientHello(p.TLS.Hello)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 4; i++ {
			ch, err := fingerprint.ParseClientHello(buildHello(t, "fp.test", &Config{Profile: p}))
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if ch.JA4() != rec.JA4() || ch.JA3N() != rec.JA3N() {
				t.Errorf("%s: JA4 %s JA3N %s, recording %s %s", name, ch.JA4(), ch.JA3N(), rec.JA4(), rec.JA3N())
			}
			if !p.TLS.ShuffleExtensions && (ch.JA4O() != rec.JA4O() || ch.JA3() != rec.JA3()) {
				t.Errorf("%s: JA4_o %s JA3 %s, recording %s %s", name, ch.JA4O(), ch.JA3(), rec.JA4O(), rec.JA3())
			}
		}
	}
	for name, want := range map[string]string{
		"chrome":  "t13d1517h2_8daaf6152771_cb7bf5808d99",
		"firefox": "t13d1617h2_86a278354501_3cbfd9057e0d",
	} {
		ch, err := fingerprint.ParseClientHello(buildHello(t, "fp.test", &Config{Profile: lookup(t, name)}))
		if err != nil || ch.JA4() != want {
			t.Errorf("%s: JA4 %v %v, want %s (shared README)", name, ch, err, want)
		}
	}
}
