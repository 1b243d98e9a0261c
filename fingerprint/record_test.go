package fingerprint

import (
	"bytes"
	"cmp"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/guise-http/guise/profile"
)

// echoRecordings loads the echo server's own recordings
// (testdata/recordings/*.json) whose name starts with prefix.
func echoRecordings(t *testing.T, prefix string) map[string]*ConnRecord {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "recordings", prefix+"*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no recordings %s*: %v", prefix, err)
	}
	out := map[string]*ConnRecord{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		r, err := DecodeRecord(b)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		out[filepath.Base(p)] = r
	}
	return out
}

// sharedJA4 are the JA4s of the first recordings, testdata/recordings/*/
// (its README lists them).
var sharedJA4 = map[string]string{
	"chromium-156":    "t13d1517h2_8daaf6152771_cb7bf5808d99",
	"firefox-esr-153": "t13d1617h2_86a278354501_3cbfd9057e0d",
}

func TestEchoRecordingsReencode(t *testing.T) {
	for name, r := range echoRecordings(t, "") {
		b, err := os.ReadFile(filepath.Join("testdata", "recordings", name))
		if err != nil {
			t.Fatal(err)
		}
		// Re-encoding the decoded raw bytes gives the stored derived values.
		again, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var stored, now map[string]any
		json.Unmarshal(b, &stored)
		json.Unmarshal(again, &now)
		for _, k := range []string{"tls", "http2", "http1", "protocol", "transport"} {
			sb, _ := json.Marshal(stored[k])
			nb, _ := json.Marshal(now[k])
			if !bytes.Equal(sb, nb) {
				t.Errorf("%s: %s differs after decode and encode", name, k)
			}
		}
		if strings.Contains(name, "-plain-") != (r.Transport == TransportTCP) {
			t.Errorf("%s: transport %s", name, r.Transport)
		}
		if strings.Contains(name, "-resumed") != (r.Negotiated != nil && r.Negotiated.Resumed) {
			t.Errorf("%s: resumed %+v", name, r.Negotiated)
		}
		if len(r.HTTPRequests()) == 0 {
			t.Errorf("%s: no requests", name)
		}
	}
}

func TestEchoRecordingsMatchShared(t *testing.T) {
	for browser, ja4 := range sharedJA4 {
		for name, r := range echoRecordings(t, browser+"-h2-") {
			if strings.Contains(name, "resumed") {
				continue
			}
			ch, err := r.ClientHello()
			if err != nil {
				t.Fatal(err)
			}
			if ch.JA4() != ja4 {
				t.Errorf("%s: ja4 %s, recording %s", name, ch.JA4(), ja4)
			}
		}
	}
}

func TestEchoRecordingsBuildProfile(t *testing.T) {
	for _, c := range []struct {
		browser, name string
		connAfter     string // the field Connection follows in HTTP/1.1
	}{
		{"chromium-156", "chrome156-linux", "Host"},
		{"firefox-esr-153", "firefox153-linux", "Accept-Encoding"},
	} {
		t.Run(c.browser, func(t *testing.T) {
			var recs []*ConnRecord
			for _, r := range echoRecordings(t, c.browser+"-") {
				recs = append(recs, r)
			}
			slices.SortFunc(recs, func(a, b *ConnRecord) int { return cmp.Compare(a.ID, b.ID) })
			p, err := BuildProfile(recs, "")
			if err != nil {
				t.Fatal(err)
			}
			checkProfileRoundTrip(t, p)
			if p.Name != c.name || !p.HTTP1.Recorded || p.TLS.HelloHTTP1 == nil || p.TLS.HelloResumed == nil {
				t.Fatalf("%s: recorded h1 %v, hello_http1 %d bytes, hello_resumed %d bytes", p.Name, p.HTTP1.Recorded, len(p.TLS.HelloHTTP1), len(p.TLS.HelloResumed))
			}
			nav := p.HeaderSet(profile.Navigate, profile.HTTP1)
			if nav == nil || nav.Header[0].Name != "Host" {
				t.Fatalf("h1 navigate set %+v", nav)
			}
			for i, f := range nav.Header {
				if f.Name == "Connection" {
					if nav.Header[i-1].Name != c.connAfter {
						t.Errorf("Connection after %q, want after %q", nav.Header[i-1].Name, c.connAfter)
					}
				}
			}
			for _, k := range []profile.RequestKind{profile.Navigate, profile.Fetch, profile.Subresource, profile.Image} {
				if p.HeaderSet(k, profile.HTTP1) == nil || p.HeaderSet(k, profile.H2) == nil {
					t.Errorf("%v: missing a header set", k)
				}
			}
		})
	}
}
