package fingerprint

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/guise-http/guise"
	"github.com/guise-http/guise/internal/testpeer"
	"github.com/guise-http/guise/internal/ws"
)

// wsDeflateRecording is what a client sent WebSocketDeflatePage's socket
// when the server accepted permessage-deflate with context takeover both
// ways: each message's text, whether it went compressed (RSV1), and its
// payload as it arrived (unmasked).
type wsDeflateRecording struct {
	How      string             `json:"how"`
	Offer    string             `json:"extensions_offered"`
	Answer   string             `json:"extensions_answer"`
	Messages []wsDeflateMessage `json:"messages"`
}

type wsDeflateMessage struct {
	Text       string `json:"text"`
	Compressed bool   `json:"compressed"`
	Payload    string `json:"payload_hex"`
}

// The answers the live tests give: context takeover both ways, and none
// for the client's messages.
const (
	wsDeflateAnswer           = "permessage-deflate"
	wsDeflateNoTakeoverAnswer = "permessage-deflate; client_no_context_takeover"
)

// wsDeflateServer starts an echo server accepting permessage-deflate with
// answer that collects the text frames sent to it; each call of the
// function returned takes those collected since the last.
func wsDeflateServer(t *testing.T, answer string) (*Server, func() (string, []wsDeflateMessage)) {
	var mu sync.Mutex
	var offer string
	var got []wsDeflateMessage
	s := &Server{DisableQUIC: true, wsDeflate: answer}
	s.onWSFrame = func(o string, h ws.Header, p []byte) {
		if h.Op != ws.OpText {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		offer = o
		got = append(got, wsDeflateMessage{Compressed: h.RSV&4 != 0, Payload: hex.EncodeToString(p)})
	}
	startServer(t, s)
	return s, func() (string, []wsDeflateMessage) {
		mu.Lock()
		defer mu.Unlock()
		ms := WebSocketDeflateMessages()
		out := got
		got = nil
		for i := range out {
			if i < len(ms) {
				out[i].Text = ms[i]
			}
		}
		return offer, out
	}
}

// guiseWSDeflate sends WebSocketDeflateMessages to s as profile name and
// returns what the server received.
func guiseWSDeflate(t *testing.T, s *Server, frames func() (string, []wsDeflateMessage), name string) []wsDeflateMessage {
	t.Helper()
	frames()
	addr := s.ListenAddr()
	_, port, _ := net.SplitHostPort(addr)
	var d net.Dialer
	tr := &guise.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return d.DialContext(ctx, network, addr)
	}}
	defer tr.Close()
	sess := &guise.Session{Profile: name, RootCAs: s.CertPool(), Transport: tr}
	defer sess.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := sess.WebSocket(ctx, "wss://fp.test:"+port+WebSocketEcho, &guise.WebSocketOptions{Origin: "https://fp.test:" + port})
	if err != nil {
		t.Fatalf("guise as %s: %v", name, err)
	}
	for _, m := range WebSocketDeflateMessages() {
		if err := c.Write(ctx, guise.MessageText, []byte(m)); err != nil {
			t.Fatal(err)
		}
		if _, b, err := c.Read(ctx); err != nil || string(b) != m {
			t.Fatalf("echo of %d bytes: %d bytes, %v", len(m), len(b), err)
		}
	}
	c.Close(guise.CloseNormal, "done")
	_, got := frames()
	return got
}

