//go:build ignore

// flows records what a real browser sends on the echo server's flow pages
// (fingerprint.FlowStart): a top-level navigation, an image, a script and a
// fetch() that carry a cookie the server set, a text/plain and an
// application/json fetch() POST, and a form submission (a navigation POST),
// over HTTP/2 and over HTTP/1.1. It starts the echo server on 127.0.0.1,
// runs the headless browser against https://fp.test:PORT/flow/start and
// then, on the same browser profile (which kept the cookie),
// https://fp.test:PORT/flow/nav, over h2 and then HTTP/1.1 only, with
// fp.test mapped to 127.0.0.1, and
// writes the requests to the flow pages, in arrival order, as JSON: HTTP/2
// requests decoded from the HEADERS frames (pseudo-header order, fields in
// order), HTTP/1.1 heads raw.
//
//	go run ./profile/testdata/record/flows.go -browser chromium -out profile/testdata/recordings/chromium-156-flows.json
//	go run ./profile/testdata/record/flows.go -browser firefox-esr -out profile/testdata/recordings/firefox-esr-153-flows.json
//
// With -activate (firefox-esr only) it records instead one navigation a user
// starts: Firefox driven through Marionette, whose navigation counts as one
// typed into the address bar (user activation), to https://fp.test:PORT/flow/nav
// and then to https://fp.test:PORT/flow/start (which redirects), over h2 and
// then HTTP/1.1. A headless run from the command line has no
// user activation, so Firefox sends no Sec-Fetch-User there.
//
//	go run ./profile/testdata/record/flows.go -browser firefox-esr -activate -out profile/testdata/recordings/firefox-esr-153-activation.json
//
// With -websocket it records instead the WebSocket handshake of the echo
// server's WebSocket page (fingerprint.WebSocketPage, new WebSocket() to
// its own origin), over h2 (an extended CONNECT, which the server enables:
// the program runs itself again with GODEBUG=http2xconnect=1) and over
// HTTP/1.1 only, and which connection each handshake took:
//
//	go run ./profile/testdata/record/flows.go -browser chromium -websocket -out profile/testdata/recordings/chromium-156-websocket.json
//	go run ./profile/testdata/record/flows.go -browser firefox-esr -websocket -out profile/testdata/recordings/firefox-esr-153-websocket.json
//
// Firefox needs certutil (libnss3-tools) to trust the server's CA.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/guise-http/guise/fingerprint"
)

type field struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type h2Request struct {
	Method      string   `json:"method"`
	Path        string   `json:"path"`
	PseudoOrder []string `json:"pseudo_order"`
	Headers     []field  `json:"headers"`
	// StreamID and Priority (the HEADERS frame's, absent without the
	// PRIORITY flag) are recorded with -websocket, with the streams opened
	// before it on the connection (OpenedBefore, with their priorities):
	// what the extended CONNECT's dependency is read from.
	StreamID     uint32       `json:"stream_id,omitempty"`
	Priority     *priority    `json:"priority,omitempty"`
	OpenedBefore []openStream `json:"opened_before,omitempty"`
}

type priority struct {
	Exclusive bool   `json:"exclusive"`
	StreamDep uint32 `json:"stream_dep"`
	Weight    int    `json:"weight"`
}

type openStream struct {
	StreamID uint32    `json:"stream_id"`
	Path     string    `json:"path"`
	Priority *priority `json:"priority,omitempty"`
}

func toPriority(p *fingerprint.Priority) *priority {
	if p == nil {
		return nil
	}
	return &priority{p.Exclusive, p.StreamDep, p.Weight}
}

type output struct {
	Browser string      `json:"browser"`
	How     string      `json:"how"`
	H2      []h2Request `json:"h2"`
	HTTP1   []string    `json:"http1_heads"`
	// Conns says, with -websocket, which connection each handshake took.
	Conns []wsConn `json:"websocket_connections,omitempty"`
}

// wsConn is the connection a WebSocket handshake went over: its protocol,
// the ALPN list its ClientHello offered, and whether the page itself had
// been loaded over it (an existing connection) or not (a new one).
type wsConn struct {
	ID          uint64   `json:"id"`
	Protocol    string   `json:"protocol"`
	ALPNOffered []string `json:"alpn_offered"`
	PageOnIt    bool     `json:"page_loaded_on_it"`
	// JA4 is its ClientHello's, and Resumed says it offered a session
	// (pre_shared_key).
	JA4     string `json:"ja4"`
	Resumed bool   `json:"resumed"`
}

