package tlsfp

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/guise-http/guise/internal/testpeer"
)

// serverHelloRecord captures the first record a crypto/tls server sends
// to hello (a ServerHello or a HelloRetryRequest).
func serverHelloRecord(t testing.TB, hello []byte, groups []tls.CurveID) []byte {
	t.Helper()
	a, b := net.Pipe()
	defer a.Close()
	cfg := &tls.Config{Certificates: []tls.Certificate{testCerts(t).TLS()}, CurvePreferences: groups}
	done := make(chan struct{})
	go func() {
		defer close(done)
		tls.Server(b, cfg).Handshake()
		b.Close()
	}()
	go a.Write(hello)
	rec, err := readRecord(a)
	if err != nil {
		t.Fatal(err)
	}
	a.Close()
	<-done
	return rec
}

// TestServerHelloGroup reads the group from real ServerHellos, and none
// from a HelloRetryRequest.
func TestServerHelloGroup(t *testing.T) {
	hello := buildHello(t, "fp.test", &Config{Profile: lookup(t, "firefox")})
	for _, g := range []tls.CurveID{tls.X25519MLKEM768, tls.X25519, tls.CurveP256} {
		rec := serverHelloRecord(t, hello, []tls.CurveID{g})
		if got, ok := serverHelloGroup(rec); !ok || got != uint16(g) {
			t.Errorf("server picked %v: read %d, %v", g, got, ok)
		}
	}
	hrr := serverHelloRecord(t, hello, []tls.CurveID{tls.CurveP384}) // no share offered
	if got, ok := serverHelloGroup(hrr); ok {
		t.Errorf("a HelloRetryRequest reported group %d", got)
	}
}

// chunkConn returns the data it holds in reads of at most n bytes.
type chunkConn struct {
	net.Conn
	r io.Reader
	n int
}

func (c *chunkConn) Read(p []byte) (int, error) {
	if len(p) > c.n {
		p = p[:c.n]
	}
	return c.r.Read(p)
}

// TestWatchSplitReads: the ServerHello is found however the reads split
// it, and reported once.
func TestWatchSplitReads(t *testing.T) {
	hello := buildHello(t, "fp.test", &Config{Profile: lookup(t, "firefox")})
	rec := serverHelloRecord(t, hello, []tls.CurveID{tls.CurveP256})
	stream := append(append([]byte(nil), rec...), rec...) // a second record follows
	for _, n := range []int{1, 3, 5, 6, 64, len(rec) - 1, len(rec), len(stream)} {
		hc := newHandshakeConn(&chunkConn{r: bytes.NewReader(stream), n: n})
		var got []uint16
		hc.watchHello(func(g uint16) { got = append(got, g) })
		out, err := io.ReadAll(hc)
		if err != nil || !bytes.Equal(out, stream) {
			t.Fatalf("reads of %d: %v, %d bytes", n, err, len(out))
		}
		if len(got) != 1 || got[0] != uint16(tls.CurveP256) {
			t.Errorf("reads of %d: reported %v", n, got)
		}
	}
}

// FuzzServerHelloGroup: any bytes, in any split, neither panic nor report
// a group that is not in the record.
func FuzzServerHelloGroup(f *testing.F) {
	hello := buildHello(f, "fp.test", &Config{Profile: lookup(f, "firefox")})
	for _, g := range []tls.CurveID{tls.X25519MLKEM768, tls.CurveP256, tls.CurveP384} {
		f.Add(serverHelloRecord(f, hello, []tls.CurveID{g}), 7)
	}
	f.Add([]byte{0x16, 3, 3, 0, 1, 2}, 1)
	f.Fuzz(func(t *testing.T, rec []byte, split int) {
		if g, ok := serverHelloGroup(rec); ok && !bytes.Contains(rec, []byte{0, 51}) {
			t.Fatalf("group %d from a record without a key_share", g)
		}
		// watch reports what a direct parse of the complete first record
		// says, once, however the reads split it.
		var want uint16
		wantOK := false
		if len(rec) >= 5 {
			if n := 5 + (int(rec[3])<<8 | int(rec[4])); n <= len(rec) && n <= maxRecord {
				want, wantOK = serverHelloGroup(rec[:n])
			}
		}
		hc := newHandshakeConn(&chunkConn{r: bytes.NewReader(rec), n: int(uint(split)%64) + 1})
		calls, got := 0, uint16(0)
		hc.watchHello(func(g uint16) { calls, got = calls+1, g })
		io.ReadAll(hc)
		if wantOK && (calls != 1 || got != want) || !wantOK && calls != 0 {
			t.Fatalf("watch reported %d times (last %d); direct parse %d, %v", calls, got, want, wantOK)
		}
	})
}

