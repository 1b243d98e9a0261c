package guise

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/guise-http/guise/internal/testpeer"
)

// tunnelProxy is a test's own proxy, HTTP (CONNECT only: anything else,
// such as an absolute-form request, gets a 405) or SOCKS5 (CONNECT), that
// records the target of every tunnel it opens. With a user it requires
// credentials: Proxy-Authorization Basic on the CONNECT (407 without), or
// the RFC 1929 username/password method.
type tunnelProxy struct {
	ln         net.Listener
	user, pass string
	mu         sync.Mutex
	seen       []string // "CONNECT host:port" or what was refused
	wg         sync.WaitGroup
}

func newTunnelProxy(t *testing.T, socks bool, user, pass string) *tunnelProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &tunnelProxy{ln: ln, user: user, pass: pass}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for range 100 {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			p.wg.Add(1)
			go func() {
				defer p.wg.Done()
				defer nc.Close()
				nc.SetDeadline(time.Now().Add(20 * time.Second))
				if socks {
					p.socks(nc)
				} else {
					p.connect(nc)
				}
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		p.wg.Wait()
	})
	return p
}

func (p *tunnelProxy) addr() string { return p.ln.Addr().String() }

func (p *tunnelProxy) record(s string) {
	p.mu.Lock()
	p.seen = append(p.seen, s)
	p.mu.Unlock()
}

func (p *tunnelProxy) log() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.seen...)
}

