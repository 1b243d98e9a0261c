package fingerprint

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/guise-http/guise/internal/ws"
)

// Defaults for the Server's zero-valued fields.
const (
	DefaultAddr             = "127.0.0.1:0"
	DefaultMaxClientBytes   = 256 << 10
	DefaultMaxRecords       = 4096
	DefaultHandshakeTimeout = 10 * time.Second
	DefaultIdleTimeout      = 2 * time.Minute
)

// ErrServerClosed is returned by Start on a Server that was closed.
var ErrServerClosed = errors.New("fingerprint: server closed")

// ErrServerStarted is returned by a second call to Start.
var ErrServerStarted = errors.New("fingerprint: server already started")

// Server is the fingerprint echo server: it accepts TLS and plain TCP
// connections, records what each client sent (the raw ClientHello, the
// decrypted HTTP/1.1 request heads or HTTP/2 frames) and answers with
// reports of it (see the endpoints in [Server.Handler]).
//
// The zero value is usable: set the exported fields (all optional) before
// Start; they are read by Start and must not change afterwards. A Server
// is started once, serves until Close, and is safe for concurrent use.
type Server struct {
	// Addr is the TCP address to listen on; "" means DefaultAddr
	// (127.0.0.1 on a free port).
	Addr string
	// CA issues the leaf certificate; nil means a fresh CA made by Start.
	CA *CA
	// MaxClientBytes bounds the decrypted client bytes kept per
	// connection; 0 means DefaultMaxClientBytes.
	MaxClientBytes int
	// MaxRecords bounds the connections Records returns (the oldest are
	// dropped); 0 means DefaultMaxRecords.
	MaxRecords int
	// HandshakeTimeout bounds reading the ClientHello and the TLS
	// handshake; 0 means DefaultHandshakeTimeout.
	HandshakeTimeout time.Duration
	// IdleTimeout closes a connection idle for that long; 0 means
	// DefaultIdleTimeout.
	IdleTimeout time.Duration
	// DisableQUIC turns off the UDP side. By default the server also
	// listens on UDP, on the same port, for QUIC v1 with ALPN h3, and
	// records each connection's datagrams and streams (quic_server.go).
	DisableQUIC bool
	// DisableHTTP2 makes the TLS side offer ALPN http/1.1 alone, as an
	// origin that does not speak HTTP/2 does: a client offering h2 too gets
	// http/1.1.
	DisableHTTP2 bool
	// QPACKMaxTableCapacity, if non-zero, is the
	// SETTINGS_QPACK_MAX_TABLE_CAPACITY the UDP side advertises, with
	// QPACKBlockedStreams as SETTINGS_QPACK_BLOCKED_STREAMS: the client may
	// then use a dynamic table, which the server decodes, acknowledges and
	// records (quic_qpack.go). Google's servers (QUICHE) advertise 65536
	// and 100. By default the server allows no dynamic table.
	QPACKMaxTableCapacity uint64
	QPACKBlockedStreams   uint64
	// AnnounceQPACK sends both QPACK settings even when
	// QPACKMaxTableCapacity is 0: a server that says it allows no table
	// (0 and 0), as QUICHE's servers say it, rather than one whose
	// SETTINGS leave them out. Chromium answers the first with a Set
	// Dynamic Table Capacity 0 on its encoder stream, the second with
	// nothing.
	AnnounceQPACK bool
	// wsDeflate, if set, is the Sec-WebSocket-Extensions answer to a
	// handshake offering permessage-deflate, instead of declining it, and
	// onWSFrame sees each client frame (its payload unmasked, still
	// compressed) with the handshake's offer (tests only: the browsers'
	// compressed messages).
	wsDeflate string
	onWSFrame func(offer string, h ws.Header, payload []byte)
	// settingsDelay holds the server's SETTINGS back after the handshake
	// (tests only: does a client wait for them before its first request?).
	settingsDelay time.Duration
	// h3FirstPage serves H3FirstPage at "/" over HTTP/3 instead of
	// H3Page (tests only: the QPACK recordings were made with the page's
	// first connection alone, its image and fetch()).
	h3FirstPage bool
	// OnRecord, if set, is called with the final record of every
	// connection once it has closed (or failed before HTTP). Calls come
	// from the connection's goroutine, possibly concurrently; a slow
	// OnRecord delays Close.
	OnRecord func(*ConnRecord)

	mu       sync.Mutex
	started  bool
	closed   bool
	ca       *CA
	ln       net.Listener
	quic     *quicSide // nil with DisableQUIC
	hl       *chanListener
	hs       *http.Server
	tlsConf  *tls.Config
	nextID   uint64
	records  []*liveConn           // newest last, at most MaxRecords
	raw      map[net.Conn]struct{} // open TCP connections
	changed  chan struct{}         // closed and replaced on every change
	serveErr chan error
	closing  chan struct{} // closed by Close

	pages, resumes     atomic.Int64 // page and /api/resume requests served
	h3Pages, h3Resumes atomic.Int64 // the same over HTTP/3 (/ and /h3/resume)
	flowPages          atomic.Int64 // /flow/ pages served
	wsPages            atomic.Int64 // /ws/ pages served
	wsDone             atomic.Int64 // /ws/echo sockets closed
	flowForms          atomic.Int64 // /flow/form submissions answered
	flowNavs           atomic.Int64 // /flow/nav pages served
	flowLinked         atomic.Int64 // /flow/linked pages served

	pre    sync.WaitGroup // accept loop and per-connection setup goroutines
	served sync.WaitGroup // connections handed to the http.Server
}

