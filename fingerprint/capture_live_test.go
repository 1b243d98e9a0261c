package fingerprint

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/guise-http/guise/fields"
	"github.com/guise-http/guise/internal/testpeer"
	"github.com/guise-http/guise/profile"
)

// browserRunLimit bounds one headless browser run.
const browserRunLimit = 60 * time.Second

// runBrowser runs a headless browser to completion (bounded), in its own
// process group, which Cleanup kills whatever happened.
func runBrowser(t *testing.T, path string, env []string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), browserRunLimit)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Env = append(os.Environ(), env...)
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	t.Cleanup(func() { syscall.Kill(-pid, syscall.SIGKILL) })
	if err := cmd.Wait(); err != nil {
		var ee *exec.ExitError
		if ctx.Err() != nil || !errors.As(err, &ee) {
			t.Fatalf("%s: %v\n%s", filepath.Base(path), err, tail(out.String(), 2000))
		}
		t.Logf("%s exited with %v (tolerated)\n%s", filepath.Base(path), err, tail(out.String(), 500))
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// sharedFingerprint returns the JA4 and Akamai string of a shared
// recording of browser (testdata/recordings/<browser>/).
func sharedFingerprint(t *testing.T, browser string) (ja4, akamai string) {
	t.Helper()
	recs := sharedRecords(t, browser)
	ch, err := recs[0].ClientHello()
	if err != nil {
		t.Fatal(err)
	}
	h, err := recs[0].HTTP2()
	if err != nil {
		t.Fatal(err)
	}
	return ch.JA4(), h.Akamai()
}

// checkLiveCapture waits for a complete capture and checks it against the
// first recording of browser (testdata/recordings/<browser>/).
func checkLiveCapture(t *testing.T, s *Server, browser, profileName string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	recs, err := s.WaitCapture(ctx, Want{HTTP1: true, Resumed: true, Body: true})
	if err != nil {
		t.Fatal(err)
	}
	wantJA4, wantAkamai := sharedFingerprint(t, browser)
	var sawH2 bool
	for _, r := range recs {
		if r.Transport != TransportTLS || r.Negotiated == nil || r.Negotiated.Resumed || r.Protocol != ProtoH2 || r.Requests == 0 {
			continue
		}
		ch, err := r.ClientHello()
		if err != nil {
			t.Fatal(err)
		}
		if ch.JA4() != wantJA4 {
			t.Errorf("connection #%d: ja4 %s, recording %s", r.ID, ch.JA4(), wantJA4)
		}
		h, err := r.HTTP2()
		if err != nil {
			t.Fatal(err)
		}
		if h.Akamai() != wantAkamai {
			t.Errorf("connection #%d: akamai %s, recording %s", r.ID, h.Akamai(), wantAkamai)
		}
		sawH2 = true
	}
	if !sawH2 {
		t.Fatal("no h2 connection with requests")
	}
	checkDrift(t, recs, profileName)
	checkDriftHTTP1(t, recs, profileName)
	p, err := BuildProfile(recs, "")
	if err != nil {
		t.Fatal(err)
	}
	checkProfileRoundTrip(t, p)
	if p.Name != profileName || !p.HTTP1.Recorded || p.TLS.HelloResumed == nil || p.TLS.HelloHTTP1 == nil {
		t.Errorf("profile %s: h1 recorded %v, resumed hello %d bytes, h1 hello %d bytes", p.Name, p.HTTP1.Recorded, len(p.TLS.HelloResumed), len(p.TLS.HelloHTTP1))
	}
	checkBodySets(t, p, profileName)
}

// checkBodySets compares the header sets with a body that a live capture
// made with those of the embedded profile, which the generator made from
// the flow recordings with the same function: the same fields in the same
// order with the same values, but for Sec-Fetch-User, which the embedded
// Firefox sets have from a recording with user activation and a headless
// run does not send, and the values of User-Agent and Sec-CH-UA, which the
// embedded Chrome profile has from desktop Chrome (headless chromium sends
// HeadlessChrome and no "Google Chrome" brand).
func checkBodySets(t *testing.T, p *profile.Profile, name string) {
	t.Helper()
	want, err := profile.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	for _, proto := range []profile.Proto{profile.H2, profile.HTTP1} {
		for _, b := range BodyPaths {
			got, exp := p.BodyHeaderSet(b.Kind, proto), want.BodyHeaderSet(b.Kind, proto)
			if got == nil || exp == nil {
				t.Errorf("%v %v with a body: captured %v, embedded %v", proto, b.Kind, got != nil, exp != nil)
				continue
			}
			strip := func(h fields.Header) []string {
				var out []string
				for _, f := range h {
					switch {
					case fields.EqualFold(f.Name, "sec-fetch-user") && !got.Header.Has(f.Name):
					case fields.EqualFold(f.Name, "user-agent") || fields.EqualFold(f.Name, "sec-ch-ua"):
						out = append(out, f.Name) // desktop Chrome's in the embedded profile
					default:
						out = append(out, f.Name+": "+f.Value)
					}
				}
				return out
			}
			if g, e := strip(got.Header), strip(exp.Header); !slices.Equal(g, e) {
				t.Errorf("%v %v with a body:\ncaptured %q\nembedded %q", proto, b.Kind, g, e)
			}
		}
	}
}

func TestLiveBrowsersChromium(t *testing.T) {
	bin := testpeer.Need(t, "chromium", "chromium")
	s := startServer(t, nil)
	_, port, _ := strings.Cut(s.ListenAddr(), ":")
	origin := "https://fp.test:" + port
	page := origin + "/"
	for _, extra := range [][]string{nil, {"--disable-http2"}} {
		args := []string{
			"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
			"--disable-background-networking", "--disable-component-update", "--disable-sync",
			"--disable-default-apps", "--disable-domain-reliability", "--no-default-browser-check",
			"--ignore-certificate-errors", "--user-data-dir=" + t.TempDir(),
			"--host-resolver-rules=MAP fp.test 127.0.0.1, MAP sub.fp.test 127.0.0.1, MAP * ~NOTFOUND",
			"--virtual-time-budget=5000", "--dump-dom",
		}
		args = append(args, extra...)
		runBrowser(t, bin, nil, append(args, page)...)
		runBrowser(t, bin, nil, append(args, origin+FlowStart)...)
	}
	checkLiveCapture(t, s, "chromium-156", "chrome156-linux")
}

// firefoxPrefs is the user.js of the Firefox runs. network.dns.localDomains
// resolves fp.test and sub.fp.test to loopback without touching /etc/hosts;
// every other host goes to a closed proxy port so nothing leaves the
// machine.
const firefoxPrefs = `user_pref("network.dns.localDomains", "fp.test, sub.fp.test");
user_pref("toolkit.telemetry.enabled", false);
user_pref("datareporting.healthreport.uploadEnabled", false);
user_pref("datareporting.policy.dataSubmissionEnabled", false);
user_pref("app.update.enabled", false);
user_pref("app.update.auto", false);
user_pref("browser.safebrowsing.malware.enabled", false);
user_pref("browser.safebrowsing.phishing.enabled", false);
user_pref("browser.safebrowsing.downloads.enabled", false);
user_pref("network.captive-portal-service.enabled", false);
user_pref("network.connectivity-service.enabled", false);
user_pref("network.trr.mode", 5);
user_pref("network.dns.native_https_query", false);
user_pref("network.proxy.type", 1);
user_pref("network.proxy.http", "127.0.0.1");
user_pref("network.proxy.http_port", 9);
user_pref("network.proxy.ssl", "127.0.0.1");
user_pref("network.proxy.ssl_port", 9);
user_pref("network.proxy.no_proxies_on", "fp.test, .fp.test, localhost, 127.0.0.1");
user_pref("browser.shell.checkDefaultBrowser", false);
user_pref("extensions.update.enabled", false);
`

func TestLiveBrowsersFirefox(t *testing.T) {
	bin := testpeer.Need(t, "firefox-esr", "firefox-esr")
	certutil := testpeer.Need(t, "certutil", "libnss3-tools")
	s := startServer(t, nil)
	_, port, _ := strings.Cut(s.ListenAddr(), ":")
	origin := "https://fp.test:" + port
	page := origin + "/"
	dir := t.TempDir()
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, s.CAPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, h2 := range []bool{true, false} {
		prof := filepath.Join(dir, map[bool]string{true: "h2", false: "h1"}[h2])
		if err := os.Mkdir(prof, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{
			{"-N", "-d", "sql:" + prof, "--empty-password"},
			{"-A", "-n", "guise-echo", "-t", "C,,", "-i", caFile, "-d", "sql:" + prof},
		} {
			if out, err := exec.Command(certutil, args...).CombinedOutput(); err != nil {
				t.Fatalf("certutil %v: %v\n%s", args, err, out)
			}
		}
		prefs := firefoxPrefs
		if !h2 {
			prefs += `user_pref("network.http.http2.enabled", false);` + "\n"
		}
		if err := os.WriteFile(filepath.Join(prof, "user.js"), []byte(prefs), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, u := range []string{page, origin + FlowStart} {
			runBrowser(t, bin, []string{"HOME=" + dir},
				"--headless", "--no-remote", "--profile", prof, "--screenshot", filepath.Join(dir, "shot.png"), u)
		}
	}
	checkLiveCapture(t, s, "firefox-esr-153", "firefox153-linux")
}
