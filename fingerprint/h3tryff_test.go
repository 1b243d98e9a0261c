package fingerprint

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestTryFirefoxH3(t *testing.T) {
	s := startServer(t, nil)
	_, port, _ := strings.Cut(s.ListenAddr(), ":")
	dir := t.TempDir()
	caFile := filepath.Join(dir, "ca.pem")
	os.WriteFile(caFile, s.CAPEM(), 0o644)
	prof := filepath.Join(dir, "p")
	os.Mkdir(prof, 0o755)
	for _, args := range [][]string{
		{"-N", "-d", "sql:" + prof, "--empty-password"},
		{"-A", "-n", "guise-echo", "-t", "C,,", "-i", caFile, "-d", "sql:" + prof},
	} {
		if out, err := exec.Command("certutil", args...).CombinedOutput(); err != nil {
			t.Fatalf("certutil %v: %v\n%s", args, err, out)
		}
	}
	prefs := firefoxPrefs + `user_pref("network.http.http3.enable", true);
user_pref("network.http.http3.alt-svc-mapping-for-testing", "fp.test;h3=:` + port + `");
user_pref("network.http.http3.disable_when_third_party_roots_found", false);
`
	os.WriteFile(filepath.Join(prof, "user.js"), []byte(prefs), 0o644)
	runBrowser(t, "/usr/bin/firefox-esr", []string{"HOME=" + dir}, "--headless", "--no-remote", "--profile", prof, "--screenshot", filepath.Join(dir, "shot.png"), "https://fp.test:"+port+"/")
	time.Sleep(time.Second)
	for _, r := range s.Records() {
		t.Logf("%d %s %s req=%d err=%s", r.ID, r.Transport, r.Protocol, r.Requests, r.Err)
		if r.QUIC != nil {
			fl, err := r.QUICFlight()
			t.Logf("flight err %v", err)
			if fl != nil {
				t.Logf("ja4 %s dcid %d scid %d crypto %d", fl.JA4(), len(fl.DCID), len(fl.SCID), fl.CryptoBytes)
				for _, d := range fl.Datagrams {
					for _, p := range d.Packets {
						var fr []string
						for _, f := range p.Frames {
							fr = append(fr, f.Type.String())
						}
						t.Logf(" dg %d size %d: %v pn %d len %d trailing %d err %v frames %v", d.Index, d.Size, p.Type, p.PacketNumber, p.PNLen, d.Trailing, p.Err, fr)
					}
				}
				for _, p := range fl.TransportParameters {
					t.Logf("  tp %v %x", p.ID, p.Value)
				}
			}
			h, err := r.HTTP3()
			t.Logf("h3 err %v", err)
			if h != nil {
				t.Logf("uni %+v settings %+v frames %+v pu %+v", h.UniStreams, h.Settings, h.ControlFrames, h.PriorityUpdates)
				for _, q := range h.Requests {
					t.Logf(" req %d %v %v err %s", q.StreamID, q.Fields, q.Frames, q.Err)
				}
			}
		}
	}
}
