package guise

import (
	"context"
	"crypto/x509"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/guise-http/guise/fingerprint"
	"github.com/guise-http/guise/internal/h3"
	"github.com/guise-http/guise/internal/quicwire"
	"github.com/guise-http/guise/internal/tlsfp"
)

// resumeRecorder is the echo server (the recorder), with a QUIC dialer
// that reaches it as fp.test through guise's own QUIC client.
type resumeRecorder struct {
	srv   *fingerprint.Server
	roots *x509.CertPool // one pool: tickets are scoped by the pool's identity
	base  string         // https://fp.test:PORT
	dial  quicDialer
}

func newResumeRecorder(t *testing.T) *resumeRecorder { return newResumeRecorderAt(t, "fp.test") }

// newResumeRecorderAt names the server host (fp.test is QUIC-only here: it
// does not resolve, and the QUIC dialer goes to loopback whatever the
// name).
func newResumeRecorderAt(t *testing.T, host string) *resumeRecorder {
	t.Helper()
	srv := &fingerprint.Server{}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	_, port, _ := net.SplitHostPort(srv.ListenAddr())
	return &resumeRecorder{srv: srv, roots: srv.CertPool(), base: "https://" + host + ":" + port,
		dial: func(ctx context.Context, addr, serverName string, o *options, sessions *tlsfp.SessionCache) (h3.Conn, error) {
			return dialGuiseQUIC(ctx, "127.0.0.1:"+port, serverName, o, sessions)
		}}
}

// get fetches path over HTTP/3 and returns the body.
func (r *resumeRecorder) get(t *testing.T, do func(context.Context, *Request) (*Response, error), path string) string {
	t.Helper()
	return r.getProto(t, do, path, HTTP3, "HTTP/3.0")
}

func (r *resumeRecorder) getProto(t *testing.T, do func(context.Context, *Request) (*Response, error), path string, p Protocol, proto string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := do(ctx, &Request{URL: r.base + path, RootCAs: r.roots, Protocol: p})
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	b, err := resp.Bytes()
	if err != nil || resp.Proto != proto {
		t.Fatalf("%s: %v, %s", path, err, resp.Proto)
	}
	return string(b)
}

// TestH3TicketsApartFromTCP: in one Session a TCP ticket is never
// offered over QUIC: the first QUIC connection after a TCP one is a full
// handshake (its hello has no pre_shared_key), and the TCP and QUIC
// tickets then resume their own kind.
func TestH3TicketsApartFromTCP(t *testing.T) {
	r := newResumeRecorderAt(t, "127.0.0.1") // TCP must reach it too
	tr := &Transport{quicDial: r.dial}
	defer tr.Close()
	s := &Session{Profile: "chrome156-linux", Transport: tr}
	defer s.Close()
	r.getProto(t, s.Do, "/api/fetch", HTTP2, "HTTP/2.0")
	r.get(t, s.Do, "/h3/resume")
	// The hello, not the server's answer, says it: the recorder's TCP and
	// QUIC sides have different ticket keys, so a TCP ticket offered over
	// QUIC would not resume either.
	first := r.quicConns(t, 1)
	if len(first) == 0 {
		t.Fatal("no QUIC connection recorded")
	}
	if fl, err := first[0].QUICFlight(); err != nil || fl.ClientHello.HasPreSharedKey {
		t.Errorf("the first QUIC hello offered a ticket (a TCP one) or did not parse: %v", err)
	}
	r.get(t, s.Do, "/h3/close")
	if body := r.get(t, s.Do, "/h3/resume"); !strings.Contains(body, `"resumed":true`) {
		t.Errorf("the second QUIC connection did not resume: %s", body)
	}
	// Neither TCP hello offered a ticket: the first had none, and the
	// second (a new connection after /api/close) has only its own TCP
	// one, never one of the QUIC connections' tickets taken by then.
	r.getProto(t, s.Do, "/api/close", HTTP2, "HTTP/2.0")
	r.getProto(t, s.Do, "/api/fetch", HTTP2, "HTTP/2.0")
	var tcp []bool
	for _, c := range r.srv.Records() {
		if c.Transport == fingerprint.TransportTLS && c.Requests > 0 {
			ch, err := c.ClientHello()
			if err != nil {
				t.Fatal(err)
			}
			tcp = append(tcp, ch.HasPreSharedKey)
		}
	}
	if len(tcp) != 2 || tcp[0] {
		t.Fatalf("TCP connections offering a ticket: %v, want [false true]", tcp)
	}
	// The second did offer one: its TCP ticket. That the QUIC scope is
	// apart is shown above (the first QUIC hello resumed nothing while a
	// TCP ticket was there); the cache holds both kinds side by side.
	if !tcp[1] {
		t.Error("the second TCP connection offered no ticket: TCP resumption broke")
	}
}

