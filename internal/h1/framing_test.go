package h1

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

func TestFramingB2(t *testing.T) {
	const ok = "HTTP/1.1 200 OK\r\n"
	runWireCases(t, []wireCase{
		{id: "F-01", name: "10 and 7", resp: ok + "Content-Length: 10\r\nContent-Length: 7\r\n\r\n0123456789", kind: "content-length"},
		{id: "F-01", name: "8, 9 one line", resp: ok + "Content-Length: 8, 9\r\n\r\n012345678", kind: "content-length"},
		{id: "F-01", name: "differ on 204", resp: "HTTP/1.1 204 No Content\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", kind: "content-length"},
		{id: "F-01", name: "differ on 304", resp: "HTTP/1.1 304 Not Modified\r\nContent-Length: 1, 2\r\n\r\n", kind: "content-length"},
		{id: "F-01", name: "identical duplicates", resp: ok + "Content-Length: 3\r\nContent-Length: 3\r\n\r\nabc", status: 200, body: "abc", reuse: true},
		{id: "F-01", name: "8, 8", resp: ok + "Content-Length: 3, 3\r\n\r\nabc", status: 200, body: "abc", reuse: true},
		{id: "F-02", name: "+3", resp: ok + "Content-Length: +3\r\n\r\nabc", kind: "content-length"},
		{id: "F-02", name: "-1", resp: ok + "Content-Length: -1\r\n\r\nabc", kind: "content-length"},
		{id: "F-02", name: "empty", resp: ok + "Content-Length: \r\n\r\nabc", kind: "content-length"},
		{id: "F-02", name: "1 2", resp: ok + "Content-Length:  1 2\r\n\r\nabc", kind: "content-length"},
		{id: "F-02", name: "0x10", resp: ok + "Content-Length: 0x10\r\n\r\nabc", kind: "content-length"},
		{id: "F-02", name: "1e3", resp: ok + "Content-Length: 1e3\r\n\r\nabc", kind: "content-length"},
		{id: "F-02", name: "trailing comma", resp: ok + "Content-Length: 3,\r\n\r\nabc", kind: "content-length"},
		{id: "F-03", name: "2^63", resp: ok + "Content-Length: 9223372036854775808\r\n\r\n", kind: "content-length"},
		{id: "F-03", name: "twenty digits", resp: ok + "Content-Length: 12345678901234567890\r\n\r\n", kind: "content-length"},
		{id: "F-03", name: "max int64", method: "HEAD", resp: ok + "Content-Length: 9223372036854775807\r\n\r\n", status: 200, reuse: true, cl: i64(1<<63 - 1)},
		{id: "F-04", name: "TE and CL", resp: ok + "Transfer-Encoding: chunked\r\nContent-Length: 100\r\n\r\n3\r\nabc\r\n0\r\n\r\n", status: 200, body: "abc", reuse: false, cl: i64(-1)},
		{id: "F-05", name: "chunked, gzip", resp: ok + "Transfer-Encoding: chunked, gzip\r\n\r\n3\r\nabc\r\n0\r\n\r\n", status: 200, body: "3\r\nabc\r\n0\r\n\r\n", reuse: false},
		{id: "F-05", name: "yolo", resp: ok + "Transfer-Encoding: yolo\r\nContent-Length: 2\r\n\r\nabcdef", status: 200, body: "abcdef", reuse: false},
		{id: "F-06", name: "chunkedchunked", resp: ok + "Transfer-Encoding: chunkedchunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", status: 200, body: "3\r\nabc\r\n0\r\n\r\n"},
		{id: "F-06", name: "xchunked", resp: ok + "Transfer-Encoding: xchunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", status: 200, body: "3\r\nabc\r\n0\r\n\r\n"},
		{id: "F-06", name: "trailing OWS is not part of the value", resp: ok + "Transfer-Encoding: chunked \r\n\r\n3\r\nabc\r\n0\r\n\r\n", status: 200, body: "abc", reuse: true},
		{id: "F-07", name: "split over two lines", resp: ok + "Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", status: 200, body: "abc", reuse: true},
		{id: "F-07", name: "chunked twice", resp: ok + "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", kind: "transfer-encoding"},
		{id: "F-07", name: "chunked then gzip lines", resp: ok + "Transfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n\r\nabc", status: 200, body: "abc", reuse: false},
		{id: "F-08", name: "HTTP/1.0 chunked", resp: "HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n", kind: "transfer-encoding"},
		{id: "F-09", name: "close-delimited", resp: ok + "\r\nhello world", status: 200, body: "hello world", reuse: false, cl: i64(-1)},
		{id: "F-09", name: "HTTP/1.0 close-delimited", resp: "HTTP/1.0 200 OK\r\n\r\nhello", status: 200, body: "hello", reuse: false},
		{id: "F-10", name: "framed body then FIN", resp: ok + "Content-Length: 5\r\n\r\nhello", status: 200, body: "hello", reuse: true},
		{id: "F-11", name: "short body", resp: ok + "Content-Length: 10\r\n\r\nabc", body: "abc", bodyErr: ErrBodyTruncated},
		{id: "F-11", name: "short body wraps ErrUnexpectedEOF", resp: ok + "Content-Length: 100000\r\n\r\nabc", body: "abc", bodyErr: io.ErrUnexpectedEOF},
		{id: "F-12", name: "more than CL", stray: true, resp: ok + "Content-Length: 0\r\n\r\nhi world", status: 200, body: "", reuse: false},
		{id: "F-12", name: "more than CL 2", stray: true, resp: ok + "Content-Length: 2\r\n\r\nhi world", status: 200, body: "hi", reuse: false},
		{id: "F-13", name: "HEAD with body bytes", stray: true, method: "HEAD", resp: ok + "Content-Length: 5\r\n\r\nhello", status: 200, body: "", reuse: false, cl: i64(5)},
		{id: "F-13", name: "HEAD chunked", method: "HEAD", resp: ok + "Transfer-Encoding: chunked\r\n\r\n", status: 200, body: "", reuse: true, cl: i64(-1)},
		{id: "F-13", name: "HEAD clean", method: "HEAD", resp: ok + "Content-Length: 5\r\n\r\n", status: 200, body: "", reuse: true, cl: i64(5)},
		{id: "F-14", name: "204 with CL and bytes", stray: true, resp: "HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\nhello", status: 204, body: "", reuse: false, cl: i64(0)},
		{id: "F-14", name: "304 with TE", resp: "HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\n", status: 304, body: "", reuse: true, cl: i64(0)},
		{id: "F-15", name: "CONNECT 200 with CL", method: "CONNECT", resp: ok + "Content-Length: 5\r\n\r\n", status: 200, body: "", reuse: false},
		{id: "F-16", name: "101 terminal", resp: "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n", kind: "status"},
		{id: "F-16", name: "200 with Upgrade", resp: ok + "Upgrade: h2c\r\nContent-Length: 2\r\n\r\nok", status: 200, body: "ok", reuse: true},
		{id: "X-08", name: "Keep-Alive max=0", resp: ok + "Keep-Alive: timeout=5, max=0\r\nContent-Length: 2\r\n\r\nok", status: 200, body: "ok", reuse: false},
		{id: "X-08", name: "Keep-Alive max=3", resp: ok + "Keep-Alive: timeout=5, max=3\r\nContent-Length: 2\r\n\r\nok", status: 200, body: "ok", reuse: true},
		{id: "X-08", name: "HTTP/1.0 keep-alive, max=0", resp: "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nKeep-Alive: max=0\r\nContent-Length: 2\r\n\r\nok", status: 200, body: "ok", reuse: false},
	})
}

