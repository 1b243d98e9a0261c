package guise

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/guise-http/guise/fields"
	"github.com/guise-http/guise/fingerprint"
	"github.com/guise-http/guise/profile"
)

// wsRecordedConns reads which connections a browser's WebSocket took, as
// profile/testdata/record/flows.go -websocket recorded them.
func wsRecordedConns(t *testing.T, file string) []wsConnChoice {
	t.Helper()
	b, err := os.ReadFile("profile/testdata/recordings/" + file)
	if err != nil {
		t.Fatal(err)
	}
	var rec struct {
		Conns []struct {
			Protocol string   `json:"protocol"`
			ALPN     []string `json:"alpn_offered"`
			Page     bool     `json:"page_loaded_on_it"`
			JA4      string   `json:"ja4"`
			Resumed  bool     `json:"resumed"`
		} `json:"websocket_connections"`
	}
	if err := json.Unmarshal(b, &rec); err != nil {
		t.Fatal(err)
	}
	var out []wsConnChoice
	for _, c := range rec.Conns {
		out = append(out, wsConnChoice{c.Protocol, strings.Join(c.ALPN, ","), c.JA4, c.Page, c.Resumed})
	}
	return out
}

// wsConnChoice is the connection a WebSocket went over: its protocol, the
// ALPN list and JA4 of its ClientHello, whether the page was loaded on it,
// and whether its hello offered a session to resume.
type wsConnChoice struct {
	proto, alpn, ja4 string
	page, resumed    bool
}

// TestWebSocketMatchesRecordings opens the echo server's WebSocket page as
// a browser does (the page, its image held open until the socket closes,
// then the socket) as each recorded profile, over h2 and with HTTP/1.1
// only, and compares what the server saw with the profile and the
// recording: the connection each socket took (the page's h2 connection; a
// new HTTP/1.1 one offering http/1.1 alone, with the JA4 of the browser's,
// whose hello resumed the page's session), the CONNECT's pseudo-header order, fields and values, its HEADERS
// priority (Chromium's depends on the image's still open stream, as the
// browser's did; Firefox's on stream 0), and the Upgrade request's head
// (RELIABILITY WS-21).
func TestWebSocketMatchesRecordings(t *testing.T) {
	for _, tc := range []struct{ name, rec string }{
		{"chrome156-linux", "chromium-156-websocket.json"},
		{"firefox153-linux", "firefox-esr-153-websocket.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := profile.Lookup(tc.name)
			if err != nil {
				t.Fatal(err)
			}
			srv := &fingerprint.Server{}
			if err := srv.Start(); err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			_, port, _ := net.SplitHostPort(srv.ListenAddr())
			origin := "https://fp.test:" + port
			addr := srv.ListenAddr()
			var d net.Dialer
			tr := &Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return d.DialContext(ctx, network, addr)
			}}
			defer tr.Close()
			for _, proto := range []Protocol{AnyProtocol, HTTP1} {
				s := &Session{Profile: tc.name, RootCAs: srv.CertPool(), Transport: tr, Protocol: proto}
				wsVisit(t, srv, s, origin, proto)
				s.Close()
			}
			tr.Close()
			srv.Close()
			checkWSRecords(t, p, srv.Records(), wsRecordedConns(t, tc.rec))
		})
	}
}