// quicConns returns the recorder's QUIC connections that carried a
// request, in order, waiting (bounded) until there are n.
func (r *resumeRecorder) quicConns(t *testing.T, n int) []*fingerprint.ConnRecord {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		var out []*fingerprint.ConnRecord
		ch := r.srv.Changed()
		for _, c := range r.srv.Records() {
			if c.Transport == fingerprint.TransportQUIC && c.Requests > 0 && c.Negotiated != nil {
				out = append(out, c)
			}
		}
		if len(out) >= n || time.Now().After(deadline) {
			return out
		}
		select {
		case <-ch:
		case <-time.After(time.Until(deadline)):
		}
	}
}

// TestH3ResumesWithinSession is RELIABILITY Q-67: a Session's second
// QUIC connection (after the server's GOAWAY) resumes the TLS session of
// its first; a second Session with a Transport of its own does not, nor do
// isolated calls (package-level Do); two Sessions that share a Transport
// share its tickets, as over TCP.
func TestH3ResumesWithinSession(t *testing.T) {
	r := newResumeRecorder(t)
	tr := &Transport{quicDial: r.dial}
	defer tr.Close()
	s1 := &Session{Profile: "chrome156-linux", Transport: tr}
	defer s1.Close()
	r.get(t, s1.Do, "/")
	r.get(t, s1.Do, "/h3/close") // GOAWAY: the next request needs a new connection
	if body := r.get(t, s1.Do, "/h3/resume"); !strings.Contains(body, `"resumed":true`) {
		t.Errorf("the Session's second connection did not resume: %s", body)
	}

	// Another Session, another Transport: its first QUIC connection is a
	// full handshake.
	tr2 := &Transport{quicDial: r.dial}
	defer tr2.Close()
	s2 := &Session{Profile: "chrome156-linux", Transport: tr2}
	defer s2.Close()
	if body := r.get(t, s2.Do, "/h3/resume"); !strings.Contains(body, `"resumed":false`) {
		t.Errorf("a second Session resumed the first one's session: %s", body)
	}

	// A Session sharing the first Transport takes one of its tickets.
	s3 := &Session{Profile: "chrome156-linux", Transport: tr}
	defer s3.Close()
	r.get(t, s1.Do, "/h3/close")
	if body := r.get(t, s3.Do, "/h3/resume"); !strings.Contains(body, `"resumed":true`) {
		t.Errorf("a Session sharing the Transport did not resume: %s", body)
	}

	// Isolated calls keep no tickets: the second is a full handshake too.
	st := isolatedState()
	old := st.quic
	st.quic = r.dial
	defer func() { st.quic = old }()
	for i := range 2 {
		if body := r.get(t, Do, "/h3/resume"); !strings.Contains(body, `"resumed":false`) {
			t.Errorf("isolated call %d resumed: %s", i, body)
		}
	}
}

