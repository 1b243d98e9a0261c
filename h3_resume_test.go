package guise

import (
	"context"
	"crypto/x509"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/guise-http/guise/fingerprint"
	"github.com/guise-http/guise/internal/h3"
	"github.com/guise-http/guise/internal/quicwire"
	"github.com/guise-http/guise/internal/tlsfp"
	"github.com/guise-http/guise/profile"
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
	if body := r.resume(t, tr, s.Do, "GET"); !strings.Contains(body, `"resumed":true`) {
		t.Errorf("the second QUIC connection did not resume: %s", body)
	}
	// A new TCP connection after /api/close offers a TCP ticket.
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
	// The first offered none; every later one (CloseIdleConnections in
	// resume closes the idle TCP connection too) offered a TCP ticket:
	// the cache holds both kinds side by side.
	if len(tcp) < 2 || tcp[0] || slices.Contains(tcp[1:], false) {
		t.Fatalf("TCP connections offering a ticket: %v, want false then true", tcp)
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

// resume closes tr's idle connections and sends req through do, which
// then goes out on a new connection, resumed if tr keeps a ticket. It
// returns the answer's body.
func (r *resumeRecorder) resume(t *testing.T, tr *Transport, do func(context.Context, *Request) (*Response, error), method string) string {
	t.Helper()
	tr.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := &Request{Method: method, URL: r.base + "/h3/resume", RootCAs: r.roots, Protocol: HTTP3}
	if method == "POST" {
		req.Body = strings.NewReader("x")
	}
	resp, err := do(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := resp.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// earlyStreams says which of rec's streams came in 0-RTT: the control
// stream and the first request stream.
func earlyStreams(rec *fingerprint.ConnRecord) (ctrl, req bool) {
	for _, st := range rec.QUIC.Streams {
		switch {
		case st.ID%4 == 2 && len(st.Data) > 0 && st.Data[0] == 0:
			ctrl = st.Early
		case st.ID == 0:
			req = st.Early
		}
	}
	return ctrl, req
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
	if body := r.resume(t, tr, s1.Do, "GET"); !strings.Contains(body, `"resumed":true`) {
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
	if body := r.resume(t, tr, s3.Do, "GET"); !strings.Contains(body, `"resumed":true`) {
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

// TestH3ResumedFlightMatchesRecording: a Session's second QUIC connection
// resumes as the browser's recorded one (*-h3-resumed-01.json) with its
// profile: JA4, the extension set with early_data and the fixed tail
// (pre_shared_key last), psk_key_exchange_modes, the token the first
// connection got in NEW_TOKEN, and the first flight's datagrams up to the
// first with 0-RTT in it: Chromium's two 1250-byte datagrams of Initials,
// then 0-RTT packets each in its own unpadded datagram; Firefox's three
// 1252-byte datagrams, the last an Initial and the first 0-RTT packet
// padded after them. The control stream and the request come in 0-RTT;
// the transport parameters are the recorded set (Chromium's initial_rtt
// included).
func TestH3ResumedFlightMatchesRecording(t *testing.T) {
	for _, c := range []struct{ profile, recording string }{
		{"chrome156-linux", "chromium-156-h3-resumed-01.json"},
		{"firefox153-linux", "firefox-esr-153-h3-resumed-01.json"},
	} {
		t.Run(c.profile, func(t *testing.T) { testH3ResumedFlight(t, c.profile, c.recording) })
	}
}

func testH3ResumedFlight(t *testing.T, name, recording string) {
	r := newResumeRecorder(t)
	tr := &Transport{quicDial: r.dial}
	defer tr.Close()
	s := &Session{Profile: name, Transport: tr}
	defer s.Close()
	r.get(t, s.Do, "/")
	// The request goes in 0-RTT when it is written before the server's
	// handshake answer arrives (on loopback that is a race it nearly
	// always wins, as the browsers did in the recordings): up to five
	// resumed connections, until one carried it so.
	var got *fingerprint.ConnRecord
	for i := 2; i < 7 && got == nil; i++ {
		if body := r.resume(t, tr, s.Do, "GET"); !strings.Contains(body, `"resumed":true`) {
			t.Fatalf("did not resume: %s", body)
		}
		conns := r.quicConns(t, i)
		if c := conns[len(conns)-1]; c.Negotiated.Resumed {
			if _, req := earlyStreams(c); req {
				got = c
			}
		}
	}
	if got == nil {
		t.Fatal("no resumed connection carried its request in 0-RTT")
	}
	b, err := os.ReadFile("fingerprint/testdata/recordings/" + recording)
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
	p, err := profile.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	if tail := 1 + p.QUIC.FixedTailExtensions; len(g) < tail || len(w) < tail || !slices.Equal(g[len(g)-tail:], w[len(w)-tail:]) {
		t.Errorf("last extensions %v, recorded %v", g, w)
	}
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
	if g, w := flightLayout(got), flightLayout(want); !slices.Equal(g, w) {
		t.Errorf("first flight %v, recorded %v", g, w)
	}
	gc, gr := earlyStreams(got)
	wc, wr := earlyStreams(want)
	if gc != wc || gr != wr {
		t.Errorf("in 0-RTT: control stream %t, request %t; recorded %t, %t", gc, gr, wc, wr)
	}
	// The transport parameters: the recorded set, GREASE masked.
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

// flightLayout describes rec's datagrams up to the first that holds a
// 0-RTT packet: the packet types coalesced in each, its size when it
// holds an Initial (the Initials' datagrams are padded), and "unpadded"
// for a datagram of 0-RTT that is exactly its packets.
func flightLayout(rec *fingerprint.ConnRecord) []string {
	var out []string
	for _, d := range rec.QUIC.Datagrams {
		var types []string
		initial, zero := false, false
		rest := d.Data
		for len(rest) > 0 && rest[0]&0x80 != 0 {
			h, err := quicwire.ParseHeader(rest)
			if err != nil || h.Size > len(rest) || h.Size == 0 {
				types = append(types, "?")
				break
			}
			types = append(types, h.Type.String())
			initial = initial || h.Type == quicwire.PacketInitial
			zero = zero || h.Type == quicwire.Packet0RTT
			rest = rest[h.Size:]
		}
		s := strings.Join(types, "+")
		switch {
		case initial:
			s += "/" + strconv.Itoa(d.Size)
		case len(rest) == 0:
			s += " unpadded"
		}
		out = append(out, s)
		if zero || len(out) == 8 {
			break
		}
	}
	return out
}

// TestH3EarlyOnlyIdempotent: on a connection that resumed with 0-RTT a
// GET goes in 0-RTT and a POST waits for the handshake, as browsers send
// only idempotent requests early (a server may replay 0-RTT).
func TestH3EarlyOnlyIdempotent(t *testing.T) {
	for _, c := range []struct{ profile, method string }{
		{"chrome156-linux", "GET"}, {"chrome156-linux", "POST"},
		{"firefox153-linux", "GET"}, {"firefox153-linux", "POST"},
	} {
		method := c.method
		t.Run(c.profile+"/"+method, func(t *testing.T) {
			r := newResumeRecorder(t)
			// The server's datagrams are held 50 ms, a round trip: what
			// the client writes before the server's handshake answer
			// arrives goes in 0-RTT, and on bare loopback under the race
			// detector the answer sometimes came first.
			_, port, _ := net.SplitHostPort(r.srv.ListenAddr())
			relay := delayUDP(t, "127.0.0.1:"+port, 50*time.Millisecond)
			r.dial = func(ctx context.Context, addr, serverName string, o *options, sessions *tlsfp.SessionCache) (h3.Conn, error) {
				return dialGuiseQUIC(ctx, relay, serverName, o, sessions)
			}
			tr := &Transport{quicDial: r.dial}
			defer tr.Close()
			s := &Session{Profile: c.profile, Transport: tr}
			defer s.Close()
			r.get(t, s.Do, "/")
			// Up to three resumptions, until the GET went in 0-RTT, or,
			// for the POST, until the control stream did (the
			// connection was in 0-RTT, and the POST waited).
			ctrlEarly, reqEarly := false, false
			for i := 2; i < 5; i++ {
				if body := r.resume(t, tr, s.Do, method); !strings.Contains(body, `"resumed":true`) {
					t.Fatalf("did not resume: %s", body)
				}
				conns := r.quicConns(t, i)
				ctrlEarly, reqEarly = earlyStreams(conns[len(conns)-1])
				if method == "GET" && reqEarly || method == "POST" && ctrlEarly {
					break
				}
			}
			if !ctrlEarly {
				t.Error("the control stream never went in 0-RTT")
			}
			if want := method == "GET"; reqEarly != want {
				t.Errorf("%s in 0-RTT: %t, want %t", method, reqEarly, want)
			}
		})
	}
}

// delayUDP relays datagrams between clients and the UDP server at
// target, holding each of the server's for d (a path with a round trip
// of d), and returns the relay's address. Each client address gets a
// socket of its own toward the server.
func delayUDP(t *testing.T, target string, d time.Duration) string {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	type held struct {
		due  time.Time
		to   net.Addr
		data []byte
	}
	out := make(chan held, 1024)
	var mu sync.Mutex
	ups := map[string]net.Conn{}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { // the server's datagrams, in order, each d late
		defer wg.Done()
		for h := range out {
			time.Sleep(time.Until(h.due))
			pc.WriteTo(h.data, h.to)
		}
	}()
	go func() { // the clients' datagrams, at once
		defer wg.Done()
		defer close(out)
		var readers sync.WaitGroup
		defer readers.Wait()
		b := make([]byte, 65536)
		for {
			n, from, err := pc.ReadFrom(b)
			if err != nil {
				mu.Lock()
				for _, up := range ups {
					up.Close()
				}
				mu.Unlock()
				return
			}
			mu.Lock()
			up := ups[from.String()]
			if up == nil {
				if up, err = net.Dial("udp", target); err != nil {
					mu.Unlock()
					continue
				}
				ups[from.String()] = up
				readers.Add(1)
				go func() {
					defer readers.Done()
					rb := make([]byte, 65536)
					for {
						m, err := up.Read(rb)
						if err != nil {
							return
						}
						out <- held{time.Now().Add(d), from, slices.Clone(rb[:m])}
					}
				}()
			}
			mu.Unlock()
			up.Write(b[:n])
		}
	}()
	t.Cleanup(func() { pc.Close(); wg.Wait() })
	return pc.LocalAddr().String()
}
