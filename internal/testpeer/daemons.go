package testpeer

import (
	"crypto/md5"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Dir makes a directory the daemons' unprivileged users (squid runs its
// helpers as "proxy", dante as "nobody") can read and write.
func Dir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "guise-proxy-peer-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	return dir
}

func FreePort(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

// StartDaemon runs prog with args, waits until addr accepts connections and
// stops it (SIGTERM, then SIGKILL) in Cleanup. logs are shown on failure.
func StartDaemon(t testing.TB, addr string, logs []string, prog string, args ...string) {
	t.Helper()
	cmd := exec.Command(prog, args...)
	var out strings.Builder
	var mu sync.Mutex
	cmd.Stdout = writerFunc(func(b []byte) { mu.Lock(); out.Write(b); mu.Unlock() })
	cmd.Stderr = cmd.Stdout
	newGroup(cmd)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", prog, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	dump := func() {
		mu.Lock()
		t.Logf("%s output:\n%s", prog, out.String())
		mu.Unlock()
		for _, l := range logs {
			b, _ := os.ReadFile(l)
			t.Logf("%s:\n%s", l, b)
		}
	}
	t.Cleanup(func() {
		// The daemon and its helpers share its process group.
		stopGroup(cmd, false)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			stopGroup(cmd, true)
			<-exited
		}
		if t.Failed() {
			dump()
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return
		}
		select {
		case err := <-exited:
			exited <- err
			dump()
			t.Fatalf("%s exited: %v", prog, err)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			dump()
			t.Fatalf("%s did not listen on %s", prog, addr)
		}
	}
}

type writerFunc func([]byte)

func (f writerFunc) Write(b []byte) (int, error) { f(b); return len(b), nil }

// APR1 computes an Apache "$apr1$" MD5-crypt password hash, which squid's
// basic_ncsa_auth accepts, so the test needs no htpasswd binary.
func APR1(password, salt string) string {
	const magic = "$apr1$"
	pw := []byte(password)
	alt := md5.Sum([]byte(password + salt + password))
	ctx := []byte(password + magic + salt)
	for i := len(pw); i > 0; i -= 16 {
		ctx = append(ctx, alt[:min(16, i)]...)
	}
	for i := len(pw); i > 0; i >>= 1 {
		if i&1 != 0 {
			ctx = append(ctx, 0)
		} else {
			ctx = append(ctx, pw[0])
		}
	}
	sum := md5.Sum(ctx)
	for i := range 1000 {
		var c []byte
		if i&1 != 0 {
			c = append(c, pw...)
		} else {
			c = append(c, sum[:]...)
		}
		if i%3 != 0 {
			c = append(c, salt...)
		}
		if i%7 != 0 {
			c = append(c, pw...)
		}
		if i&1 != 0 {
			c = append(c, sum[:]...)
		} else {
			c = append(c, pw...)
		}
		sum = md5.Sum(c)
	}
	const itoa64 = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	var out []byte
	enc := func(v uint32, n int) {
		for ; n > 0; n-- {
			out = append(out, itoa64[v&0x3f])
			v >>= 6
		}
	}
	for _, g := range [][3]int{{0, 6, 12}, {1, 7, 13}, {2, 8, 14}, {3, 9, 15}, {4, 10, 5}} {
		enc(uint32(sum[g[0]])<<16|uint32(sum[g[1]])<<8|uint32(sum[g[2]]), 4)
	}
	enc(uint32(sum[11]), 2)
	return magic + salt + "$" + string(out)
}

// Squid starts squid on 127.0.0.1 as an HTTP proxy and returns its address.
// With users (name → password) it requires basic auth; without, it lets any
// client through. Port 9 is denied by an ACL (a 403 to test with).
func Squid(t testing.TB, users map[string]string) string {
	t.Helper()
	squid := Need(t, "squid", "squid")
	const helper = "/usr/lib/squid/basic_ncsa_auth"
	if _, err := os.Stat(helper); err != nil {
		Missing(t, helper+" is missing (apt-get install squid)")
	}
	dir := Dir(t)
	port := FreePort(t)
	access := "http_access allow all\n"
	if len(users) > 0 {
		var lines strings.Builder
		for u, p := range users {
			lines.WriteString(u + ":" + APR1(p, "gu1se.sa") + "\n")
		}
		passwd := filepath.Join(dir, "passwd")
		if err := os.WriteFile(passwd, []byte(lines.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		access = fmt.Sprintf("auth_param basic program %s %s\nauth_param basic realm guise\nacl authed proxy_auth REQUIRED\nhttp_access allow authed\nhttp_access deny all\n", helper, passwd)
	}
	conf := fmt.Sprintf(`http_port 127.0.0.1:%[2]s
visible_hostname guise-test
pid_filename %[1]s/squid.pid
cache_log %[1]s/cache.log
access_log none
cache deny all
coredump_dir %[1]s
pinger_enable off
dns_nameservers 127.0.0.1
shutdown_lifetime 0 seconds
acl blocked port 9
http_access deny blocked
acl SSL_ports port 1-65535
acl Safe_ports port 1-65535
acl CONNECT method CONNECT
`, dir, port) + access
	cf := filepath.Join(dir, "squid.conf")
	if err := os.WriteFile(cf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + port
	StartDaemon(t, addr, []string{filepath.Join(dir, "cache.log")}, squid, "-N", "-f", cf)
	return addr
}

// Dante starts danted on 127.0.0.1 as a SOCKS server without
// authentication (its username method checks system accounts) and returns
// its address. Connections to port 9 are blocked (REP 2).
func Dante(t testing.TB) string {
	t.Helper()
	danted := Need(t, "danted", "dante-server")
	dir := Dir(t)
	port := FreePort(t)
	conf := fmt.Sprintf(`logoutput: %[1]s/danted.log
internal: 127.0.0.1 port = %[2]s
external: 127.0.0.1
socksmethod: none
clientmethod: none
user.privileged: root
user.unprivileged: nobody
client pass {
  from: 127.0.0.0/8 to: 0.0.0.0/0
}
socks block {
  from: 0.0.0.0/0 to: 127.0.0.1/32 port = 9
}
socks pass {
  from: 127.0.0.0/8 to: 0.0.0.0/0
}
`, dir, port)
	cf := filepath.Join(dir, "danted.conf")
	if err := os.WriteFile(cf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + port
	StartDaemon(t, addr, []string{filepath.Join(dir, "danted.log")}, danted, "-f", cf, "-p", filepath.Join(dir, "danted.pid"))
	return addr
}

// Nginx runs nginx in the foreground with its pid file, error log and
// temporary paths in dir (make it with Dir, so that nginx's workers can read
// it) and body as the inside of its http block (server blocks and http-level
// directives), and waits until addr accepts connections. It stops nginx in
// Cleanup.
func Nginx(t testing.TB, dir, body, addr string) {
	t.Helper()
	bin := Need(t, "nginx", "nginx-light")
	conf := fmt.Sprintf(`worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log;
events { worker_connections 128; }
http {
  access_log off;
  client_body_temp_path %[1]s/body;
  proxy_temp_path %[1]s/proxy;
  fastcgi_temp_path %[1]s/fastcgi;
  uwsgi_temp_path %[1]s/uwsgi;
  scgi_temp_path %[1]s/scgi;
`, dir) + body + "\n}\n"
	cf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(cf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	StartDaemon(t, addr, []string{filepath.Join(dir, "error.log")}, bin, "-p", dir, "-c", cf, "-g", "daemon off;")
}