// TestH3ResumedFlightMatchesRecording compares the ClientHello and the
// first datagrams of a resumed QUIC connection with Chromium's recorded
// resumed connection (fingerprint/testdata/recordings/chromium-156-h3-
// resumed-01.json), randomness masked: the JA4 (q13d0314h3: 14
// extensions, early_data and pre_shared_key added), the set of extensions,
// pre_shared_key last, psk_key_exchange_modes, and two 1250-byte datagrams
// of Initial packets, whose token is the one the first connection
// received in NEW_TOKEN. It also states what still differs (see
// internal/quic's doc): no 0-RTT packets after the Initials. The
// transport parameters' set is the recording's, initial_rtt included.
func TestH3ResumedFlightMatchesRecording(t *testing.T) {
	r := newResumeRecorder(t)
	tr := &Transport{quicDial: r.dial}
	defer tr.Close()
	s := &Session{Profile: "chrome156-linux", Transport: tr}
	defer s.Close()
	r.get(t, s.Do, "/")
	r.get(t, s.Do, "/h3/close")
	r.get(t, s.Do, "/h3/resume")
	conns := r.quicConns(t, 2)
	if len(conns) < 2 {
		t.Fatalf("%d QUIC connections recorded, want 2", len(conns))
	}
	got := conns[len(conns)-1]
	if !got.Negotiated.Resumed {
		t.Fatal("the second connection did not resume")
	}
	b, err := os.ReadFile("fingerprint/testdata/recordings/chromium-156-h3-resumed-01.json")
	if err != nil {
		t.Fatal(err)
	}
	want, err := fingerprint.DecodeRecord(b)
	if err != nil {
		t.Fatal(err)
	}
	gf, err := got.QUICFlight()
	if err != nil {
		t.Fatal(err)
	}
	wf, err := want.QUICFlight()
	if err != nil {
		t.Fatal(err)
	}
	if g, w := gf.JA4(), wf.JA4(); g != w {
		t.Errorf("JA4 %s, recorded %s", g, w)
	}
	exts := func(fl *fingerprint.QUICFlight) []uint16 {
		var ids []uint16
		for _, e := range fl.ClientHello.Extensions {
			ids = append(ids, e.Type)
		}
		return ids
	}
	g, w := exts(gf), exts(wf)
	if g[len(g)-1] != 41 {
		t.Errorf("pre_shared_key is not last: %v", g)
	}
	slices.Sort(g)
	slices.Sort(w)
	if !slices.Equal(g, w) {
		t.Errorf("extensions %v, recorded %v", g, w)
	}
	if g, w := gf.ClientHello.PSKModes, wf.ClientHello.PSKModes; !slices.Equal(g, w) {
		t.Errorf("psk_key_exchange_modes %v, recorded %v", g, w)
	}
	// The NEW_TOKEN token the first connection got (quic-go's, 90 bytes
	// here as in the recording) goes in the resumed Initials.
	if g, w := len(gf.Token), len(wf.Token); g != w {
		t.Errorf("Initial token of %d bytes, recorded %d", g, w)
	}
	layout := func(rec *fingerprint.ConnRecord) []string {
		var out []string
		for _, d := range rec.QUIC.Datagrams[:2] {
			h, err := quicwire.ParseHeader(d.Data)
			if err != nil {
				return append(out, err.Error())
			}
			out = append(out, h.Type.String()+"/"+strconv.Itoa(d.Size))
		}
		return out
	}
	if g, w := layout(got), layout(want); !slices.Equal(g, w) {
		t.Errorf("first datagrams %v, recorded %v", g, w)
	}
	// What guise does not do yet: the recording's third datagram is a
	// 0-RTT packet (the control stream). Logged so that this test says
	// when that changes.
	if h, err := quicwire.ParseHeader(got.QUIC.Datagrams[2].Data); err == nil && h.Type == quicwire.Packet0RTT {
		t.Log("guise now sends 0-RTT: compare its packets with the recording's and update this test")
	}
	// The transport parameters: the recorded set, initial_rtt included
	// (the first connection's RTT), GREASE masked.
	params := func(fl *fingerprint.QUICFlight) []string {
		var ids []string
		for _, p := range fl.TransportParameters {
			if p.ID.IsGREASE() {
				ids = append(ids, "GREASE")
			} else {
				ids = append(ids, p.ID.String())
			}
		}
		slices.Sort(ids)
		return ids
	}
	if g, w := params(gf), params(wf); !slices.Equal(g, w) {
		t.Errorf("transport parameters %v, recorded %v", g, w)
	}
}