// Start listens on Addr and starts serving in background goroutines. It
// returns once the listener is open, so URL is valid when it returns.
func (s *Server) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrServerClosed
	}
	if s.started {
		return ErrServerStarted
	}
	ca := s.CA
	if ca == nil {
		var err error
		if ca, err = NewCA(); err != nil {
			return err
		}
	}
	addr := s.Addr
	if addr == "" {
		addr = DefaultAddr
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return errors.New("fingerprint: listen: " + err.Error())
	}
	s.ca = ca
	if !s.DisableQUIC {
		// The UDP port must be the TCP one; when the port was free to
		// choose, a taken UDP twin means choosing again (bounded).
		for try := 0; ; try++ {
			err = s.listenQUIC(ln.Addr())
			if err == nil {
				break
			}
			if _, port, _ := net.SplitHostPort(addr); port != "0" || try == 8 {
				ln.Close()
				return errors.New("fingerprint: listen udp: " + err.Error())
			}
			ln.Close()
			if ln, err = net.Listen("tcp", addr); err != nil {
				return errors.New("fingerprint: listen: " + err.Error())
			}
		}
	}
	s.started = true
	s.ln = ln
	s.raw = make(map[net.Conn]struct{})
	if s.changed == nil { // Changed may have been called before Start
		s.changed = make(chan struct{})
	}
	s.closing = make(chan struct{})
	s.tlsConf = &tls.Config{
		Certificates: []tls.Certificate{ca.Leaf()},
		NextProtos:   []string{ProtoH2, ProtoHTTP1},
	}
	if s.DisableHTTP2 {
		s.tlsConf.NextProtos = []string{ProtoHTTP1}
	}
	s.hl = newChanListener(ln.Addr())
	var protos http.Protocols
	protos.SetHTTP1(true)
	protos.SetUnencryptedHTTP2(true)
	s.hs = &http.Server{
		Handler:           s.Handler(),
		Protocols:         &protos,
		ReadHeaderTimeout: s.handshakeTimeout(),
		IdleTimeout:       s.idleTimeout(),
		ErrorLog:          log.New(io.Discard, "", 0),
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			if tc, ok := c.(*teeConn); ok {
				return context.WithValue(ctx, liveConnKey{}, tc.lc)
			}
			return ctx
		},
		ConnState: func(c net.Conn, st http.ConnState) {
			tc, ok := c.(*teeConn)
			if !ok {
				return
			}
			if st == http.StateClosed || st == http.StateHijacked {
				tc.lc.served.Do(s.served.Done)
			}
		},
	}
	s.serveErr = make(chan error, 1)
	hs, hl := s.hs, s.hl
	s.pre.Add(1)
	go func() {
		defer s.pre.Done()
		s.serveErr <- hs.Serve(hl)
	}()
	s.pre.Add(1)
	go s.acceptLoop(ln)
	return nil
}

