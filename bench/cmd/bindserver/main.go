// Command bindserver is the server of the binding benchmarks
// (bindings/node/bench): net/http on 127.0.0.1 with a new self-signed
// certificate, serving HTTPS over HTTP/1.1 only on one port and HTTP/2 on
// another. It prints "h1 https://127.0.0.1:PORT" and "h2 https://..." on
// stdout and serves until its stdin is closed.
//
// Endpoints: /small (100 bytes, Content-Length), /bytes?n=N (N bytes,
// Content-Length, written in 64 KiB pieces).
//
// With -go URL it is a client instead: it runs -n sequential keep-alive GETs
// of URL on one guise Session (certificates not verified, as in the
// benchmark) and prints the CPU and wall time per request, the Go API's
// figure the Python binding's overhead is measured against. With -mode
// isolated (guise.Do, a connection of its own per request) or -mode per (a
// new Session per request, closed after it) and -c concurrent loops, it is
// the Go API's figure for the binding benchmark's cases of a new TLS
// connection per request.
package main

import (
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/guise-http/guise"
	"github.com/guise-http/guise/bench/internal/peer"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bindserver:", err)
		os.Exit(1)
	}
}

var small = make([]byte, 100)

func run() error {
	goURL := flag.String("go", "", "benchmark guise's Go API against this URL instead of serving")
	n := flag.Int("n", 20000, "requests, with -go")
	mode := flag.String("mode", "session", "with -go: session (keep-alive GETs on one Session), isolated or per (a Session per request)")
	conc := flag.Int("c", 1, "with -go: concurrent loops")
	flag.Parse()
	if *goURL != "" {
		return client(*goURL, *n, *mode, *conc)
	}
	cfg, _, err := peer.SelfSigned()
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/small", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100")
		w.Write(small)
	})
	chunk := make([]byte, 64<<10)
	mux.HandleFunc("/bytes", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.ParseInt(r.URL.Query().Get("n"), 10, 64)
		w.Header().Set("Content-Length", strconv.FormatInt(n, 10))
		for n > 0 {
			m := min(n, int64(len(chunk)))
			if _, err := w.Write(chunk[:m]); err != nil {
				return
			}
			n -= m
		}
	})
	for _, p := range []struct{ name, alpn string }{{"h1", "http/1.1"}, {"h2", "h2"}} {
		c := cfg.Clone()
		c.NextProtos = []string{p.alpn}
		if p.alpn == "h2" {
			c.NextProtos = []string{"h2", "http/1.1"}
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		srv := &http.Server{Handler: mux, TLSConfig: c}
		if p.alpn != "h2" {
			srv.TLSNextProto = map[string]func(*http.Server, *tls.Conn, http.Handler){}
		}
		go srv.Serve(tls.NewListener(ln, c))
		fmt.Printf("%s https://%s\n", p.name, ln.Addr())
	}
	io.Copy(io.Discard, os.Stdin)
	return nil
}

func cpu() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func client(url string, n int, mode string, conc int) error {
	s := &guise.Session{InsecureSkipVerify: true}
	defer s.Close()
	ctx := context.Background()
	body := func(resp *guise.Response, err error) error {
		if err != nil {
			return err
		}
		_, err = resp.Bytes()
		return err
	}
	var get func() error
	switch mode {
	case "session":
		get = func() error { return body(s.Get(ctx, url)) }
	case "isolated":
		get = func() error { return body(guise.Do(ctx, &guise.Request{URL: url, InsecureSkipVerify: true})) }
	case "per":
		get = func() error {
			x := &guise.Session{InsecureSkipVerify: true}
			defer x.Close()
			return body(x.Get(ctx, url))
		}
	default:
		return fmt.Errorf("unknown -mode %q", mode)
	}
	for range 200 {
		if err := get(); err != nil {
			return err
		}
	}
	c0, t0 := cpu(), time.Now()
	errs := make(chan error, conc)
	for i := range conc {
		go func() {
			var err error
			for j := i; j < n && err == nil; j += conc {
				err = get()
			}
			errs <- err
		}()
	}
	for range conc {
		if err := <-errs; err != nil {
			return err
		}
	}
	c, t := cpu()-c0, time.Since(t0)
	fmt.Printf("go: %d GETs (%s, c%d): %.1f us CPU/req, %.1f us wall/req\n", n, mode, conc, float64(c.Microseconds())/float64(n), float64(t.Microseconds())/float64(n))
	return nil
}
