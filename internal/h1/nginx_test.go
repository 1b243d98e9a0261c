package h1

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/guise-http/guise/internal/testpeer"
)

// startNginx runs nginx on a free 127.0.0.1 port serving www, and returns
// its address.
func startNginx(t *testing.T, www map[string][]byte) string {
	testpeer.Need(t, "nginx", "nginx-light")
	dir := testpeer.Dir(t)
	root := filepath.Join(dir, "www")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range www {
		if err := os.WriteFile(filepath.Join(root, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	addr := "127.0.0.1:" + testpeer.FreePort(t)
	testpeer.Nginx(t, dir, fmt.Sprintf(`keepalive_requests 1000;
  server {
    listen %[2]s;
    root %[1]s/www;
    client_max_body_size 64m;
    location = /up { return 204; }
    location = /gone { return 410 "gone\n"; }
  }`, dir, addr), addr)
	return addr
}

func TestNginx(t *testing.T) {
	large := bytes.Repeat([]byte("0123456789"), 300000) // 3 MB
	addr := startNginx(t, map[string][]byte{"small.txt": []byte("hello nginx\n"), "large.bin": large})
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c := NewConn(nc, nil)
	defer c.Close()
	var reuse []bool
	c.SetRelease(func(_ *Conn, r bool) { reuse = append(reuse, r) })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	host := hdr("Host", "localhost", "User-Agent", "guise-test")
	steps := []struct {
		req    Request
		status int
		body   []byte
	}{
		{Request{Method: "GET", Target: "/small.txt", Header: host}, 200, []byte("hello nginx\n")},
		{Request{Method: "GET", Target: "/large.bin", Header: host}, 200, large},
		{Request{Method: "HEAD", Target: "/large.bin", Header: host}, 200, nil},
		{Request{Method: "GET", Target: "/missing", Header: host}, 404, nil},
		{Request{Method: "POST", Target: "/up", Header: host, Body: io.LimitReader(zeros{}, 5<<20), ContentLength: -1}, 204, []byte{}},
		{Request{Method: "PUT", Target: "/up", Header: host, BodyBytes: large}, 204, []byte{}},
		{Request{Method: "POST", Target: "/up", Header: hdr("Host", "localhost", "Expect", "100-continue"), BodyBytes: []byte("x=1")}, 204, []byte{}},
		{Request{Method: "GET", Target: "/gone", Header: host}, 410, []byte("gone\n")},
		{Request{Method: "GET", Target: "/small.txt", Header: host}, 200, []byte("hello nginx\n")},
	}
	for i, st := range steps {
		var resp Response
		if err := c.RoundTrip(ctx, &st.req, &resp); err != nil {
			t.Fatalf("%d %s %s: %v", i, st.req.Method, st.req.Target, err)
		}
		got, err := io.ReadAll(&resp.Body)
		if err != nil || resp.StatusCode != st.status || st.body != nil && !bytes.Equal(got, st.body) {
			t.Fatalf("%d: %d, %d bytes, %v", i, resp.StatusCode, len(got), err)
		}
		if st.req.Method == "HEAD" && (resp.ContentLength != int64(len(large)) || len(got) != 0) {
			t.Fatalf("HEAD: ContentLength %d, %d body bytes", resp.ContentLength, len(got))
		}
		if !strings.HasPrefix(resp.Header.Get("Server"), "nginx") {
			t.Fatalf("Server %q", resp.Header.Get("Server"))
		}
		if len(reuse) != i+1 || !reuse[i] {
			t.Fatalf("%d: release %v", i, reuse)
		}
	}
	if c.Requests() != len(steps) {
		t.Fatal(c.Requests())
	}
}
