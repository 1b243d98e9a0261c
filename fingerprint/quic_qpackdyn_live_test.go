package fingerprint

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/guise-http/guise/internal/testpeer"
)

// The QPACK settings the dynamic-table recordings were made with:
// QUICHE's defaults, which Google's servers advertise
// (kDefaultQpackMaxDynamicTableCapacity, kDefaultMaximumBlockedStreams).
const (
	dynTableCapacity  = 65536
	dynBlockedStreams = 100
)

// qpackFacts are what a browser's QPACK encoder did on one connection
// whose server allowed a dynamic table, each as a comparable string: the
// encoder stream's instructions, and per request (by path) its Required
// Insert Count and Base and how each field line was sent.
func qpackFacts(t *testing.T, r *ConnRecord) map[string]string {
	t.Helper()
	h, err := r.HTTP3()
	if err != nil {
		t.Fatalf("connection #%d: http3: %v", r.ID, err)
	}
	if h.QPACKEncoderErr != "" {
		t.Fatalf("connection #%d: encoder stream: %s", r.ID, h.QPACKEncoderErr)
	}
	f := map[string]string{}
	var enc []string
	for _, in := range h.QPACKEncoder {
		enc = append(enc, instrString(in))
	}
	f["encoder_stream"] = strings.Join(enc, " | ")
	for _, q := range h.Requests {
		if q.Err != "" {
			t.Fatalf("connection #%d stream %d: %s", r.ID, q.StreamID, q.Err)
		}
		kind := q.HTTPRequest().Target
		if kind == "/favicon.ico" {
			continue
		}
		var lines []string
		for _, l := range q.Lines {
			lines = append(lines, lineString(l))
		}
		f["request "+kind+" prefix"] = "ric=" + strconv.FormatUint(q.RequiredInsertCount, 10) + " base=" + strconv.FormatUint(q.Base, 10)
		f["request "+kind+" lines"] = strings.Join(lines, " | ")
	}
	return f
}

func instrString(in QPACKInstruction) string {
	s := in.Kind
	switch in.Kind {
	case "set_dynamic_table_capacity":
		return s + " " + strconv.FormatUint(in.Index, 10)
	case "insert_with_name_reference":
		ref := "dynamic"
		if in.Static {
			ref = "static"
		}
		s += fmt.Sprintf(" %s[%d] %s", ref, in.Index, in.Name)
	case "insert_with_literal_name":
		s += " " + in.Name + huff(in.NameHuffman)
	case "duplicate":
		return s + fmt.Sprintf(" %d %s", in.Index, in.Name)
	}
	return s + " value" + huff(in.ValueHuffman)
}

func lineString(l QPACKLine) string {
	s := l.Kind
	if strings.HasPrefix(l.Kind, "indexed") || strings.Contains(l.Kind, "reference") {
		ref := "dynamic"
		if l.Static {
			ref = "static"
		}
		if strings.Contains(l.Kind, "post_base") {
			ref = "post-base"
		}
		s += fmt.Sprintf(" %s[%d]", ref, l.Index)
	}
	s += " " + l.Name
	if l.Kind == "literal_literal_name" {
		s += huff(l.NameHuffman)
	}
	if !strings.HasPrefix(l.Kind, "indexed") {
		s += " value" + huff(l.ValueHuffman)
	}
	if l.NeverIndexed {
		s += " N"
	}
	return s
}

func huff(h bool) string {
	if h {
		return "(H)"
	}
	return "(raw)"
}

// qpackDynVaries are the QPACK facts that differ between connections of
// one browser.
var qpackDynVaries = map[string][]string{}

