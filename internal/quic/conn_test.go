package quic

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/guise-http/guise/internal/testpeer"
	"github.com/guise-http/guise/internal/tlsfp"
	"github.com/guise-http/guise/profile"
	quicgo "github.com/quic-go/quic-go"
)

// echoServer is a quic-go server on loopback that echoes every
// bidirectional stream and, on each connection, opens one uni stream
// carrying "hello from the server".
type echoServer struct {
	ln   *quicgo.Listener
	cert *testpeer.Cert
	wg   sync.WaitGroup
	// conns receives every accepted connection.
	conns chan *quicgo.Conn
	mu    sync.Mutex
	all   []*quicgo.Conn
}

func newEchoServer(t testing.TB, qc *quicgo.Config) *echoServer {
	t.Helper()
	cert := testpeer.Localhost(t)
	if qc == nil {
		qc = &quicgo.Config{}
	}
	ln, err := quicgo.ListenAddr("127.0.0.1:0", cert.ServerConfig("h3"), qc)
	if err != nil {
		t.Fatal(err)
	}
	s := &echoServer{ln: ln, cert: cert, conns: make(chan *quicgo.Conn, 16)}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			conn, err := ln.Accept(context.Background())
			if err != nil {
				return
			}
			select {
			case s.conns <- conn:
			default:
			}
			s.mu.Lock()
			s.all = append(s.all, conn)
			s.mu.Unlock()
			s.wg.Add(1)
			go func() {
				defer s.wg.Done()
				s.serve(conn)
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		s.mu.Lock()
		for _, c := range s.all {
			c.CloseWithError(0, "test over")
		}
		s.mu.Unlock()
		s.wg.Wait()
	})
	return s
}

func (s *echoServer) serve(conn *quicgo.Conn) {
	if u, err := conn.OpenUniStream(); err == nil {
		u.Write([]byte("hello from the server"))
		u.Close()
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		st, err := conn.AcceptStream(context.Background())
		if err != nil {
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			// the first byte picks the behaviour: N never reads, R resets
			// both ways, anything else is echoed with the rest
			var b [1]byte
			if _, err := io.ReadFull(st, b[:]); err != nil {
				st.Close()
				return
			}
			switch b[0] {
			case 'N':
				<-conn.Context().Done()
				return
			case 'R':
				st.CancelWrite(7)
				st.CancelRead(8)
				return
			}
			st.Write(b[:])
			io.Copy(st, st)
			st.Close()
		}()
	}
}

func (s *echoServer) addr() *net.UDPAddr { return s.ln.Addr().(*net.UDPAddr) }

// dial connects guise's client with profile name to addr.
func dial(t testing.TB, name string, addr net.Addr, cert *testpeer.Cert, mod func(*Config)) (*Conn, error) {
	t.Helper()
	p, err := profile.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	pc, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	cfg := &Config{TLS: &tlsfp.Config{Profile: p, RootCAs: cert.Roots}, ServerName: "localhost",
		HandshakeTimeout: 5 * time.Second}
	if mod != nil {
		mod(cfg)
	}
	c, err := Dial(t.Context(), pc, addr, cfg)
	if err != nil {
		pc.Close()
		return nil, err
	}
	t.Cleanup(func() {
		c.CloseWithError(0, "")
		pc.Close()
	})
	return c, nil
}

var profiles = []string{"chrome156-linux", "firefox153-linux"}

// TestHandshake is RELIABILITY Q-11: guise's client completes the
// handshake with quic-go's server from the browser's first flight, for
// both profiles, and reads the server's uni stream.
func TestHandshake(t *testing.T) {
	srv := newEchoServer(t, nil)
	for _, name := range profiles {
		t.Run(name, func(t *testing.T) {
			c, err := dial(t, name, srv.addr(), srv.cert, nil)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
			defer cancel()
			u, err := c.AcceptUniStream(ctx)
			if err != nil {
				t.Fatal(err)
			}
			u.SetReadDeadline(time.Now().Add(5 * time.Second))
			b, err := io.ReadAll(u)
			if err != nil || string(b) != "hello from the server" {
				t.Fatalf("uni stream: %q, %v", b, err)
			}
			if u.ID() != 3 {
				t.Errorf("server uni stream id %d, want 3", u.ID())
			}
			// RFC 9001 §4.9: Initial keys go with the first Handshake
			// packet sent, Handshake keys at HANDSHAKE_DONE
			c.mu.Lock()
			defer c.mu.Unlock()
			if !c.spaces[spInitial].discarded || c.seal[spInitial] != nil {
				t.Error("Initial keys kept after the handshake")
			}
			if !c.confirmed || !c.spaces[spHandshake].discarded || c.open[spHandshake] != nil {
				t.Error("Handshake keys kept after HANDSHAKE_DONE")
			}
		})
	}
}

// echo writes data on a new stream, closes it and reads the echo.
func echo(ctx context.Context, c *Conn, data []byte) error {
	if data[0] == 'N' || data[0] == 'R' {
		data[0] = 'E' // not one of the echo server's commands
	}
	st, err := c.OpenStream(ctx)
	if err != nil {
		return err
	}
	dl, _ := ctx.Deadline()
	st.SetDeadline(dl)
	errc := make(chan error, 1)
	go func() {
		_, err := st.Write(data)
		if err == nil {
			err = st.Close()
		}
		errc <- err
	}()
	got, err := io.ReadAll(st)
	if werr := <-errc; werr != nil {
		return fmt.Errorf("write: %w", werr)
	}
	if err != nil {
		return fmt.Errorf("read after %d bytes: %w", len(got), err)
	}
	if !bytes.Equal(got, data) {
		return fmt.Errorf("echo of %d bytes differs (%d back)", len(data), len(got))
	}
	return nil
}

func randomBytes(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// TestEcho is RELIABILITY Q-12: echoes of 1 B to 8 MiB, one at a time,
// then 16 at once on one connection, byte-exact.
func TestEcho(t *testing.T) {
	srv := newEchoServer(t, nil)
	for _, name := range profiles {
		t.Run(name, func(t *testing.T) {
			c, err := dial(t, name, srv.addr(), srv.cert, nil)
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
			defer cancel()
			for i, n := range []int{1, 100, 1200, 5000, 70000, 1 << 20, 8 << 20} {
				if err := echo(ctx, c, randomBytes(n, uint64(i))); err != nil {
					t.Fatalf("%d bytes: %v", n, err)
				}
			}
			// quic-go updates its keys after its first 100 packets;
			// the client followed (or nothing would have decrypted since)
			c.mu.Lock()
			updates := c.keyUpdates
			c.mu.Unlock()
			if updates < 1 {
				t.Error("no key update from the server was seen")
			}
			var wg sync.WaitGroup
			errs := make(chan error, 16)
			for i := range 16 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if err := echo(ctx, c, randomBytes(1000+i*30000, uint64(100+i))); err != nil {
						errs <- err
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
		})
	}
}

var _ = errors.Is
