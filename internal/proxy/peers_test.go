package proxy

import (
	"crypto/md5"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/guise-http/guise/internal/testpeer"
)

// Real peers: squid as an HTTP CONNECT proxy with basic auth, dante as a
// SOCKS5 (and SOCKS4) server. Both are started on 127.0.0.1 with configs
// written by the test, and tunnel to an echo server the test runs.

// peerDir makes a directory the daemons' unprivileged users (squid runs its
// helpers as "proxy", dante as "nobody") can read and write.
func peerDir(t *testing.T) string {
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

func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

// startDaemon runs prog with args, waits until addr accepts connections and
// stops it (SIGTERM, then SIGKILL) in Cleanup. logs are shown on failure.
func startDaemon(t *testing.T, addr string, logs []string, prog string, args ...string) {
	t.Helper()
	cmd := exec.Command(prog, args...)
	var out strings.Builder
	var mu sync.Mutex
	cmd.Stdout = writerFunc(func(b []byte) { mu.Lock(); out.Write(b); mu.Unlock() })
	cmd.Stderr = cmd.Stdout
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
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
		syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
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

func TestSquid(t *testing.T) {
	squid := testpeer.Need(t, "squid", "squid")
	const helper = "/usr/lib/squid/basic_ncsa_auth"
	if _, err := os.Stat(helper); err != nil {
		testpeer.Missing(t, helper+" is missing (apt-get install squid)")
	}
	dir := peerDir(t)
	port := freePort(t)
	passwd := filepath.Join(dir, "passwd")
	if err := os.WriteFile(passwd, []byte("alice:"+apr1("open sesame", "gu1se.sa")+"\n"), 0o644); err != nil {
		t.Fatal(err)
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
auth_param basic program %[3]s %[4]s
auth_param basic realm guise
acl authed proxy_auth REQUIRED
acl blocked port 9
http_access deny blocked
http_access allow authed
http_access deny all
`, dir, port, helper, passwd)
	cf := filepath.Join(dir, "squid.conf")
	if err := os.WriteFile(cf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + port
	startDaemon(t, addr, []string{filepath.Join(dir, "cache.log")}, squid, "-N", "-f", cf)

	target := serve(t, echo)
	ctx := ctxTimeout(t, 20*time.Second)

	// Right credentials: a working tunnel, twice (a fresh tunnel each time).
	d := &Dialer{URL: mustURL(t, "http://alice:open%20sesame@"+addr)}
	for i := range 2 {
		tun, err := d.DialContext(ctx, target.Addr)
		if err != nil {
			t.Fatalf("dial %d: %v", i, err)
		}
		roundTrip(t, tun, "through squid "+strconv.Itoa(i))
		tun.Close()
	}

	// No or wrong credentials: 407 with a Basic challenge.
	for _, u := range []string{"http://" + addr, "http://alice:wrong@" + addr} {
		_, err := (&Dialer{URL: mustURL(t, u)}).DialContext(ctx, target.Addr)
		var se *StatusError
		if !errors.As(err, &se) || se.StatusCode != 407 || !strings.HasPrefix(se.Header.Get("Proxy-Authenticate"), "Basic") {
			t.Errorf("%s: err = %v, want 407 with a Basic challenge", u, err)
		}
	}

	// ACL denial: 403. Unreachable target: 503.
	_, err := d.DialContext(ctx, "127.0.0.1:9")
	var se *StatusError
	if !errors.As(err, &se) || se.StatusCode != 403 {
		t.Errorf("blocked port: err = %v, want 403", err)
	}
	_, err = d.DialContext(ctx, "127.0.0.1:"+freePort(t))
	if !errors.As(err, &se) || se.StatusCode != 503 {
		t.Errorf("closed target: err = %v, want 503", err)
	}
	if target.Conns.Load() != 2 {
		t.Errorf("target saw %d connections, want 2", target.Conns.Load())
	}
}

// TestDante runs dante with "socksmethod: none": its username method checks
// system accounts, and the test does not create one. Username/password is
// covered by the scripted server tests.
func TestDante(t *testing.T) {
	danted := testpeer.Need(t, "danted", "dante-server")
	dir := peerDir(t)
	port := freePort(t)
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
	startDaemon(t, addr, []string{filepath.Join(dir, "danted.log")}, danted, "-f", cf, "-p", filepath.Join(dir, "danted.pid"))

	target := serve(t, echo)
	ctx := ctxTimeout(t, 20*time.Second)
	for _, scheme := range []string{"socks5", "socks5h", "socks4"} {
		tun, err := (&Dialer{URL: mustURL(t, scheme+"://"+addr)}).DialContext(ctx, target.Addr)
		if err != nil {
			t.Fatalf("%s: %v", scheme, err)
		}
		roundTrip(t, tun, "through dante with "+scheme)
		tun.Close()
	}
	d := &Dialer{URL: mustURL(t, "socks5h://"+addr)}
	_, err := d.DialContext(ctx, "127.0.0.1:"+freePort(t))
	var se *SOCKSError
	if !errors.As(err, &se) || se.Stage != SOCKSRequest || se.Reply != ReplyConnectionRefused {
		t.Errorf("closed target: err = %v, want REP 5 connection refused", err)
	}
	_, err = d.DialContext(ctx, "127.0.0.1:9")
	if !errors.As(err, &se) || se.Reply != ReplyNotAllowed {
		t.Errorf("blocked target: err = %v, want REP 2 not allowed", err)
	}
}

// apr1 computes an Apache "$apr1$" MD5-crypt password hash, which squid's
// basic_ncsa_auth accepts, so the test needs no htpasswd binary.
func apr1(password, salt string) string {
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

// The hash matches a known value (from `openssl passwd -apr1 -salt abcdefgh secret`).
func TestAPR1(t *testing.T) {
	if got, want := apr1("secret", "abcdefgh"), "$apr1$abcdefgh$h9FWgUz3n9YxylKLlR5SQ/"; got != want {
		t.Fatalf("apr1 = %s, want %s", got, want)
	}
}