// isClosing reports whether Close was called.
func (s *Server) isClosing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// liveConnKey is the context key under which handlers find their connection.
type liveConnKey struct{}

func (s *Server) handshakeTimeout() time.Duration {
	if s.HandshakeTimeout > 0 {
		return s.HandshakeTimeout
	}
	return DefaultHandshakeTimeout
}

func (s *Server) idleTimeout() time.Duration {
	if s.IdleTimeout > 0 {
		return s.IdleTimeout
	}
	return DefaultIdleTimeout
}

// ListenAddr returns the address the server listens on, or "" before Start.
func (s *Server) ListenAddr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln == nil {
		return ""
	}
	return s.ln.Addr().String()
}

// URL returns "https://" and the listening address ("" before Start). The
// same port also answers plain http://.
func (s *Server) URL() string {
	a := s.ListenAddr()
	if a == "" {
		return ""
	}
	return "https://" + a
}

// CAPEM returns the PEM of the CA that issued the server's certificate
// ("" before Start unless CA was set).
func (s *Server) CAPEM() []byte {
	if ca := s.caOrNil(); ca != nil {
		return ca.PEM()
	}
	return nil
}

// CertPool returns a pool holding the server's CA, for a Go client's
// tls.Config.RootCAs; nil before Start unless CA was set.
func (s *Server) CertPool() *x509.CertPool {
	if ca := s.caOrNil(); ca != nil {
		return ca.CertPool()
	}
	return nil
}

func (s *Server) caOrNil() *CA {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ca != nil {
		return s.ca
	}
	return s.CA
}

// Close stops the listener, closes every connection and waits for every
// goroutine the server started, including net/http's connection
// goroutines. It is safe to call more than once and before Start.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	started := s.started
	if s.closing != nil {
		close(s.closing)
	}
	if started {
		s.ln.Close()
		for c := range s.raw {
			c.Close()
		}
	}
	s.mu.Unlock()
	if !started {
		return nil
	}
	s.hs.Close()
	s.hl.Close()
	s.closeQUIC()
	s.pre.Wait()
	<-s.serveErr
	// Connections accepted by Serve after hs.Close took its snapshot are
	// closed here; every raw close makes its net/http goroutine return.
	s.mu.Lock()
	for c := range s.raw {
		c.Close()
	}
	s.mu.Unlock()
	s.served.Wait()
	return nil
}

// Records returns snapshots of the connections seen so far (at most
// MaxRecords, oldest first), open ones included.
func (s *Server) Records() []*ConnRecord {
	s.mu.Lock()
	lcs := append([]*liveConn(nil), s.records...)
	s.mu.Unlock()
	out := make([]*ConnRecord, len(lcs))
	for i, lc := range lcs {
		out[i] = lc.snapshot()
	}
	return out
}

// Changed returns a channel that is closed at the next change the server
// sees: a connection accepted or closed, a request handled. Take the
// channel before calling Records so that no change is missed.
func (s *Server) Changed() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.changed == nil {
		s.changed = make(chan struct{})
	}
	return s.changed
}

// notify wakes the waiters on Changed.
func (s *Server) notify() {
	s.mu.Lock()
	if s.changed != nil {
		close(s.changed)
	}
	s.changed = make(chan struct{})
	s.mu.Unlock()
}

func (s *Server) acceptLoop(ln net.Listener) {
	defer s.pre.Done()
	var backoff time.Duration
	for {
		c, err := ln.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.closed
			s.mu.Unlock()
			if closed || errors.Is(err, net.ErrClosed) {
				return
			}
			// Temporary failures (EMFILE...): back off, bounded.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			time.Sleep(backoff)
			continue
		}
		backoff = 0
		lc, ok := s.newLiveConn(c)
		if !ok {
			c.Close()
			return
		}
		s.pre.Add(1)
		go s.setup(c, lc)
	}
}

