package fingerprint

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/guise-http/guise"
	"github.com/guise-http/guise/internal/testpeer"
)

// wsOrigin1 is how a client reached a WebSocket on an origin that speaks
// HTTP/1.1 only: the ALPN the Upgrade's connection offered, and whether
// that connection also carried the page.
type wsOrigin1 struct {
	alpn     []string
	pageConn bool
	ja4      string
}

// collectWSOrigin1 finds the connection of records that carried the
// Upgrade to WebSocketEcho, among those not in before.
func collectWSOrigin1(t *testing.T, s *Server, before map[uint64]bool) wsOrigin1 {
	t.Helper()
	for _, r := range s.Records() {
		if before[r.ID] || r.Protocol != ProtoHTTP1 {
			continue
		}
		page, ws := false, false
		for _, head := range r.HTTP1Heads() {
			line := string(head[:bytes.IndexByte(head, '\n')+1])
			page = page || strings.Contains(line, " "+WebSocketPage+" ")
			ws = ws || strings.HasPrefix(line, "GET "+WebSocketEcho+" ")
		}
		if !ws {
			continue
		}
		ch, err := r.ClientHello()
		if err != nil {
			t.Fatalf("connection #%d: %v", r.ID, err)
		}
		return wsOrigin1{alpn: ch.ALPN, pageConn: page, ja4: ch.JA4()}
	}
	t.Fatal("no Upgrade request to " + WebSocketEcho + " over HTTP/1.1")
	return wsOrigin1{}
}

// guiseWSOrigin1 opens the WebSocket page's socket with guise as profile
// name, after loading the page as the browser does, and returns how it
// went.
func guiseWSOrigin1(t *testing.T, s *Server, name string) wsOrigin1 {
	t.Helper()
	before := map[uint64]bool{}
	for _, r := range s.Records() {
		before[r.ID] = true
	}
	addr := s.ListenAddr()
	_, port, _ := net.SplitHostPort(addr)
	var d net.Dialer
	tr := &guise.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return d.DialContext(ctx, network, addr)
	}}
	defer tr.Close()
	sess := &guise.Session{Profile: name, RootCAs: s.CertPool(), Transport: tr, Timeout: 10 * time.Second}
	defer sess.Close()
	base := "https://fp.test:" + port
	resp, err := sess.Get(context.Background(), base+WebSocketPage)
	if err == nil {
		_, err = resp.Bytes()
	}
	if err != nil {
		t.Fatalf("guise as %s: the page: %v", name, err)
	}
	ws, err := sess.WebSocket(context.Background(), "wss://fp.test:"+port+WebSocketEcho, &guise.WebSocketOptions{Origin: base})
	if err != nil {
		t.Fatalf("guise as %s: websocket: %v", name, err)
	}
	ws.Close(guise.CloseNormal, "")
	return collectWSOrigin1(t, s, before)
}

// checkWSOrigin1 compares guise with the browser on an HTTP/1.1-only
// origin: the same ALPN offer on the socket's connection, and a new
// connection, not the page's (RELIABILITY WS-23).
//
// With GUISE_RECORD_WS_H1ORIGIN=1 it writes the browser's facts to
// profile/testdata/recordings/<recording>-websocket-h1origin.json, which
// profile/gen.go reads (HTTP1Options.WebSocketFullALPN).
func checkWSOrigin1(t *testing.T, s *Server, browser wsOrigin1, name, recording string) {
	t.Helper()
	t.Logf("browser: the socket's connection offered %v, carried the page: %v, JA4 %s", browser.alpn, browser.pageConn, browser.ja4)
	if os.Getenv("GUISE_RECORD_WS_H1ORIGIN") == "1" {
		b, err := json.MarshalIndent(map[string]any{
			"how":               "fingerprint's TestLiveWebSocketHTTP1Origin* (ws_h1origin_live_test.go), " + time.Now().UTC().Format("2006-01-02") + ": the echo server with DisableHTTP2 (ALPN http/1.1 alone) on loopback, the browser with HTTP/2 on, opening " + WebSocketPage,
			"alpn_offered":      browser.alpn,
			"page_loaded_on_it": browser.pageConn,
			"ja4":               browser.ja4,
		}, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("..", "profile", "testdata", "recordings", recording+"-websocket-h1origin.json")
		if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	g := guiseWSOrigin1(t, s, name)
	if !slices.Equal(g.alpn, browser.alpn) || g.pageConn != browser.pageConn || g.ja4 != browser.ja4 {
		t.Errorf("%s on an HTTP/1.1-only origin: the socket's connection offered %v (the page's: %v, JA4 %s); the browser's %v (%v, %s)",
			name, g.alpn, g.pageConn, g.ja4, browser.alpn, browser.pageConn, browser.ja4)
	}
}

// TestLiveWebSocketHTTP1OriginChromium: Chromium, HTTP/2 on, opens the
// WebSocket page of an origin that speaks HTTP/1.1 only; guise as chrome
// must do what it did.
func TestLiveWebSocketHTTP1OriginChromium(t *testing.T) {
	bin := testpeer.Need(t, "chromium", "chromium")
	s := startServer(t, &Server{DisableHTTP2: true, DisableQUIC: true})
	_, port, _ := strings.Cut(s.ListenAddr(), ":")
	runBrowser(t, bin, nil,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-default-apps", "--disable-domain-reliability", "--no-default-browser-check",
		"--ignore-certificate-errors", "--user-data-dir="+t.TempDir(),
		"--host-resolver-rules=MAP fp.test 127.0.0.1, MAP * ~NOTFOUND",
		"--virtual-time-budget=5000", "--dump-dom", "https://fp.test:"+port+WebSocketPage)
	checkWSOrigin1(t, s, collectWSOrigin1(t, s, nil), "chrome156-linux", "chromium-156")
}

// TestLiveWebSocketHTTP1OriginFirefox is the same for Firefox ESR, HTTP/2
// on.
func TestLiveWebSocketHTTP1OriginFirefox(t *testing.T) {
	bin := testpeer.Need(t, "firefox-esr", "firefox-esr")
	certutil := testpeer.Need(t, "certutil", "libnss3-tools")
	s := startServer(t, &Server{DisableHTTP2: true, DisableQUIC: true})
	_, port, _ := strings.Cut(s.ListenAddr(), ":")
	dir, prof := firefoxProfile(t, certutil, s.CAPEM())
	runBrowser(t, bin, []string{"HOME=" + dir},
		"--headless", "--no-remote", "--profile", prof, "--screenshot", filepath.Join(dir, "shot.png"), "https://fp.test:"+port+WebSocketPage)
	checkWSOrigin1(t, s, collectWSOrigin1(t, s, nil), "firefox153-linux", "firefox-esr-153")
}
