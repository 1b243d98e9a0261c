package h1

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

func TestInformationalAndReuseB4(t *testing.T) {
	const ok = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
	big103 := "HTTP/1.1 103 Early Hints\r\nLink: " + strings.Repeat("l", 400) + "\r\n\r\n"
	runWireCases(t, []wireCase{
		{id: "X-01", name: "1000 x 100", resp: strings.Repeat("HTTP/1.1 100 Continue\r\n\r\n", 1000), err: ErrTooMany1xx},
		{id: "X-01", name: "5 x 100 allowed", resp: strings.Repeat("HTTP/1.1 100 Continue\r\n\r\n", 5) + ok, status: 200, body: "ok", reuse: true},
		{id: "X-01", name: "6 x 100", resp: strings.Repeat("HTTP/1.1 100 Continue\r\n\r\n", 6) + ok, err: ErrTooMany1xx},
		{id: "X-01", name: "103 bytes count", resp: strings.Repeat(big103, 3) + ok, cfg: &Config{MaxHeaderBytes: 1000}, err: ErrHeaderTooLarge},
		{id: "X-01", name: "bad 1xx header", resp: "HTTP/1.1 103 Early\r\nA : b\r\n\r\n" + ok, kind: "header name"},
		{id: "X-02", name: "100 then 400", resp: "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 400 Bad Request\r\nContent-Length: 3\r\n\r\nbad", status: 400, body: "bad", reuse: true},
		{id: "X-02", name: "103 then 200", resp: "HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\n" + ok, status: 200, body: "ok", reuse: true,
			check: func(t *testing.T, o outcome) {
				if strings.Contains(o.header, "Link") {
					t.Errorf("103 header leaked into the final response: %q", o.header)
				}
			}},
		{id: "X-05", name: "Connection: close", resp: "HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\nok", status: 200, body: "ok", reuse: false},
		{id: "X-05", name: "Connection: keep-alive, close", resp: "HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\nContent-Length: 2\r\n\r\nok", status: 200, body: "ok", reuse: false},
		{id: "X-05", name: "HTTP/1.0 no keep-alive", resp: "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nok", status: 200, body: "ok", reuse: false},
		{id: "X-05", name: "HTTP/1.0 keep-alive", resp: "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nok", status: 200, body: "ok", reuse: true},
		{id: "X-09", name: "bytes after response", resp: ok + "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", stray: true, status: 200, body: "ok", reuse: false},
		{id: "X-09", name: "bytes after chunked", resp: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\nX", stray: true, status: 200, body: "ok", reuse: false},
	})
}

// expectServer answers a request carrying Expect: 100-continue. mode
// "final" answers 417 at once, "continue" sends 100 first, "silent" waits for
// the body. It reports the body bytes it received.
func expectServer(t *testing.T, mode string, got chan<- int) *server {
	return newServer(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				got <- -1
				return
			}
			if line == "\r\n" {
				break
			}
		}
		switch mode {
		case "final":
			io.WriteString(c, "HTTP/1.1 417 Expectation Failed\r\nContent-Length: 0\r\n\r\n")
			n, _ := io.Copy(io.Discard, br)
			got <- int(n)
			return
		case "continue":
			io.WriteString(c, "HTTP/1.1 100 Continue\r\n\r\n")
		}
		b := make([]byte, 5)
		n, _ := io.ReadFull(br, b)
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
		got <- n
		io.Copy(io.Discard, br)
	})
}

