package fingerprint

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/guise-http/guise/internal/testpeer"
	"github.com/guise-http/guise/profile"
)

// liveFlows indexes what a browser sent to the flow pages: the field names
// of the first request per protocol, method and path.
type liveFlows map[string][]string

func flowKey(h2 bool, method, path string) string {
	return strconv.FormatBool(h2) + " " + method + " " + path
}

func collectFlows(s *Server) (liveFlows, string) {
	out := liveFlows{}
	ua := ""
	for _, r := range s.Records() {
		for _, q := range r.HTTPRequests() {
			if !strings.HasPrefix(q.Target, "/flow/") {
				continue
			}
			k := flowKey(r.Protocol == ProtoH2, q.Method, q.Target)
			if _, ok := out[k]; ok {
				continue
			}
			var names []string
			for _, f := range q.Header {
				names = append(names, f.Name)
				if ua == "" && strings.EqualFold(f.Name, "user-agent") {
					ua = f.Value
				}
			}
			out[k] = names
		}
	}
	return out, ua
}

func (l liveFlows) order(h2 bool, method, path string) []string { return l[flowKey(h2, method, path)] }

// checkLiveFlows compares a live browser's visit of the flow pages with
// the embedded profile, skipping when the browser is newer than it.
func checkLiveFlows(t *testing.T, s *Server, profileName string) {
	t.Helper()
	flows, ua := collectFlows(s)
	p, err := profile.Lookup(profileName)
	if err != nil {
		t.Fatal(err)
	}
	if m := majorRE.FindStringSubmatch(ua); m != nil {
		if v, _ := strconv.Atoi(m[1]); v > p.Version {
			t.Skipf("the installed browser is version %d, newer than profile %s: record new flows (profile/testdata/record/flows.go)", v, p.Name)
		}
	}
	checkFlows(t, profileName, flows.order)
}

// TestLiveFlowsChromium drives Chromium through the flow pages over h2 and
// HTTP/1.1 (a visit of FlowStart, then FlowNav on the same user data dir,
// which kept the cookie) and checks the Cookie positions and body sets of
// the chrome profile against what it sent.
func TestLiveFlowsChromium(t *testing.T) {
	bin := testpeer.Need(t, "chromium", "chromium")
	s := startServer(t, nil)
	_, port, _ := strings.Cut(s.ListenAddr(), ":")
	origin := "https://fp.test:" + port
	for _, extra := range [][]string{nil, {"--disable-http2"}} {
		args := []string{
			"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
			"--disable-background-networking", "--disable-component-update", "--disable-sync",
			"--disable-default-apps", "--disable-domain-reliability", "--no-default-browser-check",
			"--ignore-certificate-errors", "--user-data-dir=" + t.TempDir(),
			"--host-resolver-rules=MAP fp.test 127.0.0.1, MAP * ~NOTFOUND",
			"--virtual-time-budget=5000", "--dump-dom",
		}
		args = append(args, extra...)
		for _, path := range []string{FlowStart, FlowNav} {
			runBrowser(t, bin, nil, append(args, origin+path)...)
		}
	}
	checkLiveFlows(t, s, "chrome156-linux")
}

// TestLiveFlowsFirefox is TestLiveFlowsChromium for Firefox ESR.
func TestLiveFlowsFirefox(t *testing.T) {
	bin := testpeer.Need(t, "firefox-esr", "firefox-esr")
	certutil := testpeer.Need(t, "certutil", "libnss3-tools")
	s := startServer(t, nil)
	_, port, _ := strings.Cut(s.ListenAddr(), ":")
	origin := "https://fp.test:" + port
	dir := t.TempDir()
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, s.CAPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, h2 := range []bool{true, false} {
		prof := filepath.Join(dir, "flows-"+strconv.FormatBool(h2))
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
		for _, path := range []string{FlowStart, FlowNav} {
			runBrowser(t, bin, []string{"HOME=" + dir},
				"--headless", "--no-remote", "--profile", prof, "--screenshot", filepath.Join(dir, "shot.png"), origin+path)
		}
	}
	checkLiveFlows(t, s, "firefox153-linux")
}
