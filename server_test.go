package guise

import (
	"bufio"
	"bytes"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
)

// testServer is an httptest server on 127.0.0.1 that counts the
// connections it accepts and keeps the raw bytes of every request head.
type testServer struct {
	*httptest.Server
	conns atomic.Int32
	mu    sync.Mutex
	heads [][]byte
}

func newTestServer(t *testing.T, h http.Handler, configure ...func(*http.Server)) *testServer {
	t.Helper()
	ts := &testServer{}
	ts.Server = httptest.NewUnstartedServer(h)
	for _, f := range configure {
		f(ts.Server.Config)
	}
	ts.Server.Listener = &recordingListener{Listener: ts.Server.Listener, ts: ts}
	ts.Start()
	t.Cleanup(ts.Close)
	return ts
}

// Heads returns the raw request heads received so far.
func (ts *testServer) Heads() [][]byte {
	ts.mu.Lock()
	defer ts.mu.Unlock()
	return append([][]byte(nil), ts.heads...)
}

type recordingListener struct {
	net.Listener
	ts *testServer
}

func (l *recordingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	l.ts.conns.Add(1)
	return &recordingConn{Conn: c, ts: l.ts}, nil
}

// recordingConn collects what the client sends and cuts it into request
// heads at each blank line that starts a body or a new request.
type recordingConn struct {
	net.Conn
	ts  *testServer
	buf bytes.Buffer
}

func (c *recordingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.buf.Write(p[:n])
		for {
			b := c.buf.Bytes()
			i := bytes.Index(b, []byte("\r\n\r\n"))
			if i < 0 || !bytes.HasPrefix(b, []byte("GET ")) && !bytes.HasPrefix(b, []byte("POST ")) &&
				!bytes.HasPrefix(b, []byte("HEAD ")) && !bytes.HasPrefix(b, []byte("PUT ")) {
				if i >= 0 {
					c.buf.Reset() // body bytes; heads are all we keep
				}
				break
			}
			head := append([]byte(nil), b[:i+4]...)
			c.ts.mu.Lock()
			c.ts.heads = append(c.ts.heads, head)
			c.ts.mu.Unlock()
			rest := append([]byte(nil), b[i+4:]...)
			c.buf.Reset()
			c.buf.Write(rest)
		}
	}
	return n, err
}

// headerNames returns the field names of a raw head, in order and case.
func headerNames(head []byte) []string {
	var names []string
	sc := bufio.NewScanner(bytes.NewReader(head))
	first := true
	for sc.Scan() {
		line := sc.Text()
		if first {
			first = false
			continue
		}
		if line == "" {
			break
		}
		name, _, _ := bytes.Cut([]byte(line), []byte(":"))
		names = append(names, string(name))
	}
	return names
}