// RELIABILITY X-03.
func TestExpectContinueX03(t *testing.T) {
	for _, tc := range []struct {
		mode   string
		status int
		body   int
		reuse  bool
		large  bool
	}{
		{"final", 417, 0, false, false},
		{"final", 417, 0, false, true},
		{"continue", 200, 5, true, false},
		{"silent", 200, 5, true, false},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			got := make(chan int, 1)
			s := expectServer(t, tc.mode, got)
			c := s.dial(t, nil)
			var reuse []bool
			c.SetRelease(func(_ *Conn, r bool) { reuse = append(reuse, r) })
			req := &Request{Method: "POST", Target: "/", Header: hdr("Expect", "100-continue"),
				BodyBytes: []byte("hello"), Expect100Timeout: 50 * time.Millisecond}
			if tc.large {
				req.BodyBytes = nil
				req.Body, req.ContentLength = strings.NewReader(strings.Repeat("x", 100000)), 100000
			}
			var resp Response
			if err := c.RoundTrip(testCtx(t), req, &resp); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d", resp.StatusCode)
			}
			resp.Body.Close()
			if len(reuse) != 1 || reuse[0] != tc.reuse {
				t.Fatalf("release %v", reuse)
			}
			if !tc.reuse {
				c.Close()
			}
			if n := <-got; n != tc.body && !(tc.large && n == 0) {
				t.Fatalf("server got %d body bytes, want %d", n, tc.body)
			}
		})
	}
}

