package fingerprint

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/guise-http/guise"
	"github.com/guise-http/guise/internal/h3wire"
	"github.com/guise-http/guise/profile"
)

// guiseH3Host is the name guise visits the live tests' server by over
// HTTP/3. The browsers visit fp.test, mapped to 127.0.0.1 by their own
// resolver rules; guise's QUIC dial resolves the name itself and has no
// such rule, so it visits localhost, which the server's certificate also
// names. The ClientHello is then longer by the names' difference (the
// hello_bytes fact); no other fact depends on the name.
const guiseH3Host = "localhost"

// guiseH3 makes guise's own HTTP/3 connection, as profile name, to the
// live test's server s on port, with the requests the page makes a
// browser send on it (the navigation, the image, the fetch()), and
// returns the server's record of that connection.
func guiseH3(t *testing.T, s *Server, port, name string) *ConnRecord {
	t.Helper()
	return guiseH3Paced(t, s, port, name, 0)
}

// guiseH3Paced is guiseH3 with a pause after the navigation, as a
// browser takes to parse the page before it asks for the image.
func guiseH3Paced(t *testing.T, s *Server, port, name string, pause time.Duration) *ConnRecord {
	t.Helper()
	before := map[uint64]bool{}
	for _, r := range s.Records() {
		before[r.ID] = true
	}
	tr := &guise.Transport{}
	sess := &guise.Session{Profile: name, RootCAs: s.CertPool(), Transport: tr, Protocol: guise.HTTP3, Timeout: 10 * time.Second}
	base := "https://" + guiseH3Host + ":" + port
	for i, r := range []*guise.Request{
		{URL: base + "/"},
		{URL: base + "/h3/pixel.gif", Kind: profile.Image, Referrer: base + "/"},
		{URL: base + "/h3/fetch", Kind: profile.Fetch, Referrer: base + "/"},
	} {
		if i == 1 && pause > 0 {
			time.Sleep(pause)
		}
		resp, err := sess.Do(context.Background(), r)
		if err == nil {
			_, err = resp.Bytes()
			if err == nil && resp.Proto != "HTTP/3.0" {
				t.Errorf("guise: %s over %s", r.URL, resp.Proto)
			}
		}
		if err != nil {
			sess.Close()
			tr.Close()
			t.Fatalf("guise as %s: %s: %v", name, r.URL, err)
		}
	}
	// The recorder reads the control stream apart from the requests:
	// wait (bounded) until it has it, then close.
	mine := func() *ConnRecord {
		for _, r := range s.Records() {
			if !before[r.ID] && r.Transport == TransportQUIC && servedPage(r) {
				if h, err := r.HTTP3(); err == nil && len(h.Settings) > 0 {
					return r
				}
			}
		}
		return nil
	}
	for deadline := time.Now().Add(5 * time.Second); mine() == nil && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	sess.Close()
	tr.Close()
	rec := mine()
	if rec == nil {
		t.Fatalf("guise as %s: the server recorded no QUIC connection carrying the page's three requests", name)
	}
	return rec
}

// checkGuiseLive (RELIABILITY Q-73) compares guise's connection with each live one of
// browser: every fact outside quicVaries must be equal, hello_bytes
// after the difference guiseH3Host makes.
func checkGuiseLive(t *testing.T, browser string, live []*ConnRecord, g *ConnRecord) {
	t.Helper()
	got := quicFacts(t, g)
	for _, r := range live {
		want := quicFacts(t, r)
		diffGuise(t, "live connection", r.ID, got, want, quicVaries[browser])
		for k := range got {
			if _, ok := want[k]; !ok {
				t.Errorf("guise sent %s (%s), live connection #%d did not", k, got[k], r.ID)
			}
		}
	}
}

// requestMade reports whether fact k is of no request or of one guise
// made: the page's first connection also carries /h3/wait.gif, an image
// held until the resumption is done, and /h3/close, the fetch() after
// which the server sends GOAWAY; guiseH3 makes the navigation, the image
// and the fetch() only, so those two are not compared.
func requestMade(got map[string]string, k string) bool {
	rest, ok := strings.CutPrefix(k, "request ")
	if !ok {
		return true
	}
	path, _, _ := strings.Cut(rest, " ")
	for g := range got {
		if strings.HasPrefix(g, "request "+path+" ") {
			return true
		}
	}
	return false
}

