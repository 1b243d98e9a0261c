package guise

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/guise-http/guise/internal/testpeer"
	"github.com/guise-http/guise/internal/ws"
	"github.com/guise-http/guise/profile"
)

// wsHandshakes records the handshake requests a test server saw.
type wsHandshakes struct {
	mu   sync.Mutex
	reqs []*http.Request
}

func (h *wsHandshakes) add(r *http.Request) {
	h.mu.Lock()
	h.reqs = append(h.reqs, r)
	h.mu.Unlock()
}

func (h *wsHandshakes) last(t *testing.T) *http.Request {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.reqs) == 0 {
		t.Fatal("no handshake reached the server")
	}
	return h.reqs[len(h.reqs)-1]
}

// coderEcho is an echo server of github.com/coder/websocket, a Go server
// independent of guise, over HTTP/1.1 (it does not do RFC 8441).
func coderEcho(t *testing.T, seen *wsHandshakes, mode websocket.CompressionMode) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/" {
			io.WriteString(w, "page")
			return
		}
		seen.add(r)
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{CompressionMode: mode, InsecureSkipVerify: true})
		if err != nil {
			return
		}
		defer c.CloseNow()
		c.SetReadLimit(1 << 20)
		ctx := r.Context()
		for {
			typ, b, err := c.Read(ctx)
			if err != nil {
				return
			}
			if string(b) == "close please" {
				c.Close(websocket.StatusGoingAway, "asked to")
				return
			}
			if err := c.Write(ctx, typ, b); err != nil {
				return
			}
		}
	}))
	// HTTP/1.1 only: in this test binary Go's HTTP/2 server would offer
	// the extended CONNECT (TestMain), which coder/websocket cannot
	// answer.
	srv.TLS = testpeer.Localhost(t).ServerConfig("http/1.1")
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// h2Echo is Go's own HTTP/2 server answering the extended CONNECT (RFC
// 8441, enabled by TestMain's GODEBUG) with an echo of guise's framing
// peer (fingerprint's echo loop would do; this one is the test's own).
func h2Echo(t *testing.T, seen *wsHandshakes) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodConnect {
			io.WriteString(w, "page "+r.Proto)
			return
		}
		seen.add(r)
		if r.Header.Get(":protocol") != "websocket" {
			http.Error(w, "no :protocol", 400)
			return
		}
		rc := http.NewResponseController(w)
		w.WriteHeader(200)
		rc.Flush()
		serveEcho(bufio.NewReader(r.Body), w, rc.Flush)
	}))
	srv.TLS = testpeer.Localhost(t).ServerConfig("h2", "http/1.1")
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// serveEcho echoes masked client frames unmasked until a close frame.
func serveEcho(r io.Reader, w io.Writer, flush func() error) {
	var hdr [14]byte
	for range 1000 {
		if _, err := io.ReadFull(r, hdr[:2]); err != nil {
			return
		}
		n := 2 + map[byte]int{126: 2, 127: 8}[hdr[1]&0x7f] + 4*int(hdr[1]>>7)
		if _, err := io.ReadFull(r, hdr[2:n]); err != nil {
			return
		}
		h, _, err := ws.ParseHeader(hdr[:n])
		if err != nil || h.PayloadLen > 1<<20 {
			return
		}
		p := make([]byte, h.PayloadLen)
		if _, err := io.ReadFull(r, p); err != nil {
			return
		}
		ws.Mask(h.Mask, 0, p)
		w.Write(append(ws.AppendHeader(nil, ws.Header{Fin: h.Fin, Op: h.Op, PayloadLen: h.PayloadLen}), p...))
		if flush() != nil || h.Op == ws.OpClose {
			return
		}
	}
}

func echoRounds(t *testing.T, c *WebSocket, n int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for i := range n {
		msg := fmt.Sprintf("message %d %s", i, strings.Repeat("x", i*100))
		typ := MessageText
		if i%2 == 1 {
			typ = MessageBinary
		}
		if err := c.Write(ctx, typ, []byte(msg)); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
		gt, b, err := c.Read(ctx)
		if err != nil || gt != typ || string(b) != msg {
			t.Fatalf("echo %d: %v %d bytes, %v", i, gt, len(b), err)
		}
	}
}

