package fingerprint

import (
	"cmp"
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

	"github.com/guise-http/guise/internal/h3wire"
	"github.com/guise-http/guise/internal/quicwire"
	"github.com/guise-http/guise/internal/testpeer"
)

// quicRuns is how many browser runs (each a new QUIC connection) a live
// QUIC test makes.
const quicRuns = 3

// quicFacts are the parts of a QUIC connection's first flight and
// HTTP/3 layer that a profile reproduces, each as a comparable string.
// GREASE values are masked; values a browser draws per connection
// (connection IDs, packet numbers, frame order under Chromium's chaos
// protection) are left out or listed in quicVaries.
func quicFacts(t *testing.T, r *ConnRecord) map[string]string {
	t.Helper()
	fl, err := r.QUICFlight()
	if err != nil {
		t.Fatalf("connection #%d: %v", r.ID, err)
	}
	h, err := r.HTTP3()
	if err != nil {
		t.Fatalf("connection #%d: http3: %v", r.ID, err)
	}
	f := map[string]string{
		"version":     strconv.FormatUint(uint64(fl.Version), 16),
		"dcid_len":    strconv.Itoa(len(fl.DCID)),
		"scid_len":    strconv.Itoa(len(fl.SCID)),
		"token_len":   strconv.Itoa(len(fl.Token)),
		"ja4":         fl.JA4(),
		"alpn":        strings.Join(fl.ClientHello.ALPN, ","),
		"hello_bytes": strconv.Itoa(len(fl.ClientHelloMessage)),
	}
	// The datagrams until the hello is complete: the first flight.
	var sizes, trailing, pns, frames, chaos []string
	covered := 0
	for _, d := range fl.Datagrams {
		if covered >= len(fl.ClientHelloMessage) {
			break
		}
		sizes = append(sizes, strconv.Itoa(d.Size))
		trailing = append(trailing, strconv.Itoa(d.Trailing))
		for _, p := range d.Packets {
			if p.Type.String() != "Initial" {
				continue
			}
			pns = append(pns, strconv.FormatUint(p.PacketNumber, 10)+"/"+strconv.Itoa(p.PNLen)+"/"+strconv.Itoa(p.LengthSize))
			var fs []string
			var spans [][2]uint64
			crypto, pings, padding := 0, 0, 0
			for _, fr := range p.Frames {
				fs = append(fs, fr.Type.String())
				switch fr.Type.String() {
				case "PADDING":
					padding += fr.Size
				case "CRYPTO":
					covered += len(fr.Data) // no retransmission in a first flight
					crypto++
					spans = append(spans, [2]uint64{fr.Offset, fr.Offset + uint64(len(fr.Data))})
				case "PING":
					pings++
				}
			}
			frames = append(frames, strings.Join(fs, " "))
			chaos = append(chaos, chaosClass(crypto-len(joinSpans(spans)), pings, padding))
		}
	}
	f["first_flight_datagrams"] = strings.Join(sizes, " ")
	f["first_flight_trailing_padding"] = strings.Join(trailing, " ")
	f["first_flight_packet_numbers"] = strings.Join(pns, " ")
	f["first_flight_frames"] = strings.Join(frames, " | ")
	f["first_flight_chaos"] = strings.Join(chaos, " | ")
	var ids, vals []string
	for _, p := range fl.TransportParameters {
		if p.ID.IsGREASE() {
			ids = append(ids, "GREASE")
			continue
		}
		ids = append(ids, p.ID.String())
		if p.ID == quicwire.ParamVersionInformation {
			vals = append(vals, "version_information="+versionInfo(p.Value))
		} else if p.ID.String() == "initial_rtt" {
			vals = append(vals, "initial_rtt=measured") // a resumed connection's RTT estimate
		} else if v, ok := p.Uint(); ok {
			vals = append(vals, p.ID.String()+"="+strconv.FormatUint(v, 10))
		} else if p.ID.String() != "initial_source_connection_id" {
			vals = append(vals, fmt.Sprintf("%s=%x", p.ID, p.Value))
		}
	}
	f["transport_parameter_order"] = strings.Join(ids, ",")
	slices.Sort(ids)
	f["transport_parameter_set"] = strings.Join(ids, ",")
	slices.Sort(vals)
	f["transport_parameter_values"] = strings.Join(vals, " ")
	var set, ctl, uni []string
	for _, s := range h.Settings {
		v := s.ID.String() + "=" + strconv.FormatUint(s.Value, 10)
		if h3wire.IsGREASE(uint64(s.ID)) {
			v = "GREASE"
		}
		set = append(set, v)
	}
	for _, c := range h.ControlFrames {
		// One PRIORITY_UPDATE per request: how many depends on how many
		// requests the run made before it exited.
		if n := c.Type.String(); len(ctl) == 0 || n != "PRIORITY_UPDATE" || ctl[len(ctl)-1] != "PRIORITY_UPDATE*" {
			if n == "PRIORITY_UPDATE" {
				n += "*"
			}
			ctl = append(ctl, n)
		}
	}
	for _, u := range h.UniStreams {
		uni = append(uni, u.Type.String())
	}
	slices.Sort(uni)
	f["settings"] = strings.Join(set, ",")
	f["control_frames"] = strings.Join(ctl, ",")
	f["uni_streams"] = strings.Join(uni, ",")
	for _, q := range h.Requests {
		var names []string
		for _, fl := range q.Fields {
			names = append(names, fl.Name)
		}
		hr := q.HTTPRequest()
		kind, _, _ := strings.Cut(hr.Target, "?") // /h3/resume?try=N
		if kind == "/favicon.ico" {
			continue // sent or not, as the headless run ends
		}
		f["request "+kind+" order"] = strings.Join(names, ",")
		f["request "+kind+" priority"] = q.Priority()
		f["request "+kind+" qpack_prefix"] = strconv.FormatUint(q.RequiredInsertCount, 10) + "," + strconv.FormatUint(q.DeltaBase, 10)
	}
	return f
}