// checkWSDeflate compares what guise sent with the browser's messages,
// byte for byte (RELIABILITY WS-24), and with GUISE_RECORD_WS_DEFLATE=1
// writes the browser's as testdata/ws-deflate/<recording>.json.
// A server that answered otherwise than wsDeflateAnswer gets the
// recording <recording>-no-takeover.json.
func checkWSDeflate(t *testing.T, s *Server, frames func() (string, []wsDeflateMessage), name, recording, how, answer string) {
	t.Helper()
	offer, browser := frames()
	if len(browser) != len(WebSocketDeflateMessages()) {
		t.Fatalf("the browser sent %d text messages, want %d", len(browser), len(WebSocketDeflateMessages()))
	}
	if os.Getenv("GUISE_RECORD_WS_DEFLATE") == "1" {
		rec := wsDeflateRecording{How: how + ", " + time.Now().UTC().Format("2006-01-02"), Offer: offer, Answer: answer, Messages: browser}
		if answer != wsDeflateAnswer {
			recording += "-no-takeover"
		}
		b, err := json.MarshalIndent(rec, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("testdata", "ws-deflate", recording+".json"), append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := guiseWSDeflate(t, s, frames, name)
	if len(got) != len(browser) {
		t.Fatalf("guise sent %d text messages, the browser %d", len(got), len(browser))
	}
	for i, b := range browser {
		if got[i].Compressed != b.Compressed || got[i].Payload != b.Payload {
			t.Errorf("message %d (%d bytes): guise compressed=%v %d bytes %.40s, the browser compressed=%v %d bytes %.40s",
				i, len(b.Text), got[i].Compressed, len(got[i].Payload)/2, got[i].Payload, b.Compressed, len(b.Payload)/2, b.Payload)
		}
	}
}

// TestLiveWebSocketDeflateChromium opens WebSocketDeflatePage in Chromium
// against a server accepting permessage-deflate and compares guise's
// compressed messages with the browser's.
func TestLiveWebSocketDeflateChromium(t *testing.T) {
	bin := testpeer.Need(t, "chromium", "chromium")
	for _, answer := range []string{wsDeflateAnswer, wsDeflateNoTakeoverAnswer} {
		t.Run(answer, func(t *testing.T) { liveWSDeflateChromium(t, bin, answer) })
	}
}

func liveWSDeflateChromium(t *testing.T, bin, answer string) {
	s, frames := wsDeflateServer(t, answer)
	_, port, _ := strings.Cut(s.ListenAddr(), ":")
	runBrowser(t, bin, nil,
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-default-apps", "--disable-domain-reliability", "--no-default-browser-check",
		"--ignore-certificate-errors", "--user-data-dir="+t.TempDir(),
		"--host-resolver-rules=MAP fp.test 127.0.0.1, MAP * ~NOTFOUND",
		"--virtual-time-budget=5000", "--dump-dom", "https://fp.test:"+port+WebSocketDeflatePage)
	checkWSDeflate(t, s, frames, "chrome156-linux", "chromium-156",
		"Debian chromium 156 (headless) opening "+WebSocketDeflatePage+" of the echo server answering "+answer+" (fingerprint's TestLiveWebSocketDeflateChromium, GUISE_RECORD_WS_DEFLATE=1)", answer)
}

// TestLiveWebSocketDeflateFirefox is the same for Firefox ESR.
func TestLiveWebSocketDeflateFirefox(t *testing.T) {
	bin := testpeer.Need(t, "firefox-esr", "firefox-esr")
	certutil := testpeer.Need(t, "certutil", "libnss3-tools")
	for _, answer := range []string{wsDeflateAnswer, wsDeflateNoTakeoverAnswer} {
		t.Run(answer, func(t *testing.T) { liveWSDeflateFirefox(t, bin, certutil, answer) })
	}
}

func liveWSDeflateFirefox(t *testing.T, bin, certutil, answer string) {
	s, frames := wsDeflateServer(t, answer)
	_, port, _ := strings.Cut(s.ListenAddr(), ":")
	dir, prof := firefoxProfile(t, certutil, s.CAPEM())
	runBrowser(t, bin, []string{"HOME=" + dir},
		"--headless", "--no-remote", "--profile", prof, "--screenshot", filepath.Join(dir, "shot.png"), "https://fp.test:"+port+WebSocketDeflatePage)
	checkWSDeflate(t, s, frames, "firefox153-linux", "firefox-esr-153",
		"Debian firefox-esr 153 (headless) opening "+WebSocketDeflatePage+" of the echo server answering "+answer+" (fingerprint's TestLiveWebSocketDeflateFirefox, GUISE_RECORD_WS_DEFLATE=1)", answer)
}
