package h3

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/guise-http/guise/fields"
	"github.com/guise-http/guise/internal/h3wire"
	"github.com/guise-http/guise/internal/quicwire"
)

const (
	// inlineBody is the largest BodyBytes written with the HEADERS.
	inlineBody = 16 << 10
	// dataChunk is the DATA frame size for streamed bodies.
	dataChunk = 16 << 10
	// max1xx bounds the informational heads a response may send.
	max1xx = 8
)

// errMalformed is the Cause of a StreamError (H3_MESSAGE_ERROR) for a
// malformed response (RFC 9114 §4.1.2).
var errMalformed = errors.New("h3: malformed response")

// stream is one request stream.
type stream struct {
	cc   *ClientConn
	qs   Stream
	id   uint64
	br   *bufio.Reader
	head bool // a HEAD request: no content follows

	mu        sync.Mutex
	abortErr  error
	abortedCh chan struct{} // closed by the first abort
	sendDone  bool

	stop func() bool // ends the context watch

	// reader side, owned by RoundTrip then by the body
	rem      uint64 // bytes left in the current DATA frame
	cl, got  int64
	idle     time.Duration
	eof      bool
	closed   bool
	trailer  fields.Header
	finalErr error

	// scratch for readSection: a small section's bytes and its fields,
	// which parseHead and the trailer copy out (the decoded strings are
	// copies), so that a response head costs no buffer of its own
	sect [256]byte
	fbuf [12]field

	// the final response and its body, in the stream so that they cost
	// no allocations of their own
	resp Response
	body body
}

// abort fails the stream with err (the first wins) and cancels both
// directions.
func (s *stream) abort(err error) {
	s.mu.Lock()
	if s.abortErr == nil {
		s.abortErr = err
		close(s.abortedCh)
	}
	s.mu.Unlock()
	s.qs.CancelRead(uint64(ErrCodeRequestCancelled))
	s.qs.CancelWrite(uint64(ErrCodeRequestCancelled))
}

func (s *stream) aborted() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.abortErr
}

// readErr turns a stream read or write error into the request's error.
func (s *stream) readErr(err error, phase Phase) error {
	if a := s.aborted(); a != nil {
		return a
	}
	s.cc.syncClosed()
	var closed *CloseError
	if errors.As(err, &closed) {
		s.cc.fail(closeErr(closed))
	}
	if ce := s.cc.Err(); ce != nil {
		return ce
	}
	var re *ResetError
	if errors.As(err, &re) {
		return &StreamError{StreamID: s.id, Code: re.Code, Remote: true}
	}
	if errors.Is(err, os.ErrDeadlineExceeded) && phase != 0 {
		s.abort(&TimeoutError{Phase: phase})
		return &TimeoutError{Phase: phase}
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return s.cc.connError(ErrCodeFrame, "stream ended inside a frame", nil)
	}
	return err
}

// fail resets the stream with code because of cause.
func (s *stream) fail(code ErrCode, cause error) error {
	err := &StreamError{StreamID: s.id, Code: code, Cause: cause}
	s.abort(err)
	return err
}

