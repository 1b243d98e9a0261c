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
			t.Errorf("%s: JA4 %v %v, want %s (fingerprint/testdata/recordings/README.md)", name, ch, err, want)
		}
	}
}

// TestJA4VariantsMatchRecordings checks the HTTP/1.1-only and the resumed
// hellos against the recorded ones by JA4 and JA3N.
func TestJA4VariantsMatchRecordings(t *testing.T) {
	s := newServer(t, nil)
	for _, name := range []string{"chrome", "firefox"} {
		p := lookup(t, name)
		h1rec, err := fingerprint.ParseClientHello(p.TLS.HelloHTTP1)
		if err != nil {
			t.Fatal(err)
		}
		h1, err := fingerprint.ParseClientHello(buildHello(t, "fp.test", &Config{Profile: p, ALPN: []string{"http/1.1"}}))
		if err != nil {
			t.Fatal(err)
		}
		if h1.JA4() != h1rec.JA4() || h1.JA3N() != h1rec.JA3N() {
			t.Errorf("%s http/1.1: JA4 %s JA3N %s, recording %s %s", name, h1.JA4(), h1.JA3N(), h1rec.JA4(), h1rec.JA3N())
		}

		resRec, err := fingerprint.ParseClientHello(p.TLS.HelloResumed)
		if err != nil {
			t.Fatal(err)
		}
		cfg := &Config{Profile: p, RootCAs: testCerts(t).Roots, Sessions: NewSessionCache()}
		if _, _, err := dial(t, s, "fp.test", cfg); err != nil {
			t.Fatal(err)
		}
		st, raw, err := dial(t, s, "fp.test", cfg)
		if err != nil || !st.Resumed {
			t.Fatalf("%s: %v resumed=%v", name, err, st.Resumed)
		}
		res, err := fingerprint.ParseClientHello(raw)
		if err != nil {
			t.Fatal(err)
		}
		if res.JA4() != resRec.JA4() || res.JA3N() != resRec.JA3N() {
			t.Errorf("%s resumed: JA4 %s JA3N %s, recording %s %s", name, res.JA4(), res.JA3N(), resRec.JA4(), resRec.JA3N())
		}
		if !p.TLS.ShuffleExtensions && res.JA4O() != resRec.JA4O() {
			t.Errorf("%s resumed: JA4_o %s, recording %s", name, res.JA4O(), resRec.JA4O())
		}
	}
}
