//go:build cgo

package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/guise-http/guise"
	"github.com/guise-http/guise/internal/h1"
	"github.com/guise-http/guise/profile"
)

// request is a guise_request copied into Go memory.
type request struct {
	req      guise.Request
	stream   uint64 // body stream handle, 0 for none
	caPEM    string
	protocol int32
	prefetch int64
}

// defaultPrefetch is how much of a body of known length is read before the
// head is handed over, so a small response crosses the boundary once.
const defaultPrefetch = 64 << 10

// Call states.
const (
	statePending int32 = iota
	stateReady         // head or error set
)

// call is one request and its response: a call handle's object.
type call struct {
	ctx    context.Context
	cancel context.CancelFunc
	stream *stream // the request body stream, if any

	state atomic.Int32 // statePending until resp/err are set
	resp  *guise.Response
	err   error // the request's error, then the body's
	meta  []byte
	dec   bool
	// into is the caller's buffer of guise_fetch or guise_start_into
	// while the request runs; copied says the meta and the whole body
	// went into it (and the call is over). host says the request runs on
	// the host's thread (guise_fetch).
	into   []byte
	copied bool
	host   bool

	// Owned by the one read in flight (see read):
	pre     []byte // prefetched body bytes not yet read
	plen    int64  // prefetched length, for the head
	eof     bool   // pre is all that is left of the body
	bodyErr error  // the body's error, once eof

	// A read started by guise_read_start runs readFn (made once per
	// call) with these, so that a streamed body's reads leave no garbage
	// behind them: a closure per read was about 80 bytes, 1.3 MiB of heap
	// over a 256 MiB download before the collector's first run. reading
	// says they are taken; a second read started while one is in flight
	// goes the closure's way, and read reports it busy.
	reading  atomic.Bool
	readFn   func()
	readBuf  []byte
	readDone completion
	readH    uint64

	mu         sync.Mutex // guards the rest, and err after the head
	busy       bool       // a body read is in flight
	closed     bool
	bodyClosed bool
}

var liveCalls atomic.Int64

// client resolves the client handle of a request: 0 is an isolated visit,
// otherwise a Session.
func client(h uint64) (*session, error) {
	if h == 0 {
		return nil, nil
	}
	ss, ok := lookup[*session](h)
	if !ok {
		return nil, errBadHandle
	}
	return ss, nil
}

// newCall prepares a call; run then sends it.
func newCall(r *request) *call {
	c := &call{}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	liveCalls.Add(1)
	return c
}

// run sends r through the client and records the outcome in c. It returns
// when the head (with any prefetched body) is in, or on error.
func (c *call) run(clientHandle uint64, r *request) {
	err := c.send(clientHandle, r)
	if err != nil {
		c.err = err
		if c.stream != nil {
			c.stream.abort(err)
		}
	}
	c.state.Store(stateReady)
}

func (c *call) send(clientHandle uint64, r *request) error {
	ss, err := client(clientHandle)
	if err != nil {
		return err
	}
	req := &r.req
	if r.stream != 0 {
		st, ok := lookup[*stream](r.stream)
		if !ok {
			return errBadHandle
		}
		if !st.used.CompareAndSwap(false, true) {
			return invalidError{errors.New("guise ffi: a body stream can be sent once")}
		}
		c.stream = st
		req.Body = st
	}
	if r.caPEM != "" {
		if req.RootCAs, err = certPool(r.caPEM); err != nil {
			return invalidError{err}
		}
	}
	p := r.protocol
	if ss != nil && p == protoAny {
		p = ss.protocol
	}
	if err := applyProtocol(req, p); err != nil {
		return invalidError{err}
	}
	if req.Profile != "" {
		if _, err := profile.Lookup(req.Profile); err != nil {
			p, err := requestProfile(req.Profile)
			if err != nil {
				return invalidError{err}
			}
			req.Profile, req.Browser = "", p
		}
	}
	ctx := c.ctx
	if c.host {
		// guise_fetch: this goroutine is the host's thread's.
		ctx = h1.WithHostThread(ctx)
	}
	var resp *guise.Response
	if ss == nil {
		resp, err = guise.Do(ctx, req)
	} else {
		resp, err = ss.s.Do(ctx, req)
	}
	if err != nil {
		return err
	}
	c.resp, c.dec = resp, resp.Decoded
	limit := r.prefetch
	if limit == 0 {
		limit = defaultPrefetch
	}
	n := resp.ContentLength
	if n < 0 || n > limit {
		c.meta = appendMeta(nil, resp)
		return nil
	}
	// A body of known length is read now. For guise_fetch and
	// guise_start_into, the meta and the body go straight into the caller's buffer when both fit; what
	// stays in the call afterwards (a failed read) is copied out of it.
	var buf []byte
	m := metaLen(resp)
	inCaller := int64(m)+n <= int64(len(c.into))
	if inCaller {
		c.meta = appendMeta(c.into[:0:m], resp)
		buf = c.into[m : int64(m)+n]
	} else {
		c.meta = appendMeta(nil, resp)
		buf = make([]byte, n)
	}
	got, rerr := io.ReadFull(resp.Body, buf)
	c.pre, c.plen, c.eof = buf[:got], int64(got), true
	if rerr != nil {
		c.bodyErr, c.err = rerr, rerr
	}
	resp.Body.Close()
	c.bodyClosed = true
	switch {
	case inCaller && rerr == nil:
		c.copied = true
	case inCaller:
		c.meta, c.pre = bytes.Clone(c.meta), bytes.Clone(c.pre)
	}
	return nil
}