// TestRequestWireF17 checks the request-side framing on the wire.
//
// RELIABILITY F-17.
func TestRequestWireF17(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 40000)
	cases := []struct {
		name string
		req  Request
		want string
	}{
		{"zero-length chunked POST", Request{Method: "POST", Target: "/p", Header: hdr("Host", "h"), Body: strings.NewReader(""), ContentLength: -1},
			"POST /p HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"},
		{"GET with chunked body", Request{Method: "GET", Target: "/", Header: hdr("Host", "h"), Body: io.MultiReader(strings.NewReader("ab"), strings.NewReader("c")), ContentLength: -1},
			"GET / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n1\r\nc\r\n0\r\n\r\n"},
		{"known length reader", Request{Method: "PUT", Target: "/", Header: hdr("host", "h"), Body: strings.NewReader("abc"), ContentLength: 3},
			"PUT / HTTP/1.1\r\nhost: h\r\nContent-Length: 3\r\n\r\nabc"},
		{"body bytes", Request{Method: "POST", Target: "/", Header: hdr("Host", "h", "X-Case", "KeEp"), BodyBytes: []byte("hello")},
			"POST / HTTP/1.1\r\nHost: h\r\nX-Case: KeEp\r\nContent-Length: 5\r\n\r\nhello"},
		{"empty body bytes", Request{Method: "POST", Target: "/", BodyBytes: []byte{}},
			"POST / HTTP/1.1\r\nContent-Length: 0\r\n\r\n"},
		{"caller CL kept", Request{Method: "POST", Target: "/", Header: hdr("content-length", "5"), BodyBytes: []byte("hello")},
			"POST / HTTP/1.1\r\ncontent-length: 5\r\n\r\nhello"},
		{"caller TE chunked with bytes", Request{Method: "POST", Target: "/", Header: hdr("Transfer-Encoding", "chunked"), BodyBytes: []byte("hello")},
			"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n"},
		{"large body bytes", Request{Method: "POST", Target: "/", BodyBytes: big},
			"POST / HTTP/1.1\r\nContent-Length: 40000\r\n\r\n" + string(big)},
		{"large chunked bytes", Request{Method: "POST", Target: "/", Header: hdr("Transfer-Encoding", "chunked"), BodyBytes: big},
			"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n9c40\r\n" + string(big) + "\r\n0\r\n\r\n"},
		{"large bytes with expect", Request{Method: "POST", Target: "/", Header: hdr("Expect", "100-continue"), BodyBytes: big, Expect100Timeout: time.Millisecond},
			"POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 40000\r\n\r\n" + string(big)},
		{"large known reader", Request{Method: "POST", Target: "/", Body: bytes.NewReader(big), ContentLength: int64(len(big))},
			"POST / HTTP/1.1\r\nContent-Length: 40000\r\n\r\n" + string(big)},
		{"large known plain reader", Request{Method: "POST", Target: "/", Body: io.MultiReader(bytes.NewReader(big)), ContentLength: int64(len(big))},
			"POST / HTTP/1.1\r\nContent-Length: 40000\r\n\r\n" + string(big)},
		{"absolute-form", Request{Method: "GET", Target: "http://h/p?q", Header: hdr("Host", "h")},
			"GET http://h/p?q HTTP/1.1\r\nHost: h\r\n\r\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := make(chan []byte, 1)
			s := newServer(t, func(c net.Conn) {
				br := bufio.NewReader(c)
				raw, _ := readRequest(br)
				got <- raw
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
				io.Copy(io.Discard, br)
			})
			c := s.dial(t, nil)
			reused := false
			c.SetRelease(func(_ *Conn, r bool) { reused = r })
			var resp Response
			if err := c.RoundTrip(testCtx(t), &tc.req, &resp); err != nil {
				t.Fatal(err)
			}
			if raw := <-got; string(raw) != tc.want {
				t.Fatalf("wire:\n%q\nwant\n%q", raw, tc.want)
			}
			if !reused {
				t.Fatal("not reusable")
			}
		})
	}
}