func main() {
	log.SetFlags(0)
	browser := flag.String("browser", "chromium", "chromium or firefox-esr")
	activate := flag.Bool("activate", false, "firefox-esr: one user-started navigation through Marionette instead of the flow pages")
	out := flag.String("out", "", "output JSON file")
	websocket := flag.Bool("websocket", false, "record the WebSocket page's handshake instead of the flow pages")
	flag.Parse()
	if *websocket && !strings.Contains(os.Getenv("GODEBUG"), "http2xconnect=1") {
		// Go's HTTP/2 server announces ENABLE_CONNECT_PROTOCOL only when
		// the process starts with this GODEBUG.
		self, err := os.Executable()
		if err != nil {
			log.Fatal(err)
		}
		env := append(os.Environ(), "GODEBUG="+strings.TrimPrefix(os.Getenv("GODEBUG")+",http2xconnect=1", ","))
		log.Fatal(syscall.Exec(self, os.Args, env))
	}
	pages := []string{fingerprint.FlowStart, fingerprint.FlowNav}
	prefix := "/flow/"
	if *websocket {
		pages, prefix = []string{fingerprint.WebSocketPage}, fingerprint.WebSocketEcho
	}
	if *out == "" {
		log.Fatal("-out is required")
	}
	bin, err := exec.LookPath(*browser)
	if err != nil {
		log.Fatal(err)
	}
	version, _ := exec.Command(bin, "--version").Output()

	srv := &fingerprint.Server{}
	if err := srv.Start(); err != nil {
		log.Fatal(err)
	}
	_, port, _ := strings.Cut(srv.ListenAddr(), ":")
	origin := "https://fp.test:" + port
	dir, err := os.MkdirTemp("", "guise-flows-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	var how string
	switch filepath.Base(*browser) {
	case "chromium":
		if *activate {
			log.Fatal("-activate is for firefox-esr")
		}
		how = "profile/testdata/record/flows.go -browser chromium: the echo server (fingerprint.Server) on 127.0.0.1, then `chromium " + shellJoin(chromiumArgs("$D")) + " https://fp.test:PORT" + fingerprint.FlowStart + "`, then the same with the URL https://fp.test:PORT" + fingerprint.FlowNav + " (same user data dir $D, so the cookie is kept); both again with a new $D and --disable-http2 added"
		for _, h1 := range []bool{false, true} {
			args := chromiumArgs(filepath.Join(dir, fmt.Sprint("chromium-", h1)))
			if h1 {
				args = append(args, "--disable-http2")
			}
			for _, path := range pages {
				run(bin, nil, append(args, origin+path)...)
			}
		}
	case "firefox-esr":
		how = "profile/testdata/record/flows.go -browser firefox-esr: the echo server (fingerprint.Server) on 127.0.0.1, then, per run, a fresh profile dir $P trusting the server's CA (certutil -N -d sql:$P --empty-password; certutil -A -n guise-echo -t C,, -i ca.pem -d sql:$P), a user.js with network.dns.localDomains \"fp.test\", telemetry, updates, safebrowsing and captive portal off, every other host to a closed proxy port, and `HOME=$DIR firefox-esr --headless --no-remote --profile $P --screenshot shot.png https://fp.test:PORT" + fingerprint.FlowStart + "`, then the same with the URL https://fp.test:PORT" + fingerprint.FlowNav + " (same profile, so the cookie is kept); both again with a new profile whose user.js adds user_pref(\"network.http.http2.enabled\", false)"
		ca := filepath.Join(dir, "ca.pem")
		if err := os.WriteFile(ca, srv.CAPEM(), 0o644); err != nil {
			log.Fatal(err)
		}
		for _, h1 := range []bool{false, true} {
			prof := filepath.Join(dir, fmt.Sprint("ff-", h1))
			if err := os.Mkdir(prof, 0o755); err != nil {
				log.Fatal(err)
			}
			for _, a := range [][]string{
				{"-N", "-d", "sql:" + prof, "--empty-password"},
				{"-A", "-n", "guise-echo", "-t", "C,,", "-i", ca, "-d", "sql:" + prof},
			} {
				if o, err := exec.Command("certutil", a...).CombinedOutput(); err != nil {
					log.Fatalf("certutil %v: %v\n%s", a, err, o)
				}
			}
			prefs := firefoxPrefs
			if h1 {
				prefs += `user_pref("network.http.http2.enabled", false);` + "\n"
			}
			if err := os.WriteFile(filepath.Join(prof, "user.js"), []byte(prefs), 0o644); err != nil {
				log.Fatal(err)
			}
			if *activate {
				marionetteNavigate(bin, dir, prof, origin+fingerprint.FlowNav, origin+fingerprint.FlowStart)
				continue
			}
			for _, path := range pages {
				run(bin, []string{"HOME=" + dir}, "--headless", "--no-remote", "--profile", prof,
					"--screenshot", filepath.Join(dir, "shot.png"), origin+path)
			}
		}
		if *activate {
			how = "profile/testdata/record/flows.go -browser firefox-esr -activate: the echo server (fingerprint.Server) on 127.0.0.1, then, per protocol, a fresh profile dir $P set up as for the flow pages (CA trusted with certutil, the same user.js plus marionette.port), `HOME=$DIR firefox-esr --headless --no-remote --marionette --profile $P`, and over Marionette WebDriver:NewSession then WebDriver:Navigate to https://fp.test:PORT" + fingerprint.FlowNav + " and then to https://fp.test:PORT" + fingerprint.FlowStart + ", which redirects (navigations with user activation, as ones typed into the address bar); the second profile's user.js adds user_pref(\"network.http.http2.enabled\", false)"
		}
	default:
		log.Fatalf("unknown browser %q", *browser)
	}
	srv.Close()

	o := output{Browser: "Debian " + strings.TrimSpace(string(version)) + " (headless), loopback, " + time.Now().UTC().Format("2006-01-02"), How: how}
	for _, rec := range srv.Records() {
		switch rec.Protocol {
		case fingerprint.ProtoH2:
			h, _ := rec.HTTP2()
			if h == nil {
				continue
			}
			for _, q := range h.Requests {
				if q.Trailer || !strings.HasPrefix(q.Path(), prefix) {
					continue
				}
				r := h2Request{Method: q.Method(), Path: q.Path(), PseudoOrder: q.PseudoOrder}
				if *websocket {
					r.StreamID, r.Priority = q.StreamID, toPriority(q.Priority)
					for _, b := range h.Requests {
						if !b.Trailer && b.StreamID < q.StreamID {
							r.OpenedBefore = append(r.OpenedBefore, openStream{b.StreamID, b.Path(), toPriority(b.Priority)})
						}
					}
				}
				for _, f := range q.Header {
					if !strings.HasPrefix(f.Name, ":") {
						r.Headers = append(r.Headers, field{f.Name, f.Value})
					}
				}
				o.H2 = append(o.H2, r)
			}
		case fingerprint.ProtoHTTP1:
			for _, head := range rec.HTTP1Heads() {
				if bytes.Contains(head[:bytes.IndexByte(head, '\n')+1], []byte(" "+prefix)) {
					o.HTTP1 = append(o.HTTP1, string(head))
				}
			}
		}
	}
	if *websocket {
		o.Conns = websocketConns(srv.Records())
		if *browser == "chromium" {
			o.How = strings.ReplaceAll(o.How, fingerprint.FlowStart+"`, then the same with the URL https://fp.test:PORT"+fingerprint.FlowNav+" (same user data dir $D, so the cookie is kept); both", fingerprint.WebSocketPage+"`; that")
		}
		o.How = strings.ReplaceAll(o.How, fingerprint.FlowStart+"`, then the same with the URL https://fp.test:PORT"+fingerprint.FlowNav+" (same profile, so the cookie is kept); both", fingerprint.WebSocketPage+"`; that")
		o.How = strings.Replace(o.How, "flows.go -browser "+*browser, "flows.go -browser "+*browser+" -websocket (GODEBUG=http2xconnect=1)", 1)
	}
	b, err := json.MarshalIndent(o, "", "  ")
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*out, append(b, '\n'), 0o644); err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "%d h2 requests, %d HTTP/1.1 heads\n", len(o.H2), len(o.HTTP1))
}