// wsVisit loads the WebSocket page, starts its image (which the server
// holds until the socket closes), waits for the server to see it, and
// opens the socket, echoes three messages and closes with 1000.
func wsVisit(t *testing.T, srv *fingerprint.Server, s *Session, origin string, proto Protocol) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := s.Get(ctx, origin+fingerprint.WebSocketPage)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := resp.Bytes(); err != nil {
		t.Fatal(err)
	}
	img := make(chan error, 1)
	go func() {
		resp, err := s.Do(ctx, &Request{URL: origin + "/ws/wait.png", Kind: profile.Image})
		if err == nil {
			_, err = resp.Bytes()
		}
		img <- err
	}()
	seen := false
	for i := 0; i < 400 && !seen; i++ {
		ch := srv.Changed()
		for _, r := range srv.Records() {
			if r.Protocol == fingerprint.ProtoH2 {
				if h, _ := r.HTTP2(); h != nil {
					for _, q := range h.Requests {
						seen = seen || q.Path() == "/ws/wait.png"
					}
				}
			}
			for _, head := range r.HTTP1Heads() {
				seen = seen || bytes.HasPrefix(head, []byte("GET /ws/wait.png "))
			}
		}
		if !seen {
			select {
			case <-ch:
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
	if !seen {
		t.Fatal("the server never saw the image request")
	}
	c, err := s.WebSocket(ctx, strings.Replace(origin, "https", "wss", 1)+fingerprint.WebSocketEcho, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[Protocol]string{AnyProtocol: "h2", HTTP1: "http/1.1"}[proto]
	if c.Protocol() != want {
		t.Errorf("the socket went over %s, want %s", c.Protocol(), want)
	}
	for i := 1; i <= fingerprint.WebSocketMessages; i++ {
		msg := fmt.Sprint("message ", i)
		if err := c.Write(ctx, MessageText, []byte(msg)); err != nil {
			t.Fatal(err)
		}
		if _, b, err := c.Read(ctx); err != nil || string(b) != msg {
			t.Fatalf("echo %q, %v", b, err)
		}
	}
	if err := c.Close(CloseNormal, "done"); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := <-img; err != nil {
		t.Fatalf("image: %v", err)
	}
}

func checkWSRecords(t *testing.T, p *profile.Profile, recs []*fingerprint.ConnRecord, recorded []wsConnChoice) {
	t.Helper()
	var choices []wsConnChoice
	var connect *fingerprint.HTTP2Request
	var before []fingerprint.HTTP2Request
	var head []byte
	for _, r := range recs {
		var page, ws bool
		if h, _ := r.HTTP2(); h != nil {
			for i := range h.Requests {
				q := &h.Requests[i]
				page = page || q.Path() == fingerprint.WebSocketPage
				if q.Path() == fingerprint.WebSocketEcho {
					ws, connect, before = true, q, h.Requests[:i]
				}
			}
		}
		for _, hd := range r.HTTP1Heads() {
			page = page || bytes.HasPrefix(hd, []byte("GET "+fingerprint.WebSocketPage+" "))
			if bytes.HasPrefix(hd, []byte("GET "+fingerprint.WebSocketEcho+" ")) {
				ws, head = true, hd
			}
		}
		if ws {
			c := wsConnChoice{proto: r.Protocol, page: page}
			if ch, err := r.ClientHello(); err == nil {
				c.alpn, c.ja4 = strings.Join(ch.ALPN, ","), ch.JA4()
				for _, e := range ch.Extensions {
					c.resumed = c.resumed || e.Type == 41 // pre_shared_key
				}
			}
			choices = append(choices, c)
		}
	}
	if fmt.Sprint(choices) != fmt.Sprint(recorded) {
		t.Errorf("connections the sockets took %v, the browser's %v", choices, recorded)
	}
	if connect == nil || head == nil {
		t.Fatalf("the server saw no CONNECT (%v) or no Upgrade (%v)", connect != nil, head != nil)
	}
	if !slices.Equal(connect.PseudoOrder, p.HTTP2.WebSocketPseudoOrder) {
		t.Errorf("pseudo order %v, profile %v", connect.PseudoOrder, p.HTTP2.WebSocketPseudoOrder)
	}
	var h2 fields.Header
	for _, f := range connect.Header {
		if !strings.HasPrefix(f.Name, ":") {
			h2 = append(h2, f)
		}
	}
	wsCompare(t, "h2", h2, p.HeaderSet(profile.WebSocket, profile.H2))
	kp, _ := p.Priority(profile.WebSocket)
	var dep uint32
	if kp.DependsOn == profile.LatestOpen {
		for _, b := range before {
			if b.Path() == "/ws/wait.png" {
				dep = b.StreamID // open, and of weight 183 >= 147
			}
		}
	}
	if pr := connect.Priority; pr == nil || pr.Exclusive != kp.Exclusive || pr.Weight != kp.Weight || pr.StreamDep != dep {
		t.Errorf("CONNECT priority %+v, want exclusive=%v weight %d on stream %d", pr, kp.Exclusive, kp.Weight, dep)
	}
	lines := strings.Split(strings.TrimSuffix(string(head), "\r\n\r\n"), "\r\n")
	var h1 fields.Header
	for _, l := range lines[1:] {
		n, v, _ := strings.Cut(l, ": ")
		h1 = append(h1, fields.Field{Name: n, Value: v})
	}
	wsCompare(t, "http/1.1", h1, p.HeaderSet(profile.WebSocket, profile.HTTP1))
}

// wsCompare compares a handshake's fields with the profile's set, names in
// order and case; values too, except the per-request ones, which must be
// the request's (checked by value where known).
func wsCompare(t *testing.T, proto string, got fields.Header, hs *profile.HeaderSet) {
	t.Helper()
	var gn, wn []string
	for _, f := range got {
		gn = append(gn, f.Name)
	}
	var want fields.Header
	for _, f := range hs.Header {
		if slices.ContainsFunc(hs.PerRequest, func(n string) bool { return fields.EqualFold(n, f.Name) }) && got.Get(f.Name) == "" {
			continue // no cookie, no sec-fetch-site
		}
		want = append(want, f)
		wn = append(wn, f.Name)
	}
	if !slices.Equal(gn, wn) {
		t.Errorf("%s: fields\n guise   %v\n profile %v", proto, gn, wn)
		return
	}
	for i, f := range got {
		if slices.ContainsFunc(hs.PerRequest, func(n string) bool { return fields.EqualFold(n, f.Name) }) {
			continue
		}
		if f.Value != want[i].Value {
			t.Errorf("%s: %s %q, profile %q", proto, f.Name, f.Value, want[i].Value)
		}
	}
}

// TestWebSocketHTTP1OriginMatchesRecordings opens the WebSocket page of an
// echo server that speaks HTTP/1.1 only (fingerprint.Server.DisableHTTP2)
// as each recorded profile, the Session's protocol left to the browser's
// choice, and compares the socket's connection with the browser's on the
// same server (profile/testdata/recordings/*-websocket-h1origin.json): a
// new connection, offering http/1.1 alone as Chromium does, or h2 and
// http/1.1 as Firefox does, resuming the page's session either way (the
// browser's JA4) (RELIABILITY WS-23).
func TestWebSocketHTTP1OriginMatchesRecordings(t *testing.T) {
	for _, tc := range []struct{ name, rec string }{
		{"chrome156-linux", "chromium-156-websocket-h1origin.json"},
		{"firefox153-linux", "firefox-esr-153-websocket-h1origin.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := os.ReadFile("profile/testdata/recordings/" + tc.rec)
			if err != nil {
				t.Fatal(err)
			}
			var rec struct {
				ALPN []string `json:"alpn_offered"`
				Page bool     `json:"page_loaded_on_it"`
				JA4  string   `json:"ja4"`
			}
			if err := json.Unmarshal(b, &rec); err != nil {
				t.Fatal(err)
			}
			srv := &fingerprint.Server{DisableHTTP2: true, DisableQUIC: true}
			if err := srv.Start(); err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			_, port, _ := net.SplitHostPort(srv.ListenAddr())
			origin := "https://fp.test:" + port
			addr := srv.ListenAddr()
			var d net.Dialer
			tr := &Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return d.DialContext(ctx, network, addr)
			}}
			defer tr.Close()
			s := &Session{Profile: tc.name, RootCAs: srv.CertPool(), Transport: tr}
			defer s.Close()
			// The page, then its socket. (Not wsVisit: with the page's image
			// held open, guise dials one more connection to learn that the
			// origin is HTTP/1.1, which takes the page's ticket: a known
			// difference, DESIGN "WebSocket".)
			resp, err := s.Get(t.Context(), origin+fingerprint.WebSocketPage)
			if err == nil {
				_, err = resp.Bytes()
			}
			if err != nil {
				t.Fatal(err)
			}
			c, err := s.WebSocket(t.Context(), strings.Replace(origin, "https", "wss", 1)+fingerprint.WebSocketEcho, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Write(t.Context(), MessageText, []byte("message 1")); err != nil {
				t.Fatal(err)
			}
			if _, b, err := c.Read(t.Context()); err != nil || string(b) != "message 1" {
				t.Fatalf("echo %q, %v", b, err)
			}
			c.Close(CloseNormal, "done")
			s.Close()
			tr.Close()
			srv.Close()
			found := false
			for _, r := range srv.Records() {
				var page, ws bool
				for _, hd := range r.HTTP1Heads() {
					page = page || bytes.HasPrefix(hd, []byte("GET "+fingerprint.WebSocketPage+" "))
					ws = ws || bytes.HasPrefix(hd, []byte("GET "+fingerprint.WebSocketEcho+" "))
				}
				if !ws {
					continue
				}
				found = true
				ch, err := r.ClientHello()
				if err != nil {
					t.Fatal(err)
				}
				if !slices.Equal(ch.ALPN, rec.ALPN) || page != rec.Page || ch.JA4() != rec.JA4 {
					t.Errorf("the socket's connection offered %v (the page's: %v, JA4 %s), the browser's %v (%v, %s)", ch.ALPN, page, ch.JA4(), rec.ALPN, rec.Page, rec.JA4)
				}
			}
			if !found {
				t.Fatal("the server saw no Upgrade")
			}
		})
	}
}