func (p *tunnelProxy) connect(nc net.Conn) {
	br := bufio.NewReader(nc)
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	if req.Method != http.MethodConnect {
		p.record(req.Method + " " + req.RequestURI)
		io.WriteString(nc, "HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
		return
	}
	if p.user != "" {
		want := "Basic " + base64.StdEncoding.EncodeToString([]byte(p.user+":"+p.pass))
		if req.Header.Get("Proxy-Authorization") != want {
			p.record("unauthorized CONNECT " + req.Host)
			io.WriteString(nc, "HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"t\"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
			return
		}
	}
	p.record("CONNECT " + req.Host)
	up, err := net.DialTimeout("tcp", req.Host, 5*time.Second)
	if err != nil {
		io.WriteString(nc, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
		return
	}
	defer up.Close()
	io.WriteString(nc, "HTTP/1.1 200 Connection Established\r\n\r\n")
	splice(nc, br, up)
}

func (p *tunnelProxy) socks(nc net.Conn) {
	br := bufio.NewReader(nc)
	var hdr [2]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil || hdr[0] != 5 {
		return
	}
	methods := make([]byte, hdr[1])
	if _, err := io.ReadFull(br, methods); err != nil {
		return
	}
	if p.user == "" {
		nc.Write([]byte{5, 0})
	} else {
		if !bytes.Contains(methods, []byte{2}) {
			p.record("no username method")
			nc.Write([]byte{5, 0xff})
			return
		}
		nc.Write([]byte{5, 2})
		// RFC 1929: VER ULEN UNAME PLEN PASSWD.
		var v [2]byte
		if _, err := io.ReadFull(br, v[:]); err != nil || v[0] != 1 {
			return
		}
		u := make([]byte, v[1])
		if _, err := io.ReadFull(br, u); err != nil {
			return
		}
		if _, err := io.ReadFull(br, v[1:]); err != nil {
			return
		}
		pw := make([]byte, v[1])
		if _, err := io.ReadFull(br, pw); err != nil {
			return
		}
		if string(u) != p.user || string(pw) != p.pass {
			p.record("bad credentials " + string(u))
			nc.Write([]byte{1, 1})
			return
		}
		nc.Write([]byte{1, 0})
	}
	var req [4]byte
	if _, err := io.ReadFull(br, req[:]); err != nil || req[1] != 1 {
		return
	}
	var host string
	switch req[3] {
	case 1:
		var a [4]byte
		if _, err := io.ReadFull(br, a[:]); err != nil {
			return
		}
		host = net.IP(a[:]).String()
	case 3:
		n, err := br.ReadByte()
		if err != nil {
			return
		}
		b := make([]byte, n)
		if _, err := io.ReadFull(br, b); err != nil {
			return
		}
		host = string(b)
	default:
		return
	}
	var pb [2]byte
	if _, err := io.ReadFull(br, pb[:]); err != nil {
		return
	}
	target := net.JoinHostPort(host, strconv.Itoa(int(binary.BigEndian.Uint16(pb[:]))))
	p.record("CONNECT " + target)
	if host == "ws.test" {
		target = net.JoinHostPort("127.0.0.1", strconv.Itoa(int(binary.BigEndian.Uint16(pb[:]))))
	}
	up, err := net.DialTimeout("tcp", target, 5*time.Second)
	if err != nil {
		nc.Write([]byte{5, 5, 0, 1, 0, 0, 0, 0, 0, 0})
		return
	}
	defer up.Close()
	nc.Write([]byte{5, 0, 0, 1, 127, 0, 0, 1, 0, 0})
	splice(nc, br, up)
}

// splice copies both ways until either side ends.
func splice(nc net.Conn, br *bufio.Reader, up net.Conn) {
	done := make(chan struct{}, 2)
	go func() { io.Copy(up, br); done <- struct{}{} }()
	go func() { io.Copy(nc, up); done <- struct{}{} }()
	<-done
	nc.Close()
	up.Close()
	<-done
}

// plainCoderEcho is coderEcho without TLS: a ws:// server.
func plainCoderEcho(t *testing.T, seen *wsHandshakes) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen.add(r)
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{InsecureSkipVerify: true})
		if err != nil {
			return
		}
		defer c.CloseNow()
		for {
			typ, b, err := c.Read(r.Context())
			if err != nil || c.Write(r.Context(), typ, b) != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestWebSocketThroughProxies opens ws:// and wss:// sockets (HTTP/1.1
// and, to a server enabling RFC 8441, h2) through the test's own HTTP
// proxy and SOCKS5 proxy, each without and with credentials, as both
// browsers do: a CONNECT tunnel for every socket, ws:// too, never an
// absolute-form request (Chromium 156 and Firefox ESR 153, pointed at an
// HTTP proxy, both sent CONNECT host:port for new WebSocket("ws://..."));
// the credentials go to the proxy only, never to the server; over SOCKS5
// the name goes to the proxy with socks5h (RELIABILITY WS-22). Wrong
// credentials fail the dial with the proxy's answer and open no tunnel
// (RELIABILITY WS-29).
func TestWebSocketThroughProxies(t *testing.T) {
	var seen wsHandshakes
	plain := plainCoderEcho(t, &seen)
	tlsH1 := coderEcho(t, &seen, websocket.CompressionContextTakeover)
	tlsH2 := h2Echo(t, &seen)
	roots := testpeer.Localhost(t).Roots
	for _, socks := range []bool{false, true} {
		for _, user := range []string{"", "alice"} {
			p := newTunnelProxy(t, socks, user, "s3cret")
			scheme := "http://"
			if socks {
				scheme = "socks5h://"
			}
			proxyURL := scheme + p.addr()
			if user != "" {
				proxyURL = scheme + user + ":s3cret@" + p.addr()
			}
			for _, tc := range []struct {
				url, proto string
			}{
				{strings.Replace(plain.URL, "http://", "ws://", 1) + "/plain", "http/1.1"},
				{strings.Replace(tlsH1.URL, "https://", "wss://", 1) + "/ws", "http/1.1"},
				{strings.Replace(tlsH2.URL, "https://", "wss://", 1) + "/h2", "h2"},
			} {
				name := fmt.Sprintf("%s via %s", tc.url, proxyURL)
				u := tc.url
				if socks {
					// A name only the proxy resolves (to loopback).
					u = strings.Replace(u, "127.0.0.1", "ws.test", 1)
				}
				s := &Session{Proxy: proxyURL, RootCAs: roots, InsecureSkipVerify: socks}
				c, err := s.WebSocket(context.Background(), u, nil)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if c.Protocol() != tc.proto {
					t.Errorf("%s: over %s, want %s", name, c.Protocol(), tc.proto)
				}
				echoRounds(t, c, 5)
				if err := c.Close(CloseNormal, ""); err != nil {
					t.Errorf("%s: Close: %v", name, err)
				}
				s.Close()
				log := p.log()
				host := u[strings.Index(u, "://")+3:]
				host = host[:strings.IndexByte(host, '/')]
				if len(log) == 0 || log[len(log)-1] != "CONNECT "+host {
					t.Errorf("%s: the proxy saw %q, want a tunnel to %s", name, log, host)
				}
				if r := seen.last(t); r.URL.Path != tc.url[strings.LastIndexByte(tc.url, '/'):] || r.Header.Get("Proxy-Authorization") != "" {
					t.Errorf("%s: the server saw %s with Proxy-Authorization %q", name, r.URL.Path, r.Header.Get("Proxy-Authorization"))
				}
			}
			if user != "" {
				// Wrong credentials: the dial fails, no tunnel opens.
				n := len(p.log())
				bad := strings.Replace(proxyURL, ":s3cret@", ":wrong@", 1)
				for _, u := range []string{strings.Replace(plain.URL, "http://", "ws://", 1) + "/plain", strings.Replace(tlsH1.URL, "https://", "wss://", 1) + "/ws"} {
					s := &Session{Proxy: bad, RootCAs: roots}
					c, err := s.WebSocket(context.Background(), u, nil)
					if err == nil {
						c.Close(CloseNormal, "")
						t.Errorf("%s via %s: opened with wrong credentials", u, bad)
					} else if socks && !strings.Contains(err.Error(), "socks") || !socks && !strings.Contains(err.Error(), "407") {
						t.Errorf("%s via %s: %v, want the proxy's refusal", u, bad, err)
					}
					s.Close()
				}
				for _, l := range p.log()[n:] {
					if strings.HasPrefix(l, "CONNECT ") {
						t.Errorf("wrong credentials opened a tunnel: %q", l)
					}
				}
				continue
			}
			for _, l := range p.log() {
				if !strings.HasPrefix(l, "CONNECT ") {
					t.Errorf("the proxy was sent %q, not a tunnel", l)
				}
			}
		}
	}
}

// TestWebSocketThroughSquidAndDante: the same through real proxies, squid
// (CONNECT, with basic auth) and dante (SOCKS5), to ws:// and wss://
// servers (RELIABILITY WS-22).
func TestWebSocketThroughSquidAndDante(t *testing.T) {
	squid := testpeer.Squid(t, map[string]string{"alice": "pw"})
	dante := testpeer.Dante(t)
	var seen wsHandshakes
	plain := plainCoderEcho(t, &seen)
	tlsH1 := coderEcho(t, &seen, websocket.CompressionContextTakeover)
	for _, proxyURL := range []string{"http://alice:pw@" + squid, "socks5://" + dante} {
		for _, u := range []string{strings.Replace(plain.URL, "http://", "ws://", 1) + "/plain", strings.Replace(tlsH1.URL, "https://", "wss://", 1) + "/tls"} {
			s := &Session{Proxy: proxyURL, RootCAs: testpeer.Localhost(t).Roots}
			c, err := s.WebSocket(context.Background(), u, nil)
			if err != nil {
				t.Fatalf("%s via %s: %v", u, proxyURL, err)
			}
			echoRounds(t, c, 5)
			if err := c.Close(CloseNormal, ""); err != nil {
				t.Errorf("%s via %s: Close: %v", u, proxyURL, err)
			}
			s.Close()
		}
	}
}
