package harness

import (
	"bufio"
	"context"
	"io"
	"net"
	"slices"
	"strings"
	"testing"
	"time"
)

// headServer answers every request on 127.0.0.1 with a 100-byte body and
// sends each request head it reads to heads.
func headServer(t *testing.T, heads chan<- string) string {
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
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(10 * time.Second))
				br := bufio.NewReader(c)
				for {
					var head strings.Builder
					for {
						line, err := br.ReadString('\n')
						if err != nil {
							return
						}
						head.WriteString(line)
						if line == "\r\n" {
							break
						}
					}
					select {
					case heads <- head.String():
					default:
					}
					io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n"+strings.Repeat("a", 100))
				}
			}()
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return "http://" + ln.Addr().String()
}

// fieldNames returns the lower-cased names of a request head's fields,
// sorted, and the value of each.
func fieldNames(head string) ([]string, map[string]string) {
	lines := strings.Split(strings.TrimSuffix(head, "\r\n\r\n"), "\r\n")[1:]
	var names []string
	vals := map[string]string{}
	for _, l := range lines {
		n, v, _ := strings.Cut(l, ":")
		n = strings.ToLower(n)
		names = append(names, n)
		vals[n] = strings.TrimSpace(v)
	}
	slices.Sort(names)
	return names, vals
}

// TestBrowserHeaderSameHead: with Config.Header = BrowserHeader(), every
// client sends the fields guise sends, with the same values and the same
// head length (only order and name case may differ).
func TestBrowserHeaderSameHead(t *testing.T) {
	hdr, err := BrowserHeader()
	if err != nil {
		t.Fatal(err)
	}
	if len(hdr) < 10 {
		t.Fatalf("BrowserHeader has %d fields; the default profile's navigation has more", len(hdr))
	}
	heads := make(chan string, 1)
	base := headServer(t, heads)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if Names[0] != "guise" {
		t.Fatal("the test needs guise's head first")
	}
	var want string
	for _, name := range Names {
		c, err := New(name, Config{Conns: 1, Header: hdr})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Get(ctx, base+"/small", ReadAll); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		c.Close()
		var got string
		select {
		case got = <-heads:
		case <-ctx.Done():
			t.Fatalf("%s: no head seen", name)
		}
		if name == "guise" {
			want = got
			continue
		}
		wn, wv := fieldNames(want)
		gn, gv := fieldNames(got)
		if !slices.Equal(wn, gn) {
			t.Errorf("%s sends fields %q, guise %q", name, gn, wn)
		}
		for n, v := range wv {
			if n != "host" && gv[n] != v {
				t.Errorf("%s: %s = %q, guise sends %q", name, n, gv[n], v)
			}
		}
		if len(got) != len(want) {
			t.Errorf("%s head is %d bytes, guise's %d", name, len(got), len(want))
		}
	}
}