// newLiveConn registers an accepted connection; false if the server closed.
func (s *Server) newLiveConn(c net.Conn) (*liveConn, bool) {
	return s.register(c, c.RemoteAddr().String(), c.LocalAddr().String(), TransportTCP)
}

// register numbers and keeps a new connection's record (c is nil for a
// QUIC connection); false if the server closed.
func (s *Server) register(c net.Conn, remote, local, transport string) (*liveConn, bool) {
	max := s.MaxClientBytes
	if max <= 0 {
		max = DefaultMaxClientBytes
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, false
	}
	s.nextID++
	lc := &liveConn{srv: s, max: max, raw: c}
	lc.rec = ConnRecord{
		ID:         s.nextID,
		Start:      time.Now(),
		RemoteAddr: remote,
		LocalAddr:  local,
	}
	if transport == TransportQUIC {
		lc.rec.Transport = TransportQUIC
		lc.rec.QUIC = &QUICRecord{}
	}
	if c != nil {
		s.raw[c] = struct{}{}
	}
	limit := s.MaxRecords
	if limit <= 0 {
		limit = DefaultMaxRecords
	}
	if len(s.records) >= limit {
		s.records = append(s.records[:0], s.records[len(s.records)-limit+1:]...)
	}
	s.records = append(s.records, lc)
	s.mu.Unlock()
	s.notify()
	return lc, true
}

// setup sniffs the first byte, does the TLS handshake if it is one, and
// hands the connection to the http.Server.
func (s *Server) setup(c net.Conn, lc *liveConn) {
	defer s.pre.Done()
	c.SetDeadline(deadline(s.handshakeTimeout()))
	var first [1]byte
	if _, err := io.ReadFull(c, first[:]); err != nil {
		s.fail(c, lc, "fingerprint: no request: "+err.Error())
		return
	}
	var conn net.Conn
	if first[0] == 0x16 {
		raw, err := readClientHello(c, first[0])
		lc.mu.Lock()
		lc.rec.Transport = TransportTLS
		lc.rec.ClientHelloRecord = raw
		lc.mu.Unlock()
		if err != nil {
			s.fail(c, lc, "fingerprint: reading client hello: "+err.Error())
			return
		}
		tc := tls.Server(&prefixConn{Conn: c, pre: raw}, s.tlsConf)
		ctx, cancel := context.WithTimeout(context.Background(), s.handshakeTimeout())
		err = tc.HandshakeContext(ctx)
		cancel()
		if err != nil {
			s.fail(c, lc, "fingerprint: tls handshake: "+err.Error())
			return
		}
		st := tc.ConnectionState()
		lc.mu.Lock()
		lc.rec.Negotiated = negotiated(st)
		switch st.NegotiatedProtocol {
		case ProtoH2, ProtoHTTP1:
			lc.rec.Protocol = st.NegotiatedProtocol
		}
		lc.mu.Unlock()
		conn = tc
	} else {
		lc.mu.Lock()
		lc.rec.Transport = TransportTCP
		lc.mu.Unlock()
		// The sniffed byte is replayed, and so teed like every other.
		conn = &prefixConn{Conn: c, pre: first[:]}
	}
	c.SetDeadline(time.Time{})
	s.notify()
	hc := &teeConn{Conn: conn, lc: lc}
	s.served.Add(1)
	if !s.hl.hand(hc) {
		lc.served.Do(s.served.Done)
		hc.Close()
	}
}

// fail ends a connection that never reached HTTP.
func (s *Server) fail(c net.Conn, lc *liveConn, why string) {
	c.Close()
	lc.finish(why)
}

// connEnded is called once per connection when it closes.
func (s *Server) connEnded(lc *liveConn) {
	s.mu.Lock()
	delete(s.raw, lc.raw)
	s.mu.Unlock()
	s.notify()
	if s.OnRecord != nil {
		s.OnRecord(lc.snapshot())
	}
}
