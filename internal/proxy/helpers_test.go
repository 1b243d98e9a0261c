package proxy

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/guise-http/guise/internal/testpeer"
)

// serve runs script on every connection to a new listener on 127.0.0.1,
// each exchange bounded in time; the test's end waits for every script and
// reports their errors.
func serve(t testing.TB, script func(c net.Conn) error) *testpeer.Server {
	t.Helper()
	return testpeer.Listen(t, bounded(script))
}

// serveOn is serve on ln.
func serveOn(t testing.TB, ln net.Listener, script func(c net.Conn) error) *testpeer.Server {
	return testpeer.Serve(t, ln, bounded(script))
}

// bounded bounds every scripted exchange in time.
func bounded(script func(c net.Conn) error) func(c net.Conn) error {
	return func(c net.Conn) error {
		c.SetDeadline(time.Now().Add(10 * time.Second))
		return script(c)
	}
}

// readHead reads an HTTP head (through the blank line) byte by byte, so that
// nothing after it is consumed.
func readHead(c net.Conn) (string, error) {
	var b []byte
	one := make([]byte, 1)
	for len(b) < 64<<10 {
		if _, err := io.ReadFull(c, one); err != nil {
			return string(b), err
		}
		b = append(b, one[0])
		if bytes.HasSuffix(b, []byte("\r\n\r\n")) {
			return string(b), nil
		}
	}
	return string(b), errors.New("head too long")
}

// expectEOF reads until the peer closes and reports an error if it sends
// anything or the close does not come.
func expectEOF(c net.Conn) error {
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var b [1]byte
	n, err := c.Read(b[:])
	if n > 0 {
		return errors.New("peer sent more bytes instead of closing: " + string(b[:n]))
	}
	if err != io.EOF && !isReset(err) {
		return errors.New("peer did not close: " + err.Error())
	}
	return nil
}

func isReset(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "reset by peer") || strings.Contains(err.Error(), "broken pipe"))
}

// expect reads len(want) bytes and compares.
func expect(c net.Conn, want []byte) error {
	got := make([]byte, len(want))
	if _, err := io.ReadFull(c, got); err != nil {
		return errors.New("reading " + string(want) + ": " + err.Error())
	}
	if !bytes.Equal(got, want) {
		return errors.New("got " + quote(got) + ", want " + quote(want))
	}
	return nil
}

func quote(b []byte) string { return strconv.Quote(string(b)) }

// echo copies everything the client sends back to it until EOF.
func echo(c net.Conn) error {
	_, err := io.Copy(c, c)
	if isReset(err) {
		return nil
	}
	return err
}

func mustURL(t testing.TB, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func ctxTimeout(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// roundTrip writes msg through the tunnel and expects it echoed.
func roundTrip(t testing.TB, c net.Conn, msg string) {
	t.Helper()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte(msg)); err != nil {
		t.Fatalf("tunnel write: %v", err)
	}
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatalf("tunnel read: %v", err)
	}
	if string(got) != msg {
		t.Fatalf("tunnel echoed %q, want %q", got, msg)
	}
}

// tlsFunc returns a Dialer.TLS that verifies against pool.
func tlsFunc(pool *x509.CertPool) func(ctx context.Context, nc net.Conn, serverName string) (net.Conn, error) {
	return func(ctx context.Context, nc net.Conn, serverName string) (net.Conn, error) {
		tc := tls.Client(nc, &tls.Config{RootCAs: pool, ServerName: serverName, NextProtos: []string{"http/1.1"}})
		if err := tc.HandshakeContext(ctx); err != nil {
			return nil, err
		}
		return tc, nil
	}
}

// connectProxy is a minimal working CONNECT proxy script: it reads the head,
// dials the target named in the request line on 127.0.0.1 and pipes.
func connectProxy(c net.Conn) error {
	head, err := readHead(c)
	if err != nil {
		return err
	}
	line, _, _ := strings.Cut(head, "\r\n")
	f := strings.Fields(line)
	if len(f) != 3 || f[0] != "CONNECT" {
		return errors.New("bad request line " + line)
	}
	up, err := net.Dial("tcp", f[1])
	if err != nil {
		io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\n\r\n")
		return nil
	}
	defer up.Close()
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return err
	}
	return pipe(c, up)
}

// pipe copies both ways until either side ends, then closes both.
func pipe(a, b net.Conn) error {
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		io.Copy(dst, src)
		a.Close()
		b.Close()
		done <- struct{}{}
	}
	go cp(a, b)
	go cp(b, a)
	<-done
	<-done
	return nil
}

// memConn is an in-memory net.Conn: reads come from r, writes go to w.
type memConn struct {
	r io.Reader
	w io.Writer
}

func (c *memConn) Read(b []byte) (int, error)       { return c.r.Read(b) }
func (c *memConn) Write(b []byte) (int, error)      { return c.w.Write(b) }
func (c *memConn) Close() error                     { return nil }
func (c *memConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (c *memConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (c *memConn) SetDeadline(time.Time) error      { return nil }
func (c *memConn) SetReadDeadline(time.Time) error  { return nil }
func (c *memConn) SetWriteDeadline(time.Time) error { return nil }

// chunkReader returns at most n bytes per Read.
type chunkReader struct {
	b   []byte
	n   int
	off int
}

func (r *chunkReader) Read(p []byte) (int, error) {
	if r.off >= len(r.b) {
		return 0, io.EOF
	}
	k := min(len(p), r.n, len(r.b)-r.off)
	copy(p, r.b[r.off:r.off+k])
	r.off += k
	return k, nil
}