// joinSpans joins the CRYPTO byte ranges of one packet where one ends at
// the next one's start: the ranges of the hello the packet carries.
func joinSpans(spans [][2]uint64) [][2]uint64 {
	slices.SortFunc(spans, func(a, b [2]uint64) int { return cmp.Compare(a[0], b[0]) })
	var out [][2]uint64
	for _, s := range spans {
		if len(out) > 0 && out[len(out)-1][1] == s[0] {
			out[len(out)-1][1] = s[1]
		} else {
			out = append(out, s)
		}
	}
	return out
}

// chaosClass reduces a first-flight Initial's CRYPTO frames beyond the
// ranges of the hello it carries (splits), its PINGs and its PADDING bytes
// to what is constant across connections of one browser. Chromium's chaos
// protection draws 2 to 10 of each per packet (QuicChaosProtector) while
// the padding lasts: fewer splits only when what was left could not pay
// for another CRYPTO frame (under 5 bytes, all gone to PINGs and PADDING),
// fewer PINGs only when they took the last padding byte. Its packets are
// all "chaos" while their frame lists differ; a packet outside that rule,
// or one of a browser without it, shows its counts.
func chaosClass(splits, pings, padding int) string {
	okSplits := splits >= 2 && splits <= 10 || splits < 2 && pings+padding < 5
	okPings := pings >= 2 && pings <= 10 || pings < 2 && padding == 0
	if okSplits && okPings {
		return "chaos"
	}
	return "splits=" + strconv.Itoa(splits) + " pings=" + strconv.Itoa(pings)
}

// quicVaries are the facts that differ between connections of one
// browser (read off quicRuns live connections and the recordings).
var quicVaries = map[string][]string{
	"chromium-156": {"first_flight_frames", "transport_parameter_order", "hello_bytes"},
	"firefox-esr-153": {"first_flight_packet_numbers", "dcid_len", "first_flight_trailing_padding",
		"request /h3/pixel.gif priority"}, // u=4, i or u=5, i: Firefox reprioritises images as the page loads
}