// RoundTrip sends req on a new stream and returns the response head; the
// body streams from the stream as the caller reads it. ctx governs the
// whole exchange, body included. Errors are typed: *StreamError,
// *ConnectionError, *GoAwayError, *TimeoutError, ErrRefusedToSend,
// ErrClosed; CanRetry reports those the server did not process.
func (cc *ClientConn) RoundTrip(ctx context.Context, req *Request) (*Response, error) {
	if err := validRequest(req); err != nil {
		return nil, err
	}
	if err := cc.usable(); err != nil {
		return nil, err
	}
	size := headSize(req)
	cc.mu.Lock()
	peerMax := cc.peerMaxField
	cc.mu.Unlock()
	if peerMax > 0 && uint64(size) > peerMax {
		return nil, refusedf("header of %d bytes, the server's SETTINGS_MAX_FIELD_SECTION_SIZE is %d", size, peerMax)
	}
	qs, err := cc.qc.OpenStream(ctx)
	if err != nil {
		cc.syncClosed()
		var closed *CloseError
		if errors.As(err, &closed) {
			cc.fail(closeErr(closed))
		}
		if e := cc.usable(); e != nil {
			return nil, e
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, retryable{err}
	}
	s := &stream{cc: cc, qs: qs, id: qs.ID(), head: req.Method == "HEAD", cl: -1, idle: req.BodyIdleTimeout, abortedCh: make(chan struct{})}
	s.br = readerPool.Get().(*bufio.Reader)
	s.br.Reset(qs)
	cc.mu.Lock()
	if cc.err != nil || (cc.goaway && s.id >= cc.goawayID) {
		err := cc.err
		if err == nil {
			err = &GoAwayError{StreamID: cc.goawayID}
		} else if !CanRetry(err) {
			err = retryable{err}
		}
		cc.mu.Unlock()
		qs.CancelWrite(uint64(ErrCodeRequestCancelled))
		qs.CancelRead(uint64(ErrCodeRequestCancelled))
		return nil, err
	}
	cc.streams[s.id] = s
	cc.mu.Unlock()
	if ctx.Done() != nil { // a context that can end (not Background: no allocation then)
		s.stop = context.AfterFunc(ctx, func() { s.abort(ctx.Err()) })
	}
	hb := headBufs.Get().(*[]byte)
	block := cc.encodeHead(ctx, (*hb)[:0], req, s.id)

	if cc.cfg.PriorityUpdate {
		if p := req.Header.Get("priority"); p != "" {
			cc.writePriorityUpdate(s.id, p)
		}
	}
	err = s.writeRequest(req, block)
	*hb = block[:0]
	headBufs.Put(hb)
	if !cc.released.Load() {
		cc.ReleaseFlight()
	}
	if err != nil {
		s.finish()
		return nil, err
	}
	if req.HeadTimeout > 0 {
		qs.SetReadDeadline(time.Now().Add(req.HeadTimeout))
	}
	resp, err := s.readHead(ctx)
	if err != nil {
		s.finish()
		return nil, err
	}
	qs.SetReadDeadline(time.Time{})
	s.body = body{s: s, resp: resp}
	resp.Body = &s.body
	return resp, nil
}

// syncClosed records the QUIC connection's end now if it ended, before
// watch does, so that the error a stream sees is the connection's.
func (cc *ClientConn) syncClosed() {
	select {
	case <-cc.qc.Done():
		cc.fail(closeErr(cc.qc.Err()))
	default:
	}
}

// usable returns why no new request may start, or nil.
func (cc *ClientConn) usable() error {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.err != nil {
		if CanRetry(cc.err) {
			return cc.err
		}
		return retryable{cc.err}
	}
	if cc.goaway {
		return &GoAwayError{StreamID: cc.goawayID}
	}
	if cc.retired {
		return ErrClosed
	}
	return nil
}

// readerPool holds the request streams' read buffers; a stream gives its
// own back when finish ends its reading.
var readerPool = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 16<<10) }}

// finish removes the stream from the connection and gives its read
// buffer back. Only the stream's reader (RoundTrip, then the body) calls
// it; a second call does nothing.
func (s *stream) finish() {
	if s.stop != nil {
		s.stop()
	}
	if s.br != nil {
		s.br.Reset(nil)
		readerPool.Put(s.br)
		s.br = nil
	}
	cc := s.cc
	cc.mu.Lock()
	_, had := cc.streams[s.id]
	delete(cc.streams, s.id)
	idle := had && len(cc.streams) == 0
	cc.mu.Unlock()
	if idle && cc.onIdle != nil {
		cc.onIdle()
	}
	cc.closeIfDrained()
}

// headSize is req's head's size as SETTINGS_MAX_FIELD_SECTION_SIZE
// counts it.
func headSize(req *Request) int {
	size := 0
	for _, p := range [...]string{":method", ":authority", ":scheme", ":path"} {
		if req.Method == "CONNECT" && (p == ":scheme" || p == ":path") {
			continue
		}
		size += len(p) + len(pseudoValue(req, p)) + 32
	}
	for _, f := range req.Header {
		size += len(f.Name) + len(f.Value) + 32
	}
	return size
}

func pseudoValue(req *Request, p string) string {
	switch p {
	case ":method":
		return req.Method
	case ":authority":
		return req.Authority
	case ":scheme":
		return req.Scheme
	case ":path":
		return req.Path
	}
	return ""
}

