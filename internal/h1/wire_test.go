package h1

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"
)

// wireCase is one scripted response and what the client must make of it.
type wireCase struct {
	id      string // catalogue id (RELIABILITY.md B1-B4)
	name    string
	resp    string
	method  string
	cfg     *Config
	err     error  // RoundTrip error to match with errors.Is
	kind    string // ProtocolError.Kind RoundTrip or the body must report
	status  int
	body    string
	bodyErr error // body error to match with errors.Is
	reuse   bool  // the connection is released as reusable
	stray   bool  // bytes follow the response: split reads may not see them
	cl      *int64
	check   func(t *testing.T, o outcome)
}

func i64(v int64) *int64 { return &v }

// runWireCases runs every case three ways: over an in-memory conn in one
// read, over it one byte per read (the outcomes must be identical), and over
// a 127.0.0.1 server.
func runWireCases(t *testing.T, cases []wireCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.id+"/"+tc.name, func(t *testing.T) {
			req := &Request{Method: "GET", Target: "/", Header: hdr("Host", "x")}
			if tc.method != "" {
				req.Method = tc.method
			}
			whole := runScript([]byte(tc.resp), 0, 1<<16, tc.cfg, req)
			tc.verify(t, "whole", whole)
			split := runScript([]byte(tc.resp), 1, 7, tc.cfg, req)
			if tc.stray {
				split.reusable = whole.reusable
			}
			if !whole.same(split) {
				t.Errorf("split read differs:\nwhole %+v\nsplit %+v", whole, split)
			}
			tc.verify(t, "tcp", runTCP(t, tc.resp, tc.cfg, req))
		})
	}
}

func (tc *wireCase) verify(t *testing.T, how string, o outcome) {
	t.Helper()
	if o.err != nil && o.released != 0 {
		t.Errorf("%s: release called after RoundTrip error", how)
	}
	if tc.err != nil && !errors.Is(o.err, tc.err) {
		t.Errorf("%s: RoundTrip error %v, want %v", how, o.err, tc.err)
	}
	if tc.bodyErr != nil && !errors.Is(o.bodyErr, tc.bodyErr) {
		t.Errorf("%s: body error %v, want %v", how, o.bodyErr, tc.bodyErr)
	}
	if tc.kind != "" {
		var pe *ProtocolError
		if !errors.As(o.err, &pe) && !errors.As(o.bodyErr, &pe) {
			t.Errorf("%s: want ProtocolError %q, got %v / %v", how, tc.kind, o.err, o.bodyErr)
		} else if pe.Kind != tc.kind {
			t.Errorf("%s: ProtocolError kind %q, want %q (%v)", how, pe.Kind, tc.kind, pe)
		}
	}
	for _, err := range []error{o.err, o.bodyErr} {
		if err != nil && strings.ContainsAny(err.Error(), "\r\n\x00\x1b") {
			t.Errorf("%s: error carries raw control bytes: %q", how, err.Error())
		}
	}
	if tc.err == nil && tc.kind == "" && tc.bodyErr == nil && (o.err != nil || o.bodyErr != nil) {
		t.Errorf("%s: unexpected error %v / %v", how, o.err, o.bodyErr)
	}
	if o.err == nil {
		if tc.status != 0 && o.status != tc.status {
			t.Errorf("%s: status %d, want %d", how, o.status, tc.status)
		}
		if tc.kind == "" && tc.bodyErr == nil || tc.body != "" {
			if o.body != tc.body {
				t.Errorf("%s: body %q, want %q", how, o.body, tc.body)
			}
		}
		if o.released != 1 {
			t.Errorf("%s: release called %d times", how, o.released)
		}
		if tc.cl != nil && o.cl != *tc.cl {
			t.Errorf("%s: ContentLength %d, want %d", how, o.cl, *tc.cl)
		}
	}
	if got := o.err == nil && o.reusable; got != tc.reuse {
		t.Errorf("%s: reusable %v, want %v", how, got, tc.reuse)
	}
	if tc.check != nil {
		tc.check(t, o)
	}
}

// runTCP sends one request to a 127.0.0.1 server that answers with resp and
// then shuts down its write side.
func runTCP(t *testing.T, resp string, cfg *Config, req *Request) outcome {
	s := newServer(t, respond(resp))
	c := s.dial(t, cfg)
	var o outcome
	c.SetRelease(func(_ *Conn, r bool) { o.released++; o.reusable = r })
	var res Response
	ctx := testCtx(t)
	o.err = c.RoundTrip(ctx, req, &res)
	if o.err != nil {
		return o
	}
	o.status, o.cl = res.StatusCode, res.ContentLength
	b, err := io.ReadAll(&res.Body)
	o.body, o.bodyErr = string(b), err
	res.Body.Close()
	for _, f := range res.Header {
		o.header += f.Name + ": " + f.Value + "\n"
	}
	for _, f := range res.Trailer {
		o.trailer += f.Name + ": " + f.Value + "\n"
	}
	return o
}

