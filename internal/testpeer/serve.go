package testpeer

import (
	"crypto/tls"
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// Server is a scripted peer: every connection its listener accepts runs a
// script on a goroutine of its own, and is closed when the script returns.
// The test's Cleanup closes the listener, waits for every script to return
// and reports the errors they returned with tb.Errorf.
type Server struct {
	// Addr is the listener's address, host:port.
	Addr string
	// Conns counts the connections accepted so far.
	Conns atomic.Int32

	ln   net.Listener
	wg   sync.WaitGroup
	mu   sync.Mutex
	live map[net.Conn]struct{}
	errs []error
}

// Listen runs script on every connection to a new TCP listener on
// 127.0.0.1.
func Listen(tb testing.TB, script func(net.Conn) error) *Server {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	return Serve(tb, ln, script)
}

// ListenTLS is Listen with TLS presenting Localhost, offering nextProtos
// in ALPN. The script's conn is a *tls.Conn whose handshake has not run.
func ListenTLS(tb testing.TB, script func(net.Conn) error, nextProtos ...string) *Server {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	return Serve(tb, tls.NewListener(ln, Localhost(tb).ServerConfig(nextProtos...)), script)
}

// Serve runs script on every connection ln accepts, and owns ln.
func Serve(tb testing.TB, ln net.Listener, script func(net.Conn) error) *Server {
	s := &Server{Addr: ln.Addr().String(), ln: ln, live: map[net.Conn]struct{}{}}
	s.wg.Add(1)
	go s.accept(script)
	tb.Cleanup(func() {
		ln.Close()
		s.wg.Wait()
		s.mu.Lock()
		defer s.mu.Unlock()
		for _, err := range s.errs {
			tb.Errorf("testpeer: script: %v", err)
		}
	})
	return s
}

func (s *Server) accept(script func(net.Conn) error) {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.Conns.Add(1)
		s.mu.Lock()
		s.live[c] = struct{}{}
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			err := script(c)
			c.Close()
			s.mu.Lock()
			delete(s.live, c)
			if err != nil {
				s.errs = append(s.errs, err)
			}
			s.mu.Unlock()
		}()
	}
}

// CloseConns closes the listener and every connection still open, so that
// scripts blocked reading return. Tests whose clients keep connections
// open past their end call it in a Cleanup registered after Serve's (so it
// runs first).
func (s *Server) CloseConns() {
	s.ln.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.live {
		c.Close()
	}
}

// Handle adapts a script that reports nothing.
func Handle(handle func(net.Conn)) func(net.Conn) error {
	return func(c net.Conn) error { handle(c); return nil }
}
