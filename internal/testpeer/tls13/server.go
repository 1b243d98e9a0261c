// Package tls13 is a minimal TLS 1.3 server for guise's tests, written from
// RFC 8446 and RFC 8879 on Go's standard crypto, so that tests can watch a
// client accept a compressed server certificate, which no server installed
// on a test machine sends. It is NOT a TLS implementation for production
// use: it speaks one cipher suite (TLS_AES_128_GCM_SHA256), one group
// (x25519, asking for it with a HelloRetryRequest when needed), one
// signature scheme (ecdsa_secp256r1_sha256), no resumption, no client
// certificates, no key update from the client (it can send its own,
// Config.KeyUpdates); it serves one HTTP/1.1 request per
// connection and checks little beyond what its tests need.
//
// It is test-support code: only tests import it.
package tls13

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"errors"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Config configures a Server. It is read by Start and must not change
// afterwards.
type Config struct {
	// Identity is the certificate chain and key the server presents.
	// Required; the key must be ECDSA P-256.
	Identity *Identity
	// Algorithm forces the certificate compression algorithm, whether the
	// client offered it or not (to test that a client refuses what it did
	// not offer). A code point this server does not implement labels the
	// uncompressed message. Zero means the first algorithm of the client's
	// compress_certificate list that this server implements (Zlib, Brotli,
	// Zstd), or none if there is no such algorithm.
	Algorithm Algorithm
	// Uncompressed sends a plain Certificate message even when the client
	// offers compression.
	Uncompressed bool
	// Fault makes the CompressedCertificate message defective.
	Fault Fault
	// Response is what the server writes, as application data, after it
	// has read one request head. Nil means DefaultResponse.
	Response []byte
	// Timeout bounds each connection from accept to close; zero means 10
	// seconds.
	Timeout time.Duration
	// KeyUpdates, when > 0, makes the server send that many KeyUpdate
	// messages after reading the request and before the response: all in
	// one record with KeyUpdateTogether (which RFC 8446 5.1 forbids, as
	// handshake data must not span a key change), else one record each.
	// KeyUpdateRequested sets their update_requested field.
	KeyUpdates         int
	KeyUpdateTogether  bool
	KeyUpdateRequested bool
}

// DefaultResponse is the response served when Config.Response is nil.
const DefaultResponse = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 19\r\nConnection: close\r\n\r\ncompressed cert ok\n"

// Result is what the server saw and did on one connection.
type Result struct {
	// Offered is the client's compress_certificate list in its order; nil
	// when the client sent no such extension.
	Offered []Algorithm
	// ALPN is the client's application protocol offer.
	ALPN []string
	// Sent is the algorithm of the CompressedCertificate message the
	// server sent; zero when it sent a plain Certificate or none.
	Sent Algorithm
	// RetryRequest reports whether the server sent a HelloRetryRequest.
	RetryRequest bool
	// Request is the request head served; nil when none was.
	Request []byte
	// Err is why the connection ended before the response was written;
	// nil on success. An alert from the client is an *AlertError.
	Err error
}

// Server is a TLS 1.3 server on a loopback port, started by Start. Its
// methods are safe for concurrent use. Close stops it and waits for every
// connection's goroutine.
type Server struct {
	cfg Config
	ln  net.Listener
	wg  sync.WaitGroup

	compressed atomic.Int64

	certMu sync.Mutex
	certs  map[Algorithm][]byte // certificate messages built so far, by algorithm (0: uncompressed)

	mu      sync.Mutex
	closed  bool
	conns   map[net.Conn]struct{}
	results []Result
	changed chan struct{} // closed and replaced when a result is added
}

// Start listens on a free 127.0.0.1 port and serves connections until
// Close.
func Start(cfg Config) (*Server, error) {
	if cfg.Identity == nil || cfg.Identity.Key == nil || len(cfg.Identity.Chain) == 0 {
		return nil, errors.New("tls13: config has no identity")
	}
	if cfg.Identity.Key.Curve != elliptic.P256() {
		return nil, errors.New("tls13: the identity's key is not ECDSA P-256")
	}
	if cfg.Response == nil {
		cfg.Response = []byte(DefaultResponse)
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 10 * time.Second
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, ln: ln, conns: map[net.Conn]struct{}{}, changed: make(chan struct{})}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

// Addr returns the server's address, "127.0.0.1:port".
func (s *Server) Addr() string { return s.ln.Addr().String() }

// URL returns "https://127.0.0.1:port/".
func (s *Server) URL() string { return "https://" + s.Addr() + "/" }

// CompressedCertificates returns how many CompressedCertificate messages
// the server has written, over all connections.
func (s *Server) CompressedCertificates() int { return int(s.compressed.Load()) }

// Results returns the results of the connections finished so far, in the
// order they finished.
func (s *Server) Results() []Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.results)
}

// Wait returns the results once n connections have finished, or what there
// is with ctx's error when ctx ends first.
func (s *Server) Wait(ctx context.Context, n int) ([]Result, error) {
	for {
		s.mu.Lock()
		rs, ch := slices.Clone(s.results), s.changed
		s.mu.Unlock()
		if len(rs) >= n {
			return rs, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return rs, ctx.Err()
		}
	}
}

// Close stops listening, closes open connections and waits for their
// goroutines to end.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	err := s.ln.Close()
	for nc := range s.conns {
		nc.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return err
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			return // closed
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			nc.Close()
			return
		}
		s.conns[nc] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			r := s.serve(nc)
			nc.Close()
			s.mu.Lock()
			delete(s.conns, nc)
			s.results = append(s.results, r)
			close(s.changed)
			s.changed = make(chan struct{})
			s.mu.Unlock()
		}()
	}
}

// serve runs the handshake and one request on nc.
func (s *Server) serve(nc net.Conn) Result {
	var r Result
	if err := nc.SetDeadline(time.Now().Add(s.cfg.Timeout)); err != nil {
		r.Err = err
		return r
	}
	c := &recordConn{nc: nc}
	if r.Err = s.handshake(c, &r); r.Err != nil {
		return r
	}
	head, err := c.readApplicationUntil([]byte("\r\n\r\n"), 64<<10)
	if err != nil {
		r.Err = err
		return r
	}
	r.Request = head
	if n := s.cfg.KeyUpdates; n > 0 {
		if r.Err = c.sendKeyUpdates(n, s.cfg.KeyUpdateTogether, s.cfg.KeyUpdateRequested); r.Err != nil {
			return r
		}
	}
	if r.Err = c.writeRecords(recordApplicationData, s.cfg.Response); r.Err != nil {
		return r
	}
	c.sendAlert(AlertCloseNotify)
	return r
}

// key is the leaf key, which signs CertificateVerify.
func (s *Server) key() *ecdsa.PrivateKey { return s.cfg.Identity.Key }