// appendMeta encodes the head's strings: URL NUL reason NUL, then each
// field as name NUL value NUL, in the order received.
// b is nil, or has room for exactly metaLen(resp) bytes.
func appendMeta(b []byte, resp *guise.Response) []byte {
	if b == nil {
		b = make([]byte, 0, metaLen(resp))
	}
	b = append(append(b, resp.URL...), 0)
	b = append(append(b, resp.Status...), 0)
	for _, f := range resp.Header {
		b = append(append(b, f.Name...), 0)
		b = append(append(b, f.Value...), 0)
	}
	return b
}

// metaLen is the length of appendMeta's encoding of resp.
func metaLen(resp *guise.Response) int {
	n := len(resp.URL) + len(resp.Status) + 2
	for _, f := range resp.Header {
		n += len(f.Name) + len(f.Value) + 2
	}
	return n
}

// ready reports whether the head is in.
func (c *call) ready() bool { return c.state.Load() == stateReady }

// headErr returns the request's error once the head is in.
func (c *call) headErr() error {
	if !c.ready() {
		return errNotReady
	}
	if c.resp == nil {
		return c.err
	}
	return nil
}

// lastErr returns the error a caller should see now: the request's, or the
// body's after a failed read.
func (c *call) lastErr() error {
	if !c.ready() {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func protoNumber(p string) int32 {
	switch p {
	case "HTTP/1.0":
		return 1
	case "HTTP/1.1":
		return 2
	case "HTTP/2.0":
		return 3
	}
	return 0
}

// read reads body bytes into p. It returns n > 0, or 0 at the end of the
// body, or an error (also kept for guise_call_error). One read runs at a
// time (errBusy otherwise); close during a read cancels it, and the read
// then closes the body.
// runRead is readFn: the read guise_read_start handed over.
func (c *call) runRead() {
	p, done, h := c.readBuf, c.readDone, c.readH
	c.readBuf = nil
	n, err := c.read(p)
	c.reading.Store(false)
	done.run(h, readResult(n, err))
}

func (c *call) read(p []byte) (int, error) {
	if err := c.headErr(); err != nil {
		return 0, err
	}
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return 0, errCanceled
	}
	if c.busy {
		c.mu.Unlock()
		return 0, errBusy
	}
	c.busy = true
	c.mu.Unlock()
	n, err := c.readBody(p)
	c.mu.Lock()
	c.busy = false
	if err != nil && err != io.EOF {
		c.err = err
	}
	if (err != nil || c.closed) && !c.bodyClosed {
		c.bodyClosed = true
		c.resp.Body.Close()
	}
	c.mu.Unlock()
	if err == io.EOF {
		err = nil
	}
	return n, err
}

// buffered reports whether a read is served from the prefetch buffer (or
// the end), without waiting for the network. A concurrent read makes the
// answer stale, which costs only a goroutine.
func (c *call) buffered() bool {
	if !c.ready() {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.busy && (len(c.pre) > 0 || c.eof)
}

// readBody is read without the bookkeeping: io.EOF at the end.
func (c *call) readBody(p []byte) (int, error) {
	if len(c.pre) > 0 {
		n := copy(p, c.pre)
		c.pre = c.pre[n:]
		return n, nil
	}
	if c.eof {
		return 0, c.bodyErr
	}
	if len(p) == 0 {
		return 0, nil
	}
	for {
		n, err := c.resp.Body.Read(p)
		if err != nil {
			c.eof = true
			if err != io.EOF {
				c.bodyErr = err
			}
			if n > 0 {
				err = nil
			}
		}
		if n > 0 || err != nil {
			return n, err
		}
	}
}

// close cancels the call and releases its response. A read in flight ends
// with an error and closes the body itself; its done still runs.
func (c *call) close() {
	c.mu.Lock()
	if !c.ready() || !c.bodyClosed || c.busy {
		// The request or its body is still running: end it. A call whose
		// body was read to its end (or closed) has nothing to end, and its
		// context is not cancelled: the connection's engine keeps a
		// context.AfterFunc registration on it until its next request,
		// which a cancel would run on a goroutine of its own, waking a
		// thread per request for nothing. (The context's parent is
		// Background, so an uncancelled one holds nothing.)
		c.cancel()
	}
	if !c.closed {
		c.closed = true
		liveCalls.Add(-1)
	}
	if !c.busy && c.ready() && c.resp != nil && !c.bodyClosed {
		c.bodyClosed = true
		c.resp.Body.Close()
	}
	c.mu.Unlock()
	if c.stream != nil {
		c.stream.abort(errCanceled)
	}
}

// abort cancels the call's request and its body stream; the call stays
// until closed.
func (c *call) abort() {
	c.cancel()
	if c.stream != nil {
		c.stream.abort(errCanceled)
	}
}

// timeout converts a request's milliseconds.
func timeout(msec int64) time.Duration { return time.Duration(msec) * time.Millisecond }

// parseHeader reads name NUL value NUL pairs.
func parseHeader(b []byte) (guise.Header, error) {
	if len(b) == 0 {
		return nil, nil
	}
	if b[len(b)-1] != 0 {
		return nil, invalidError{errors.New("guise ffi: header block does not end in NUL")}
	}
	n := bytes.Count(b, []byte{0})
	if n%2 != 0 {
		return nil, invalidError{errors.New("guise ffi: header block has a name without a value")}
	}
	h := make(guise.Header, 0, n/2)
	for len(b) > 0 {
		i := bytes.IndexByte(b, 0)
		name := string(b[:i])
		b = b[i+1:]
		j := bytes.IndexByte(b, 0)
		h = append(h, guise.Field{Name: name, Value: string(b[:j])})
		b = b[j+1:]
	}
	return h, nil
}
