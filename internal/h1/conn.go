package h1

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/guise-http/guise/fields"
)

// Response is filled in by RoundTrip. A Response may be reused across
// requests: RoundTrip resets it and appends the header fields to
// Header[:0], so a Header with capacity (say from an inline array) makes the
// parse allocate no slice. Every name and value, and Reason, is a substring
// of one string holding a copy of the head: they stay valid forever and are
// never overwritten.
type Response struct {
	StatusCode int
	Proto      string // "HTTP/1.1" or "HTTP/1.0"
	Reason     string
	Header     fields.Header
	// ContentLength is the body length from Content-Length; -1 when unknown
	// (chunked, close-delimited); 0 for 204 and 304. For a HEAD request it is
	// the Content-Length the server sent (-1 if none), while the body is empty.
	ContentLength int64
	// Trailer is set when a chunked body reaches EOF and had trailer fields.
	// Trailers are never merged into Header.
	Trailer fields.Header
	// Body is the response body. It must be read to EOF or closed.
	Body Body
}

// Conn is one HTTP/1.1 client connection. It carries one request at a time:
// RoundTrip must not be called concurrently, nor before the previous
// response body reached EOF or was closed. Close may be called from any
// goroutine. The zero value is not usable; use NewConn.
type Conn struct {
	nc  net.Conn
	lim limits

	release func(c *Conn, reusable bool)
	alloc   func(nfields, nbytes int) (*Response, []byte)

	rbuf   []byte // read buffer; unread bytes are rbuf[r:w]
	r, w   int
	got    int // response bytes read since the request was written
	hs     blockScan
	budget int // head bytes left for this request (1xx heads included)
	n1xx   int // informational responses skipped for this request
	spans  []span
	tspans []span // trailer fields

	wbuf  []byte // request head (and a small body)
	cbuf  []byte // streaming body buffer, allocated on first use
	one   [1]byte
	bufs  [3][]byte
	lr    io.LimitedReader
	wdone chan error
	plan  writePlan // of the request in flight

	requests int
	gen      uint64 // bumped per request; a Body of an older request is stale
	active   bool   // a request is in flight (RoundTrip or its body)
	broken   bool   // closed or not reusable
	noReuse  bool   // this request must not be followed by another
	// keepAlive is the idle timeout the last response's Keep-Alive field
	// announced, 0 if none (see IdleTimeout).
	keepAlive time.Duration
	wrunning  bool
	wsrcErr   error // the request body source failed (set by the writer)
	dlSet     bool  // a read deadline may be set on nc

	closed   atomic.Bool
	wflushed atomic.Bool // the writer goroutine wrote the whole body

	// The context watch (see watch). watchCtx and watchStop are the
	// registration's context and its stop function; onDone is the
	// callback, made once per Conn. All three are guarded by dmu.
	watchCtx  context.Context
	watchStop func() bool
	onDone    func()

	dmu      sync.Mutex
	armedCtx context.Context // the context of the request in flight, if watched
	ctxErr   error           // set when ctx ended during the request
}

// NewConn returns a Conn that speaks HTTP/1.1 over nc and takes ownership of
// it. cfg may be nil for the defaults; it is read once, here.
func NewConn(nc net.Conn, cfg *Config) *Conn {
	l := cfg.limits()
	return &Conn{
		nc:   nc,
		lim:  l,
		rbuf: make([]byte, l.readBufferSize),
		wbuf: make([]byte, 0, 1024),
	}
}

// SetRelease sets fn to be called exactly once per successful RoundTrip,
// when the request is over: reusable is true when the connection can carry
// another request (body fully read or drained, framing clean, no
// "Connection: close", not HTTP/1.0 without keep-alive, no stray bytes after
// the body), false after the connection has been closed. For a response
// without body or with an inline body fn is called before RoundTrip returns;
// otherwise from Body.Read at EOF or from Body.Close. When RoundTrip returns
// an error the connection is already closed and fn is not called. Call
// SetRelease before RoundTrip, not concurrently with it.
func (c *Conn) SetRelease(fn func(c *Conn, reusable bool)) { c.release = fn }

