package h1

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
)

// responseSeeds are valid and invalid responses from the B tables.
var responseSeeds = []string{
	"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nT: v\r\n\r\n",
	"HTTP/1.1 200 OK\r\n\r\nclose-delimited",
	"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 2\r\n\r\nokHTTP/1.1 204 No Content\r\n\r\n",
	"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n",
	"HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
	"HTTP/1.1 304 Not Modified\r\nContent-Length: 10\r\n\r\n",
	"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n1;a=\"b\"\r\nx\r\n0\r\n\r\n",
	"HTTP/1.1 200 \xe4\xba\x8c\r\nX: \xff\r\nContent-Length: 0\r\n\r\n",
	"HTTP/1.1 200 OK\r\nA: b\r\n c\r\n\r\n",
	"HTTP/1.1 200 OK\nContent-Length: 0\n\n",
	"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\nabc\r\n0\r\n\r\n",
}

// FuzzResponseHead: the outcome does not depend on how the response is
// split into reads; limits hold; errors carry no raw control bytes.
func FuzzResponseHead(f *testing.F) {
	for _, s := range responseSeeds {
		f.Add([]byte(s), uint8(1))
	}
	cfg := &Config{MaxHeaderBytes: 2048, MaxHeaders: 20, ReadBufferSize: 512, InlineLimit: 64}
	f.Fuzz(func(t *testing.T, data []byte, split uint8) {
		whole := runScript(data, 0, 4096, cfg, nil)
		part := runScript(data, int(split%16)+1, int(split%5)+1, cfg, nil)
		if whole.reusable && !part.reusable {
			t.Fatalf("whole reusable, split not")
		}
		part.reusable = whole.reusable
		if !whole.same(part) {
			t.Fatalf("split %d differs:\nwhole %+v\n      %v / %v\nsplit %+v\n      %v / %v", split%16+1, whole, whole.err, whole.bodyErr, part, part.err, part.bodyErr)
		}
		for _, err := range []error{whole.err, whole.bodyErr} {
			if err != nil && strings.ContainsAny(err.Error(), "\r\n\x00\x1b\x7f") {
				t.Fatalf("raw control bytes in error %q", err.Error())
			}
		}
		if whole.err == nil {
			if whole.status < 0 || whole.status > 999 {
				t.Fatalf("status %d", whole.status)
			}
			if n := len(whole.header) + len(whole.reason); n > cfg.MaxHeaderBytes {
				t.Fatalf("head of %d bytes accepted", n)
			}
			if strings.Count(whole.header, "\n") > cfg.MaxHeaders {
				t.Fatalf("too many fields accepted")
			}
		}
	})
}

// FuzzChunked: the decoded body is the same for any read size, never longer
// than the input, and, when net/http's chunked reader also accepts the
// input, equal to its output.
func FuzzChunked(f *testing.F) {
	for _, s := range []string{
		"3\r\nabc\r\n0\r\n\r\n", "000003\r\nabc\r\nA\r\n0123456789\r\n0\r\nT: v\r\n\r\n",
		"1;a=b;c=\"d\\\"e\"\r\nx\r\n0\r\n\r\n", "3 \r\nabc\r\n0\r\n\r\n", "3\nabc\r\n0\r\n\r\n",
		"ffffffffffffffff\r\n", "3\r\nabc", "0\r\n:p: x\r\n\r\n",
	} {
		f.Add([]byte(s), uint8(3))
	}
	const head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
	cfg := &Config{MaxChunkExtBytes: 256, MaxTrailerBytes: 256, MaxHeaders: 8, InlineLimit: 32}
	f.Fuzz(func(t *testing.T, data []byte, rs uint8) {
		resp := append([]byte(head), data...)
		a := runScript(resp, 0, 1<<16, cfg, nil)
		b := runScript(resp, int(rs%8)+1, int(rs%13)+1, cfg, nil)
		if a.reusable && !b.reusable {
			t.Fatal("whole reusable, split not")
		}
		b.reusable = a.reusable
		if !a.same(b) {
			t.Fatalf("read size %d differs:\n%+v %v\n%+v %v", rs, a, a.bodyErr, b, b.bodyErr)
		}
		if len(a.body) > len(data) {
			t.Fatal("body longer than input")
		}
		if a.err != nil || a.bodyErr != nil {
			if a.bodyErr != nil && !errors.Is(a.bodyErr, ErrChunked) && !errors.Is(a.bodyErr, ErrBodyTruncated) {
				t.Fatalf("untyped chunked error %v", a.bodyErr)
			}
			return
		}
		// Our decoder accepted: bare LF never was.
		ref, err := io.ReadAll(httputil.NewChunkedReader(bytes.NewReader(data)))
		if err == nil && !bytes.Equal(ref, []byte(a.body)) {
			t.Fatalf("body %q, net/http %q", a.body, ref)
		}
	})
}