// TestConnReadTellsUncleanClose: Conn.Read ends with io.EOF after the
// server's close_notify, and with io.ErrUnexpectedEOF when the server only
// closes TCP (at a record boundary, where uTLS itself says io.EOF); the
// data before either is delivered.
func TestConnReadTellsUncleanClose(t *testing.T) {
	pki := testCerts(t)
	for _, clean := range []bool{true, false} {
		addr := fakeServer(t, func(c net.Conn, hello []byte) {
			tc := tls.Server(&prefixConn{Conn: c, r: io.MultiReader(bytes.NewReader(hello), c)},
				&tls.Config{Certificates: []tls.Certificate{pki.TLS()}})
			if err := tc.Handshake(); err != nil {
				return
			}
			tc.Write([]byte("data"))
			if clean {
				tc.Close() // close_notify, then the FIN
			} // else the FIN alone, when fakeServer closes c
		})
		c := chromeOver(t, dialTCP(t, addr), pki)
		got, err := io.ReadAll(c) // ReadAll takes io.EOF as the end
		c.Close()
		if string(got) != "data" {
			t.Errorf("clean %v: read %q, want data", clean, got)
		}
		if clean && err != nil || !clean && err != io.ErrUnexpectedEOF {
			t.Errorf("clean %v: the end read as %v", clean, err)
		}
	}
}

// TestCountRecords: record boundaries are followed whatever the reads'
// sizes: headers and bodies split across reads, several records in one.
func TestCountRecords(t *testing.T) {
	var stream []byte
	for i, n := range []int{0, 1, 4, 5, 300, 16384 + 256, 22, 0, 17} {
		stream = append(stream, 23, 3, 3, byte(n>>8), byte(n))
		stream = append(stream, bytes.Repeat([]byte{byte(i)}, n)...)
	}
	const records = 9
	for _, size := range []int{1, 2, 3, 5, 7, 64, 1000, len(stream)} {
		var c handshakeConn
		for b := stream; len(b) > 0; {
			n := min(size, len(b))
			c.countRecords(b[:n])
			b = b[n:]
		}
		if c.quiet != records || c.nhdr != 0 || c.left != 0 {
			t.Errorf("reads of %d: %d records (header %d, left %d), want %d at a boundary", size, c.quiet, c.nhdr, c.left, records)
		}
	}
}

// TestSmallRecordsAreNoFlood: many small application-data records that
// arrive before the reader reads (so that uTLS reads them in one go) are
// data, not a flood: every byte is read.
func TestSmallRecordsAreNoFlood(t *testing.T) {
	pki := testCerts(t)
	addr := fakeServer(t, func(c net.Conn, hello []byte) {
		tc := tls.Server(&prefixConn{Conn: c, r: io.MultiReader(bytes.NewReader(hello), c)},
			&tls.Config{Certificates: []tls.Certificate{pki.TLS()}})
		if err := tc.Handshake(); err != nil {
			return
		}
		for range 500 {
			tc.Write([]byte("x")) // a record each
		}
		tc.Close()
	})
	c := chromeOver(t, dialTCP(t, addr), pki)
	defer c.Close()
	time.Sleep(100 * time.Millisecond) // all 500 records wait in the socket
	got, err := io.ReadAll(c)
	if len(got) != 500 || err != nil {
		t.Fatalf("read %d bytes, %v; want 500 and a clean end", len(got), err)
	}
}

// eofWithData is a tunnel through an HTTPS proxy as the origin's TLS sees
// it: the outer connection returns its last data together with io.EOF
// (crypto/tls and uTLS do so when the outer close_notify was read ahead).
type eofWithData struct {
	net.Conn
	pending []byte
}

func (c *eofWithData) Read(p []byte) (int, error) {
	if len(c.pending) > 0 {
		n := copy(p, c.pending)
		c.pending = c.pending[n:]
		return n, nil
	}
	n, err := c.Conn.Read(p)
	if err != nil || n == 0 {
		return n, err
	}
	// Look one byte ahead: at the end, return the data with io.EOF.
	c.Conn.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	var one [1]byte
	m, err2 := c.Conn.Read(one[:])
	c.Conn.SetReadDeadline(time.Time{})
	if m > 0 {
		c.pending = append(c.pending, one[0])
	}
	if err2 == io.EOF {
		return n, io.EOF
	}
	return n, nil
}

// uncleanTunnel is a tunnel whose outer connection ended without
// close_notify: its end reads as io.ErrUnexpectedEOF (Conn.Read).
type uncleanTunnel struct{ net.Conn }

func (c uncleanTunnel) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

// TestUncleanCloseThroughTunnel: under a tunnel, the origin's close_notify
// that comes with the outer connection's end is a clean end, and an outer
// end without the origin's close_notify is not.
func TestUncleanCloseThroughTunnel(t *testing.T) {
	pki := testCerts(t)
	for _, tc := range []struct {
		name  string
		clean bool
		wrap  func(net.Conn) net.Conn
	}{
		{"origin close_notify, outer data with EOF", true, func(c net.Conn) net.Conn { return &eofWithData{Conn: c} }},
		{"no close_notify, outer ErrUnexpectedEOF", false, func(c net.Conn) net.Conn { return uncleanTunnel{c} }},
	} {
		addr := fakeServer(t, func(c net.Conn, hello []byte) {
			s := tls.Server(&prefixConn{Conn: c, r: io.MultiReader(bytes.NewReader(hello), c)},
				&tls.Config{Certificates: []tls.Certificate{pki.TLS()}})
			if err := s.Handshake(); err != nil {
				return
			}
			time.Sleep(100 * time.Millisecond) // the client waits in Read
			s.Write([]byte("data"))
			if tc.clean {
				s.Close()
			}
		})
		c := chromeOver(t, tc.wrap(dialTCP(t, addr)), pki)
		got, err := io.ReadAll(c)
		c.Close()
		if string(got) != "data" {
			t.Errorf("%s: read %q", tc.name, got)
		}
		if tc.clean && err != nil || !tc.clean && err != io.ErrUnexpectedEOF {
			t.Errorf("%s: the end read as %v", tc.name, err)
		}
	}
}