// IdleTimeout returns how long the server said, in the last response's
// Keep-Alive field (timeout=N), that it keeps the connection open while
// idle; 0 when it did not say. A pool should not reuse the connection once
// it has been idle about that long: the server may close it as the next
// request goes out.
func (c *Conn) IdleTimeout() time.Duration { return c.keepAlive }

// SetAlloc sets fn to make the Response of RoundTripNew once the final head
// has been parsed: nfields is its number of header fields, and the fields
// are appended to the returned Response's Header[:0], so a Header with that
// much capacity (say an array in the same allocation) costs no slice.
// nbytes is the length of the string the head's names and values (and an
// inline body) are cut from: when fn also returns room with at least that
// capacity, the string is built in room, which nothing may write again
// (say a byte array at the end of the same allocation); else it gets an
// allocation of its own. Call SetAlloc before RoundTripNew, not
// concurrently with it.
func (c *Conn) SetAlloc(fn func(nfields, nbytes int) (resp *Response, room []byte)) {
	c.alloc = fn
}

// Requests returns the number of requests started on this connection; a
// reused connection has more than one.
func (c *Conn) Requests() int { return c.requests }

// NetConn returns the underlying connection. Reading or writing it while a
// request is in flight corrupts the exchange.
func (c *Conn) NetConn() net.Conn { return c.nc }

// Close closes the connection. It is idempotent and safe to call from any
// goroutine; a body being read then fails.
func (c *Conn) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	c.unwatch()
	return c.nc.Close()
}

var errConnBroken = errors.New("h1: connection closed or not reusable")

// RoundTrip writes req and reads the response head into resp. See Request
// for what is written and validated, Response and Body for what is read.
//
// ctx covers the write, the head and, until the body ends or is closed, the
// body reads; when it ends the returned error (or the body's) wraps
// ctx.Err(). Request.HeadTimeout and Request.BodyIdleTimeout expiries are
// *TimeoutError. Malformed responses are *ProtocolError; see the package's
// Err variables for the rest. On any error the connection has been closed
// and the release function is not called.
func (c *Conn) RoundTrip(ctx context.Context, req *Request, resp *Response) error {
	h := resp.Header[:0]
	*resp = Response{Header: h}
	_, err := c.roundTrip(ctx, req, resp)
	return err
}

// RoundTripNew is RoundTrip into a Response made, once the head's number of
// fields is known, by the function given to SetAlloc.
func (c *Conn) RoundTripNew(ctx context.Context, req *Request) (*Response, error) {
	return c.roundTrip(ctx, req, nil)
}

// hostThreadReader is a connection that can wait for reads in the kernel
// on the calling thread (tlsfp.Conn).
type hostThreadReader interface{ SetHostThreadReads(bool) }

type hostThreadKey struct{}

// WithHostThread marks ctx as that of a request made on a goroutine locked
// to a C thread (the C ABI's blocking calls): its reads wait in the kernel
// on that thread, where the connection allows, instead of parking the
// goroutine, which would cost two handoffs between threads per read.
func WithHostThread(ctx context.Context) context.Context {
	return context.WithValue(ctx, hostThreadKey{}, true)
}

// OnHostThread reports whether ctx was marked by WithHostThread.
func OnHostThread(ctx context.Context) bool {
	on, _ := ctx.Value(hostThreadKey{}).(bool)
	return on
}

