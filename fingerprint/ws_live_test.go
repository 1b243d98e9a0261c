package fingerprint

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/guise-http/guise/fields"
	"github.com/guise-http/guise/internal/testpeer"
	"github.com/guise-http/guise/profile"
)

// liveWebSocket is what a browser sent for new WebSocket() on the
// WebSocket page: the extended CONNECT over h2 and the Upgrade request over
// HTTP/1.1, each with the connection it went over.
type liveWebSocket struct {
	h2       *HTTP2Request
	h2Conn   *ConnRecord
	h2Page   bool // the CONNECT's connection carried the page too
	h1Head   []byte
	h1Conn   *ConnRecord
	h1Page   bool
	h1Alpn   []string
	h2Before []HTTP2Request // streams opened before the CONNECT on its connection
}

func collectWebSocket(t *testing.T, s *Server) *liveWebSocket {
	t.Helper()
	var l liveWebSocket
	for _, r := range s.Records() {
		switch r.Protocol {
		case ProtoH2:
			h, err := r.HTTP2()
			if err != nil || h == nil {
				continue
			}
			page := false
			for i := range h.Requests {
				q := &h.Requests[i]
				page = page || q.Path() == WebSocketPage
				if q.Path() == WebSocketEcho && q.Method() == "CONNECT" && l.h2 == nil {
					l.h2, l.h2Conn = q, r
					for _, b := range h.Requests[:i] {
						if !b.Trailer {
							l.h2Before = append(l.h2Before, b)
						}
					}
				}
			}
			if l.h2Conn == r {
				l.h2Page = page
			}
		case ProtoHTTP1:
			page, ws := false, []byte(nil)
			for _, head := range r.HTTP1Heads() {
				line := string(head[:bytes.IndexByte(head, '\n')+1])
				page = page || strings.Contains(line, " "+WebSocketPage+" ")
				if strings.HasPrefix(line, "GET "+WebSocketEcho+" ") {
					ws = head
				}
			}
			if ws != nil && l.h1Head == nil {
				l.h1Head, l.h1Conn, l.h1Page = ws, r, page
				if ch, err := r.ClientHello(); err == nil {
					l.h1Alpn = ch.ALPN
				}
			}
		}
	}
	if l.h2 == nil {
		t.Fatal("the browser sent no extended CONNECT to " + WebSocketEcho + " over h2 (the server enables it only under GODEBUG=http2xconnect=1, which TestMain sets)")
	}
	if l.h1Head == nil {
		t.Fatal("the browser sent no Upgrade request to " + WebSocketEcho + " over HTTP/1.1")
	}
	return &l
}

// wsValueFree are the handshake fields whose value is the request's (or, for
// user-agent, the headless build's) and is not compared.
var wsValueFree = []string{"host", "origin", "sec-websocket-key", "cookie", "sec-fetch-site", "user-agent"}

// checkLiveWebSocket compares a browser's WebSocket handshakes with the
// profile, field by field: over h2 the pseudo-header order, the header
// names in order and their values, and the HEADERS priority; over HTTP/1.1
// the head's names in order and case and their values; and the connection
// each took: the page's own h2 connection, and over HTTP/1.1 a new one
// offering http/1.1 alone, each hello with the JA4 recorded (the new one
// resuming the page's session).
func checkLiveWebSocket(t *testing.T, s *Server, profileName, recording string) {
	t.Helper()
	l := collectWebSocket(t, s)
	b, err := os.ReadFile("../profile/testdata/recordings/" + recording)
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Conns []struct {
			JA4     string `json:"ja4"`
			Resumed bool   `json:"resumed"`
		} `json:"websocket_connections"`
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	recorded := rec.Conns
	p, err := profile.Lookup(profileName)
	if err != nil {
		t.Fatal(err)
	}
	ua := fields.Header(l.h2.Header).Get("user-agent")
	if m := majorRE.FindStringSubmatch(ua); m != nil {
		if v, _ := strconv.Atoi(m[1]); v > p.Version {
			t.Skipf("the installed browser is version %d, newer than profile %s: record new handshakes (profile/testdata/record/flows.go -websocket)", v, p.Name)
		}
	}
	if !slices.Equal(l.h2.PseudoOrder, p.HTTP2.WebSocketPseudoOrder) {
		t.Errorf("h2: pseudo order %v, profile %v", l.h2.PseudoOrder, p.HTTP2.WebSocketPseudoOrder)
	}
	var got fields.Header
	for _, f := range l.h2.Header {
		if !strings.HasPrefix(f.Name, ":") {
			got = append(got, f)
		}
	}
	compareWSFields(t, "h2", got, p.HeaderSet(profile.WebSocket, profile.H2))
	want, ok := p.Priority(profile.WebSocket)
	switch pr := l.h2.Priority; {
	case !ok:
		t.Errorf("h2: the profile has no websocket priority")
	case pr == nil:
		t.Errorf("h2: the browser's CONNECT has no priority, the profile %+v", want)
	case pr.Exclusive != want.Exclusive || pr.Weight != want.Weight:
		t.Errorf("h2: priority exclusive=%v weight %d, profile exclusive=%v weight %d", pr.Exclusive, pr.Weight, want.Exclusive, want.Weight)
	case want.DependsOn == profile.Root && pr.StreamDep != 0:
		t.Errorf("h2: the CONNECT depends on stream %d, the profile's rule is root", pr.StreamDep)
	case want.DependsOn == profile.LatestOpen:
		ok := pr.StreamDep == 0
		for _, b := range l.h2Before {
			ok = ok || b.StreamID == pr.StreamDep && b.Priority != nil && b.Priority.Weight >= pr.Weight
		}
		if !ok {
			t.Errorf("h2: the CONNECT depends on stream %d, not an earlier stream of an equal or higher weight", pr.StreamDep)
		}
	}
	if !l.h2Page {
		t.Errorf("h2: the WebSocket went over a connection of its own; the recording (and guise) use the page's")
	}

	lines := strings.Split(strings.TrimSuffix(string(l.h1Head), "\r\n\r\n"), "\r\n")
	got = nil
	for _, line := range lines[1:] {
		n, v, _ := strings.Cut(line, ": ")
		got = append(got, fields.Field{Name: n, Value: v})
	}
	compareWSFields(t, "http/1.1", got, p.HeaderSet(profile.WebSocket, profile.HTTP1))
	if l.h1Page {
		t.Errorf("http/1.1: the WebSocket shared the page's connection; the recording (and guise) open a new one")
	}
	if !slices.Equal(l.h1Alpn, []string{"http/1.1"}) {
		t.Errorf("http/1.1: the WebSocket's connection offered ALPN %v, want [http/1.1]", l.h1Alpn)
	}
	// The connections' hellos against the recording's: the page's h2
	// connection, and a new HTTP/1.1 one resuming the page's session.
	for _, c := range []struct {
		rec     *ConnRecord
		i       int
		resumed bool
	}{{l.h2Conn, 0, false}, {l.h1Conn, 1, true}} {
		ch, err := c.rec.ClientHello()
		if err != nil {
			t.Fatal(err)
		}
		resumed := slices.ContainsFunc(ch.Extensions, func(e Extension) bool { return e.Type == 41 })
		if len(recorded) != 2 || ch.JA4() != recorded[c.i].JA4 || resumed != recorded[c.i].Resumed {
			t.Errorf("connection %d: JA4 %s resumed=%v, the recording's %+v", c.rec.ID, ch.JA4(), resumed, recorded)
		}
	}
	t.Logf("%s: h2 CONNECT on the page's connection %d (priority %+v); HTTP/1.1 on new connection %d, ALPN %v",
		profileName, l.h2Conn.ID, *l.h2.Priority, l.h1Conn.ID, l.h1Alpn)
}