// qpackDynLive runs a browser against a fresh server that allows a
// dynamic table of dynTableCapacity bytes and blocked blocked streams
// until it has quicRuns QUIC connections that carried the page (H3FirstPage,
// the page the recordings were made with); with
// GUISE_RECORD_QUIC=1 it writes them as
// testdata/recordings/<browser>-<kind>-NN.json.
func qpackDynLive(t *testing.T, browser string, k dynKind, run func(s *Server, port string)) []*ConnRecord {
	kind := k.kind
	s := startServer(t, &Server{QPACKMaxTableCapacity: k.capacity, QPACKBlockedStreams: k.blocked, AnnounceQPACK: true,
		settingsDelay: k.delay, h3FirstPage: true})
	_, port, _ := strings.Cut(s.ListenAddr(), ":")
	pages := func() []*ConnRecord {
		var out []*ConnRecord
		for _, r := range s.Records() {
			if r.Transport == TransportQUIC && r.Requests > 0 && servedPage(r) {
				out = append(out, r)
			}
		}
		return out
	}
	var recs []*ConnRecord
	// A try may carry no page over QUIC: before the live tests set
	// force-use-alt-svc-mapping-for-testing, Firefox loaded the page
	// itself over TCP in about one try of three (each such try logs its
	// connections). Four tries to spare.
	for try := 0; len(recs) < quicRuns && try < quicRuns+4; try++ {
		run(s, port)
		deadline := time.Now().Add(5 * time.Second)
		for {
			ch := s.Changed()
			if n := len(pages()); n > len(recs) || time.Now().After(deadline) {
				break
			}
			select {
			case <-ch:
			case <-time.After(time.Until(deadline)):
			}
		}
		if n := len(pages()); n == len(recs) {
			for _, r := range s.Records() {
				var paths []string
				for _, q := range r.HTTPRequests() {
					paths = append(paths, q.Target)
				}
				t.Logf("try %d carried no page: connection #%d %v %v", try+1, r.ID, r.Transport, paths)
			}
		}
		recs = pages()
	}
	if len(recs) > quicRuns {
		recs = recs[:quicRuns]
	}
	if len(recs) < quicRuns {
		t.Fatalf("%d quic connections with requests, want %d", len(recs), quicRuns)
	}
	if os.Getenv("GUISE_RECORD_QUIC") == "1" {
		for i, r := range recs {
			b, err := json.MarshalIndent(r, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			name := filepath.Join("testdata", "recordings", fmt.Sprintf("%s-%s-%02d.json", browser, kind, i+1))
			if err := os.WriteFile(name, append(b, '\n'), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return recs
}

// checkQPACKDyn compares live connections' QPACK facts with the first
// in-repo recording <browser>-<kind>-NN.json.
func checkQPACKDyn(t *testing.T, browser, kind string, live []*ConnRecord) {
	t.Helper()
	for _, r := range live {
		f := qpackFacts(t, r)
		for _, k := range slices.Sorted(maps.Keys(f)) {
			t.Logf("connection #%d %s: %s", r.ID, k, f[k])
		}
	}
	paths, _ := filepath.Glob(filepath.Join("testdata", "recordings", browser+"-"+kind+"-*.json"))
	if len(paths) == 0 {
		t.Fatalf("no recordings %s-%s-*.json (make them with GUISE_RECORD_QUIC=1)", browser, kind)
	}
	b, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	rec, err := DecodeRecord(b)
	if err != nil {
		t.Fatal(err)
	}
	// The uni streams (ids, first bytes: issue 29) whatever the timing
	// of the table's use; when they came is logged if it differs.
	wantUni := uniFacts(t, rec)
	for _, r := range live {
		got := uniFacts(t, r)
		uniWhenDiffers(t, fmt.Sprintf("connection #%d vs the recording", r.ID), got, wantUni)
		if got, wantUni := uniStreamsOnly(got), uniStreamsOnly(wantUni); !maps.Equal(got, wantUni) {
			t.Errorf("connection #%d: uni streams\n  live      %s\n  recording %s", r.ID, uniFactsString(got), uniFactsString(wantUni))
		}
	}
	want := qpackFacts(t, rec)
	for _, r := range live {
		got := qpackFacts(t, r)
		if qpackTiming(got) != qpackTiming(want) {
			t.Logf("connection #%d: requests using the table %s, the recording's %s: not compared", r.ID, qpackTiming(got), qpackTiming(want))
			continue
		}
		for k, w := range want {
			if !slices.Contains(qpackDynVaries[browser], k) && !qpackFactEqual(k, got[k], w) {
				t.Errorf("connection #%d: %s\n  live      %s\n  recording %s", r.ID, k, got[k], w)
			}
		}
	}
}

// qpackTiming says which of the page's requests used the table: whether
// the server's SETTINGS had been taken before each is timing (a loaded
// machine sometimes gives Chromium's first request the table too), and
// everything after depends on it.
func qpackTiming(f map[string]string) string {
	var out []string
	for _, p := range []string{"/", "/h3/pixel.gif", "/h3/fetch"} {
		out = append(out, strconv.FormatBool(!strings.HasPrefix(f["request "+p+" prefix"], "ric=0 ")))
	}
	return strings.Join(out, ",")
}

// qpackFactEqual compares one fact; the encoder stream may go on in one
// of them (Chromium's favicon request, sent or not, inserts its :path).
func qpackFactEqual(k, a, b string) bool {
	if k == "encoder_stream" {
		return strings.HasPrefix(a, b) || strings.HasPrefix(b, a)
	}
	return a == b
}

// checkGuiseQPACK compares guise's connection to the same server with
// each live one whose requests used the table or not as guise's did
// (whether the server's SETTINGS had been taken before each request is
// timing, not the encoder's rule): every QPACK fact must then be equal.
// A live connection of other timing is logged, not compared: on a
// loaded machine guise may take the SETTINGS after its second request
// (they are read on the control stream's goroutine while the first
// response comes back on the request's).
//
// It returns how many live connections guise's was compared with: the
// test of a browser fails if, over every server variant, that is none.
func checkGuiseQPACK(t *testing.T, live []*ConnRecord, g *ConnRecord) (compared int) {
	t.Helper()
	got := qpackFacts(t, g)
	gotUni := uniFacts(t, g)
	for _, r := range live {
		liveUni := uniFacts(t, r)
		uniWhenDiffers(t, fmt.Sprintf("guise vs connection #%d", r.ID), gotUni, liveUni)
		if g, w := uniStreamsOnly(gotUni), uniStreamsOnly(liveUni); !maps.Equal(g, w) {
			t.Errorf("guise vs connection #%d: uni streams\n  guise %s\n  live  %s", r.ID, uniFactsString(g), uniFactsString(w))
		}
		want := qpackFacts(t, r)
		if qpackTiming(want) != qpackTiming(got) {
			t.Logf("connection #%d: requests using the table %s, guise's %s: not compared", r.ID, qpackTiming(want), qpackTiming(got))
			continue
		}
		compared++
		for k, w := range want {
			if !qpackFactEqual(k, got[k], w) {
				t.Errorf("guise vs connection #%d: %s\n  guise %s\n  live  %s", r.ID, k, got[k], w)
			}
		}
	}
	return compared
}

// guisePause is how long guise waits after its navigation against a
// server that holds its SETTINGS back for delay: past them, as the
// browsers' image requests came (they parse the page first, and used the
// table from their second request on in every h3dynlate run), so that
// guise's connection is one to compare; uniPause against the others, so
// that its image request does not go together with its control stream.
func guisePause(delay time.Duration) time.Duration {
	if delay == 0 {
		return uniPause
	}
	return delay + 100*time.Millisecond
}

// dynKind is a recorded server variant: the QPACK settings it sends
// (always both, as QUICHE's servers do) and how long it holds its
// SETTINGS back after the handshake.
type dynKind struct {
	kind              string
	capacity, blocked uint64
	delay             time.Duration
}

// dynKinds are the recorded server variants: QUICHE's settings, the
// same table with no blocked streams allowed, QUICHE's settings sent
// 300 ms after the handshake (whether the browser waits for them before
// its first request), and no table (capacity 0 and no blocked streams,
// said in the SETTINGS: QUICHE's servers' defaults otherwise).
var dynKinds = []dynKind{{"h3dyn", dynTableCapacity, dynBlockedStreams, 0}, {"h3dynnoblock", dynTableCapacity, 0, 0},
	{"h3dynlate", dynTableCapacity, dynBlockedStreams, 300 * time.Millisecond}, {"h3notable", 0, 0, 0}}

func TestLiveQPACKDynChromium(t *testing.T) {
	bin := testpeer.Need(t, "chromium", "chromium")
	compared, ran := 0, 0
	for _, k := range dynKinds {
		t.Run(k.kind, func(t *testing.T) { ran++; compared += liveQPACKDynChromium(t, bin, k) })
	}
	if ran == len(dynKinds) && compared == 0 && !t.Failed() {
		t.Error("guise's QPACK was compared with no live connection: every one used the table at other requests than guise's")
	}
}

func liveQPACKDynChromium(t *testing.T, bin string, k dynKind) int {
	var srv *Server
	var srvPort string
	live := qpackDynLive(t, "chromium-156", k, func(s *Server, port string) {
		srv, srvPort = s, port
		runBrowser(t, bin, nil,
			"--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
			"--disable-background-networking", "--disable-component-update", "--disable-sync",
			"--disable-default-apps", "--disable-domain-reliability", "--no-default-browser-check",
			"--ignore-certificate-errors", "--ignore-certificate-errors-spki-list="+s.SPKIHash(),
			"--origin-to-force-quic-on=fp.test:"+port, "--user-data-dir="+t.TempDir(),
			"--host-resolver-rules=MAP fp.test 127.0.0.1, MAP sub.fp.test 127.0.0.1, MAP * ~NOTFOUND",
			"--virtual-time-budget=5000", "--dump-dom", "https://fp.test:"+port+"/")
	})
	checkQPACKDyn(t, "chromium-156", k.kind, live)
	return checkGuiseQPACK(t, live, guiseH3Paced(t, srv, srvPort, "chrome156-linux", guisePause(k.delay)))
}

func TestLiveQPACKDynFirefox(t *testing.T) {
	bin := testpeer.Need(t, "firefox-esr", "firefox-esr")
	certutil := testpeer.Need(t, "certutil", "libnss3-tools")
	compared, ran := 0, 0
	for _, k := range dynKinds {
		t.Run(k.kind, func(t *testing.T) {
			ran++
			compared += liveQPACKDynFirefox(t, bin, certutil, k)
		})
	}
	if ran == len(dynKinds) && compared == 0 && !t.Failed() {
		t.Error("guise's QPACK was compared with no live connection: every one used the table at other requests than guise's")
	}
}

func liveQPACKDynFirefox(t *testing.T, bin, certutil string, k dynKind) int {
	var srv *Server
	var srvPort string
	live := qpackDynLive(t, "firefox-esr-153", k, func(s *Server, port string) {
		srv, srvPort = s, port
		dir := t.TempDir()
		caFile := filepath.Join(dir, "ca.pem")
		if err := os.WriteFile(caFile, s.CAPEM(), 0o644); err != nil {
			t.Fatal(err)
		}
		prof := filepath.Join(dir, "profile")
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
		prefs := firefoxPrefs + `user_pref("network.http.http3.enable", true);
user_pref("network.http.http3.alt-svc-mapping-for-testing", "fp.test;h3=:` + port + `");
user_pref("network.http.http3.disable_when_third_party_roots_found", false);
user_pref("network.http.http3.backup_timer_delay", 10000);
user_pref("network.http.http3.force-use-alt-svc-mapping-for-testing", true);
`
		if err := os.WriteFile(filepath.Join(prof, "user.js"), []byte(prefs), 0o644); err != nil {
			t.Fatal(err)
		}
		runBrowser(t, bin, []string{"HOME=" + dir}, "--headless", "--no-remote", "--profile", prof,
			"--screenshot", filepath.Join(dir, "shot.png"), "https://fp.test:"+port+"/")
	})
	checkQPACKDyn(t, "firefox-esr-153", k.kind, live)
	return checkGuiseQPACK(t, live, guiseH3Paced(t, srv, srvPort, "firefox153-linux", guisePause(k.delay)))
}