// roundTrip is RoundTrip into resp, or into a Response from c.alloc when
// resp is nil.
func (c *Conn) roundTrip(ctx context.Context, req *Request, resp *Response) (*Response, error) {
	if c.active {
		return nil, c.abort(errors.New("h1: RoundTrip while the previous request is unfinished"))
	}
	if c.broken || c.closed.Load() {
		return nil, c.abort(errConnBroken)
	}
	c.active = true
	c.requests++
	c.gen++
	c.noReuse, c.got, c.wsrcErr, c.n1xx = false, 0, nil, 0
	c.hs = blockScan{}
	c.budget = c.lim.maxHeaderBytes

	if h, ok := c.nc.(hostThreadReader); ok {
		h.SetHostThreadReads(OnHostThread(ctx))
	}
	var err error
	c.plan, err = c.prepare(req)
	if err != nil {
		return nil, c.abort(err)
	}
	if ctx.Done() != nil {
		if err := c.watch(ctx); err != nil {
			return nil, c.abort(fmt.Errorf("h1: before sending: %w", err))
		}
	}
	st, n, err := c.exchange(req, &c.plan)
	if err != nil {
		if c.wrunning {
			c.joinWriter(true)
		}
		if c.wsrcErr != nil {
			err = c.wsrcErr
		}
		return nil, c.abort(err)
	}
	if c.wrunning {
		if werr := c.joinWriter(true); werr != nil {
			c.noReuse = true
		}
	}
	resp, err = c.finishHead(resp, req, st, n)
	if err != nil {
		return nil, c.abort(err)
	}
	return resp, nil
}

// exchange writes the request and reads heads up to the final one, which it
// leaves at rbuf[r:r+n].
func (c *Conn) exchange(req *Request, plan *writePlan) (statusLine, int, error) {
	if plan.expect {
		if err := c.write(c.wbuf); err != nil {
			return statusLine{}, 0, err
		}
		d := req.Expect100Timeout
		if d <= 0 {
			d = time.Second
		}
		c.setReadDeadline(time.Now().Add(d))
		for {
			st, n, err := c.readHead()
			if err != nil {
				if errors.Is(err, os.ErrDeadlineExceeded) && c.cancelErr() == nil {
					break // no 100 in time: send the body anyway
				}
				return st, n, c.headErr(err)
			}
			if st.code >= 200 || st.code < 100 {
				// A final answer instead of 100: the body is not sent, and
				// the connection is not reused (the server may still expect it).
				c.noReuse = true
				c.clearReadDeadline()
				return st, n, nil
			}
			if err := c.skip1xx(st, n); err != nil {
				return st, n, err
			}
			if st.code == 100 {
				break
			}
		}
		c.clearReadDeadline()
		if err := c.sendBody(req, plan); err != nil {
			return statusLine{}, 0, err
		}
	} else if err := c.sendAll(req, plan); err != nil {
		return statusLine{}, 0, err
	}
	if !c.wrunning && req.HeadTimeout > 0 {
		c.setReadDeadline(time.Now().Add(req.HeadTimeout))
	}
	for {
		st, n, err := c.readHead()
		if err != nil {
			return st, n, c.headErr(err)
		}
		if st.code == 101 && req.Upgrade {
			c.noReuse = true
			return st, n, nil
		}
		if st.code >= 100 && st.code < 200 {
			if err := c.skip1xx(st, n); err != nil {
				return st, n, err
			}
			continue
		}
		if st.code == 408 && c.requests > 1 && !plan.expect {
			// A server that timed out the idle connection sends 408 and
			// closes; it is no answer to this request (which it never read).
			return st, n, fmt.Errorf("%w: 408 on a reused connection", ErrNoResponse)
		}
		return st, n, nil
	}
}

// skip1xx consumes an informational head after validating it.
func (c *Conn) skip1xx(st statusLine, n int) error {
	if st.code == 101 {
		return &ProtocolError{Kind: "status", Detail: "unexpected 101 Switching Protocols (no upgrade was requested)"}
	}
	if _, err := parseFields(c.spans[:0], c.rbuf[c.r:c.r+n], st.fieldsAt, "header"); err != nil {
		return err
	}
	c.r += n
	c.budget -= n
	c.hs = blockScan{}
	if c.n1xx++; c.n1xx > c.lim.max1xx {
		return ErrTooMany1xx
	}
	return nil
}