func TestWebSocketCoderServer(t *testing.T) {
	for _, mode := range []websocket.CompressionMode{websocket.CompressionDisabled, websocket.CompressionContextTakeover, websocket.CompressionNoContextTakeover} {
		for _, name := range []string{"chrome156-linux", "firefox153-linux"} {
			t.Run(fmt.Sprint(name, "-", mode), func(t *testing.T) {
				var seen wsHandshakes
				srv := coderEcho(t, &seen, mode)
				s := &Session{Profile: name, RootCAs: testpeer.Localhost(t).Roots}
				defer s.Close()
				ctx := context.Background()
				// A page first, as a browser has: the Session then holds an
				// idle HTTP/1.1 connection to the origin, and the socket
				// takes a new one of its own, as the browsers do.
				resp, err := s.Get(ctx, srv.URL+"/")
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				c, err := s.WebSocket(ctx, strings.Replace(srv.URL, "https", "wss", 1)+"/ws", nil)
				if err != nil {
					t.Fatal(err)
				}
				if c.Protocol() != "http/1.1" {
					t.Errorf("protocol %s", c.Protocol())
				}
				echoRounds(t, c, 20)
				r := seen.last(t)
				if ext := r.Header.Get("Sec-WebSocket-Extensions"); ext == "" || r.Header.Get("Sec-WebSocket-Key") == "" {
					t.Errorf("extensions %q, key %q", ext, r.Header.Get("Sec-WebSocket-Key"))
				}
				if err := c.Write(ctx, MessageText, []byte("close please")); err != nil {
					t.Fatal(err)
				}
				_, _, err = c.Read(ctx)
				var ce *CloseError
				if !errors.As(err, &ce) || ce.Code != CloseGoingAway || !ce.Remote || ce.Reason != "asked to" {
					t.Fatalf("read after the server's close: %v", err)
				}
			})
		}
	}
}

func TestWebSocketExtendedConnect(t *testing.T) {
	for _, name := range []string{"chrome156-linux", "firefox153-linux"} {
		t.Run(name, func(t *testing.T) {
			var seen wsHandshakes
			srv := h2Echo(t, &seen)
			s := &Session{Profile: name, RootCAs: testpeer.Localhost(t).Roots}
			defer s.Close()
			ctx := context.Background()
			resp, err := s.Get(ctx, srv.URL+"/")
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			c, err := s.WebSocket(ctx, strings.Replace(srv.URL, "https", "wss", 1)+"/chat?room=1", &WebSocketOptions{NoCompression: true})
			if err != nil {
				t.Fatal(err)
			}
			if c.Protocol() != "h2" {
				t.Fatalf("protocol %s, want h2 (the page's connection)", c.Protocol())
			}
			echoRounds(t, c, 20)
			r := seen.last(t)
			if r.URL.Path != "/chat" || r.URL.RawQuery != "room=1" || r.Header.Get("Sec-WebSocket-Key") != "" {
				t.Errorf("CONNECT %s?%s key %q", r.URL.Path, r.URL.RawQuery, r.Header.Get("Sec-WebSocket-Key"))
			}
			if err := c.Close(CloseNormal, "bye"); err != nil {
				t.Fatalf("Close: %v", err)
			}
			// The connection goes on carrying requests after the socket.
			resp, err = s.Get(ctx, srv.URL+"/")
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(b) != "page HTTP/2.0" {
				t.Fatalf("after the socket: %q", b)
			}
		})
	}
}

// TestWebSocketIsolated: DialWebSocket with nothing pooled opens an h2
// connection of its own when the server enables the extended CONNECT, and
// an HTTP/1.1 one otherwise; both close with the socket.
func TestWebSocketIsolated(t *testing.T) {
	var seen wsHandshakes
	for _, srv := range []*httptest.Server{h2Echo(t, &seen), coderEcho(t, &seen, websocket.CompressionDisabled)} {
		c, err := DialWebSocket(context.Background(), strings.Replace(srv.URL, "https", "wss", 1)+"/ws", &WebSocketOptions{RootCAs: testpeer.Localhost(t).Roots})
		if err != nil {
			t.Fatal(err)
		}
		echoRounds(t, c, 3)
		if err := c.Close(CloseNormal, ""); err != nil {
			t.Fatalf("%s: Close: %v", c.Protocol(), err)
		}
	}
}