// guiseH3Resumed makes guise, as profile name, visit the live test's
// server s on port over HTTP/3, close its connection and fetch
// /h3/resume on a new one, as the page makes the browser do, and returns
// the server's record of the second connection: resumed, with its
// control stream and the fetch in 0-RTT packets if it sent them so, and
// its first flight starting as flight says (up to five tries, until one
// did: guise writes in 0-RTT only what it has written before the server's
// handshake answer arrives, and under CI's race detector a stalled
// process has its Initials sent again before its 0-RTT packets, which
// then share their datagrams).
func guiseH3Resumed(t *testing.T, s *Server, port, name, flight string) *ConnRecord {
	t.Helper()
	tr := &guise.Transport{}
	defer tr.Close()
	sess := &guise.Session{Profile: name, RootCAs: s.CertPool(), Transport: tr, Protocol: guise.HTTP3, Timeout: 10 * time.Second}
	defer sess.Close()
	base := "https://" + guiseH3Host + ":" + port
	get := func(r *guise.Request) {
		resp, err := sess.Do(context.Background(), r)
		if err == nil {
			_, err = resp.Bytes()
		}
		if err != nil {
			t.Fatalf("guise as %s: %s: %v", name, r.URL, err)
		}
	}
	get(&guise.Request{URL: base + "/"})
	var last *ConnRecord
	for try := 1; try <= 5; try++ {
		before := map[uint64]bool{}
		for _, r := range s.Records() {
			before[r.ID] = true
		}
		tr.CloseIdleConnections()
		// As the page's first try, whose request facts the browser's
		// resumed connections carry.
		get(&guise.Request{URL: base + "/h3/resume?try=1", Kind: profile.Fetch, Referrer: base + "/"})
		deadline := time.Now().Add(5 * time.Second)
		for last = nil; last == nil && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			for _, r := range s.Records() {
				if !before[r.ID] && r.Transport == TransportQUIC && resumedPage(r) && r.Negotiated != nil {
					last = r
				}
			}
		}
		if last == nil {
			t.Fatalf("guise as %s: the server recorded no QUIC connection carrying /h3/resume", name)
		}
		if !last.Negotiated.Resumed {
			t.Fatalf("guise as %s: the second connection did not resume", name)
		}
		lay := resumedFacts(t, last)["first_flight_packet_types"]
		if ctrl, req := earlyStreams(last); ctrl && req && strings.HasPrefix(lay, flight) {
			break
		}
		t.Logf("guise's resumed connection, try %d: first flight %s", try, lay)
	}
	return last
}

// earlyStreams reports whether rec's control stream and first request
// stream began in 0-RTT packets.
func earlyStreams(rec *ConnRecord) (ctrl, req bool) {
	for _, st := range rec.QUIC.Streams {
		switch {
		case st.ID%4 == 2 && len(st.Data) > 0 && st.Data[0] == byte(h3wire.StreamControl):
			ctrl = st.Early
		case st.ID == 0:
			req = st.Early
		}
	}
	return ctrl, req
}

// checkGuiseResumedLive compares guise's resumed connection with each
// live resumed one of browser (RELIABILITY Q-73): every fact of
// resumedFacts outside quicVaries and resumedVaries must be equal,
// hello_bytes after the difference guiseH3Host makes, requests guise did
// not make left out.
func checkGuiseResumedLive(t *testing.T, browser string, live []*ConnRecord, g *ConnRecord) {
	t.Helper()
	if len(live) == 0 {
		// The browser made none in these runs (see resumesOverQUIC):
		// guise's is compared with the recorded ones.
		paths, _ := filepath.Glob(filepath.Join("testdata", "recordings", browser+"-h3-resumed-*.json"))
		for _, p := range paths {
			live = append(live, readRecord(t, p))
		}
		t.Logf("no live resumed %s connection: guise's compared with %d recordings", browser, len(live))
	}
	got := resumedFacts(t, g)
	if lay := got["first_flight_packet_types"]; !strings.HasPrefix(lay, resumedFlight[browser]) {
		t.Errorf("guise's resumed first flight %s, want it to start %s", lay, resumedFlight[browser])
	}
	for _, r := range live {
		diffGuise(t, "resumed connection", r.ID, got, resumedFacts(t, r), quicVaries[browser], resumedVaries[browser])
	}
}

// diffGuise reports each fact of want (the browser connection id's) that
// guise's facts got do not equal, but those listed in varies and those
// of requests guise did not make; hello_bytes after the difference
// guiseH3Host makes.
func diffGuise(t *testing.T, what string, id uint64, got, want map[string]string, varies ...[]string) {
	t.Helper()
	for k, w := range want {
		if slices.ContainsFunc(varies, func(v []string) bool { return slices.Contains(v, k) }) || !requestMade(got, k) {
			continue
		}
		if k == "hello_bytes" {
			n, _ := strconv.Atoi(w)
			w = strconv.Itoa(n + len(guiseH3Host) - len("fp.test"))
		}
		if got[k] != w {
			t.Errorf("guise vs %s #%d: %s\n  guise %s\n  browser %s", what, id, k, got[k], w)
		}
	}
}

// readRecord reads the recording at path.
func readRecord(t *testing.T, path string) *ConnRecord {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := DecodeRecord(b)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return r
}