// readHead reads until a complete head is buffered at rbuf[r:] and parses
// its status line. The search state survives errors, so a read that timed
// out may be resumed.
func (c *Conn) readHead() (statusLine, int, error) {
	for {
		b := c.rbuf[c.r:c.w]
		if c.hs.lines == 0 {
			// Before the line scan, so the error does not depend on
			// whether the line end has arrived yet.
			if err := checkStatusPrefix(b); err != nil {
				return statusLine{}, 0, err
			}
		}
		n, err := c.hs.scan(b[:min(len(b), c.budget)], c.lim.maxHeaders+1, "response head")
		if err != nil {
			return statusLine{}, 0, err
		}
		if n > 0 {
			st, err := parseStatusLine(b[:n])
			return st, n, err
		}
		if len(b) >= c.budget {
			return statusLine{}, 0, ErrHeaderTooLarge
		}
		if err := c.fill(c.budget); err != nil {
			return statusLine{}, 0, err
		}
	}
}

// fill reads more bytes into rbuf, compacting it, and growing it (up to max
// unread bytes) when it is full.
func (c *Conn) fill(max int) error {
	if c.r == c.w {
		c.r, c.w = 0, 0
	}
	if c.w == len(c.rbuf) {
		if c.r > 0 {
			c.w = copy(c.rbuf, c.rbuf[c.r:c.w])
			c.r = 0
		} else {
			nb := make([]byte, min(max, 2*len(c.rbuf)))
			c.w = copy(nb, c.rbuf[c.r:c.w])
			c.r, c.rbuf = 0, nb
		}
	}
	n, err := c.nc.Read(c.rbuf[c.w:])
	c.w += n
	c.got += n
	if n > 0 {
		return nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return err
}

// headErr turns an error met while reading the head into the one RoundTrip
// reports.
func (c *Conn) headErr(err error) error {
	var pe *ProtocolError
	if errors.As(err, &pe) || errors.Is(err, ErrTooManyHeaders) || errors.Is(err, ErrHeaderTooLarge) || errors.Is(err, ErrTooMany1xx) {
		return err
	}
	if cerr := c.cancelErr(); cerr != nil {
		return fmt.Errorf("h1: waiting for response head: %w", cerr)
	}
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return &TimeoutError{Phase: PhaseHead}
	}
	if c.got == 0 && (err == io.EOF || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.ErrUnexpectedEOF)) {
		return fmt.Errorf("%w: %w", ErrNoResponse, err)
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("h1: reading response head: %w", err)
}

// watch arms the cancellation of the request about to start by ctx. A
// context.AfterFunc registration costs three allocations and a lock on the
// parent context shared by every concurrent request, so it is kept across
// requests: a Conn that serves request after request under one long-lived
// context (a worker's context, signal.NotifyContext) registers once. The
// callback acts only while a request runs under the context that ended
// (armedCtx); between requests it does nothing, and the next request
// finds ctx.Err set. A context with a deadline is taken for a per-request
// one and its registration is stopped when the request ends (see disarm),
// so that its cancel does not start the callback's goroutine for nothing.
// It returns ctx.Err() when ctx has already ended.
func (c *Conn) watch(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.dmu.Lock()
	if c.watchCtx != ctx {
		if c.watchStop != nil {
			c.watchStop()
		}
		if c.onDone == nil {
			c.onDone = c.ctxDone
		}
		c.watchCtx = ctx
		c.watchStop = context.AfterFunc(ctx, c.onDone)
	}
	c.armedCtx = ctx
	c.ctxErr = nil
	c.dmu.Unlock()
	// An end between the first check and arming found nothing armed.
	return ctx.Err()
}