func TestRequestBodyLengthMismatch(t *testing.T) {
	for _, tc := range []struct {
		name string
		body io.Reader
		n    int64
	}{
		{"short small", strings.NewReader("ab"), 3},
		{"long small", strings.NewReader("abcd"), 3},
		{"short large", io.MultiReader(strings.NewReader(strings.Repeat("a", 30000))), 40000},
		{"long large", io.MultiReader(strings.NewReader(strings.Repeat("a", 50000))), 40000},
		{"long large WriterTo", strings.NewReader(strings.Repeat("a", 50000)), 40000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t, respond("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"))
			c := s.dial(t, nil)
			c.SetRelease(func(_ *Conn, r bool) {
				if r {
					t.Error("reusable after a body length mismatch")
				}
			})
			var resp Response
			err := c.RoundTrip(testCtx(t), &Request{Method: "POST", Target: "/", Body: tc.body, ContentLength: tc.n}, &resp)
			if err == nil {
				// The server answered before the failure was seen: the
				// response is delivered but the conn must not be reused.
				resp.Body.Close()
				return
			}
			if !errors.Is(err, ErrBodyLength) {
				t.Fatalf("err %v", err)
			}
		})
	}
}

func TestChunkedB3(t *testing.T) {
	const te = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
	var ext strings.Builder
	for range 1024 {
		ext.WriteString("1;" + strings.Repeat("e", 1024) + "\r\nx\r\n")
	}
	manyTrailers := strings.Repeat("T: v\r\n", 2000)
	runWireCases(t, []wireCase{
		{id: "C-01", name: "X", resp: te + "X\r\nabc\r\n0\r\n\r\n", bodyErr: ErrChunked, kind: "chunked"},
		{id: "C-01", name: "1X", resp: te + "1X\r\na\r\n0\r\n\r\n", bodyErr: ErrChunked},
		{id: "C-01", name: "-", resp: te + "-\r\n", bodyErr: ErrChunked},
		{id: "C-01", name: "-1", resp: te + "-1\r\n", bodyErr: ErrChunked},
		{id: "C-01", name: "F CR F", resp: te + "F\rF\r\n", bodyErr: ErrChunked},
		{id: "C-01", name: "empty line", resp: te + "\r\n", bodyErr: ErrChunked},
		{id: "C-02", name: "17 digits", resp: te + "00000000000000001\r\na\r\n0\r\n\r\n", bodyErr: ErrChunked},
		{id: "C-02", name: "overflow", resp: te + "8000000000000000\r\n", bodyErr: ErrChunked},
		{id: "C-02", name: "sixteen zeros", resp: te + "0000000000000000\r\n\r\n", status: 200, body: "", reuse: true},
		{id: "C-03", name: "extension abuse", resp: te + ext.String() + "0\r\n\r\n", bodyErr: ErrChunked, check: func(t *testing.T, o outcome) {
			if len(o.body) > 20 {
				t.Errorf("read %d body bytes before failing", len(o.body))
			}
		}},
		{id: "C-03", name: "extensions within budget", resp: te + "3;a=b;c=\"d e\\\"\" ; f\r\nabc\r\n0;z\r\n\r\n", status: 200, body: "abc", reuse: true},
		{id: "C-04", name: "bare LF size line", resp: te + "3\nabc\r\n0\r\n\r\n", bodyErr: ErrChunked},
		{id: "C-04", name: "CR in extension", resp: te + "3;a\rb\r\nabc\r\n0\r\n\r\n", bodyErr: ErrChunked},
		{id: "C-04", name: "LF in quoted extension", resp: te + "3;a=\"b\nc\"\r\nabc\r\n0\r\n\r\n", bodyErr: ErrChunked},
		{id: "C-04", name: "unbalanced quotes", resp: te + "3;a=\"b\r\nabc\r\n0\r\n\r\n", bodyErr: ErrChunked},
		{id: "C-04", name: "bare LF last chunk", resp: te + "3\r\nabc\r\n0\n\r\n", body: "abc", bodyErr: ErrChunked},
		{id: "C-05", name: "data without CRLF", resp: te + "3\r\nabcX\r\n0\r\n\r\n", body: "abc", bodyErr: ErrChunked},
		{id: "C-06", name: "EOF after chunk", resp: te + "3\r\nabc\r\n", body: "abc", bodyErr: ErrBodyTruncated},
		{id: "C-06", name: "EOF in chunk", resp: te + "5\r\nabc", body: "abc", bodyErr: io.ErrUnexpectedEOF},
		{id: "C-06", name: "EOF in trailers", resp: te + "3\r\nabc\r\n0\r\nT: v\r\n", body: "abc", bodyErr: ErrBodyTruncated},
		{id: "C-07", name: "leading zeros", resp: te + "000003\r\nabc\r\n0\r\n\r\n", status: 200, body: "abc", reuse: true},
		{id: "C-07", name: "hex case", resp: te + "A\r\n0123456789\r\na\r\n0123456789\r\n0\r\n\r\n", status: 200, body: "01234567890123456789", reuse: true},
		{id: "C-08", name: "space after size", resp: te + "3 \r\nabc\r\n0\r\n\r\n", bodyErr: ErrChunked},
		{id: "C-09", name: "huge trailer", resp: te + "0\r\nT: " + strings.Repeat("v", 20000) + "\r\n\r\n", bodyErr: ErrHeaderTooLarge, kind: "trailer"},
		{id: "C-09", name: "many trailers", resp: te + "0\r\n" + manyTrailers + "\r\n", bodyErr: ErrTooManyHeaders, kind: "trailer"},
		{id: "C-10", name: "trailer without CR", resp: te + "0\r\nT: v\n\r\n", bodyErr: ErrChunked},
		{id: "C-10", name: "NUL in trailer", resp: te + "0\r\nT: a\x00b\r\n\r\n", bodyErr: ErrChunked, kind: "trailer"},
		{id: "C-10", name: "pseudo trailer", resp: te + "0\r\n:path: /\r\n\r\n", bodyErr: ErrChunked, kind: "trailer"},
		{id: "C-10", name: "binary trailer name", resp: te + "0\r\n\xffx: /\r\n\r\n", bodyErr: ErrChunked, kind: "trailer"},
		{id: "C-10", name: "trailers kept apart", resp: te + "3\r\nabc\r\n0\r\nX-T: 1\r\nX-U: 2\r\n\r\n", status: 200, body: "abc", reuse: true,
			check: func(t *testing.T, o outcome) {
				if o.trailer != "X-T: 1\nX-U: 2\n" || strings.Contains(o.header, "X-T") {
					t.Errorf("trailer %q header %q", o.trailer, o.header)
				}
			}},
		{id: "C-11", name: "binary zeros", resp: te + "4\r\n\x00\x00\x00\x00\r\n0\r\n\r\n", status: 200, body: "\x00\x00\x00\x00", reuse: true},
		{id: "C-12", name: "missing zero digit", resp: te + "3\r\nabc\r\n\r\n\r\n", body: "abc", bodyErr: ErrChunked},
	})
}

// TestUncleanCloseF10: a close-delimited body ended by an unclean close (as
// tlsfp.Conn reports a FIN without close_notify) is truncated, not complete;
// a framed body that completed is fine.
func TestUncleanCloseF10(t *testing.T) {
	for _, tc := range []struct {
		resp    string
		wantErr bool
	}{
		{"HTTP/1.1 200 OK\r\n\r\nclose-delimited", true},
		{"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", false},
		{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n", false},
	} {
		for _, chunk := range []int{0, 1} {
			sc := &scriptConn{in: []byte(tc.resp), chunk: chunk, eof: io.ErrUnexpectedEOF}
			c := NewConn(sc, nil)
			var resp Response
			if err := c.RoundTrip(context.Background(), &Request{Method: "GET", Target: "/"}, &resp); err != nil {
				t.Fatal(err)
			}
			_, err := io.ReadAll(&resp.Body)
			if tc.wantErr != errors.Is(err, ErrBodyTruncated) || !tc.wantErr && err != nil {
				t.Errorf("%q chunk %d: %v", tc.resp, chunk, err)
			}
		}
	}
}
