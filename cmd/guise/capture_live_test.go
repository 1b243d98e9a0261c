package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/guise-http/guise/fingerprint"
	"github.com/guise-http/guise/internal/testpeer"
	"github.com/guise-http/guise/profile"
)

// headless runs a headless browser to completion, bounded, in a process
// group of its own that the test kills whatever happened.
func headless(t *testing.T, bin string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	t.Cleanup(func() { syscall.Kill(-pid, syscall.SIGKILL) })
	if err := cmd.Wait(); err != nil && ctx.Err() != nil {
		t.Fatalf("%s: %v\n%s", filepath.Base(bin), err, out.String())
	}
}

// TestCaptureChromiumThenUse is the loop a user runs: guise capture
// records the real Chromium (HTTP/2 and HTTP/1.1 visits, the flow page),
// and the written file then works at once through --profile FILE, equal
// on the wire to what the browser sent.
func TestCaptureChromiumThenUse(t *testing.T) {
	bin := testpeer.Need(t, "chromium", "chromium")
	dir := t.TempDir()
	out := filepath.Join(dir, "mine.json")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lines, done := runCmd(t, ctx, []string{"capture", "--out", out, "--addr", "127.0.0.1:0", "--http1", "--timeout", "150s"})
	l := nextLine(t, lines, "guise echo server: https://")
	addr := strings.Fields(strings.TrimPrefix(l, "guise echo server: https://"))[0]
	_, port, _ := cutPort(addr)
	origin := "https://fp.test:" + port
	for _, extra := range []string{"", "--disable-http2"} {
		args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
			"--disable-background-networking", "--disable-component-update", "--disable-sync",
			"--disable-default-apps", "--disable-domain-reliability", "--no-default-browser-check",
			"--ignore-certificate-errors", "--user-data-dir=" + t.TempDir(),
			"--host-resolver-rules=MAP fp.test 127.0.0.1, MAP sub.fp.test 127.0.0.1, MAP * ~NOTFOUND",
			"--virtual-time-budget=5000", "--dump-dom"}
		if extra != "" {
			args = append(args, extra)
		}
		headless(t, bin, append(args, origin+"/")...)
		headless(t, bin, append(args, origin+fingerprint.FlowStart)...)
	}
	nextLine(t, lines, "wrote profile chrome")
	nextLine(t, lines, "recorded reference: ja4 t13d")
	// The API: a Session with the file, against the browser's reference.
	useCaptured(t, lines, done, out, profile.Chrome)
	// The command line's --profile FILE.
	lines, done = runCmd(t, context.Background(), []string{"fingerprint", "--profile", out})
	var all strings.Builder
	for l := range lines {
		all.WriteString(l + "\n")
	}
	if err := <-done; err != nil || !strings.Contains(all.String(), ": all match") {
		t.Fatalf("guise fingerprint --profile %s: %v\n%s", out, err, all.String())
	}
	if dst := os.Getenv("GUISE_CAPTURED_PROFILE_OUT"); dst != "" {
		// For the bindings' tests, which can use this file.
		b, _ := os.ReadFile(out)
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCaptureFirefoxThenUse is TestCaptureChromiumThenUse with Firefox:
// its profile directories trust the capture's CA, resolve fp.test to
// loopback and send everything else to a closed port.
func TestCaptureFirefoxThenUse(t *testing.T) {
	bin := testpeer.Need(t, "firefox-esr", "firefox-esr")
	certutil := testpeer.Need(t, "certutil", "libnss3-tools")
	dir := t.TempDir()
	out, ca := filepath.Join(dir, "mine.json"), filepath.Join(dir, "ca.pem")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lines, done := runCmd(t, ctx, []string{"capture", "--out", out, "--addr", "127.0.0.1:0", "--ca-out", ca, "--http1", "--timeout", "150s"})
	l := nextLine(t, lines, "guise echo server: https://")
	addr := strings.Fields(strings.TrimPrefix(l, "guise echo server: https://"))[0]
	_, port, _ := cutPort(addr)
	nextLine(t, lines, "CA certificate written to")
	origin := "https://fp.test:" + port
	t.Setenv("HOME", dir) // Firefox writes its caches there
	for _, h2 := range []bool{true, false} {
		prof := filepath.Join(dir, map[bool]string{true: "h2", false: "h1"}[h2])
		if err := os.Mkdir(prof, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{
			{"-N", "-d", "sql:" + prof, "--empty-password"},
			{"-A", "-n", "guise-capture", "-t", "C,,", "-i", ca, "-d", "sql:" + prof},
		} {
			if b, err := exec.Command(certutil, args...).CombinedOutput(); err != nil {
				t.Fatalf("certutil %v: %v\n%s", args, err, b)
			}
		}
		prefs := `user_pref("network.dns.localDomains", "fp.test, sub.fp.test");
user_pref("network.proxy.type", 1);
user_pref("network.proxy.http", "127.0.0.1");
user_pref("network.proxy.http_port", 9);
user_pref("network.proxy.ssl", "127.0.0.1");
user_pref("network.proxy.ssl_port", 9);
user_pref("network.proxy.no_proxies_on", "fp.test, .fp.test");
user_pref("network.trr.mode", 5);
user_pref("toolkit.telemetry.enabled", false);
user_pref("datareporting.policy.dataSubmissionEnabled", false);
user_pref("app.update.enabled", false);
user_pref("browser.shell.checkDefaultBrowser", false);
`
		if !h2 {
			prefs += `user_pref("network.http.http2.enabled", false);` + "\n"
		}
		if err := os.WriteFile(filepath.Join(prof, "user.js"), []byte(prefs), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, u := range []string{origin + "/", origin + fingerprint.FlowStart} {
			headless(t, bin, "--headless", "--no-remote", "--profile", prof, "--screenshot", filepath.Join(dir, "shot.png"), u)
		}
	}
	nextLine(t, lines, "wrote profile firefox")
	useCaptured(t, lines, done, out, profile.Firefox)
}

// useCaptured waits for the capture command to end, loads the profile file
// it wrote (out), checks it is b's with a reference and recorded HTTP/1.1
// sets, and visits the echo server through a Session with it, which must
// match what the browser sent.
func useCaptured(t *testing.T, lines <-chan string, done <-chan error, out string, b profile.Browser) {
	t.Helper()
	for range lines {
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	p, err := profile.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if p.Reference == nil || !p.HTTP1.Recorded || p.Browser != b {
		t.Fatalf("captured %s: reference %v, http/1.1 recorded %v", p.Name, p.Reference, p.HTTP1.Recorded)
	}
	t.Logf("captured %s; sets from %s: %q", p.Name, p.Fallback, p.Filled())
	var buf bytes.Buffer
	ok, err := runFingerprint(context.Background(), p, &buf)
	if err != nil {
		t.Fatal(err)
	}
	if !ok || !strings.Contains(buf.String(), "compared with what the browser sent") {
		t.Fatalf("guise with the captured file differs from the browser:\n%s", buf.String())
	}
}
