package guise

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guise-http/guise/internal/testpeer"
)

// nodeWS starts testdata/node-ws/server.js, the Node ws package's echo
// server over TLS, and returns its wss:// URL. The package is installed by
// npm install in testdata/node-ws (as .ci/run does).
func nodeWS(t *testing.T) string {
	t.Helper()
	node := testpeer.Need(t, "node", "nodejs")
	if _, err := os.Stat("testdata/node-ws/node_modules/ws/package.json"); err != nil {
		testpeer.Missing(t, "the Node ws package is not installed (cd testdata/node-ws && npm install)")
	}
	dir := t.TempDir()
	cert, key := testpeer.Localhost(t).WriteFiles(t, dir)
	port := testpeer.FreePort(t)
	testpeer.StartDaemon(t, "127.0.0.1:"+port, nil, node, "testdata/node-ws/server.js", port, cert, key)
	return "wss://127.0.0.1:" + port + "/"
}

// TestWebSocketNodeWS talks to the Node ws package (8.23.0), a server
// independent of guise: echoes with permessage-deflate as each browser
// offers it, a fragmented message, the server's ping answered from Read, a
// message over MaxMessageSize failing with 1009, and the server's close
// with its code and reason (RELIABILITY WS-15).
func TestWebSocketNodeWS(t *testing.T) {
	u := nodeWS(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for _, name := range []string{"chrome156-linux", "firefox153-linux"} {
		t.Run(name, func(t *testing.T) {
			s := &Session{Profile: name, RootCAs: testpeer.Localhost(t).Roots}
			defer s.Close()
			c, err := s.WebSocket(ctx, u, &WebSocketOptions{MaxMessageSize: 64 << 10})
			if err != nil {
				t.Fatal(err)
			}
			if ext := c.Header().Get("Sec-WebSocket-Extensions"); !strings.Contains(ext, "permessage-deflate") {
				t.Errorf("the server agreed %q, want permessage-deflate", ext)
			}
			echoRounds(t, c, 20)
			for _, tc := range []struct{ send, want string }{
				{"frag", "one two three"},
				{"ping", "pong seen"},
			} {
				if err := c.Write(ctx, MessageText, []byte(tc.send)); err != nil {
					t.Fatal(err)
				}
				if _, b, err := c.Read(ctx); err != nil || string(b) != tc.want {
					t.Fatalf("%s: %q %v, want %q", tc.send, b, err, tc.want)
				}
			}
			c.Write(ctx, MessageText, []byte("big 100000"))
			_, _, err = c.Read(ctx)
			var ce *CloseError
			if !errors.As(err, &ce) || ce.Code != CloseTooBig || ce.Remote {
				t.Fatalf("a message over MaxMessageSize: %v, want our 1009", err)
			}

			c, err = s.WebSocket(ctx, u, nil)
			if err != nil {
				t.Fatal(err)
			}
			c.Write(ctx, MessageText, []byte("close"))
			_, _, err = c.Read(ctx)
			if !errors.As(err, &ce) || ce.Code != 4000 || !ce.Remote || ce.Reason != "bye from ws" {
				t.Fatalf("the server's close: %v", err)
			}
		})
	}
}

// wsFront is a server fronting a WebSocket backend: it starts it on addr
// (TLS with cert and key, ALPN h2 and http/1.1) in dir, proxying /ws to the
// plain ws:// backend at back, and answering /page with a page.
type wsFront struct {
	name, program, pkg string
	// proto is what the socket must go over: "h2" when the server enables
	// RFC 8441's extended CONNECT, "http/1.1" otherwise.
	proto string
	start func(t *testing.T, bin, dir, addr, cert, key, back string)
}

var wsFronts = []wsFront{
	{name: "nginx", program: "nginx", pkg: "nginx-light", proto: "http/1.1",
		start: func(t *testing.T, _, dir, addr, cert, key, back string) {
			testpeer.Nginx(t, dir, fmt.Sprintf(`server {
    listen %[1]s ssl http2;
    ssl_certificate %[2]s;
    ssl_certificate_key %[3]s;
    location = /page { return 200 "page"; }
    location /ws {
      proxy_pass http://%[4]s;
      proxy_http_version 1.1;
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection "upgrade";
    }
  }`, addr, cert, key, back), addr)
		}},
	{name: "haproxy", program: "haproxy", pkg: "haproxy", proto: "h2",
		start: func(t *testing.T, bin, dir, addr, cert, key, back string) {
			c, _ := os.ReadFile(cert)
			k, _ := os.ReadFile(key)
			combined := filepath.Join(dir, "combined.pem")
			writeFile(t, combined, string(c)+string(k))
			conf := fmt.Sprintf(`global
  maxconn 100
defaults
  mode http
  timeout connect 5s
  timeout client 20s
  timeout server 20s
  timeout tunnel 20s
frontend f
  bind %[1]s ssl crt %[2]s alpn h2,http/1.1
  http-request return status 200 content-type text/plain string page if { path /page }
  default_backend b
backend b
  server s1 %[3]s
`, addr, combined, back)
			cf := filepath.Join(dir, "haproxy.cfg")
			writeFile(t, cf, conf)
			testpeer.StartDaemon(t, addr, nil, bin, "-db", "-f", cf)
		}},
	{name: "apache2", program: "apache2", pkg: "apache2", proto: "h2",
		start: func(t *testing.T, bin, dir, addr, cert, key, back string) {
			mods := ""
			for _, m := range []string{"mpm_event", "authz_core", "ssl", "http2", "socache_shmcb", "proxy", "proxy_http", "proxy_wstunnel", "alias"} {
				mods += fmt.Sprintf("LoadModule %s_module /usr/lib/apache2/modules/mod_%s.so\n", m, m)
			}
			www := filepath.Join(dir, "www")
			os.Mkdir(www, 0o755)
			writeFile(t, filepath.Join(www, "page"), "page")
			conf := mods + fmt.Sprintf(`ServerRoot %[1]s
ServerName localhost
Listen %[2]s
User nobody
Group nogroup
PidFile %[1]s/httpd.pid
ErrorLog %[1]s/error.log
DefaultRuntimeDir %[1]s
Mutex file:%[1]s default
Protocols h2 http/1.1
H2WebSockets on
SSLEngine on
SSLCertificateFile %[3]s
SSLCertificateKeyFile %[4]s
SSLSessionCache shmcb:%[1]s/ssl_scache(512000)
DocumentRoot %[6]s
<Directory %[6]s>
  Require all granted
</Directory>
ProxyPass /ws ws://%[5]s/ws
`, dir, addr, cert, key, back, www)
			cf := filepath.Join(dir, "apache2.conf")
			writeFile(t, cf, conf)
			testpeer.StartDaemon(t, addr, []string{filepath.Join(dir, "error.log")}, bin, "-f", cf, "-DFOREGROUND")
		}},
}

// TestWebSocketBehindProxies: nginx, haproxy and apache2 (mod_http2 with
// H2WebSockets and mod_proxy_wstunnel) in front of a coder/websocket
// backend, each serving the page over h2. nginx does not enable the
// extended CONNECT, so the socket takes a new HTTP/1.1 connection, as the
// browsers do; haproxy and apache2 enable it (RFC 8441, servers that are
// not guise's own), and the socket goes on the page's h2 connection as an
// extended CONNECT, which they turn into an HTTP/1.1 Upgrade to the backend
// (RELIABILITY WS-16).
func TestWebSocketBehindProxies(t *testing.T) {
	for _, f := range wsFronts {
		t.Run(f.name, func(t *testing.T) {
			bin := testpeer.Need(t, f.program, f.pkg)
			var seen wsHandshakes
			back := plainCoderEcho(t, &seen)
			dir := testpeer.Dir(t)
			cert, key := testpeer.Localhost(t).WriteFiles(t, dir)
			addr := "127.0.0.1:" + testpeer.FreePort(t)
			f.start(t, bin, dir, addr, cert, key, strings.TrimPrefix(back.URL, "http://"))
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			for _, name := range []string{"chrome156-linux", "firefox153-linux"} {
				s := &Session{Profile: name, RootCAs: testpeer.Localhost(t).Roots}
				resp, err := s.Get(ctx, "https://"+addr+"/page")
				if err != nil {
					t.Fatal(err)
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.Proto != "HTTP/2.0" || !strings.Contains(string(b), "page") {
					t.Fatalf("the page: %s %q", resp.Proto, b)
				}
				c, err := s.WebSocket(ctx, "wss://"+addr+"/ws/chat", nil)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if c.Protocol() != f.proto {
					t.Errorf("%s: the socket went over %s, want %s", name, c.Protocol(), f.proto)
				}
				echoRounds(t, c, 10)
				if err := c.Close(CloseNormal, "bye"); err != nil {
					t.Errorf("%s: Close: %v", name, err)
				}
				r := seen.last(t)
				if r.URL.Path != "/ws/chat" || r.Header.Get("Sec-WebSocket-Version") != "13" || r.Header.Get("Origin") != "https://"+addr {
					t.Errorf("%s: the backend saw %s, version %q, origin %q", name, r.URL.Path, r.Header.Get("Sec-WebSocket-Version"), r.Header.Get("Origin"))
				}
				s.Close()
			}
		})
	}
}