// compareWSFields compares a handshake's fields (names exactly, in order)
// with the profile's set: a per-request field the browser did not send
// (the page set no cookie) is left out, and per-request values are not
// compared.
func compareWSFields(t *testing.T, proto string, got fields.Header, hs *profile.HeaderSet) {
	t.Helper()
	if hs == nil {
		t.Errorf("%s: the profile has no websocket set", proto)
		return
	}
	var want fields.Header
	for _, f := range hs.Header {
		if f.Value == "" && got.Get(f.Name) == "" {
			continue
		}
		want = append(want, f)
	}
	var gn, wn []string
	for _, f := range got {
		gn = append(gn, f.Name)
	}
	for _, f := range want {
		wn = append(wn, f.Name)
	}
	if !slices.Equal(gn, wn) {
		t.Errorf("%s: fields\n browser %v\n profile %v", proto, gn, wn)
		return
	}
	for i, f := range got {
		if slices.ContainsFunc(wsValueFree, func(n string) bool { return fields.EqualFold(n, f.Name) }) {
			continue
		}
		if f.Value != want[i].Value {
			t.Errorf("%s: %s %q, profile %q", proto, f.Name, f.Value, want[i].Value)
		}
	}
}

// TestLiveWebSocketChromium opens the WebSocket page in Chromium over h2
// (an extended CONNECT on the page's connection) and with --disable-http2
// (an Upgrade on a new connection), and compares both handshakes with the
// chrome profile (RELIABILITY WS-20).
func TestLiveWebSocketChromium(t *testing.T) {
	bin := testpeer.Need(t, "chromium", "chromium")
	s := startServer(t, nil)
	_, port, _ := strings.Cut(s.ListenAddr(), ":")
	for _, extra := range [][]string{nil, {"--disable-http2"}} {
		args := []string{
			"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
			"--disable-background-networking", "--disable-component-update", "--disable-sync",
			"--disable-default-apps", "--disable-domain-reliability", "--no-default-browser-check",
			"--ignore-certificate-errors", "--user-data-dir=" + t.TempDir(),
			"--host-resolver-rules=MAP fp.test 127.0.0.1, MAP * ~NOTFOUND",
			"--virtual-time-budget=5000", "--dump-dom",
		}
		runBrowser(t, bin, nil, append(append(args, extra...), "https://fp.test:"+port+WebSocketPage)...)
	}
	checkLiveWebSocket(t, s, "chrome156-linux", "chromium-156-websocket.json")
}

// TestLiveWebSocketFirefox is TestLiveWebSocketChromium for Firefox ESR
// (network.http.http2.enabled false for HTTP/1.1).
func TestLiveWebSocketFirefox(t *testing.T) {
	bin := testpeer.Need(t, "firefox-esr", "firefox-esr")
	certutil := testpeer.Need(t, "certutil", "libnss3-tools")
	s := startServer(t, nil)
	_, port, _ := strings.Cut(s.ListenAddr(), ":")
	dir := t.TempDir()
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, s.CAPEM(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, h2 := range []bool{true, false} {
		prof := filepath.Join(dir, "ws-"+strconv.FormatBool(h2))
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
		runBrowser(t, bin, []string{"HOME=" + dir},
			"--headless", "--no-remote", "--profile", prof, "--screenshot", filepath.Join(dir, "shot.png"), "https://fp.test:"+port+WebSocketPage)
	}
	checkLiveWebSocket(t, s, "firefox153-linux", "firefox-esr-153-websocket.json")
}