// headBufs hold request heads while they are encoded and framed: a
// Stream's Write does not keep what it is given (io.Writer's rule), so a
// buffer goes back once the head is written.
var headBufs = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// encodeHead appends the HEADERS payload for req on stream id to b: with
// the dynamic table once the server's SETTINGS allow it and the profile's
// rule uses it (its inserts written to the encoder stream first), else
// static-only, the pseudo-headers' strings but :path through the
// encoder's cache of codings. A capacity instruction held for the next
// section (CapacityAnnounced) goes on the encoder stream first, from the
// connection's second section on (dynEncoder.sections). Either
// needs the encoder stream: while it cannot be opened before ctx ends
// (a server short of stream credit) the section is static-only and the
// instruction stays held.
func (cc *ClientConn) encodeHead(ctx context.Context, b []byte, req *Request, id uint64) []byte {
	e := &cc.dyn
	e.mu.Lock()
	defer e.mu.Unlock()
	var held []byte
	usable := false
	if e.capacity != CapacityAnnounced || e.sections > 0 {
		held = e.takeHeld()
		usable = e.usable()
	}
	e.sections++
	if len(held) > 0 || usable {
		if _, enc := cc.openQPACK(ctx); enc == nil {
			e.held, held, usable = held, nil, false
		}
	}
	if !usable {
		if len(held) > 0 {
			cc.writeEncoder(held)
		}
		b = cc.enc.appendPrefix(b)
		for _, p := range cc.pseudo {
			if req.Method == "CONNECT" && (p == ":scheme" || p == ":path") {
				continue
			}
			b = cc.enc.appendFieldCache(b, p, pseudoValue(req, p), p != ":path")
		}
		for _, f := range req.Header {
			b = cc.enc.appendField(b, f.Name, f.Value)
		}
		return b
	}
	se := e.begin()
	for _, p := range cc.pseudo {
		if req.Method == "CONNECT" && (p == ":scheme" || p == ":path") {
			continue
		}
		se.field(p, pseudoValue(req, p))
	}
	for _, f := range req.Header {
		se.field(f.Name, f.Value)
	}
	switch {
	case len(held) > 0:
		cc.writeEncoder(append(held, se.ins...))
	case len(se.ins) > 0:
		cc.writeEncoder(se.ins)
	}
	return se.finish(b, id)
}

func (cc *ClientConn) encodeTrailer(h fields.Header) []byte {
	b := cc.enc.appendPrefix(nil)
	for _, f := range h {
		b = cc.enc.appendField(b, f.Name, f.Value)
	}
	return b
}

// writePriorityUpdate sends PRIORITY_UPDATE for a request stream on the
// control stream.
func (cc *ClientConn) writePriorityUpdate(id uint64, prio string) {
	cc.ctrlMu.Lock()
	defer cc.ctrlMu.Unlock()
	p := quicwire.AppendVarint(cc.pbuf[:0], id)
	p = append(p, prio...)
	cc.pbuf = p
	cc.fbuf = h3wire.AppendFrame(cc.fbuf[:0], h3wire.FramePriorityUpdate, p)
	cc.ctrl.Write(cc.fbuf) // copied by the stream: fbuf is reused
}

// writeRequest writes the HEADERS and, for a body in memory, the body and
// the FIN; a streamed body goes on in its own goroutine.
func (s *stream) writeRequest(req *Request, block []byte) error {
	fb := headBufs.Get().(*[]byte)
	b := h3wire.AppendFrame((*fb)[:0], h3wire.FrameHeaders, block)
	defer func() {
		*fb = b[:0]
		headBufs.Put(fb)
	}()
	if req.Body == nil {
		rest := req.BodyBytes
		if len(rest) <= inlineBody {
			if len(rest) > 0 {
				b = h3wire.AppendFrame(b, h3wire.FrameData, rest)
			}
			if len(req.Trailer) > 0 {
				b = h3wire.AppendFrame(b, h3wire.FrameHeaders, s.cc.encodeTrailer(req.Trailer))
			}
			if _, err := s.qs.Write(b); err != nil {
				return s.readErr(err, 0)
			}
			s.closeSend()
			return nil
		}
		if _, err := s.qs.Write(b); err != nil {
			return s.readErr(err, 0)
		}
		go s.writeBody(req, nil)
		return nil
	}
	if _, err := s.qs.Write(b); err != nil {
		return s.readErr(err, 0)
	}
	go s.writeBody(req, req.Body)
	return nil
}