// dialTCP connects to addr.
func dialTCP(t *testing.T, addr string) net.Conn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return nc
}

// chromeOver runs the chrome profile's handshake for fp.test over nc,
// trusting pki.
func chromeOver(t *testing.T, nc net.Conn, pki *testpeer.Cert) net.Conn {
	t.Helper()
	c, _, err := Handshake(context.Background(), nc, "fp.test", &Config{Profile: lookup(t, "chrome"), RootCAs: pki.Roots})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// tcpPair returns the two ends of a loopback TCP connection.
func tcpPair(t *testing.T) (client, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	server, err = ln.Accept()
	if err != nil {
		client.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

// TestFirstFlightHeldUntilRead: what the handshake leaves held (its last
// flight) and the writes after it go out in one write, ahead of anything
// else, when a reader and writers race for the connection (run with
// -race); Close sends what is still held; a failed handshake's held bytes
// (the alert) go at once.
func TestFirstFlightHeldUntilRead(t *testing.T) {
	t.Run("race", func(t *testing.T) {
		for range 20 {
			nc, peer := tcpPair(t)
			wc := &writeCounter{Conn: nc}
			hc := newHandshakeConn(wc)
			hc.Write([]byte("fin."))
			if err := hc.done(true); err != nil {
				t.Fatal(err)
			}
			const writers, each = 4, 50
			var wg sync.WaitGroup
			for w := range writers {
				wg.Go(func() {
					for range each {
						hc.Write([]byte{'a' + byte(w)})
					}
				})
			}
			got := make(chan error, 1)
			go func() {
				hc.SetReadDeadline(time.Now().Add(5 * time.Second))
				var b [8]byte
				_, err := hc.Read(b[:])
				got <- err
			}()
			wg.Wait()
			peer.SetReadDeadline(time.Now().Add(5 * time.Second))
			want := 4 + writers*each
			buf := make([]byte, want)
			if _, err := io.ReadFull(peer, buf); err != nil {
				t.Fatalf("peer read: %v", err)
			}
			if !bytes.HasPrefix(buf, []byte("fin.")) {
				t.Fatalf("the held flight did not go first: %q", buf[:8])
			}
			count := map[byte]int{}
			for _, c := range buf[4:] {
				count[c]++
			}
			for w := range writers {
				if count['a'+byte(w)] != each {
					t.Fatalf("writer %d: %d bytes of %d arrived", w, count['a'+byte(w)], each)
				}
			}
			peer.Write([]byte("r"))
			if err := <-got; err != nil {
				t.Fatalf("read: %v", err)
			}
		}
	})
	t.Run("close", func(t *testing.T) {
		nc, peer := tcpPair(t)
		hc := newHandshakeConn(nc)
		hc.Write([]byte("fin."))
		hc.done(true)
		hc.Write([]byte("bye"))
		hc.Close()
		peer.SetReadDeadline(time.Now().Add(5 * time.Second))
		b, err := io.ReadAll(peer)
		if err != nil || string(b) != "fin.bye" {
			t.Fatalf("peer got %q, %v; want the held bytes, then the end", b, err)
		}
	})
	t.Run("failure", func(t *testing.T) {
		nc, peer := tcpPair(t)
		hc := newHandshakeConn(nc)
		hc.Write([]byte("alert"))
		hc.done(false)
		peer.SetReadDeadline(time.Now().Add(5 * time.Second))
		b := make([]byte, 5)
		if _, err := io.ReadFull(peer, b); err != nil || string(b) != "alert" {
			t.Fatalf("peer got %q, %v", b, err)
		}
		if hc.corked.Load() {
			t.Fatal("held after a failed handshake")
		}
	})
	t.Run("overflow", func(t *testing.T) {
		nc, peer := tcpPair(t)
		wc := &writeCounter{Conn: nc}
		hc := newHandshakeConn(wc)
		hc.Write([]byte("fin."))
		hc.done(true)
		big := bytes.Repeat([]byte("b"), maxHeld)
		go hc.Write(big)
		peer.SetReadDeadline(time.Now().Add(5 * time.Second))
		b := make([]byte, 4+len(big))
		if _, err := io.ReadFull(peer, b); err != nil || string(b[:4]) != "fin." {
			t.Fatalf("peer got %q..., %v", b[:4], err)
		}
		if hc.corked.Load() {
			t.Fatal("still held past maxHeld")
		}
	})
}
