// Package peer is the benchmark server: a fasthttp server with fixed
// endpoints whose bodies have known sizes and framings, and a counter of
// accepted TCP connections. It runs in its own process (cmd/benchserver, or
// the benchmark binary re-executed) so that the client's CPU time and
// allocations can be measured apart from the server's.
package peer

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// Body sizes served by the endpoints.
const (
	SmallSize        = 100     // /small, with Content-Length
	Chunked4KSize    = 4 << 10 // /chunked4k, chunked
	OneMiBSize       = 1 << 20 // /1m, with Content-Length
	Chunked8MSize    = 8 << 20 // /chunked8m, chunked, streamed
	SmallChunkedSize = 64      // /smallchunked, chunked
)

// streamPiece is the size of each write of a streamed body.
const streamPiece = 32 << 10

// Server serves the benchmark endpoints and counts accepted connections.
// The zero value is not usable; use New. A Server is safe for concurrent
// use.
type Server struct {
	srv      fasthttp.Server
	accepted atomic.Int64
	blob     []byte // shared, read-only: body bytes
}

// New returns a Server ready to Serve.
func New() *Server {
	s := &Server{blob: make([]byte, Chunked8MSize)}
	for i := range s.blob {
		s.blob[i] = 'a' + byte(i%26)
	}
	s.srv = fasthttp.Server{
		Handler:               s.handle,
		Name:                  "benchserver",
		NoDefaultServerHeader: true,
		NoDefaultDate:         true,
		StreamRequestBody:     true,
		MaxRequestBodySize:    1 << 30,
		ReadBufferSize:        16 << 10,
		WriteBufferSize:       64 << 10,
		Concurrency:           1 << 16,
		// Long enough that a client's pooled connection stays open
		// between benchmark rounds.
		IdleTimeout: 5 * time.Minute,
	}
	return s
}

// Serve accepts connections on ln until it is closed or Shutdown is called.
// If cfg is not nil, connections are TLS connections with cfg.
func (s *Server) Serve(ln net.Listener, cfg *tls.Config) error {
	var l net.Listener = &countingListener{Listener: ln, n: &s.accepted}
	if cfg != nil {
		l = tls.NewListener(l, cfg)
	}
	return s.srv.Serve(l)
}

// Shutdown stops the listeners and closes idle connections, waiting at most
// d for active ones.
func (s *Server) Shutdown(d time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return s.srv.ShutdownWithContext(ctx)
}

// Accepted reports how many TCP connections the Server has accepted since it
// started or since the last reset.
func (s *Server) Accepted() int64 { return s.accepted.Load() }

func (s *Server) handle(ctx *fasthttp.RequestCtx) {
	switch string(ctx.Path()) {
	case "/small":
		ctx.SetContentType("text/plain")
		ctx.Response.SetBodyRaw(s.blob[:SmallSize])
	case "/chunked4k":
		s.chunked(ctx, Chunked4KSize)
	case "/1m":
		ctx.SetContentType("application/octet-stream")
		ctx.Response.SetBodyRaw(s.blob[:OneMiBSize])
	case "/chunked8m":
		s.chunked(ctx, Chunked8MSize)
	case "/smallchunked":
		s.chunked(ctx, SmallChunkedSize)
	case "/upload":
		n, err := discard(ctx.RequestBodyStream())
		if err != nil {
			ctx.SetStatusCode(fasthttp.StatusBadRequest)
			ctx.SetConnectionClose()
			return
		}
		ctx.SetContentType("text/plain")
		ctx.SetBodyString(strconv.FormatInt(n, 10))
	case "/stats":
		n := s.accepted.Load()
		if ctx.QueryArgs().Has("reset") {
			s.accepted.Add(-n)
		}
		ctx.SetContentType("text/plain")
		ctx.SetBodyString(strconv.FormatInt(n, 10))
	default:
		ctx.SetStatusCode(fasthttp.StatusNotFound)
	}
}

// uploadRead is the size of the reads that discard makes.
const uploadRead = 256 << 10

// uploadBufs holds discard's read buffers (*[]byte of uploadRead bytes).
var uploadBufs = sync.Pool{New: func() any { b := make([]byte, uploadRead); return &b }}

// discard reads r to the end and returns the byte count. Its reads are
// large (uploadRead), so that the connection's buffered reader passes them
// straight to the socket: io.Copy to io.Discard would read in 8 KiB pieces
// through fasthttp's 16 KiB read buffer, a read syscall and two copies per
// 16 KiB, which made the server, not the client, the limit of the upload
// scenarios.
func discard(r io.Reader) (int64, error) {
	bp := uploadBufs.Get().(*[]byte)
	defer uploadBufs.Put(bp)
	var n int64
	for {
		k, err := r.Read(*bp)
		n += int64(k)
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// chunked answers with n body bytes in chunked framing, one chunk per
// streamPiece bytes, each flushed to the connection as it is written.
func (s *Server) chunked(ctx *fasthttp.RequestCtx, n int) {
	ctx.SetContentType("application/octet-stream")
	ctx.SetBodyStream(&pieces{b: s.blob[:n]}, -1)
}

// pieces reads b in streamPiece pieces. fasthttp frames each Write of its
// WriteTo as one chunk.
type pieces struct {
	b []byte
}

func (p *pieces) Read(dst []byte) (int, error) {
	if len(p.b) == 0 {
		return 0, io.EOF
	}
	n := copy(dst[:min(len(dst), streamPiece)], p.b)
	p.b = p.b[n:]
	return n, nil
}

func (p *pieces) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for len(p.b) > 0 {
		k := min(len(p.b), streamPiece)
		n, err := w.Write(p.b[:k])
		total += int64(n)
		p.b = p.b[n:]
		if err != nil {
			return total, err
		}
	}
	return total, nil
}

// SupportsBodyWriteTo tells fasthttp that WriteTo may replace Read.
func (p *pieces) SupportsBodyWriteTo() bool { return true }

// countingListener counts the connections it accepts.
type countingListener struct {
	net.Listener
	n *atomic.Int64
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}
