package guise

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/x509"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/guise-http/guise/internal/testpeer"
)

// The interop matrix (RELIABILITY S-7, S-13): every server users meet, started
// by the test on 127.0.0.1 with TLS and ALPN h2 + http/1.1 from a config
// the test writes, exercised by both profiles over both protocols.

// matrixFiles is the document root every server serves.
type matrixFiles struct {
	small, medium, large, text []byte
}

func newMatrixFiles() *matrixFiles {
	rng := rand.New(rand.NewPCG(17, 17))
	bin := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	return &matrixFiles{
		small:  []byte("hello from the interop matrix\n"),
		medium: bin(256 << 10),
		large:  bin(4 << 20),
		text:   []byte(strings.Repeat("guise speaks to every server as a browser does. ", 2000)),
	}
}

// write puts the files under dir/www, readable by the daemons' users.
func (f *matrixFiles) write(t *testing.T, dir string) string {
	www := filepath.Join(dir, "www")
	if err := os.MkdirAll(www, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{"small.txt": f.small, "medium.bin": f.medium, "large.bin": f.large, "text.txt": f.text} {
		if err := os.WriteFile(filepath.Join(www, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return www
}

// matrixServer is one server of the matrix, started by start on addr with
// the certificate and key files; it serves www. protos are the protocols
// it speaks over TLS; lacks names the steps it has no feature for, with
// why.
type matrixServer struct {
	name    string
	program string // for testpeer.Need
	pkg     string
	protos  []mode
	lacks   map[string]string
	start   func(t *testing.T, bin, dir, www, addr, cert, key string)
}

// idleTimeout is the idle timeout every server is configured with; the
// idle step waits longer than it.
const idleTimeout = time.Second

var matrixServers = []matrixServer{
	{name: "nginx", program: "nginx", pkg: "nginx-light", protos: []mode{modeH1, modeH2},
		start: func(t *testing.T, _, dir, www, addr, cert, key string) {
			testpeer.Nginx(t, dir, fmt.Sprintf(`keepalive_timeout 1s;
  gzip on; gzip_types text/plain; gzip_min_length 1;
  types { text/plain txt; application/octet-stream bin; }
  server {
    listen %[1]s ssl http2;
    client_max_body_size 64k;
    ssl_certificate %[2]s;
    ssl_certificate_key %[3]s;
    root %[4]s;
  }`, addr, cert, key, www), addr)
		}},
	{name: "apache2", program: "apache2", pkg: "apache2", protos: []mode{modeH1, modeH2},
		start: func(t *testing.T, bin, dir, www, addr, cert, key string) {
			mods := ""
			for _, m := range []string{"mpm_event", "authz_core", "mime", "ssl", "http2", "filter", "deflate", "socache_shmcb"} {
				mods += fmt.Sprintf("LoadModule %s_module /usr/lib/apache2/modules/mod_%s.so\n", m, m)
			}
			conf := mods + fmt.Sprintf(`ServerRoot %[1]s
ServerName localhost
Listen %[2]s
User nobody
Group nogroup
PidFile %[1]s/httpd.pid
ErrorLog %[1]s/error.log
DefaultRuntimeDir %[1]s
Mutex file:%[1]s default
TypesConfig /etc/mime.types
KeepAlive On
KeepAliveTimeout 1
LimitRequestBody 65536
Protocols h2 http/1.1
SSLEngine on
SSLCertificateFile %[3]s
SSLCertificateKeyFile %[4]s
SSLSessionCache shmcb:%[1]s/ssl_scache(512000)
DocumentRoot %[5]s
<Directory %[5]s>
  Require all granted
  <If "%%{REQUEST_METHOD} == 'POST'">
    Require all denied
  </If>
</Directory>
AddOutputFilterByType DEFLATE text/plain
`, dir, addr, cert, key, www)
			cf := filepath.Join(dir, "apache2.conf")
			writeFile(t, cf, conf)
			testpeer.StartDaemon(t, addr, []string{filepath.Join(dir, "error.log")}, bin, "-f", cf, "-DFOREGROUND")
		}},
	{name: "h2o", program: "h2o", pkg: "h2o", protos: []mode{modeH1, modeH2},
		start: func(t *testing.T, bin, dir, www, addr, cert, key string) {
			host, port, _ := net.SplitHostPort(addr)
			conf := fmt.Sprintf(`user: nobody
pid-file: %[1]s/h2o.pid
error-log: %[1]s/error.log
http1-request-timeout: 1
http2-idle-timeout: 1
listen:
  host: %[2]s
  port: %[3]s
  ssl:
    certificate-file: %[4]s
    key-file: %[5]s
hosts:
  default:
    paths:
      /:
        file.dir: %[6]s
        compress: ON
`, dir, host, port, cert, key, www)
			cf := filepath.Join(dir, "h2o.conf")
			writeFile(t, cf, conf)
			testpeer.StartDaemon(t, addr, []string{filepath.Join(dir, "error.log")}, bin, "-c", cf)
		}},
	{name: "lighttpd", program: "lighttpd", pkg: "lighttpd lighttpd-mod-openssl", protos: []mode{modeH1, modeH2},
		start: func(t *testing.T, bin, dir, www, addr, cert, key string) {
			host, port, _ := net.SplitHostPort(addr)
			conf := fmt.Sprintf(`server.modules = ("mod_openssl", "mod_deflate")
server.document-root = "%[6]s"
server.bind = "%[2]s"
server.port = %[3]s
server.username = "nobody"
server.groupname = "nogroup"
server.errorlog = "%[1]s/error.log"
server.pid-file = "%[1]s/lighttpd.pid"
server.max-keep-alive-idle = 1
server.max-request-size = 64
server.feature-flags += ("server.h2proto" => "enable")
ssl.engine = "enable"
ssl.pemfile = "%[4]s"
ssl.privkey = "%[5]s"
mimetype.assign = (".txt" => "text/plain", ".bin" => "application/octet-stream")
deflate.mimetypes = ("text/plain")
deflate.allowed-encodings = ("br", "gzip", "deflate", "zstd")
`, dir, host, port, cert, key, www)
			cf := filepath.Join(dir, "lighttpd.conf")
			writeFile(t, cf, conf)
			testpeer.StartDaemon(t, addr, []string{filepath.Join(dir, "error.log")}, bin, "-D", "-f", cf)
		}},
	{name: "caddy", program: "caddy", pkg: "caddy", protos: []mode{modeH1, modeH2},
		start: func(t *testing.T, bin, dir, www, addr, cert, key string) {
			conf := fmt.Sprintf(`{
	admin off
	auto_https disable_redirects
	storage file_system %[1]s/caddy
	servers {
		timeouts {
			idle 1s
		}
	}
}
https://%[2]s {
	tls %[3]s %[4]s
	root * %[5]s
	encode zstd gzip
	@post method POST
	respond @post "method not allowed" 405
	file_server
	handle_errors {
		respond "{err.status_code} {err.status_text}"
	}
}
`, dir, addr, cert, key, www)
			cf := filepath.Join(dir, "Caddyfile")
			writeFile(t, cf, conf)
			os.Setenv("HOME", dir) // caddy keeps its state under $HOME
			testpeer.StartDaemon(t, addr, nil, bin, "run", "--config", cf, "--adapter", "caddyfile")
		}},
	{name: "haproxy", program: "haproxy", pkg: "haproxy", protos: []mode{modeH1, modeH2},
		start: func(t *testing.T, bin, dir, www, addr, cert, key string) {
			backend := matrixBackend(t, www)
			c, _ := os.ReadFile(cert)
			k, _ := os.ReadFile(key)
			combined := filepath.Join(dir, "combined.pem")
			writeFile(t, combined, string(c)+string(k))
			conf := fmt.Sprintf(`global
  maxconn 200
defaults
  mode http
  timeout connect 5s
  timeout client 10s
  timeout server 10s
  timeout http-keep-alive 1s
  timeout client-fin 1s
frontend f
  bind %[1]s ssl crt %[2]s alpn h2,http/1.1
  compression algo gzip
  compression type text/plain
  default_backend b
backend b
  server s1 %[3]s
`, addr, combined, backend)
			cf := filepath.Join(dir, "haproxy.cfg")
			writeFile(t, cf, conf)
			testpeer.StartDaemon(t, addr, nil, bin, "-db", "-f", cf)
		}},
	{name: "nghttpd", program: "nghttpd", pkg: "nghttp2-server", protos: []mode{modeH2},
		lacks: map[string]string{
			"compressed": "nghttpd serves files as they are",
			"refused":    "nghttpd answers a POST to a file with the file",
			"range":      "nghttpd ignores Range",
			"idle":       "nghttpd has no idle timeout",
		},
		start: func(t *testing.T, bin, dir, www, addr, cert, key string) {
			host, port, _ := net.SplitHostPort(addr)
			testpeer.StartDaemon(t, addr, nil, bin, "-a", host, "-d", www, port, key, cert)
		}},
	{name: "node", program: "node", pkg: "nodejs", protos: []mode{modeH1, modeH2},
		start: func(t *testing.T, bin, dir, www, addr, cert, key string) {
			host, port, _ := net.SplitHostPort(addr)
			script := filepath.Join(dir, "server.js")
			writeFile(t, script, nodeMatrixServer)
			testpeer.StartDaemon(t, addr, nil, bin, script, host, port, cert, key, www)
		}},
}

// nodeMatrixServer is Node's http2 module with HTTP/1.1 allowed, through
// its compatibility API: files with ETag, Range and gzip, a 404 page, and
// a 405 for any POST (whose body it never reads).
const nodeMatrixServer = `
const http2 = require('http2'), fs = require('fs'), path = require('path'), zlib = require('zlib');
const [host, port, cert, key, www] = process.argv.slice(2);
const srv = http2.createSecureServer({cert: fs.readFileSync(cert), key: fs.readFileSync(key), allowHTTP1: true}, (req, res) => {
  if (req.method === 'POST') { res.writeHead(405, {'content-type': 'text/plain', 'content-length': 12}); res.end('not allowed\n'); return; }
  const file = path.join(www, path.normalize(req.url.split('?')[0]));
  let body;
  try { body = fs.readFileSync(file); } catch (e) {
    const msg = 'no such file\n';
    res.writeHead(404, {'content-type': 'text/plain', 'content-length': msg.length}); res.end(msg); return;
  }
  const etag = '"' + body.length + '-' + require('crypto').createHash('sha1').update(body).digest('hex').slice(0, 12) + '"';
  const type = file.endsWith('.txt') ? 'text/plain' : 'application/octet-stream';
  if (req.headers['if-none-match'] === etag) { res.writeHead(304, {etag}); res.end(); return; }
  const m = /^bytes=(\d+)-(\d+)$/.exec(req.headers['range'] || '');
  if (m) {
    const part = body.subarray(+m[1], +m[2] + 1);
    res.writeHead(206, {'content-type': type, 'content-length': part.length, 'content-range': 'bytes ' + m[1] + '-' + m[2] + '/' + body.length, etag});
    res.end(req.method === 'HEAD' ? undefined : part); return;
  }
  if (type === 'text/plain' && /gzip/.test(req.headers['accept-encoding'] || '')) {
    const z = zlib.gzipSync(body);
    res.writeHead(200, {'content-type': type, 'content-encoding': 'gzip', 'content-length': z.length, etag});
    res.end(req.method === 'HEAD' ? undefined : z); return;
  }
  res.writeHead(200, {'content-type': type, 'content-length': body.length, etag, 'accept-ranges': 'bytes'});
  res.end(req.method === 'HEAD' ? undefined : body);
});
srv.setTimeout(1000);
srv.listen(+port, host);
`

// matrixBackend serves www over plain HTTP/1.1 for haproxy to front,
// refusing POSTs with 405 as the other servers do.
func matrixBackend(t *testing.T, www string) string {
	files := http.FileServer(http.Dir(www))
	srv := newTestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == "POST" {
			http.Error(w, "not allowed", http.StatusMethodNotAllowed)
			return
		}
		files.ServeHTTP(w, r)
	}))
	return strings.TrimPrefix(srv.URL, "http://")
}

func writeFile(t *testing.T, name, s string) {
	if err := os.WriteFile(name, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// matrixCell runs the steps against one server, protocol and profile.
type matrixCell struct {
	t      *testing.T
	server *matrixServer
	m      mode
	prof   string
	base   string
	roots  *x509.CertPool
	files  *matrixFiles
	s      *Session
}

func (c *matrixCell) failf(step, format string, args ...any) {
	c.t.Helper()
	c.t.Errorf("%s %s %s, step %s: %s", c.server.name, c.m, c.prof, step, fmt.Sprintf(format, args...))
}

func (c *matrixCell) do(step string, req *Request) (*Response, []byte, bool) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if req.URL[0] == '/' {
		req.URL = c.base + req.URL
	}
	resp, err := c.s.Do(ctx, req)
	if err != nil {
		c.failf(step, "%v", err)
		return nil, nil, false
	}
	b, err := resp.Bytes()
	if err != nil {
		c.failf(step, "reading the body: %v", err)
		return nil, nil, false
	}
	if resp.Proto != c.m.proto() {
		c.failf(step, "spoke %s, want %s", resp.Proto, c.m.proto())
	}
	return resp, b, true
}

func sum(b []byte) string { return fmt.Sprintf("%x", sha256.Sum256(b)) }

func (c *matrixCell) get(step, path string, want []byte) {
	c.t.Helper()
	resp, b, ok := c.do(step, &Request{URL: path})
	if !ok {
		return
	}
	if resp.StatusCode != 200 || sum(b) != sum(want) {
		c.failf(step, "status %d, %d bytes (sha256 %.12s), want 200 and %d bytes (%.12s)", resp.StatusCode, len(b), sum(b), len(want), sum(want))
	}
}

func (c *matrixCell) run() {
	f := c.files
	lacks := func(step string) bool {
		if why, ok := c.server.lacks[step]; ok {
			c.t.Logf("%s: step %s not run: %s", c.server.name, step, why)
			return true
		}
		return false
	}
	c.get("small", "/small.txt", f.small)
	c.get("large", "/large.bin", f.large)

	var wg sync.WaitGroup
	for i := range 32 {
		wg.Go(func() {
			if i%2 == 0 {
				c.get("concurrent", "/medium.bin", f.medium)
			} else {
				c.get("concurrent", "/small.txt", f.small)
			}
		})
	}
	wg.Wait()

	if resp, b, ok := c.do("head", &Request{Method: "HEAD", URL: "/large.bin"}); ok {
		if resp.StatusCode != 200 || len(b) != 0 {
			c.failf("head", "status %d, %d body bytes, want 200 and none", resp.StatusCode, len(b))
		}
		if cl := resp.Header.Get("Content-Length"); cl != "" && cl != fmt.Sprint(len(f.large)) {
			c.failf("head", "Content-Length %s, want %d", cl, len(f.large))
		}
	}

	if !lacks("range") {
		req := &Request{URL: "/large.bin", Header: Header{{Name: "Range", Value: "bytes=1000-1999"}}}
		if resp, b, ok := c.do("range", req); ok && (resp.StatusCode != 206 || !bytes.Equal(b, f.large[1000:2000])) {
			c.failf("range", "status %d, %d bytes, want 206 and bytes 1000-1999", resp.StatusCode, len(b))
		}
	}

	if resp, _, ok := c.do("conditional", &Request{URL: "/small.txt"}); ok {
		var h Header
		if etag := resp.Header.Get("ETag"); etag != "" {
			h = Header{{Name: "If-None-Match", Value: etag}}
		} else if lm := resp.Header.Get("Last-Modified"); lm != "" {
			h = Header{{Name: "If-Modified-Since", Value: lm}}
		}
		if h == nil {
			c.failf("conditional", "neither ETag nor Last-Modified")
		} else if resp, b, ok := c.do("conditional", &Request{URL: "/small.txt", Header: h}); ok && (resp.StatusCode != 304 || len(b) != 0) {
			c.failf("conditional", "status %d, %d body bytes, want 304 and none", resp.StatusCode, len(b))
		}
	}

	if !lacks("compressed") {
		if resp, b, ok := c.do("compressed", &Request{URL: "/text.txt"}); ok && (!resp.Decoded || !bytes.Equal(b, f.text)) {
			c.failf("compressed", "decoded %v, %d bytes, want a compressed body decoded to %d bytes", resp.Decoded, len(b), len(f.text))
		}
	}

	if resp, b, ok := c.do("404", &Request{URL: "/no/such/file"}); ok && (resp.StatusCode != 404 || len(b) == 0) {
		c.failf("404", "status %d, %d body bytes, want 404 with a body", resp.StatusCode, len(b))
	}

	if !lacks("refused") {
		up := bytes.Repeat([]byte("p"), 1<<20)
		if resp, b, ok := c.do("refused", &Request{Method: "POST", URL: "/small.txt", Body: bytes.NewReader(up)}); ok && (resp.StatusCode < 400 || resp.StatusCode > 499) {
			c.failf("refused", "status %d (%.60q, %s), want a 4xx refusal", resp.StatusCode, b, resp.URL)
		}
		c.get("after-refused", "/small.txt", f.small)
	}

	if !lacks("idle") {
		time.Sleep(idleTimeout + 700*time.Millisecond) // the server closes the idle connection
		c.get("idle", "/small.txt", f.small)
	}
}

// TestInteropMatrix runs every server of matrixServers over HTTP/1.1 and
// HTTP/2 (both over TLS, the server offering h2 and http/1.1; HTTP/1.1 is
// what the client offers alone) with the chrome and firefox profiles. A
// missing server skips its subtest, and fails it under
// GUISE_REQUIRE_PEERS=1. Servers run in parallel; a failure names the
// server, the protocol, the profile and the step.
func TestInteropMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("starts real servers")
	}
	files := newMatrixFiles()
	cert := testpeer.Localhost(t)
	for i := range matrixServers {
		srv := &matrixServers[i]
		t.Run(srv.name, func(t *testing.T) {
			t.Parallel()
			bin := testpeer.Need(t, srv.program, srv.pkg)
			dir := testpeer.Dir(t)
			www := files.write(t, dir)
			certFile, keyFile := cert.WriteFiles(t, dir)
			os.Chmod(keyFile, 0o644) // the daemons' users read it
			addr := freeAddr(t)
			srv.start(t, bin, dir, www, addr, certFile, keyFile)
			for _, m := range srv.protos {
				for _, prof := range []string{"chrome", "firefox"} {
					t.Run(string(m)+"/"+prof, func(t *testing.T) {
						tr := &Transport{}
						defer tr.Close()
						s := &Session{Profile: prof, RootCAs: cert.Roots, Transport: tr}
						if m == modeH1 {
							s.Protocol = HTTP1
						}
						defer s.Close()
						c := &matrixCell{t: t, server: srv, m: m, prof: prof, base: "https://" + addr, roots: cert.Roots, files: files, s: s}
						c.run()
					})
				}
			}
		})
	}
}