// RELIABILITY X-04.
func TestEarlyResponseX04(t *testing.T) {
	for _, kind := range []string{"reader", "chunked", "bytes"} {
		t.Run(kind, func(t *testing.T) {
			release := make(chan struct{})
			s := newServer(t, func(c net.Conn) {
				br := bufio.NewReader(c)
				for {
					line, err := br.ReadString('\n')
					if err != nil || line == "\r\n" {
						break
					}
				}
				io.WriteString(c, "HTTP/1.1 403 Forbidden\r\nContent-Length: 6\r\n\r\ndenied")
				<-release
				io.Copy(io.Discard, br)
			})
			defer close(release)
			c := s.dial(t, nil)
			var reuse []bool
			c.SetRelease(func(_ *Conn, r bool) { reuse = append(reuse, r) })
			const size = 32 << 20
			req := &Request{Method: "POST", Target: "/"}
			switch kind {
			case "reader":
				req.Body, req.ContentLength = io.LimitReader(zeros{}, size), size
			case "chunked":
				req.Body, req.ContentLength = io.LimitReader(zeros{}, size), -1
			case "bytes":
				req.BodyBytes = make([]byte, size)
			}
			var resp Response
			start := time.Now()
			if err := c.RoundTrip(testCtx(t), req, &resp); err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(&resp.Body)
			if resp.StatusCode != 403 || string(b) != "denied" || err != nil {
				t.Fatalf("%d %q %v", resp.StatusCode, b, err)
			}
			if len(reuse) != 1 || reuse[0] {
				t.Fatalf("release %v", reuse)
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("took %v", d)
			}
		})
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

func TestIdleCloseX06(t *testing.T) {
	// the server closes an idle keep-alive connection
	// (optionally after an unsolicited 408); the next request on it fails
	// with ErrNoResponse, which the caller may retry once elsewhere.
	for _, tc := range []struct{ name, after string }{
		{"closed", ""},
		{"408", "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			idle, served := make(chan struct{}), make(chan struct{})
			s := newServer(t, func(c net.Conn) {
				br := bufio.NewReader(c)
				readRequest(br)
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
				<-idle
				io.WriteString(c, tc.after)
				c.(*net.TCPConn).CloseWrite()
				close(served)
				io.Copy(io.Discard, br)
			})
			c := s.dial(t, nil)
			var reuse []bool
			c.SetRelease(func(_ *Conn, r bool) { reuse = append(reuse, r) })
			req := &Request{Method: "GET", Target: "/"}
			var resp Response
			if err := c.RoundTrip(testCtx(t), req, &resp); err != nil {
				t.Fatal(err)
			}
			if b, err := io.ReadAll(&resp.Body); string(b) != "ok" || err != nil || len(reuse) != 1 || !reuse[0] {
				t.Fatalf("%q %v %v", b, err, reuse)
			}
			close(idle)
			<-served
			err := c.RoundTrip(testCtx(t), req, &resp)
			if !errors.Is(err, ErrNoResponse) || c.Requests() != 2 {
				t.Fatalf("err %v, requests %d", err, c.Requests())
			}
			if len(reuse) != 1 {
				t.Fatal("released after an error")
			}
		})
	}
}

// RELIABILITY L-06, L-07.
func TestTimeouts(t *testing.T) {
	t.Run("head", func(t *testing.T) {
		s := newServer(t, func(c net.Conn) { readRequest(bufio.NewReader(c)); io.Copy(io.Discard, c) })
		c := s.dial(t, nil)
		var resp Response
		err := c.RoundTrip(testCtx(t), &Request{Method: "GET", Target: "/", HeadTimeout: 50 * time.Millisecond}, &resp)
		var te *TimeoutError
		if !errors.As(err, &te) || te.Phase != PhaseHead || !errors.Is(err, os.ErrDeadlineExceeded) || !isTimeout(err) {
			t.Fatalf("err %v", err)
		}
		if te.Phase.String() != "response head" {
			t.Fatal(te.Phase.String())
		}
	})
	t.Run("body idle", func(t *testing.T) {
		s := newServer(t, func(c net.Conn) {
			readRequest(bufio.NewReader(c))
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nab")
			io.Copy(io.Discard, c)
		})
		c := s.dial(t, nil)
		var resp Response
		var reuse []bool
		c.SetRelease(func(_ *Conn, r bool) { reuse = append(reuse, r) })
		if err := c.RoundTrip(testCtx(t), &Request{Method: "GET", Target: "/", BodyIdleTimeout: 50 * time.Millisecond, HeadTimeout: time.Second}, &resp); err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(&resp.Body)
		var te *TimeoutError
		if string(b) != "ab" || !errors.As(err, &te) || te.Phase != PhaseBodyIdle {
			t.Fatalf("%q %v", b, err)
		}
		if len(reuse) != 1 || reuse[0] {
			t.Fatal(reuse)
		}
	})
	t.Run("ctx head", func(t *testing.T) {
		s := newServer(t, func(c net.Conn) { readRequest(bufio.NewReader(c)); io.Copy(io.Discard, c) })
		c := s.dial(t, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		var resp Response
		err := c.RoundTrip(ctx, &Request{Method: "GET", Target: "/"}, &resp)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("ctx body", func(t *testing.T) {
		s := newServer(t, func(c net.Conn) {
			readRequest(bufio.NewReader(c))
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nab")
			io.Copy(io.Discard, c)
		})
		c := s.dial(t, nil)
		ctx, cancel := context.WithCancel(context.Background())
		var resp Response
		if err := c.RoundTrip(ctx, &Request{Method: "GET", Target: "/"}, &resp); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 2)
		io.ReadFull(&resp.Body, buf)
		cancel()
		_, err := resp.Body.Read(buf)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err %v", err)
		}
	})
	t.Run("ctx done before", func(t *testing.T) {
		sc := &scriptConn{}
		c := NewConn(sc, nil)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		var resp Response
		err := c.RoundTrip(ctx, &Request{Method: "GET", Target: "/"}, &resp)
		if !errors.Is(err, context.Canceled) || sc.out.Len() != 0 {
			t.Fatalf("err %v, wrote %d", err, sc.out.Len())
		}
	})
	t.Run("ctx upload", func(t *testing.T) {
		stop := make(chan struct{})
		s := newServer(t, func(c net.Conn) { <-stop })
		t.Cleanup(func() { close(stop) })
		c := s.dial(t, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		var resp Response
		err := c.RoundTrip(ctx, &Request{Method: "POST", Target: "/", Body: io.LimitReader(zeros{}, 64<<20), ContentLength: -1}, &resp)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err %v", err)
		}
	})
}

func TestCloseDrain(t *testing.T) {
	for _, tc := range []struct {
		name  string
		resp  string
		limit int64
		reuse bool
	}{
		{"length within limit", "HTTP/1.1 200 OK\r\nContent-Length: 200000\r\n\r\n" + strings.Repeat("a", 200000), 0, true},
		{"length over limit", "HTTP/1.1 200 OK\r\nContent-Length: 200000\r\n\r\n" + strings.Repeat("a", 200000), 100000, false},
		{"chunked within limit", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + strings.Repeat("8000\r\n"+strings.Repeat("b", 0x8000)+"\r\n", 4) + "0\r\n\r\n", 0, true},
		{"chunked over limit", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + strings.Repeat("8000\r\n"+strings.Repeat("b", 0x8000)+"\r\n", 8) + "0\r\n\r\n", 100000, false},
		{"close-delimited", "HTTP/1.1 200 OK\r\n\r\n" + strings.Repeat("a", 100000), 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, respond(tc.resp))
			c := s.dial(t, &Config{DrainLimit: tc.limit})
			var reuse []bool
			c.SetRelease(func(_ *Conn, r bool) { reuse = append(reuse, r) })
			var resp Response
			if err := c.RoundTrip(testCtx(t), &Request{Method: "GET", Target: "/"}, &resp); err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 10)
			resp.Body.Read(buf)
			if err := resp.Body.Close(); err != nil {
				t.Fatal(err)
			}
			resp.Body.Close() // idempotent
			if len(reuse) != 1 || reuse[0] != tc.reuse {
				t.Fatalf("release %v", reuse)
			}
			if _, err := resp.Body.Read(buf); err == nil {
				t.Fatal("read after close")
			}
		})
	}
}