// FuzzResponseFraming: differential against net/http.ReadResponse. When
// both accept a response and its body, status, body and the bytes left on
// the connection agree (the smuggling guard).
func FuzzResponseFraming(f *testing.F) {
	for _, s := range responseSeeds {
		f.Add([]byte(s), false)
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, head bool) {
		method := "GET"
		if head {
			method = "HEAD"
		}
		req := &Request{Method: method, Target: "/"}
		sc := &scriptConn{in: data}
		c := NewConn(sc, &Config{InlineLimit: 16})
		reusable := false
		c.SetRelease(func(_ *Conn, r bool) { reusable = r })
		var resp Response
		if err := c.RoundTrip(context.Background(), req, &resp); err != nil {
			return
		}
		body, err := io.ReadAll(&resp.Body)
		if err != nil {
			return
		}
		leftover := append(append([]byte(nil), c.rbuf[c.r:c.w]...), sc.in...)

		br := bufio.NewReader(bytes.NewReader(data))
		hreq, _ := http.NewRequest(method, "http://x/", nil)
		hresp, err := http.ReadResponse(br, hreq)
		if err != nil || hresp.StatusCode < 200 {
			return
		}
		hbody, err := io.ReadAll(hresp.Body)
		if err != nil {
			return
		}
		hleft, _ := io.ReadAll(br)
		if hresp.StatusCode != resp.StatusCode {
			t.Fatalf("status %d, net/http %d", resp.StatusCode, hresp.StatusCode)
		}
		if !bytes.Equal(body, hbody) {
			t.Fatalf("body %q, net/http %q", body, hbody)
		}
		if !bytes.Equal(leftover, hleft) {
			t.Fatalf("leftover %q, net/http %q", leftover, hleft)
		}
		if reusable && (len(leftover) > 0 || hresp.Close) {
			t.Fatalf("reusable with leftover %q or net/http Close=%v", leftover, hresp.Close)
		}
	})
}

// FuzzRequestWrite: RoundTrip either refuses (writing nothing) or writes
// bytes net/http.ReadRequest parses into the same method, target, fields
// and body.
func FuzzRequestWrite(f *testing.F) {
	f.Add("GET", "/a?b=c", "Accept", "*/*", "X-Y", "z", []byte(nil), false)
	f.Add("POST", "/p", "Content-Type", "text/plain", "x-lower", "v v", []byte("body"), true)
	f.Add("G\r\nET", "/a b", "X\r\n", "a\nb", "", "\x00", []byte("x"), false)
	f.Fuzz(func(t *testing.T, method, target, n1, v1, n2, v2 string, body []byte, stream bool) {
		for _, n := range []*string{&n1, &n2} {
			switch strings.ToLower(*n) {
			case "host", "content-length", "transfer-encoding", "expect", "connection", "trailer":
				*n = "X-" + *n // framing is covered by table tests
			}
		}
		req := &Request{Method: method, Target: "/" + target, ContentLength: -1,
			Header: hdr("Host", "example.com", n1, v1, n2, v2)}
		if body != nil {
			if stream {
				req.Body = bytes.NewReader(body)
				req.ContentLength = -1
			} else {
				req.BodyBytes = body
			}
		}
		sc := &scriptConn{in: []byte("HTTP/1.1 204 No Content\r\n\r\n")}
		c := NewConn(sc, nil)
		var resp Response
		err := c.RoundTrip(context.Background(), req, &resp)
		if err != nil {
			if !errors.Is(err, ErrRefusedToSend) || sc.out.Len() != 0 {
				t.Fatalf("err %v after writing %d bytes", err, sc.out.Len())
			}
			return
		}
		hr, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(sc.out.Bytes())))
		if err != nil {
			if _, uerr := url.ParseRequestURI(req.Target); uerr != nil {
				return // a raw target net/http's URL parser rejects
			}
			t.Fatalf("net/http rejects %q: %v", sc.out.Bytes(), err)
		}
		if hr.Method != method || hr.RequestURI != req.Target || hr.Host != "example.com" {
			t.Fatalf("got %q %q %q", hr.Method, hr.RequestURI, hr.Host)
		}
		for _, fld := range req.Header[1:] {
			vs := hr.Header.Values(fld.Name)
			want := req.Header.Values(fld.Name)
			if strings.Join(vs, "\x00") != strings.Join(want, "\x00") {
				t.Fatalf("field %q: %q, want %q", fld.Name, vs, want)
			}
		}
		got, err := io.ReadAll(hr.Body)
		if err != nil || !bytes.Equal(got, body) && !(len(got) == 0 && len(body) == 0) {
			t.Fatalf("body %q, want %q (%v)", got, body, err)
		}
	})
}

// FuzzTrailers: a trailer section is accepted only within the byte and
// count caps, with token names and valid values, and never reaches Header.
func FuzzTrailers(f *testing.F) {
	for _, s := range []string{"\r\n", "T: v\r\n\r\n", "A: 1\r\nB: 2\r\n\r\n", ":path: /\r\n\r\n", "T: a\x00\r\n\r\n", "T: v\n\r\n", "X-Y: \xff\r\n\r\n"} {
		f.Add([]byte(s))
	}
	const head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nx\r\n0\r\n"
	cfg := &Config{MaxTrailerBytes: 128, MaxHeaders: 4}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, chunk := range []int{0, 3} {
			o := runScript(append([]byte(head), data...), chunk, 5, cfg, nil)
			if o.err != nil {
				t.Fatal(o.err)
			}
			if o.header != "Transfer-Encoding: chunked\n" {
				t.Fatalf("header changed: %q", o.header)
			}
			if o.bodyErr != nil {
				if !errors.Is(o.bodyErr, ErrChunked) && !errors.Is(o.bodyErr, ErrBodyTruncated) {
					t.Fatalf("untyped trailer error %v", o.bodyErr)
				}
				continue
			}
			lines := strings.Split(strings.TrimSuffix(o.trailer, "\n"), "\n")
			if o.trailer != "" && len(lines) > cfg.MaxHeaders || len(o.trailer) > cfg.MaxTrailerBytes {
				t.Fatalf("trailer over the caps: %q", o.trailer)
			}
			for _, l := range lines {
				if l == "" {
					continue
				}
				name, value, _ := strings.Cut(l, ": ")
				if !fieldsValidName(name) || strings.ContainsAny(value, "\r\n\x00") {
					t.Fatalf("bad trailer field accepted: %q", l)
				}
			}
		}
	})
}

func fieldsValidName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !tokenByte[s[i]] {
			return false
		}
	}
	return true
}