// disarm ends the watch of the finished request. It reports whether the
// request's context ended while it ran (its deadlines are then poisoned).
func (c *Conn) disarm() (ended bool) {
	c.dmu.Lock()
	ctx := c.armedCtx
	c.armedCtx = nil
	ended = c.ctxErr != nil
	if ctx != nil {
		if _, ok := ctx.Deadline(); ok && c.watchStop != nil {
			c.watchStop()
			c.watchCtx, c.watchStop = nil, nil
		}
	}
	c.dmu.Unlock()
	return ended
}

// unwatch drops the context registration for good (the Conn is closing), so
// that a long-lived context keeps no closed Conn reachable.
func (c *Conn) unwatch() {
	c.dmu.Lock()
	stop := c.watchStop
	c.watchCtx, c.watchStop, c.armedCtx = nil, nil, nil
	c.dmu.Unlock()
	if stop != nil {
		stop()
	}
}

// ctxDone is the context.AfterFunc callback: when the context of the
// request in flight has ended, every pending and future read and write
// fails at once.
func (c *Conn) ctxDone() {
	c.dmu.Lock()
	if ctx := c.armedCtx; ctx != nil && c.ctxErr == nil {
		if err := ctx.Err(); err != nil {
			c.ctxErr = err
			c.nc.SetDeadline(time.Unix(1, 0))
		}
	}
	c.dmu.Unlock()
}

func (c *Conn) cancelErr() error {
	c.dmu.Lock()
	defer c.dmu.Unlock()
	return c.ctxErr
}

// setReadDeadline sets a read deadline unless the context already ended.
func (c *Conn) setReadDeadline(t time.Time) {
	c.dmu.Lock()
	if c.ctxErr == nil {
		c.nc.SetReadDeadline(t)
		c.dlSet = true
	}
	c.dmu.Unlock()
}

// clearReadDeadline removes a read deadline set by setReadDeadline.
func (c *Conn) clearReadDeadline() {
	if !c.dlSet {
		return // dlSet is only set by the request's own goroutine
	}
	c.dmu.Lock()
	if c.dlSet && c.ctxErr == nil {
		c.nc.SetReadDeadline(time.Time{})
		c.dlSet = false
	}
	c.dmu.Unlock()
}

// abort ends the request with err: the connection is closed for good.
func (c *Conn) abort(err error) error {
	c.disarm()
	c.broken, c.active = true, false
	c.Close()
	return err
}

// finish ends a successful request and calls the release function once.
func (c *Conn) finish(reusable bool) {
	if !c.active {
		return
	}
	c.active = false
	if c.disarm() {
		reusable = false // the context ended: deadlines are poisoned
	}
	reusable = reusable && !c.noReuse && c.r == c.w && !c.closed.Load()
	if reusable {
		c.r, c.w = 0, 0
		c.clearReadDeadline()
	} else {
		c.broken = true
		c.Close()
	}
	if fn := c.release; fn != nil {
		fn(c, reusable)
	}
}

// earlyGrace is how long a response that arrives before the request body
// is written waits for the writer to finish on its own (net/http waits 50ms
// too, maxWriteWaitBeforeConnReuse): a writer descheduled on a busy machine
// must not cost the connection.
const earlyGrace = 50 * time.Millisecond

// joinWriter waits for the writer goroutine. With abort, a writer still
// running is stopped through a past write deadline (the response came
// first), and the connection is marked not reusable.
func (c *Conn) joinWriter(abort bool) error {
	if abort && !c.wflushed.Load() {
		// The response came before the body was written. Give a writer
		// that is just finishing a moment, then stop it.
		t := time.NewTimer(earlyGrace)
		select {
		case err := <-c.wdone:
			t.Stop()
			c.wrunning = false
			return err
		case <-t.C:
		}
		if !c.wflushed.Load() {
			c.noReuse = true
			c.nc.SetWriteDeadline(time.Unix(1, 0))
		}
	}
	err := <-c.wdone
	c.wrunning = false
	return err
}
