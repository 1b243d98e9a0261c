//go:build linux

package guise

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/guise-http/guise/internal/testpeer"
	"github.com/guise-http/guise/internal/testpeer/quicgo"
	"github.com/quic-go/quic-go/http3"
)

// The roles and settings of BenchmarkH3Compare's processes.
const (
	h3cmpRoleEnv = "GUISE_H3CMP_ROLE"       // "server" in the child
	h3cmpDirEnv  = "GUISE_H3CMP_DIR"        // where the child writes ca.pem
	h3cmpCPUEnv  = "GUISE_H3CMP_SERVER_CPU" // CPUs the child moves to, e.g. "1"
)

// The files the server process serves.
const (
	h3cmpSmall = 100
	h3cmpBig   = 8 << 20
)

// BenchmarkH3Compare is issue 15's side-by-side: guise's HTTP/3 over its
// own QUIC, quic-go's http3 client, and guise's HTTP/2 (over TCP+TLS, for
// the h2 ratio) against quic-go's HTTP/3 server and Go's HTTP/2 server,
// both in a child process (this test binary again), so that the
// cpu-ns/op reported is the client's alone: user+system CPU of this
// process (getrusage) per request. With GUISE_H3CMP_SERVER_CPU set the
// child moves every thread of its own to those CPUs (and sizes
// GOMAXPROCS to them); pin the client elsewhere, as bench/all does:
//
//	GUISE_H3CMP_SERVER_CPU=1 taskset -c 0 go test -run XXX -bench H3Compare -count 5 .
//
// small-c16 is 16 goroutines GETting 100 bytes over one connection;
// download-8m one goroutine GETting 8 MiB (mb/cpu-s is megabytes per
// second of client CPU); handshake a new connection per GET (a new
// Transport, closed after).
func BenchmarkH3Compare(b *testing.B) {
	if os.Getenv(h3cmpRoleEnv) == "server" {
		h3cmpServe(b)
		return
	}
	srv := startH3cmpServer(b)
	h3 := "https://127.0.0.1:" + srv.h3Port
	h2 := "https://127.0.0.1:" + srv.h2Port
	for _, sc := range []struct {
		name string
		path string
		conc int
		new  bool // a new connection per request
	}{
		{"small-c16", "/small", 16, false},
		{"download-8m", "/big", 1, false},
		{"handshake", "/small", 1, true},
	} {
		b.Run(sc.name, func(b *testing.B) {
			for _, cl := range []struct {
				name string
				url  string
				make func() (get func(string) (int64, error), done func())
			}{
				{"guise-h3", h3, func() (func(string) (int64, error), func()) {
					return guiseGetter(srv.roots, HTTP3, sc.new)
				}},
				{"quic-go-h3", h3, func() (func(string) (int64, error), func()) {
					return quicgoGetter(srv.roots, sc.new)
				}},
				{"guise-h2", h2, func() (func(string) (int64, error), func()) {
					return guiseGetter(srv.roots, HTTP2, sc.new)
				}},
			} {
				b.Run(cl.name, func(b *testing.B) {
					get, done := cl.make()
					defer done()
					url := cl.url + sc.path
					want := int64(h3cmpSmall)
					if sc.path == "/big" {
						want = h3cmpBig
					}
					if n, err := get(url); err != nil || n != want { // the connection, before the clock
						b.Fatalf("%d bytes, %v", n, err)
					}
					runtime.GC()
					b.ReportAllocs()
					b.ResetTimer()
					cpu := procCPUTime()
					var next atomic.Int64
					var wg sync.WaitGroup
					for range sc.conc {
						wg.Go(func() {
							for next.Add(1) <= int64(b.N) {
								if n, err := get(url); err != nil || n != want {
									b.Errorf("%d bytes, %v", n, err)
									return
								}
							}
						})
					}
					wg.Wait()
					b.StopTimer()
					used := procCPUTime() - cpu
					b.ReportMetric(float64(used)/float64(b.N), "cpu-ns/op")
					if sc.path == "/big" {
						b.ReportMetric(float64(want)*float64(b.N)/1e6/used.Seconds(), "mb/cpu-s")
					}
				})
			}
		})
	}
}