// TestWebSocketHandshakeRefused: a wrong accept value, an extension not
// offered, a status other than 101 are typed errors, and the connection is
// closed (RELIABILITY WS-13).
func TestWebSocketHandshakeRefused(t *testing.T) {
	for _, tc := range []struct{ name, resp string }{
		{"bad-accept", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: nope\r\n\r\n"},
		{"not-101", "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n"},
		{"no-upgrade", "HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ACCEPT\r\n\r\n"},
		{"unoffered-extension", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ACCEPT\r\nSec-WebSocket-Extensions: x-mystery\r\n\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			done := make(chan bool, 1)
			go func() {
				nc, err := ln.Accept()
				if err != nil {
					done <- false
					return
				}
				defer nc.Close()
				req, err := http.ReadRequest(bufio.NewReader(nc))
				if err != nil {
					done <- false
					return
				}
				io.WriteString(nc, strings.Replace(tc.resp, "ACCEPT", ws.Accept(req.Header.Get("Sec-WebSocket-Key")), 1))
				nc.SetReadDeadline(time.Now().Add(5 * time.Second))
				_, err = nc.Read(make([]byte, 1))
				done <- errors.Is(err, io.EOF)
			}()
			_, err = DialWebSocket(context.Background(), "ws://"+ln.Addr().String()+"/", nil)
			var he *WebSocketHandshakeError
			var e *Error
			if !errors.As(err, &he) || !errors.As(err, &e) {
				t.Fatalf("error %v (%T), want an *Error with a WebSocketHandshakeError", err, err)
			}
			if !<-done {
				t.Error("the connection was not closed")
			}
		})
	}
}

// TestWebSocketHeaderOrder: over HTTP/1.1 the handshake goes out in the
// profile's recorded order and case, with a fresh key each time and the
// jar's cookie (RELIABILITY WS-12).
func TestWebSocketHeaderOrder(t *testing.T) {
	for _, name := range []string{"chrome156-linux", "firefox153-linux"} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		heads := make(chan string, 2)
		go func() {
			for range 2 {
				nc, err := ln.Accept()
				if err != nil {
					return
				}
				br := bufio.NewReader(nc)
				var head strings.Builder
				key := ""
				for {
					l, err := br.ReadString('\n')
					if err != nil || l == "\r\n" {
						break
					}
					head.WriteString(l)
					if k, ok := strings.CutPrefix(l, "Sec-WebSocket-Key: "); ok {
						key = strings.TrimSpace(k)
					}
				}
				heads <- head.String()
				io.WriteString(nc, "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: "+ws.Accept(key)+"\r\n\r\n\x88\x02\x03\xe8")
				nc.Close()
			}
		}()
		s := &Session{Profile: name}
		cu, _ := url.Parse("http://" + ln.Addr().String() + "/")
		s.Cookies().SetCookies(cu, []string{"sid=42"})
		var keys []string
		for range 2 {
			c, err := s.WebSocket(context.Background(), "ws://"+ln.Addr().String()+"/x", &WebSocketOptions{Header: Header{{Name: "X-Extra", Value: "1"}}})
			if err != nil {
				t.Fatal(err)
			}
			c.Read(context.Background())
			head := <-heads
			p, _ := profile.Lookup(name)
			var want []string
			for _, f := range p.HeaderSet(profile.WebSocket, profile.HTTP1).Header {
				want = append(want, f.Name)
			}
			want = append(want, "X-Extra")
			var got []string
			lines := strings.Split(strings.TrimSpace(head), "\r\n")
			for _, l := range lines[1:] {
				n, v, _ := strings.Cut(l, ": ")
				got = append(got, n)
				if n == "Sec-WebSocket-Key" {
					keys = append(keys, v)
				}
				if n == "Cookie" && v != "sid=42" {
					t.Errorf("Cookie %q", v)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%s: head fields\n%v\nwant\n%v", name, got, want)
			}
			if lines[0] != "GET /x HTTP/1.1" {
				t.Errorf("request line %q", lines[0])
			}
		}
		if len(keys) != 2 || keys[0] == keys[1] {
			t.Errorf("%s: keys %q, want two fresh ones", name, keys)
		}
		s.Close()
		ln.Close()
	}
}
