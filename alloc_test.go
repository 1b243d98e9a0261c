package guise

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"weak"
)

// cannedServer answers every request on a keep-alive connection with the
// same bytes, allocating nothing per request, so that allocation counts
// measure the client alone.
type cannedServer struct {
	ln   net.Listener
	resp []byte
	wg   sync.WaitGroup
}

func newCannedServer(t testing.TB, resp string) *cannedServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &cannedServer{ln: ln, resp: []byte(resp)}
	s.wg.Add(1)
	go s.serve()
	t.Cleanup(func() { ln.Close(); s.wg.Wait() })
	return s
}

func (s *cannedServer) URL() string { return "http://" + s.ln.Addr().String() + "/" }

func (s *cannedServer) serve() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer c.Close()
			buf := make([]byte, 64<<10)
			var have int
			for {
				n, err := c.Read(buf[have:])
				if err != nil {
					return
				}
				have += n
				for {
					i := bytes.Index(buf[:have], []byte("\r\n\r\n"))
					if i < 0 {
						break
					}
					if _, err := c.Write(s.resp); err != nil {
						return
					}
					have = copy(buf, buf[i+4:have])
				}
				if have == len(buf) {
					return
				}
			}
		}()
	}
}

const smallResponse = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 13\r\nDate: Sun, 29 Nov 2026 21:00:00 GMT\r\n\r\nHello, World!"

// TestAllocsPerRequest holds the hot path's budget: Session.Do, the body
// read into the caller's buffer, costs at most 1 allocation (the Response,
// which holds the copy of its head), with a reused Request and with a new
// one per call (which does not escape).
func TestAllocsPerRequest(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	srv := newCannedServer(t, smallResponse)
	var s Session
	defer s.Close()
	req := &Request{URL: srv.URL()}
	buf := make([]byte, 512)
	ctx := context.Background()
	do := func() {
		resp, err := s.Do(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if err := drain(resp.Body, buf); err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	do()
	if n := testing.AllocsPerRun(200, do); n > 1 {
		t.Errorf("%.1f allocations per request, budget 1", n)
	}
	url := req.URL
	fresh := func() {
		resp, err := s.Do(ctx, &Request{URL: url})
		if err != nil {
			t.Fatal(err)
		}
		if err := drain(resp.Body, buf); err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if n := testing.AllocsPerRun(200, fresh); n > 1 {
		t.Errorf("%.1f allocations per request with a new Request, budget 1", n)
	}
}

func BenchmarkSessionDo(b *testing.B) {
	srv := newCannedServer(b, smallResponse)
	var s Session
	defer s.Close()
	req := &Request{URL: srv.URL()}
	buf := make([]byte, 512)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		resp, err := s.Do(ctx, req)
		if err != nil {
			b.Fatal(err)
		}
		drain(resp.Body, buf)
		resp.Body.Close()
	}
}

func BenchmarkSessionDoParallel(b *testing.B) {
	srv := newCannedServer(b, smallResponse)
	tr := &Transport{MaxConnsPerHost: 16}
	defer tr.Close()
	s := &Session{Transport: tr}
	ctx := context.Background()
	b.ReportAllocs()
	b.SetParallelism(8) // 16 goroutines on 2 cores
	b.RunParallel(func(pb *testing.PB) {
		req := &Request{URL: srv.URL()}
		buf := make([]byte, 512)
		for pb.Next() {
			resp, err := s.Do(ctx, req)
			if err != nil {
				b.Error(err)
				return
			}
			drain(resp.Body, buf)
			resp.Body.Close()
		}
	})
}

// gzipResponse is a keep-alive response with a 4 KiB body, gzipped.
func gzipResponse(t testing.TB) (string, []byte) {
	plain := bytes.Repeat([]byte("0123456789abcdef"), 256)
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(plain)
	zw.Close()
	return "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Encoding: gzip\r\nContent-Length: " +
		strconv.Itoa(buf.Len()) + "\r\n\r\n" + buf.String(), plain
}

// TestAllocsPerGzipRequest holds the decoding budget: a 4 KiB gzip body on
// a warm Session costs at most 1 allocation more than a plain one.
func TestAllocsPerGzipRequest(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	resp, plain := gzipResponse(t)
	srv := newCannedServer(t, resp)
	var s Session
	defer s.Close()
	req := &Request{URL: srv.URL()}
	buf := make([]byte, 8192)
	ctx := context.Background()
	do := func() {
		resp, err := s.Do(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		n, err := io.ReadFull(resp.Body, buf[:len(plain)])
		if err != nil || n != len(plain) || !resp.Decoded {
			t.Fatalf("read %d decoded %v: %v", n, resp.Decoded, err)
		}
		if _, err := resp.Body.Read(buf); err != io.EOF {
			t.Fatalf("want EOF, got %v", err)
		}
		resp.Body.Close()
	}
	do()
	if n := testing.AllocsPerRun(200, do); n > 2 {
		t.Fatalf("%.1f allocations per gzip request, budget 2 (1 + 1 for decoding)", n)
	}
}

func BenchmarkGzip4K(b *testing.B) {
	resp, _ := gzipResponse(b)
	srv := newCannedServer(b, resp)
	b.Run("guise", func(b *testing.B) {
		var s Session
		defer s.Close()
		req := &Request{URL: srv.URL()}
		buf := make([]byte, 8192)
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			resp, err := s.Do(ctx, req)
			if err != nil {
				b.Fatal(err)
			}
			drain(resp.Body, buf)
			resp.Body.Close()
		}
	})
	b.Run("net/http", func(b *testing.B) {
		tr := &http.Transport{}
		defer tr.CloseIdleConnections()
		c := &http.Client{Transport: tr}
		buf := make([]byte, 8192)
		b.ReportAllocs()
		for b.Loop() {
			resp, err := c.Get(srv.URL())
			if err != nil {
				b.Fatal(err)
			}
			drain(resp.Body, buf)
			resp.Body.Close()
		}
	})
}

// drain reads r to its end into buf, as a caller with its own buffer does;
// it returns nil at EOF.
func drain(r io.Reader, buf []byte) error {
	for {
		if _, err := r.Read(buf); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}

// TestCookieDoesNotKeepResponse: a cookie the Session's jar stores from a
// Set-Cookie field is a copy, so that it does not keep alive the Response
// whose allocation holds the head's string (and, through its body, the
// connection and its buffers).
func TestCookieDoesNotKeepResponse(t *testing.T) {
	srv := newCannedServer(t, "HTTP/1.1 200 OK\r\nSet-Cookie: id=abc123; Path=/\r\nContent-Length: 2\r\n\r\nok")
	var s Session
	defer s.Close()
	resp, err := s.Do(context.Background(), &Request{URL: srv.URL()})
	if err != nil {
		t.Fatal(err)
	}
	if err := drain(resp.Body, make([]byte, 64)); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	w := weak.Make(resp)
	resp = nil
	for range 3 {
		runtime.GC()
	}
	if w.Value() != nil {
		t.Fatal("the Response is still reachable after the jar stored its cookie")
	}
	var b bytes.Buffer
	if err := s.Cookies().WriteJSON(&b); err != nil || !strings.Contains(b.String(), "abc123") {
		t.Fatalf("the jar holds %s (%v)", b.String(), err)
	}
}