// guiseGetter returns a GET over a guise Session limited to proto; with
// fresh, each GET has a Session and Transport of its own, closed after.
func guiseGetter(roots *x509.CertPool, proto Protocol, fresh bool) (func(string) (int64, error), func()) {
	buf := make([]byte, 32<<10)
	do := func(s *Session, url string) (int64, error) {
		resp, err := s.Get(context.Background(), url)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			return 0, fmt.Errorf("status %d", resp.StatusCode)
		}
		var n int64
		for {
			k, err := resp.Body.Read(buf[:cap(buf)])
			n += int64(k)
			if err == io.EOF {
				return n, nil
			}
			if err != nil {
				return n, err
			}
		}
	}
	if fresh {
		return func(url string) (int64, error) {
			tr := &Transport{}
			s := &Session{RootCAs: roots, Transport: tr, Protocol: proto}
			defer tr.Close()
			defer s.Close()
			return do(s, url)
		}, func() {}
	}
	tr := &Transport{}
	s := &Session{RootCAs: roots, Transport: tr, Protocol: proto}
	var mu sync.Mutex // buf is shared: one reader at a time is enough for 100 bytes
	return func(url string) (int64, error) {
			if strings.HasSuffix(url, "/big") {
				return do(s, url)
			}
			resp, err := s.Get(context.Background(), url)
			if err != nil {
				return 0, err
			}
			defer resp.Body.Close()
			mu.Lock()
			defer mu.Unlock()
			body, err := resp.Bytes()
			return int64(len(body)), err
		}, func() {
			s.Close()
			tr.Close()
		}
}

// quicgoGetter returns a GET over quic-go's http3 client; with fresh,
// each GET has a Transport of its own, closed after.
func quicgoGetter(roots *x509.CertPool, fresh bool) (func(string) (int64, error), func()) {
	do := func(c *http.Client, url string) (int64, error) {
		resp, err := c.Get(url)
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		if resp.StatusCode != 200 {
			return 0, fmt.Errorf("status %d", resp.StatusCode)
		}
		return io.Copy(io.Discard, resp.Body)
	}
	cfg := &tls.Config{RootCAs: roots}
	if fresh {
		return func(url string) (int64, error) {
			tr := &http3.Transport{TLSClientConfig: cfg}
			defer tr.Close()
			return do(&http.Client{Transport: tr}, url)
		}, func() {}
	}
	tr := &http3.Transport{TLSClientConfig: cfg}
	c := &http.Client{Transport: tr}
	return func(url string) (int64, error) { return do(c, url) }, func() { tr.Close() }
}

// h3cmpServer is the child process serving BenchmarkH3Compare.
type h3cmpServer struct {
	h3Port, h2Port string
	roots          *x509.CertPool
}

// startH3cmpServer starts the child and stops it at the end of b.
func startH3cmpServer(b testing.TB) *h3cmpServer {
	dir := b.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$", "-test.bench=^BenchmarkH3Compare$", "-test.benchtime=1x")
	cmd.Env = append(os.Environ(), h3cmpRoleEnv+"=server", h3cmpDirEnv+"="+dir)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		stdin.Close() // the server ends when its stdin closes
		if err := cmd.Wait(); err != nil {
			b.Errorf("server process: %v", err)
		}
	})
	s := &h3cmpServer{}
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if f := strings.Fields(sc.Text()); len(f) == 3 && f[0] == "h3cmp-ports" {
			s.h3Port, s.h2Port = f[1], f[2]
			break
		}
	}
	if s.h3Port == "" {
		b.Fatalf("the server process announced no ports (%v)", sc.Err())
	}
	go io.Copy(io.Discard, stdout)
	pem, err := os.ReadFile(filepath.Join(dir, "ca.pem"))
	if err != nil {
		b.Fatal(err)
	}
	s.roots = x509.NewCertPool()
	if !s.roots.AppendCertsFromPEM(pem) {
		b.Fatal("no CA in ca.pem")
	}
	return s
}