// RELIABILITY H1-20.
func TestResponseHeadB1(t *testing.T) {
	big := func(n int) string { // a head of exactly n bytes
		h := "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX: "
		return h + strings.Repeat("a", n-len(h)-4) + "\r\n\r\n"
	}
	many := "HTTP/1.1 200 OK\r\n" + strings.Repeat("a: b\r\n", 10000) + "\r\n"
	runWireCases(t, []wireCase{
		{id: "H1-01", name: "HEAT", resp: "HEAT/1.1 200 OK\r\n\r\n", kind: "version"},
		{id: "H1-01", name: "bad http", resp: "bad http\r\n\r\n", kind: "version"},
		{id: "H1-01", name: "HTTP/2.0", resp: "HTTP/2.0 200 OK\r\n\r\n", kind: "version"},
		{id: "H1-01", name: "HTTP/1.2", resp: "HTTP/1.2 200 OK\r\n\r\n", kind: "version"},
		{id: "H1-01", name: "incomplete", resp: "HTTP/1.", err: io.ErrUnexpectedEOF},
		{id: "H1-02", name: "20X", resp: "HTTP/1.1 20X OK\r\n\r\n", kind: "status"},
		{id: "H1-02", name: "c8", resp: "HTTP/1.1 c8 OK\r\n\r\n", kind: "status"},
		{id: "H1-02", name: "0x12d", resp: "HTTP/1.1 0x12d OK\r\n\r\n", kind: "status"},
		{id: "H1-02", name: "20", resp: "HTTP/1.1 20 OK\r\n\r\n", kind: "status"},
		{id: "H1-02", name: "1000", resp: "HTTP/1.1 1000 OK\r\n\r\n", kind: "status"},
		{id: "H1-02", name: "-1", resp: "HTTP/1.1 -1 OK\r\n\r\n", kind: "status"},
		{id: "H1-02", name: "one digit", resp: "HTTP/1.1 2\r\n\r\n", kind: "status line"},
		{id: "H1-02", name: "000", resp: "HTTP/1.1 000 X\r\nContent-Length: 0\r\n\r\n", status: 0, reuse: true},
		{id: "H1-02", name: "999", resp: "HTTP/1.1 999 X\r\nContent-Length: 0\r\n\r\n", status: 999, reuse: true},
		{id: "H1-03", name: "two spaces", resp: "HTTP/1.1  200 OK\r\n\r\n", kind: "status"},
		{id: "H1-03", name: "tab after version", resp: "HTTP/1.1\t200 OK\r\n\r\n", kind: "status line"},
		{id: "H1-03", name: "CR before line", resp: "\rHTTP/1.1 200 OK\r\n\r\n", kind: "version"},
		{id: "H1-04", name: "HTTP/0.9 body", resp: "<html>hello</html>", kind: "version"},
		{id: "H1-04", name: "100 then HTTP/0.9", resp: "HTTP/1.1 100 Continue\r\n\r\n<html>hello</html>", kind: "version"},
		{id: "H1-05", name: "h2 SETTINGS", resp: "\x00\x00\x12\x04\x00\x00\x00\x00\x00\x00\x03\x00\x00\x00\x64", kind: "version",
			check: func(t *testing.T, o outcome) {
				if !strings.Contains(errString(o.err), "HTTP/2") {
					t.Errorf("error does not name HTTP/2: %v", o.err)
				}
			}},
		{id: "H1-05", name: "h2 preface", resp: "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", kind: "version"},
		{id: "H1-06", name: "space before colon", resp: "HTTP/1.1 200 OK\r\nFoo : bar\r\n\r\n", kind: "header name"},
		{id: "H1-07", name: "space in name", resp: "HTTP/1.1 200 OK\r\nFo o: bar\r\n\r\n", kind: "header name"},
		{id: "H1-07", name: "utf8 name", resp: "HTTP/1.1 200 OK\r\nимя: bar\r\n\r\n", kind: "header name"},
		{id: "H1-07", name: "NUL name", resp: "HTTP/1.1 200 OK\r\nF\x00o: bar\r\n\r\n", kind: "header name"},
		{id: "H1-07", name: "DEL name", resp: "HTTP/1.1 200 OK\r\nF\x7fo: bar\r\n\r\n", kind: "header name"},
		{id: "H1-07", name: "empty name", resp: "HTTP/1.1 200 OK\r\n: bar\r\n\r\n", kind: "header name"},
		{id: "H1-07", name: "no colon", resp: "HTTP/1.1 200 OK\r\nFoo\r\n\r\n", kind: "header line"},
		{id: "H1-08", name: "NUL value", resp: "HTTP/1.1 200 OK\r\nA: b\x00c\r\n\r\n", kind: "header value"},
		{id: "H1-08", name: "bare CR value", resp: "HTTP/1.1 200 OK\r\nA: b\rc\r\n\r\n", kind: "header value"},
		{id: "H1-08", name: "CTL value", resp: "HTTP/1.1 200 OK\r\nA: b\x01c\r\n\r\n", kind: "header value"},
		{id: "H1-08", name: "HTAB value ok", resp: "HTTP/1.1 200 OK\r\nA: b\tc\r\nContent-Length: 0\r\n\r\n", status: 200, reuse: true,
			check: func(t *testing.T, o outcome) {
				if !strings.Contains(o.header, "A: b\tc\n") && o.header != "" {
					t.Errorf("header %q", o.header)
				}
			}},
		{id: "H1-09", name: "obs-fold", resp: "HTTP/1.1 200 OK\r\nA: b\r\n c\r\n\r\n", kind: "header line"},
		{id: "H1-09", name: "leading space first line", resp: "HTTP/1.1 200 OK\r\n A: b\r\n\r\n", kind: "header line"},
		{id: "H1-09", name: "leading tab first line", resp: "HTTP/1.1 200 OK\r\n\tA: b\r\n\r\n", kind: "header line"},
		{id: "H1-10", name: "bare LF", resp: "HTTP/1.1 200 OK\nContent-Length: 0\n\n", kind: "line ending"},
		{id: "H1-10", name: "bare LF in field", resp: "HTTP/1.1 200 OK\r\nA: b\nContent-Length: 0\r\n\r\n", kind: "line ending"},
		{id: "H1-11", name: "bare CR status", resp: "HTTP/1.1 200 O\rK\r\n\r\n", kind: "status line"},
		{id: "H1-11", name: "headers separated by CR", resp: "HTTP/1.1 200 OK\r\nA: b\rC: d\r\n\r\n", kind: "header value"},
		{id: "H1-12", name: "at limit", resp: big(1000), cfg: &Config{MaxHeaderBytes: 1000}, status: 200, reuse: true},
		{id: "H1-12", name: "one over", resp: big(1001), cfg: &Config{MaxHeaderBytes: 1000}, err: ErrHeaderTooLarge},
		{id: "H1-12", name: "huge header", resp: big(3 << 20), cfg: &Config{MaxHeaderBytes: 1 << 20}, err: ErrHeaderTooLarge},
		{id: "H1-13", name: "10000 fields", resp: many, err: ErrTooManyHeaders},
		{id: "H1-16", name: "escape in reason", resp: "HTTP/1.1 200 \x1b[31mred\r\n\r\n", kind: "status line"},
		{id: "H1-16", name: "escape in name", resp: "HTTP/1.1 200 OK\r\n\x1b[2J: x\r\n\r\n", kind: "header name"},
		{id: "H1-18", name: "no reason", resp: "HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n", status: 200, reuse: true},
		{id: "H1-18", name: "empty reason", resp: "HTTP/1.1 200 \r\nContent-Length: 0\r\n\r\n", status: 200, reuse: true},
		{id: "H1-19", name: "obs-text", resp: "HTTP/1.1 200 \xe4\xba\x8c\xe7\x99\xbe\r\nX: \xff\xfe\r\nContent-Length: 2\r\n\r\nok",
			status: 200, body: "ok", reuse: true, check: func(t *testing.T, o outcome) {
				if o.reason != "" && o.reason != "\xe4\xba\x8c\xe7\x99\xbe" {
					t.Errorf("reason %q", o.reason)
				}
			}},
	})
}