func TestWriteToAndLargeBodies(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	var chunked strings.Builder
	for i := 0; i < len(body); i += 5000 {
		part := body[i:min(i+5000, len(body))]
		chunked.WriteString(strings.ToUpper(string(hexString(len(part)))) + "\r\n" + string(part) + "\r\n")
	}
	chunked.WriteString("0\r\n\r\n")
	for _, tc := range []struct{ name, resp string }{
		{"length", "HTTP/1.1 200 OK\r\nContent-Length: 1048576\r\n\r\n" + string(body)},
		{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunked.String()},
		{"close", "HTTP/1.1 200 OK\r\n\r\n" + string(body)},
	} {
		for _, useWriteTo := range []bool{false, true} {
			s := newServer(t, respond(tc.resp))
			c := s.dial(t, nil)
			var resp Response
			if err := c.RoundTrip(testCtx(t), &Request{Method: "GET", Target: "/"}, &resp); err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			var err error
			if useWriteTo {
				_, err = resp.Body.WriteTo(&got)
			} else {
				_, err = io.CopyBuffer(struct{ io.Writer }{&got}, struct{ io.Reader }{&resp.Body}, make([]byte, 64<<10))
			}
			if err != nil || !bytes.Equal(got.Bytes(), body) {
				t.Fatalf("%s writeTo=%v: %v, %d bytes", tc.name, useWriteTo, err, got.Len())
			}
		}
	}
}

func hexString(n int) []byte {
	const digits = "0123456789abcdef"
	var b []byte
	for ; n > 0; n >>= 4 {
		b = append([]byte{digits[n&15]}, b...)
	}
	return b
}

func TestStaleBodyAndBusy(t *testing.T) {
	s := newServer(t, respond(
		"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n"+strings.Repeat("a", 100000),
		"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
	c := s.dial(t, nil)
	var resp Response
	req := &Request{Method: "GET", Target: "/"}
	if err := c.RoundTrip(testCtx(t), req, &resp); err != nil {
		t.Fatal(err)
	}
	old := resp.Body
	io.ReadAll(&resp.Body)
	var resp2 Response
	if err := c.RoundTrip(testCtx(t), req, &resp2); err != nil {
		t.Fatal(err)
	}
	if _, err := old.Read(make([]byte, 10)); err == nil {
		t.Fatal("stale body read succeeded")
	}
}

func TestKeepAliveX08(t *testing.T) {
	for _, tc := range []struct {
		v       string
		timeout time.Duration
		max     int
	}{
		{"timeout=1, max=2", time.Second, 2},
		{"Timeout = 5 ,MAX=100", 5 * time.Second, 100},
		{"max=-1, timeout=x", 0, -1},
		{"timeout=\"7\"", 7 * time.Second, -1},
		{"max=0", 0, 0},
		{"timeout=0, max=5", 0, 0},
		{"max=5, timeout=0", 0, 0},
		{"", 0, -1},
	} {
		d, m := keepAliveParams([]byte(tc.v), 0, -1)
		if d != tc.timeout || m != tc.max {
			t.Errorf("%q: %v %d", tc.v, d, m)
		}
	}
}