// h3cmpServe is the child: quic-go's HTTP/3 server and Go's HTTP/2
// server (TLS over TCP) with the two files, until stdin closes.
func h3cmpServe(b *testing.B) {
	if list := os.Getenv(h3cmpCPUEnv); list != "" {
		if err := pinSelf(list); err != nil {
			b.Fatal(err)
		}
	}
	small := make([]byte, h3cmpSmall)
	big := make([]byte, h3cmpBig)
	for i := range big {
		big[i] = byte(i)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/small", func(w http.ResponseWriter, r *http.Request) { w.Write(small) })
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(big)))
		w.Write(big)
	})
	h3 := quicgo.HTTP3Server(b, mux)
	cert := testpeer.Localhost(b)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	h2 := &http.Server{Handler: mux, TLSConfig: cert.ServerConfig("h2", "http/1.1")}
	served := make(chan struct{})
	go func() { defer close(served); h2.ServeTLS(ln, "", "") }()
	defer func() {
		h2.Close()
		<-served
	}()
	if err := os.WriteFile(filepath.Join(os.Getenv(h3cmpDirEnv), "ca.pem"), cert.CAPEM, 0o644); err != nil {
		b.Fatal(err)
	}
	fmt.Printf("h3cmp-ports %d %d\n", h3.Addr.Port, ln.Addr().(*net.TCPAddr).Port)
	io.Copy(io.Discard, os.Stdin) // until the parent is done
}

// pinSelf moves every thread of this process to the CPUs of list ("1",
// "0,1") and sizes GOMAXPROCS to them. Threads started meanwhile by a
// thread not yet moved keep the old mask, so the threads are listed again
// until a pass finds none new.
func pinSelf(list string) error {
	var set unix.CPUSet
	n := 0
	for _, f := range strings.Split(list, ",") {
		c, err := strconv.Atoi(f)
		if err != nil || c < 0 || c >= 1024 {
			return fmt.Errorf("%s=%q: not a CPU list", h3cmpCPUEnv, list)
		}
		set.Set(c)
		n++
	}
	runtime.GOMAXPROCS(n)
	done := map[int]bool{}
	for range 5 {
		ents, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return err
		}
		fresh := 0
		for _, e := range ents {
			tid, err := strconv.Atoi(e.Name())
			if err != nil || done[tid] {
				continue
			}
			if err := unix.SchedSetaffinity(tid, &set); err != nil && err != unix.ESRCH {
				return fmt.Errorf("pinning thread %d: %w", tid, err)
			}
			done[tid] = true
			fresh++
		}
		if fresh == 0 {
			return nil
		}
		time.Sleep(time.Millisecond)
	}
	return nil
}

// h3AllocBudget is the allocations of one HTTP/3 GET over guise's own
// QUIC on a warm connection (a new Request, a 100-byte body read with
// Response.Bytes), the server in another process. Measured at 8 in
// 2026-12: the caller's Request, the QUIC stream and its read channel,
// the h3 stream (with its Response and body) and its abort channel, the
// response's fields, the exchange (guise's Response, the engine's
// request and the body reader), and the body's bytes; the request's
// fields are built in pooled scratch. The budget leaves a little room.
const h3AllocBudget = 10

// TestAllocsPerH3Request is RELIABILITY Q-63: it holds h3AllocBudget, with quic-go's server in a
// child process (BenchmarkH3Compare's) so that its allocations are not
// counted.
func TestAllocsPerH3Request(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	srv := startH3cmpServer(t)
	tr := &Transport{}
	defer tr.Close()
	s := &Session{RootCAs: srv.roots, Transport: tr, Protocol: HTTP3}
	defer s.Close()
	url := "https://127.0.0.1:" + srv.h3Port + "/small"
	get := func() {
		resp, err := s.Get(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		body, err := resp.Bytes()
		if err != nil || len(body) != h3cmpSmall || resp.Proto != "HTTP/3.0" {
			t.Fatalf("%s, %d bytes, %v", resp.Proto, len(body), err)
		}
	}
	for range 20 {
		get()
	}
	n := testing.AllocsPerRun(300, get)
	t.Logf("HTTP/3 GET over guise's QUIC: %.1f allocations", n)
	if n > h3AllocBudget {
		t.Errorf("%.1f allocations per HTTP/3 request, budget %d", n, h3AllocBudget)
	}
}