func TestHeaderLimitStreamedB1(t *testing.T) {
	// H1-12 sent in 100-byte writes over TCP; memory stays within the limit.
	const limit = 4000
	for _, size := range []int{limit, limit + 1} {
		h := "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n"
		for len(h) < size-60 {
			h += "X-F: " + strings.Repeat("v", 40) + "\r\n"
		}
		h += "Y: " + strings.Repeat("z", size-len(h)-7) + "\r\n\r\n"
		if len(h) != size {
			t.Fatalf("built %d bytes", len(h))
		}
		s := newServer(t, func(c net.Conn) {
			br := bufio.NewReader(c)
			readRequest(br)
			for i := 0; i < len(h); i += 100 {
				if _, err := io.WriteString(c, h[i:min(i+100, len(h))]); err != nil {
					return
				}
			}
			io.Copy(io.Discard, br)
		})
		c := s.dial(t, &Config{MaxHeaderBytes: limit, ReadBufferSize: 512})
		var resp Response
		err := c.RoundTrip(testCtx(t), &Request{Method: "GET", Target: "/"}, &resp)
		if size == limit && err != nil || size > limit && !errors.Is(err, ErrHeaderTooLarge) {
			t.Fatalf("size %d: %v", size, err)
		}
		if len(c.rbuf) > limit {
			t.Fatalf("buffer grew to %d", len(c.rbuf))
		}
		resp.Body.Close()
	}
}