// shellJoin joins args for the how field, quoting those with spaces.
func shellJoin(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = a
		if strings.ContainsRune(a, ' ') {
			q[i] = `"` + a + `"`
		}
	}
	return strings.Join(q, " ")
}

func chromiumArgs(userDir string) []string {
	return []string{
		"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-default-apps", "--disable-domain-reliability", "--no-default-browser-check",
		"--ignore-certificate-errors", "--user-data-dir=" + userDir,
		"--host-resolver-rules=MAP fp.test 127.0.0.1, MAP * ~NOTFOUND",
		"--virtual-time-budget=5000", "--dump-dom",
	}
}

// run runs a browser to completion, at most a minute, in its own process
// group.
func run(bin string, env []string, args ...string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Env = append(os.Environ(), env...)
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Run(); err != nil {
		log.Printf("%s: %v (tolerated)", filepath.Base(bin), err)
	}
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

const firefoxPrefs = `user_pref("network.dns.localDomains", "fp.test");
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

// marionettePort is the port Firefox's Marionette listens on while
// recording (set in the profile's user.js).
const marionettePort = 28281

// marionetteNavigate starts Firefox with Marionette on prof, navigates to
// each of urls in turn as a user would, waiting for each page, and ends
// Firefox. It speaks
// Marionette's protocol directly: length-prefixed JSON messages,
// [0, id, command, params] out, [1, id, error, result] back.
func marionetteNavigate(bin, home, prof string, urls ...string) {
	prefs := fmt.Sprintf("user_pref(\"marionette.port\", %d);\n", marionettePort)
	f, err := os.OpenFile(filepath.Join(prof, "user.js"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		log.Fatal(err)
	}
	f.WriteString(prefs)
	f.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-remote", "--marionette", "--profile", prof)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Env = append(os.Environ(), "HOME="+home)
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	defer func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	}()
	var c net.Conn
	for range 150 {
		if c, err = net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", marionettePort)); err == nil {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err != nil {
		log.Fatalf("marionette: %v", err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(45 * time.Second))
	r := bufio.NewReader(c)
	read := func() []byte {
		n, err := r.ReadString(':')
		if err != nil {
			log.Fatalf("marionette: %v", err)
		}
		size, err := strconv.Atoi(strings.TrimSuffix(n, ":"))
		if err != nil || size > 1<<20 {
			log.Fatalf("marionette: bad length %q", n)
		}
		b := make([]byte, size)
		if _, err := io.ReadFull(r, b); err != nil {
			log.Fatalf("marionette: %v", err)
		}
		return b
	}
	read() // the server's hello
	id := 0
	call := func(name string, params any) {
		id++
		b, _ := json.Marshal([]any{0, id, name, params})
		fmt.Fprintf(c, "%d:%s", len(b), b)
		var resp []json.RawMessage
		if err := json.Unmarshal(read(), &resp); err != nil || len(resp) != 4 {
			log.Fatalf("marionette %s: bad reply", name)
		}
		if string(resp[2]) != "null" {
			log.Fatalf("marionette %s: %s", name, resp[2])
		}
	}
	call("WebDriver:NewSession", map[string]any{"capabilities": map[string]any{}})
	for _, u := range urls {
		call("WebDriver:Navigate", map[string]any{"url": u})
	}
	call("WebDriver:DeleteSession", map[string]any{})
}

// websocketConns finds the connections that carried a WebSocket handshake.
func websocketConns(recs []*fingerprint.ConnRecord) []wsConn {
	var out []wsConn
	for _, rec := range recs {
		var ws, page bool
		switch rec.Protocol {
		case fingerprint.ProtoH2:
			h, _ := rec.HTTP2()
			if h == nil {
				continue
			}
			for _, q := range h.Requests {
				ws = ws || q.Path() == fingerprint.WebSocketEcho
				page = page || q.Path() == fingerprint.WebSocketPage
			}
		case fingerprint.ProtoHTTP1:
			for _, head := range rec.HTTP1Heads() {
				line := string(head[:bytes.IndexByte(head, '\n')+1])
				ws = ws || strings.Contains(line, " "+fingerprint.WebSocketEcho+" ")
				page = page || strings.Contains(line, " "+fingerprint.WebSocketPage+" ")
			}
		}
		if !ws {
			continue
		}
		c := wsConn{ID: rec.ID, Protocol: rec.Protocol, PageOnIt: page}
		if ch, err := rec.ClientHello(); err == nil {
			c.ALPNOffered = ch.ALPN
			c.JA4 = ch.JA4()
			for _, e := range ch.Extensions {
				c.Resumed = c.Resumed || e.Type == 41
			}
		}
		out = append(out, c)
	}
	return out
}