func (s *stream) closeSend() {
	s.qs.Close()
	s.mu.Lock()
	s.sendDone = true
	s.mu.Unlock()
}

// writeBody sends the request body in DATA frames, then the trailers and
// the FIN. A failure cancels the stream, which fails the response read.
func (s *stream) writeBody(req *Request, r io.Reader) {
	if c, ok := r.(io.Closer); ok {
		defer c.Close()
	}
	var sent int64
	if r == nil {
		for p := req.BodyBytes; len(p) > 0; {
			n := min(len(p), dataChunk)
			if _, err := s.qs.Write(h3wire.AppendFrame(make([]byte, 0, n+8), h3wire.FrameData, p[:n])); err != nil {
				s.abort(s.readErr(err, 0))
				return
			}
			p = p[n:]
		}
	} else {
		buf := make([]byte, dataChunk)
		for {
			n, err := r.Read(buf)
			if n > 0 {
				sent += int64(n)
				if req.ContentLength > 0 && sent > req.ContentLength {
					s.abort(ErrBodyLengthMismatch)
					return
				}
				if _, werr := s.qs.Write(h3wire.AppendFrame(make([]byte, 0, n+8), h3wire.FrameData, buf[:n])); werr != nil {
					s.abort(s.readErr(werr, 0))
					return
				}
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				s.abort(err)
				return
			}
		}
		if req.ContentLength > 0 && sent != req.ContentLength {
			s.abort(ErrBodyLengthMismatch)
			return
		}
	}
	if len(req.Trailer) > 0 {
		if _, err := s.qs.Write(h3wire.AppendFrame(nil, h3wire.FrameHeaders, s.cc.encodeTrailer(req.Trailer))); err != nil {
			s.abort(s.readErr(err, 0))
			return
		}
	}
	s.closeSend()
}

// readSection reads a HEADERS payload of length l and decodes it.
func (s *stream) readSection(ctx context.Context, l uint64, phase Phase) ([]field, error) {
	cc := s.cc
	if l > uint64(cc.maxField) {
		if cc.dec.maxCap > 0 {
			cc.writeDecoder(appendStreamCancel(nil, s.id))
		}
		return nil, s.fail(ErrCodeExcessiveLoad, ErrFieldSectionTooLarge)
	}
	var p []byte
	if l <= uint64(len(s.sect)) {
		p = s.sect[:l]
	} else {
		p = make([]byte, l)
	}
	if _, err := io.ReadFull(s.br, p); err != nil {
		return nil, s.readErr(err, phase)
	}
	ric, base, n, err := cc.dec.sectionPrefix(p)
	if err != nil {
		if errors.Is(err, ErrDynamicTableRefused) {
			return nil, cc.connError(ErrCodeQPACKDecompressionFailed, "", ErrDynamicTableRefused)
		}
		return nil, cc.connError(ErrCodeQPACKDecompressionFailed, "", err)
	}
	if ric > 0 {
		if err := s.awaitInserts(ctx, ric); err != nil {
			return nil, err
		}
	}
	out := s.fbuf[:0]
	err = cc.dec.decodeLines(p[n:], ric, base, cc.maxField, func(name, value string) {
		out = append(out, field{name, value})
	})
	if errors.Is(err, ErrFieldSectionTooLarge) {
		if ric > 0 {
			cc.writeDecoder(appendSectionAck(nil, s.id))
		}
		return nil, s.fail(ErrCodeExcessiveLoad, ErrFieldSectionTooLarge)
	}
	if err != nil {
		return nil, cc.connError(ErrCodeQPACKDecompressionFailed, "", err)
	}
	if ric > 0 {
		cc.writeDecoder(appendSectionAck(nil, s.id))
	}
	return out, nil
}