// quicLive runs a browser against a fresh server until it has quicRuns
// QUIC connections that carried the page, and returns them. The resumed
// QUIC connections the page's /h3/resume made in the same runs are
// checked against the resumed recordings (checkResumedLive). With
// GUISE_RECORD_QUIC=1 it also writes both as recordings
// (<browser>-h3-NN.json, <browser>-h3-resumed-NN.json), with
// GUISE_RECORD_QUIC=resumed only the resumed ones.
func quicLive(t *testing.T, browser string, run func(s *Server, port string)) (page, resumedPages []*ConnRecord) {
	var recs, resumed []*ConnRecord
	s := startServer(t, nil)
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
	// A loaded machine can make a browser give up on QUIC for a run (and
	// load the page over TCP): up to two runs more, each waited for.
	for try := 0; len(recs) < quicRuns && try < quicRuns+2; try++ {
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
		recs = pages()
	}
	// The page's /h3/resume comes after its load has begun, and a loaded
	// machine sometimes has the browser end its run before it: for a
	// browser that must resume, up to two runs more until one did.
	resumedSeen := func() bool {
		for _, r := range s.Records() {
			if r.Transport == TransportQUIC && r.Negotiated != nil && r.Negotiated.Resumed && resumedPage(r) {
				return true
			}
		}
		return false
	}
	for try := 0; resumesOverQUIC[browser] && len(recs) >= quicRuns && !resumedSeen() && try < 2; try++ {
		t.Logf("no resumed quic connection yet: one more run")
		run(s, port)
		deadline := time.Now().Add(5 * time.Second)
		for !resumedSeen() && time.Now().Before(deadline) {
			ch := s.Changed()
			select {
			case <-ch:
			case <-time.After(time.Until(deadline)):
			}
		}
	}
	for _, r := range s.Records() {
		var paths []string
		for _, q := range r.HTTPRequests() {
			paths = append(paths, q.Target)
		}
		res := r.Negotiated != nil && r.Negotiated.Resumed
		early := r.QUIC != nil && r.QUIC.Used0RTT
		t.Logf("connection #%d %s %s resumed=%t 0rtt=%t requests %v", r.ID, r.Transport, r.Protocol, res, early, paths)
		if r.Transport == TransportQUIC && res && resumedPage(r) {
			resumed = append(resumed, r)
		}
	}
	if len(recs) > quicRuns {
		recs = recs[:quicRuns]
	}
	if len(recs) < quicRuns {
		t.Fatalf("%d quic connections with requests, want %d", len(recs), quicRuns)
	}
	write := func(kind string, rs []*ConnRecord) {
		for i, r := range rs {
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
	switch os.Getenv("GUISE_RECORD_QUIC") {
	case "1":
		write("h3", recs)
		write("h3-resumed", resumed)
	case "resumed":
		write("h3-resumed", resumed)
	}
	checkResumedLive(t, browser, resumed)
	return recs, resumed
}

// resumedPage reports whether the connection carried the page's
// /h3/resume request.
func resumedPage(r *ConnRecord) bool {
	for _, q := range r.HTTPRequests() {
		if strings.HasPrefix(q.Target, "/h3/resume") {
			return true
		}
	}
	return false
}

// h3Recordings returns the paths of browser's full-handshake QUIC
// recordings (<browser>-h3-NN.json).
func h3Recordings(browser string) []string {
	paths, _ := filepath.Glob(filepath.Join("testdata", "recordings", browser+"-h3-[0-9]*.json"))
	return paths
}

// servedPage reports whether the connection carried the page's
// navigation and its image and fetch() requests (a browser may open a
// further connection for the favicon alone).
func servedPage(r *ConnRecord) bool {
	var paths []string
	for _, q := range r.HTTPRequests() {
		paths = append(paths, q.Target)
	}
	return slices.Contains(paths, "/") && slices.Contains(paths, "/h3/pixel.gif") && slices.Contains(paths, "/h3/fetch")
}

// checkQUICLive compares live connections with the in-repo recordings of
// browser: every fact outside quicVaries must be equal.
func checkQUICLive(t *testing.T, browser string, live []*ConnRecord) {
	t.Helper()
	paths := h3Recordings(browser)
	if len(paths) == 0 {
		t.Fatalf("no recordings %s-h3-*.json (make them with GUISE_RECORD_QUIC=1)", browser)
	}
	b, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	rec, err := DecodeRecord(b)
	if err != nil {
		t.Fatal(err)
	}
	want := quicFacts(t, rec)
	for _, r := range live {
		got := quicFacts(t, r)
		for k, w := range want {
			if slices.Contains(quicVaries[browser], k) {
				continue
			}
			if got[k] != w {
				t.Errorf("connection #%d: %s\n  live      %s\n  recording %s", r.ID, k, got[k], w)
			}
		}
	}
}

func TestLiveQUICChromium(t *testing.T) {
	bin := testpeer.Need(t, "chromium", "chromium")
	var srv *Server
	var srvPort string
	live, resumed := quicLive(t, "chromium-156", func(s *Server, port string) {
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
	checkQUICLive(t, "chromium-156", live)
	checkGuiseLive(t, "chromium-156", live, guiseH3(t, srv, srvPort, "chrome156-linux"))
	checkGuiseResumedLive(t, "chromium-156", resumed, guiseH3Resumed(t, srv, srvPort, "chrome156-linux", resumedFlight["chromium-156"]))
}

func TestLiveQUICFirefox(t *testing.T) {
	bin := testpeer.Need(t, "firefox-esr", "firefox-esr")
	certutil := testpeer.Need(t, "certutil", "libnss3-tools")
	var srv *Server
	var srvPort string
	live, resumed := quicLive(t, "firefox-esr-153", func(s *Server, port string) {
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
	checkQUICLive(t, "firefox-esr-153", live)
	checkGuiseLive(t, "firefox-esr-153", live, guiseH3(t, srv, srvPort, "firefox153-linux"))
	checkGuiseResumedLive(t, "firefox-esr-153", resumed, guiseH3Resumed(t, srv, srvPort, "firefox153-linux", resumedFlight["firefox-esr-153"]))
}

// versionInfo renders a version_information value (RFC 9368) as the
// chosen version and the sorted available versions, GREASE versions
// (0x?a?a?a?a) masked.
func versionInfo(v []byte) string {
	var vs []string
	for len(v) >= 4 {
		x := uint32(v[0])<<24 | uint32(v[1])<<16 | uint32(v[2])<<8 | uint32(v[3])
		s := strconv.FormatUint(uint64(x), 16)
		if x&0x0f0f0f0f == 0x0a0a0a0a {
			s = "GREASE"
		}
		vs = append(vs, s)
		v = v[4:]
	}
	if len(vs) == 0 {
		return "empty"
	}
	avail := vs[1:]
	slices.Sort(avail)
	return "chosen " + vs[0] + " available " + strings.Join(avail, ",")
}

// TestQUICRecordingFacts prints, for each in-repo QUIC recording, the
// facts a profile keeps and checks that those outside quicVaries agree
// across a browser's recordings.
func TestQUICRecordingFacts(t *testing.T) {
	for _, browser := range []string{"chromium-156", "firefox-esr-153"} {
		paths := h3Recordings(browser)
		if len(paths) < 2 {
			t.Fatalf("%s: %d recordings, want several", browser, len(paths))
		}
		var first map[string]string
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			r, err := DecodeRecord(b)
			if err != nil {
				t.Fatal(err)
			}
			f := quicFacts(t, r)
			if first == nil {
				first = f
				keys := slices.Sorted(maps.Keys(f))
				for _, k := range keys {
					t.Logf("%s %s: %s", browser, k, f[k])
				}
				continue
			}
			for k, v := range first {
				if f[k] != v && !slices.Contains(quicVaries[browser], k) {
					t.Errorf("%s: %s: %s differs from the first recording\n  %s\n  %s", browser, filepath.Base(p), k, f[k], v)
				}
			}
		}
	}
}

// resumedFacts are quicFacts of a resumed connection plus what resumption
// and 0-RTT add: the PSK extensions, the datagrams' packet types in order
// (Chromium's Initials, then its 0-RTT packets each in its own datagram;
// Firefox's first 0-RTT packet after its last Initial), and which
// streams came in 0-RTT. Whether the first request goes out in 0-RTT
// depends on timing (it did in two of three Chromium recordings), so
// only the control stream's is a fact.
func resumedFacts(t *testing.T, r *ConnRecord) map[string]string {
	t.Helper()
	f := quicFacts(t, r)
	fl, _ := r.QUICFlight()
	ch := fl.ClientHello
	last := ch.Extensions[len(ch.Extensions)-1].Type
	_, early := ch.Extension(42)
	f["pre_shared_key_last"] = strconv.FormatBool(ch.HasPreSharedKey && last == 41)
	f["psk_key_exchange_modes"] = fmt.Sprint(ch.PSKModes)
	f["early_data"] = strconv.FormatBool(early)
	f["used_0rtt"] = strconv.FormatBool(r.QUIC.Used0RTT)
	// The datagrams before the first that starts with a Handshake
	// packet (the client's first flight, 0-RTT included): the packet
	// types coalesced in each, and its size when it holds an Initial.
	var layout []string
	for _, d := range r.QUIC.Datagrams {
		if d.Data == nil {
			break
		}
		var types []string
		initial := false
		for b := d.Data; len(b) > 0 && b[0]&0x80 != 0; {
			h, err := quicwire.ParseHeader(b)
			if err != nil || h.Size == 0 || h.Size > len(b) {
				types = append(types, "?")
				break
			}
			types = append(types, h.Type.String())
			initial = initial || h.Type == quicwire.PacketInitial
			b = b[h.Size:]
		}
		if len(types) == 0 || types[0] == quicwire.PacketHandshake.String() {
			break
		}
		kind := strings.Join(types, "+")
		if initial {
			kind += "/" + strconv.Itoa(d.Size)
		}
		layout = append(layout, kind)
	}
	f["first_flight_packet_types"] = strings.Join(layout, " ")
	for _, st := range r.QUIC.Streams {
		if st.ID%4 == 2 && len(st.Data) > 0 && st.Data[0] == byte(h3wire.StreamControl) {
			f["control_stream_early"] = strconv.FormatBool(st.Early)
		}
	}
	return f
}

// resumedVaries are the facts of resumed connections that differ between
// connections, beyond quicVaries.
var resumedVaries = map[string][]string{
	// The request's 0-RTT packet is there or not (see resumedFacts).
	// token_len: the NEW_TOKEN token (90 bytes from quic-go) is sent in
	// the resumed Initial when it had arrived before the first
	// connection ended.
	// first_flight_packet_numbers: the second Initial's packet number
	// takes 1 or 2 bytes (2 in every full handshake).
	"chromium-156":    {"first_flight_packet_types", "token_len", "first_flight_packet_numbers"},
	"firefox-esr-153": {"first_flight_packet_types", "token_len"},
}

// resumedFlight is how each browser's resumed first flight starts (see
// resumedFacts), whatever follows it.
var resumedFlight = map[string]string{
	"chromium-156":    "Initial/1250 Initial/1250 0-RTT",
	"firefox-esr-153": "Initial/1252 Initial/1252 Initial+0-RTT/1252",
}

// resumesOverQUIC are the browsers whose live runs must make a resumed
// QUIC connection, which checkResumedLive compares with their
// recordings. Firefox ESR 153 resumes over QUIC too once forced to h3
// (force-use-alt-svc-mapping-for-testing, see TestLiveQUICFirefox), and
// its resumed connections are compared when it makes them; but under the
// race detector it often makes none (CI on 2026-12-02: none in six
// runs, after the page's /h3/close it fetched no /h3/resume before its
// screenshot ended the run), so it is not required.
var resumesOverQUIC = map[string]bool{"chromium-156": true}

// checkResumedLive compares live resumed connections with the in-repo
// resumed recordings of browser; it requires at least one for a browser
// in resumesOverQUIC.
func checkResumedLive(t *testing.T, browser string, live []*ConnRecord) {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join("testdata", "recordings", browser+"-h3-resumed-*.json"))
	if len(paths) == 0 {
		t.Fatalf("no recordings %s-h3-resumed-*.json (make them with GUISE_RECORD_QUIC=resumed)", browser)
	}
	if len(live) == 0 {
		if resumesOverQUIC[browser] {
			t.Fatal("no resumed quic connection: the page's /h3/resume did not resume over QUIC")
		}
		t.Logf("%s made no resumed quic connection in these runs: nothing live to compare", browser)
		return
	}
	want := resumedFacts(t, readRecord(t, paths[0]))
	for _, r := range live {
		got := resumedFacts(t, r)
		if lay := got["first_flight_packet_types"]; !strings.HasPrefix(lay, resumedFlight[browser]) {
			t.Errorf("connection #%d: first flight %s, want it to start %s", r.ID, lay, resumedFlight[browser])
		}
		for k, w := range want {
			if slices.Contains(quicVaries[browser], k) || slices.Contains(resumedVaries[browser], k) {
				continue
			}
			if got[k] != w {
				t.Errorf("connection #%d: %s\n  live      %s\n  recording %s", r.ID, k, got[k], w)
			}
		}
	}
}

// TestQUICResumedRecordingFacts prints the resumed recordings' facts and
// checks what they show: the PSK extension last, psk_dhe_ke, early_data,
// 0-RTT accepted and the control stream in it.
func TestQUICResumedRecordingFacts(t *testing.T) {
	for _, browser := range []string{"chromium-156", "firefox-esr-153"} {
		t.Run(browser, func(t *testing.T) { testResumedRecordingFacts(t, browser) })
	}
}

func testResumedRecordingFacts(t *testing.T, browser string) {
	paths, _ := filepath.Glob(filepath.Join("testdata", "recordings", browser+"-h3-resumed-*.json"))
	if len(paths) < 2 {
		t.Fatalf("%d resumed recordings, want several", len(paths))
	}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		r, err := DecodeRecord(b)
		if err != nil {
			t.Fatal(err)
		}
		f := resumedFacts(t, r)
		for _, k := range slices.Sorted(maps.Keys(f)) {
			t.Logf("%s %s: %s", filepath.Base(p), k, f[k])
		}
		for k, w := range map[string]string{"pre_shared_key_last": "true", "psk_key_exchange_modes": "[1]",
			"early_data": "true", "used_0rtt": "true", "control_stream_early": "true"} {
			if f[k] != w {
				t.Errorf("%s: %s = %s, want %s", filepath.Base(p), k, f[k], w)
			}
		}
		if lay := f["first_flight_packet_types"]; !strings.HasPrefix(lay, resumedFlight[browser]) {
			t.Errorf("%s: first flight %s, want it to start %s", filepath.Base(p), lay, resumedFlight[browser])
		}
	}
}
