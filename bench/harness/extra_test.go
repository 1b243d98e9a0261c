package harness

import (
	"bufio"
	"context"
	"errors"
	"net"
	"os"
	"testing"
	"time"

	"github.com/guise-http/guise/bench/internal/wreqjs"
)

// TestRaw checks the raw client moves the right bytes where it fits (the
// Content-Length scenarios and the chunked download), keeps its
// connections, and refuses bad chunk framing and a body without framing
// with an error rather than misreading them.
func TestRaw(t *testing.T) {
	base := startPeer(t)
	cc := NewConnCounter(base)
	defer cc.Close()
	ctx := context.Background()
	hdr, err := BrowserHeader()
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range testScenarios() {
		if sc.Name != "small-c16" && sc.Name != "upload-32m" && sc.Name != "download-1m" && sc.Name != "chunked-8m" {
			continue
		}
		c, err := New("raw", Config{Conns: sc.Conc, Header: hdr})
		if err != nil {
			t.Fatal(err)
		}
		count := 3 * sc.Conc
		s, err := Round(ctx, c, &sc, base, 0, count, cc.Accepted)
		c.Close()
		if err != nil {
			t.Fatalf("%s: %v", sc.Name, err)
		}
		if s.Ops != int64(count) || s.Bytes != int64(count)*sc.Payload() || s.Conns < 1 || s.Conns > int64(sc.Conc) {
			t.Errorf("%s: %+v", sc.Name, s)
		}
	}
	c, _ := New("raw", Config{Conns: 1})
	defer c.Close()
	if n, err := c.Get(ctx, base+"/chunked4k", ReadAll); n != 4096 || err != nil {
		t.Errorf("chunked body: %d bytes, %v", n, err)
	}
	for _, tc := range []struct {
		resp string
		want error
	}{
		{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", errRawChunk},
		{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX\r\n0\r\n\r\n", errRawChunk},
		{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1000000000000000\r\n", errRawChunk},
		{"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nabc", errRawFraming},
	} {
		url := cannedServer(t, tc.resp)
		c, _ := New("raw", Config{Conns: 1})
		if _, err := c.Get(ctx, url, ReadAll); !errors.Is(err, tc.want) {
			t.Errorf("%q: %v, want %v", tc.resp, err, tc.want)
		}
		c.Close()
	}
}

// cannedServer answers every connection's first request with resp and
// closes it; it returns the URL to ask.
func cannedServer(t *testing.T, resp string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.SetDeadline(time.Now().Add(5 * time.Second))
			br := bufio.NewReader(c)
			for { // the request head, so that the close sends no reset
				line, err := br.ReadSlice('\n')
				if err != nil || len(line) <= 2 {
					break
				}
			}
			c.Write([]byte(resp))
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return "http://" + ln.Addr().String() + "/"
}

// TestWreqJS runs one short wreq-js turn when node and the package are
// installed (bench/node: npm install), and skips otherwise.
func TestWreqJS(t *testing.T) {
	if _, _, err := wreqjs.Find(); err != nil {
		if os.Getenv("GUISE_REQUIRE_PEERS") == "1" {
			t.Fatal(err) // .ci/run installs it
		}
		t.Skip(err)
	}
	base := startPeer(t)
	cc := NewConnCounter(base)
	defer cc.Close()
	c, err := New("wreq-js", Config{Conns: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	sc := Scenario{Name: "small-c4", Path: "/small", Want: 100, Conc: 4}
	s, err := Round(context.Background(), c, &sc, base, 200*time.Millisecond, 0, cc.Accepted)
	if err != nil {
		t.Fatal(err)
	}
	if s.Ops < 4 || s.Bytes != 100*s.Ops || s.CPU <= 0 || !s.External || s.AllocsPerOp() != -1 || s.Conns < 1 {
		t.Errorf("implausible sample %+v", s)
	}
	up := Scenario{Name: "up", Path: "/upload", Upload: 10, Conc: 1}
	if _, err := Round(context.Background(), c, &up, base, time.Millisecond, 0, nil); err == nil {
		t.Error("wreq-js ran an upload")
	}
}