// awaitInserts waits, as a blocked stream, until the dynamic table holds
// ric entries.
func (s *stream) awaitInserts(ctx context.Context, ric uint64) error {
	cc := s.cc
	ch, ok := cc.dec.waitInsert(ric)
	if ok {
		return nil
	}
	if err := cc.dec.block(1); err != nil {
		return cc.connError(ErrCodeQPACKDecompressionFailed, "", err)
	}
	defer cc.dec.block(-1)
	for {
		select {
		case <-ch:
		case <-ctx.Done():
			return s.readErr(ctx.Err(), 0)
		case <-s.abortedCh:
			return s.aborted()
		case <-cc.ctx.Done():
			return s.readErr(ErrClosed, 0)
		}
		if ch, ok = cc.dec.waitInsert(ric); ok {
			return nil
		}
	}
}

// readHead reads frames up to the final response head.
func (s *stream) readHead(ctx context.Context) (*Response, error) {
	n1xx := 0
	for {
		t, l, err := readFrameHeader(s.br)
		if err != nil {
			if errors.Is(err, io.EOF) {
				if a := s.aborted(); a != nil {
					return nil, a
				}
				if ce := s.cc.Err(); ce != nil {
					return nil, ce
				}
				return nil, s.fail(ErrCodeMessage, errors.New("stream ended before the response head"))
			}
			return nil, s.readErr(err, PhaseHead)
		}
		switch ft := h3wire.FrameType(t); ft {
		case h3wire.FrameHeaders:
			fs, err := s.readSection(ctx, l, PhaseHead)
			if err != nil {
				return nil, err
			}
			resp, err := s.parseHead(fs)
			if err != nil {
				return nil, err
			}
			if resp.StatusCode >= 100 && resp.StatusCode < 200 {
				if n1xx++; n1xx > max1xx {
					return nil, s.fail(ErrCodeExcessiveLoad, ErrTooMany1xx)
				}
				continue
			}
			return resp, nil
		case h3wire.FrameData:
			return nil, s.cc.connError(ErrCodeFrameUnexpected, "DATA before the response head", nil)
		default:
			if err := s.otherFrame(ft, l); err != nil {
				return nil, err
			}
		}
	}
}

// otherFrame handles a frame other than HEADERS and DATA on a request
// stream: unknown types are skipped, the rest are errors.
func (s *stream) otherFrame(ft h3wire.FrameType, l uint64) error {
	switch ft {
	case h3wire.FramePushPromise:
		return s.cc.connError(ErrCodeID, "PUSH_PROMISE without MAX_PUSH_ID", nil)
	case h3wire.FrameSettings, h3wire.FrameGoAway, h3wire.FrameMaxPushID, h3wire.FrameCancelPush,
		h3wire.FramePriorityUpdate, h3wire.FramePriorityUpdatePush, 0x02, 0x06, 0x08, 0x09:
		return s.cc.connError(ErrCodeFrameUnexpected, ft.String()+" on a request stream", nil)
	}
	if _, err := io.CopyN(io.Discard, s.br, int64(l)); err != nil {
		return s.readErr(err, PhaseBodyIdle)
	}
	return nil
}

// parseHead checks a response head (RFC 9114 §4.3.2) and builds the
// Response.
func (s *stream) parseHead(fs []field) (*Response, error) {
	// The response is the stream's own: an interim (1xx) head is
	// overwritten by the next, and the final one is the stream's last.
	s.resp = Response{StatusCode: -1, ContentLength: -1, Header: make(fields.Header, 0, len(fs))}
	resp := &s.resp
	regular := false
	for _, f := range fs {
		if len(f.name) > 0 && f.name[0] == ':' {
			if f.name != ":status" || regular || resp.StatusCode != -1 {
				return nil, s.fail(ErrCodeMessage, errMalformed)
			}
			code, err := strconv.Atoi(f.value)
			if err != nil || len(f.value) != 3 || code < 100 || code == 101 {
				return nil, s.fail(ErrCodeMessage, errMalformed)
			}
			resp.StatusCode = code
			continue
		}
		regular = true
		if !fields.ValidName(f.name) || hasUpper(f.name) || !fields.ValidValue(f.value) {
			return nil, s.fail(ErrCodeMessage, errMalformed)
		}
		if f.name == "content-length" {
			n, err := strconv.ParseInt(f.value, 10, 64)
			if err != nil || n < 0 || (resp.ContentLength >= 0 && n != resp.ContentLength) {
				return nil, s.fail(ErrCodeMessage, errMalformed)
			}
			resp.ContentLength = n
		}
		resp.Header = append(resp.Header, fields.Field{Name: f.name, Value: f.value})
	}
	if resp.StatusCode == -1 {
		return nil, s.fail(ErrCodeMessage, errMalformed)
	}
	if resp.StatusCode >= 200 {
		s.cl = resp.ContentLength
		if s.head || resp.StatusCode == 204 || resp.StatusCode == 304 {
			s.cl = 0
			if s.head || resp.StatusCode == 304 {
				resp.ContentLength = max(resp.ContentLength, -1)
			}
		}
	}
	return resp, nil
}

func hasUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return true
		}
	}
	return false
}

// body is a response body read from its stream's DATA frames.
type body struct {
	s    *stream
	resp *Response
}

func (b *body) Read(p []byte) (int, error) {
	s := b.s
	if s.closed {
		return 0, ErrBodyClosed
	}
	if s.finalErr != nil {
		return 0, s.finalErr
	}
	for s.rem == 0 {
		if err := s.nextData(); err != nil {
			s.finalErr = err
			if err == io.EOF {
				b.resp.Trailer = s.trailer
			}
			s.finish()
			return 0, err
		}
	}
	if len(p) == 0 {
		return 0, nil
	}
	if uint64(len(p)) > s.rem {
		p = p[:s.rem]
	}
	if s.idle > 0 {
		s.qs.SetReadDeadline(time.Now().Add(s.idle))
	}
	n, err := s.br.Read(p)
	s.rem -= uint64(n)
	s.got += int64(n)
	if err != nil && n == 0 {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		s.finalErr = s.readErr(err, PhaseBodyIdle)
		s.finish()
		return 0, s.finalErr
	}
	return n, nil
}

// nextData reads frames until a DATA frame with content starts, or the
// stream ends (io.EOF, with the trailers read).
func (s *stream) nextData() error {
	if s.idle > 0 {
		s.qs.SetReadDeadline(time.Now().Add(s.idle))
	}
	t, l, err := readFrameHeader(s.br)
	if err != nil {
		if errors.Is(err, io.EOF) {
			if a := s.aborted(); a != nil {
				return a
			}
			if s.cl >= 0 && s.got != s.cl {
				return s.fail(ErrCodeMessage, errors.New("body shorter than content-length"))
			}
			s.eof = true
			return io.EOF
		}
		return s.readErr(err, PhaseBodyIdle)
	}
	switch ft := h3wire.FrameType(t); ft {
	case h3wire.FrameData:
		if s.trailer != nil {
			return s.cc.connError(ErrCodeFrameUnexpected, "DATA after trailers", nil)
		}
		if s.cl >= 0 && uint64(s.got)+l > uint64(s.cl) {
			return s.fail(ErrCodeMessage, errors.New("body longer than content-length"))
		}
		s.rem = l
		return nil
	case h3wire.FrameHeaders:
		if s.trailer != nil {
			return s.cc.connError(ErrCodeFrameUnexpected, "HEADERS after trailers", nil)
		}
		fs, err := s.readSection(context.Background(), l, PhaseBodyIdle)
		if err != nil {
			return err
		}
		s.trailer = fields.Header{}
		for _, f := range fs {
			if len(f.name) > 0 && f.name[0] == ':' || !fields.ValidName(f.name) || hasUpper(f.name) {
				return s.fail(ErrCodeMessage, errMalformed)
			}
			s.trailer = append(s.trailer, fields.Field{Name: f.name, Value: f.value})
		}
		return nil
	default:
		return s.otherFrame(ft, l)
	}
}

// Close ends the body; before EOF it cancels the stream.
func (b *body) Close() error {
	s := b.s
	if s.closed {
		return nil
	}
	s.closed = true
	if s.finalErr == nil && !s.eof {
		s.qs.CancelRead(uint64(ErrCodeRequestCancelled))
		s.mu.Lock()
		sent := s.sendDone
		s.mu.Unlock()
		if !sent {
			s.qs.CancelWrite(uint64(ErrCodeRequestCancelled))
		}
		s.finalErr = ErrBodyClosed
		s.finish()
	}
	return nil
}

// Trailer returns the trailers once Read returned io.EOF.
func (b *body) Trailer() fields.Header { return b.s.trailer }