func TestManyOneByteHeadersLinearB1(t *testing.T) {
	// H1-15: 1 MB of one-byte header lines parses in linear time.
	resp := "HTTP/1.1 200 OK\r\n" + strings.Repeat("a:\r\n", 1<<18) + "Content-Length: 0\r\n\r\n"
	start := time.Now()
	o := runScript([]byte(resp), 4096, 512, &Config{MaxHeaders: 1 << 19}, nil)
	if o.err != nil || o.status != 200 {
		t.Fatal(o.err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("took %v", d)
	}
}

func TestRefusedToSendB1(t *testing.T) {
	// H1-17: invalid requests write nothing.
	cases := []Request{
		{Method: "GET", Target: "/", Header: hdr("X", "a\r\nInjected: 1")},
		{Method: "GET", Target: "/", Header: hdr("X", "a\nb")},
		{Method: "GET", Target: "/", Header: hdr("X", "a\x00b")},
		{Method: "GET", Target: "/", Header: hdr("X\r\nY", "a")},
		{Method: "GET", Target: "/", Header: hdr("X Y", "a")},
		{Method: "GET", Target: "/", Header: hdr("", "a")},
		{Method: "GET", Target: "/", Header: hdr("Host", "evil\r\nX: 1")},
		{Method: "G\r\nET", Target: "/"},
		{Method: "GET\n", Target: "/"},
		{Method: "", Target: "/"},
		{Method: "GET", Target: "/a\r\nb"},
		{Method: "GET", Target: "/a b"},
		{Method: "GET", Target: "/a\x00"},
		{Method: "GET", Target: ""},
		{Method: "POST", Target: "/", Header: hdr("Content-Length", "3", "Transfer-Encoding", "chunked"), BodyBytes: []byte("abc")},
		{Method: "POST", Target: "/", Header: hdr("Content-Length", "4"), BodyBytes: []byte("abc")},
		{Method: "POST", Target: "/", Header: hdr("Content-Length", "+3"), BodyBytes: []byte("abc")},
		{Method: "POST", Target: "/", Header: hdr("Transfer-Encoding", "gzip"), BodyBytes: []byte("abc")},
		{Method: "POST", Target: "/", Body: strings.NewReader("a"), BodyBytes: []byte("abc")},
	}
	for i, req := range cases {
		sc := &scriptConn{in: []byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")}
		c := NewConn(sc, nil)
		c.SetRelease(func(*Conn, bool) { t.Errorf("%d: released", i) })
		var resp Response
		err := c.RoundTrip(context.Background(), &req, &resp)
		if !errors.Is(err, ErrRefusedToSend) {
			t.Errorf("%d: %v", i, err)
		}
		if sc.out.Len() != 0 {
			t.Errorf("%d: wrote %q", i, sc.out.String())
		}
		if !sc.closed {
			t.Errorf("%d: conn not closed", i)
		}
	}
}

// TestManyTinyFieldsAllocateLittle (RELIABILITY H1-13): a head of 10,000 or
// 20,000 tiny fields is refused with ErrTooManyHeaders having allocated
// about the same, bounded amount: the parser stops at the field limit, not
// at the head's end.
func TestManyTinyFieldsAllocateLittle(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts need a normal build")
	}
	bytesFor := func(n int) uint64 {
		resp := []byte("HTTP/1.1 200 OK\r\n" + strings.Repeat("a: b\r\n", n) + "\r\n")
		var ms0, ms1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms0)
		const runs = 20
		for range runs {
			c := NewConn(&scriptConn{in: resp}, nil)
			var r Response
			if err := c.RoundTrip(context.Background(), &Request{Method: "GET", Target: "/"}, &r); !errors.Is(err, ErrTooManyHeaders) {
				t.Fatalf("%d fields: %v, want ErrTooManyHeaders", n, err)
			}
		}
		runtime.ReadMemStats(&ms1)
		return (ms1.TotalAlloc - ms0.TotalAlloc) / runs
	}
	a, b := bytesFor(10000), bytesFor(20000)
	if b > a+a/2 {
		t.Errorf("%d bytes allocated for 10,000 fields, %d for 20,000: it grows with the head", a, b)
	}
	if a > 1<<20 {
		t.Errorf("%d bytes allocated to refuse 10,000 fields", a)
	}
}
