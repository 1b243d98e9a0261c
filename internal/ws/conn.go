package ws

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// Stream is what a Conn runs over: the connection after an HTTP/1.1
// Upgrade, or an HTTP/2 stream. Close must end a Read or Write in progress.
type Stream interface {
	io.Reader
	io.Writer
	Close() error
}

// Config is a Conn's settings. The zero value is a client without
// compression and with the defaults below.
type Config struct {
	// Deflate is the permessage-deflate agreement of the handshake.
	Deflate Deflate
	// DeflateEmptyUncompressed sends an empty message uncompressed under
	// permessage-deflate, as Firefox does, instead of as the one
	// compressed byte 00, as Chromium does.
	DeflateEmptyUncompressed bool
	// DeflateKeepSmaller sends a message uncompressed when, without this
	// side's context takeover, its compressed form would be longer than
	// itself, as Firefox does; Chromium compresses every message.
	DeflateKeepSmaller bool
	// MaxMessageSize caps a received message, after inflation; a larger one
	// fails the connection with 1009. 0 means 32 MiB.
	MaxMessageSize int64
	// Rand is the source of the mask keys; nil means crypto/rand.
	Rand io.Reader
	// PingInterval is how long a Read waits on a silent peer before it
	// sends a ping; 0 or negative means never, as browsers send none
	// (a Read then waits as long as its context allows).
	PingInterval time.Duration
	// PingTimeout is how long after that ping the peer has to send
	// anything before reads fail with ErrPingTimeout; 0 means 20s. It
	// applies only with a PingInterval.
	PingTimeout time.Duration
	// CloseTimeout bounds Close's wait for the peer's close frame; 0 means
	// 5s.
	CloseTimeout time.Duration
	// Buffered holds bytes the handshake read past the response head: the
	// first frames. The Conn copies them.
	Buffered []byte
}

// Conn is the client side of a WebSocket over a Stream.
//
// One goroutine may read (ReadMessage) while another writes (WriteMessage):
// reads are serialised among themselves, and so are writes. Ping and Close
// may be called from any goroutine. Answers to the peer's pings and close
// go out from ReadMessage. Once the connection has ended every call returns
// the error that ended it; the Stream is then closed.
type Conn struct {
	s   Stream
	cfg Config
	max int64

	rmu    sync.Mutex
	rbuf   []byte
	rpos   int
	rend   int
	msg    []byte
	infl   []byte
	inf    *inflater
	ctrl   [125]byte
	frames atomic.Uint64 // frames read, for the ping deadline

	wmu       sync.Mutex
	wbuf      []byte
	cbuf      []byte
	def       *deflater
	rnd       [64]byte
	rndPos    int
	closeSent bool

	mu      sync.Mutex
	err     error
	done    chan struct{}
	pongs   []chan struct{} // Pings waiting, oldest first
	reading atomic.Int32
	timer   *time.Timer
	// The timer's state: its callbacks (which may overlap when a ping's
	// write blocks) touch these.
	lastFrames atomic.Uint64
	pinged     atomic.Bool
}

const (
	readBuf      = 8 << 10
	maxWriteBuf  = 64 << 10
	writeChunk   = 32 << 10
	defaultLimit = 32 << 20
)

// NewConn starts a client WebSocket over s with cfg (nil: the zero Config).
func NewConn(s Stream, cfg *Config) *Conn {
	c := &Conn{s: s, done: make(chan struct{})}
	if cfg != nil {
		c.cfg = *cfg
	}
	c.max = c.cfg.MaxMessageSize
	if c.max <= 0 {
		c.max = defaultLimit
	}
	if c.cfg.Rand == nil {
		c.cfg.Rand = rand.Reader
	}
	c.cfg.PingTimeout = orDefault(c.cfg.PingTimeout, 20*time.Second)
	c.cfg.CloseTimeout = orDefault(c.cfg.CloseTimeout, 5*time.Second)
	c.rbuf = make([]byte, max(readBuf, len(c.cfg.Buffered)))
	c.rend = copy(c.rbuf, c.cfg.Buffered)
	c.cfg.Buffered = nil
	c.rndPos = len(c.rnd)
	if d := c.cfg.Deflate; d.Enabled {
		c.inf = &inflater{takeover: !d.ServerNoContextTakeover}
		c.def = &deflater{takeover: !d.ClientNoContextTakeover, bits: d.ClientMaxWindowBits}
	}
	if c.cfg.PingInterval > 0 {
		c.timer = time.AfterFunc(c.cfg.PingInterval, c.tick)
	}
	return c
}

func orDefault(d, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return d
}

// fail ends the connection with err unless it already ended, closes the
// Stream and returns the error that ended it.
func (c *Conn) fail(err error) error {
	c.mu.Lock()
	if c.err != nil {
		err = c.err
		c.mu.Unlock()
		return err
	}
	c.err = err
	close(c.done)
	if c.timer != nil {
		c.timer.Stop()
	}
	c.mu.Unlock()
	c.s.Close()
	return err
}

// ended returns the error that ended the connection, or nil.
func (c *Conn) ended() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// watch fails the connection when ctx ends; the returned func stops that.
func (c *Conn) watch(ctx context.Context) func() bool {
	if ctx.Done() == nil {
		return nil
	}
	return context.AfterFunc(ctx, func() { c.fail(fmt.Errorf("ws: %w", context.Cause(ctx))) })
}

// ReadMessage returns the next text or binary message: its opcode and
// payload (inflated). The payload is valid until the next ReadMessage. When
// ctx ends the connection is closed and ctx's error returned. A close frame
// from the peer is answered and returned as a *CloseError with Remote set; a
// violation of the peer fails the connection and returns a *CloseError with
// the code sent; a connection that ends otherwise returns an error wrapping
// ErrDropped (or ErrPingTimeout).
func (c *Conn) ReadMessage(ctx context.Context) (Opcode, []byte, error) {
	c.rmu.Lock()
	defer c.rmu.Unlock()
	if err := c.ended(); err != nil {
		return 0, nil, err
	}
	if err := ctx.Err(); err != nil {
		return 0, nil, c.fail(fmt.Errorf("ws: %w", err))
	}
	if stop := c.watch(ctx); stop != nil {
		defer stop()
	}
	c.reading.Add(1)
	defer c.reading.Add(-1)
	op, p, err := c.readMessage()
	if err != nil {
		c.failClose(err)
		return 0, nil, c.fail(err)
	}
	return op, p, nil
}

// failClose sends the close frame of a violation of the peer (RFC 6455
// section 7.1.7), unless a write in progress holds the writer: the
// connection is failed either way.
func (c *Conn) failClose(err error) {
	var ce *CloseError
	if !errors.As(err, &ce) || ce.Remote || !c.wmu.TryLock() {
		return
	}
	if !c.closeSent && c.ended() == nil {
		c.closeSent = true
		c.writeFrame(OpClose, 0, binary.BigEndian.AppendUint16(c.ctrl[:0:2], uint16(ce.Code)))
	}
	c.wmu.Unlock()
}

// readMessage reads frames until a whole data message; rmu is held.
func (c *Conn) readMessage() (Opcode, []byte, error) {
	var op Opcode
	compressed := false
	msg := c.msg[:0]
	valid := 0
	for {
		h, err := c.readHeader()
		if err != nil {
			return 0, nil, err
		}
		c.frames.Add(1)
		if h.Masked {
			return 0, nil, fail(StatusProtocolError, "masked frame from the server")
		}
		switch h.Op {
		case OpText, OpBinary, OpContinuation, OpClose, OpPing, OpPong:
		default:
			return 0, nil, fail(StatusProtocolError, "reserved opcode "+h.Op.String())
		}
		rsv := h.RSV
		if c.inf != nil && (h.Op == OpText || h.Op == OpBinary) {
			rsv &^= 4
		}
		if rsv != 0 {
			return 0, nil, fail(StatusProtocolError, "reserved bits set")
		}
		if h.Op.control() {
			if !h.Fin || h.PayloadLen > 125 {
				return 0, nil, fail(StatusProtocolError, "fragmented or long control frame")
			}
			p := c.ctrl[:h.PayloadLen]
			if err := c.readPayload(p); err != nil {
				return 0, nil, err
			}
			if err := c.control(h.Op, p); err != nil {
				return 0, nil, err
			}
			continue
		}
		switch {
		case h.Op == OpContinuation && op == 0:
			return 0, nil, fail(StatusProtocolError, "continuation frame without a message")
		case h.Op != OpContinuation && op != 0:
			return 0, nil, fail(StatusProtocolError, "new message inside a fragmented one")
		case h.Op != OpContinuation:
			op, compressed = h.Op, h.RSV&4 != 0
		}
		if h.PayloadLen > c.max-int64(len(msg)) {
			c.msg = msg
			return 0, nil, fail(StatusTooBig, "message over the limit")
		}
		n := len(msg)
		msg = grow(msg, int(h.PayloadLen))
		if err := c.readPayload(msg[n:]); err != nil {
			c.msg = msg[:0]
			return 0, nil, err
		}
		if op == OpText && !compressed {
			m, ok := validPrefix(msg[valid:])
			if !ok {
				c.msg = msg[:0]
				return 0, nil, fail(StatusInvalidData, "text message not UTF-8")
			}
			valid += m
		}
		if h.Fin {
			break
		}
	}
	c.msg = msg[:0]
	if compressed {
		out, in, err := c.inf.inflate(c.infl[:0], msg, c.max)
		c.msg = in[:0]
		c.infl = out[:0]
		if err != nil {
			return 0, nil, err
		}
		if op == OpText && !utf8.Valid(out) {
			return 0, nil, fail(StatusInvalidData, "text message not UTF-8")
		}
		return op, out, nil
	}
	if op == OpText && valid != len(msg) {
		return 0, nil, fail(StatusInvalidData, "text message not UTF-8")
	}
	return op, msg, nil
}

func grow(b []byte, n int) []byte {
	if cap(b)-len(b) >= n {
		return b[:len(b)+n]
	}
	nb := make([]byte, len(b)+n, max(2*cap(b), len(b)+n))
	copy(nb, b)
	return nb
}

// control handles a ping, pong or close frame with payload p.
func (c *Conn) control(op Opcode, p []byte) error {
	switch op {
	case OpPing:
		c.wmu.Lock()
		defer c.wmu.Unlock()
		if c.closeSent {
			return nil
		}
		return c.writeFrame(OpPong, 0, p)
	case OpPong:
		c.mu.Lock()
		if len(c.pongs) > 0 {
			close(c.pongs[0])
			c.pongs = c.pongs[1:]
		}
		c.mu.Unlock()
		return nil
	}
	ce := &CloseError{Code: StatusNoStatus, Remote: true}
	switch {
	case len(p) == 1:
		return fail(StatusProtocolError, "close frame of one byte")
	case len(p) >= 2:
		ce.Code = StatusCode(binary.BigEndian.Uint16(p))
		if !ce.Code.Sendable() {
			return fail(StatusProtocolError, "close code "+ce.Code.String())
		}
		if !utf8.Valid(p[2:]) {
			return fail(StatusInvalidData, "close reason not UTF-8")
		}
		ce.Reason = string(p[2:])
	}
	c.wmu.Lock()
	if !c.closeSent {
		c.closeSent = true
		var echo []byte
		if len(p) >= 2 {
			echo = p[:2]
		}
		c.writeFrame(OpClose, 0, echo)
	}
	c.wmu.Unlock()
	return ce
}

// fail is a violation of the peer: the connection is failed with code.
func fail(code StatusCode, reason string) *CloseError {
	return &CloseError{Code: code, Reason: reason}
}

// readHeader reads the next frame header.
func (c *Conn) readHeader() (Header, error) {
	for {
		h, n, err := ParseHeader(c.rbuf[c.rpos:c.rend])
		if err != nil {
			return Header{}, err
		}
		if n > 0 {
			c.rpos += n
			return h, nil
		}
		if err := c.fill(); err != nil {
			return Header{}, err
		}
	}
}

// fill reads more bytes into rbuf, moving what is unread to its start.
func (c *Conn) fill() error {
	if c.rpos > 0 {
		c.rend = copy(c.rbuf, c.rbuf[c.rpos:c.rend])
		c.rpos = 0
	}
	n, err := c.s.Read(c.rbuf[c.rend:])
	c.rend += n
	if n > 0 {
		return nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return c.dropped(err)
}

func (c *Conn) dropped(err error) error {
	if e := c.ended(); e != nil {
		return e
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("%w: %w", ErrDropped, err)
}

// readPayload fills p with the next payload bytes.
func (c *Conn) readPayload(p []byte) error {
	n := copy(p, c.rbuf[c.rpos:c.rend])
	c.rpos += n
	p = p[n:]
	for len(p) > 0 {
		if len(p) >= len(c.rbuf) {
			m, err := io.ReadAtLeast(c.s, p, len(p))
			if err != nil {
				return c.dropped(err)
			}
			p = p[m:]
			continue
		}
		if err := c.fill(); err != nil {
			return err
		}
		n := copy(p, c.rbuf[c.rpos:c.rend])
		c.rpos += n
		p = p[n:]
	}
	return nil
}

// WriteMessage sends p as one text or binary message, compressed when the
// handshake agreed on permessage-deflate. A text message must be UTF-8.
// When ctx ends during the write the connection is closed and ctx's error
// returned.
func (c *Conn) WriteMessage(ctx context.Context, op Opcode, p []byte) error {
	if op != OpText && op != OpBinary || op == OpText && !utf8.Valid(p) {
		return ErrInvalidMessage
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.ended(); err != nil {
		return err
	}
	if c.closeSent {
		return ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return c.fail(fmt.Errorf("ws: %w", err))
	}
	if stop := c.watch(ctx); stop != nil {
		defer stop()
	}
	var rsv uint8
	if c.def != nil && !(len(p) == 0 && c.cfg.DeflateEmptyUncompressed) {
		b, err := c.def.compress(c.cbuf[:0], p)
		if err != nil {
			return c.fail(fmt.Errorf("ws: deflate: %w", err))
		}
		if cap(b) <= maxWriteBuf {
			c.cbuf = b[:0]
		}
		if !(c.cfg.DeflateKeepSmaller && !c.def.takeover && len(b) > len(p)) {
			p, rsv = b, 4
		}
	}
	return c.writeFrame(op, rsv, p)
}

// writeFrame writes one masked frame; wmu is held.
func (c *Conn) writeFrame(op Opcode, rsv uint8, p []byte) error {
	key, err := c.maskKey()
	if err != nil {
		return c.fail(fmt.Errorf("ws: mask key: %w", err))
	}
	b := AppendHeader(c.wbuf[:0], Header{Fin: true, RSV: rsv, Op: op, Masked: true, Mask: key, PayloadLen: int64(len(p))})
	pos := 0
	for {
		n := min(len(p), writeChunk)
		start := len(b)
		b = append(b, p[:n]...)
		pos = maskBytes(key, pos, b[start:])
		p = p[n:]
		if _, err := c.s.Write(b); err != nil {
			return c.fail(c.dropped(err))
		}
		if cap(b) <= maxWriteBuf {
			c.wbuf = b[:0]
		}
		if len(p) == 0 {
			return nil
		}
		b = c.wbuf[:0]
	}
}

// maskKey returns a fresh mask key, taking 4 bytes of a batch read from
// Rand.
func (c *Conn) maskKey() ([4]byte, error) {
	if c.rndPos+4 > len(c.rnd) {
		if _, err := io.ReadFull(c.cfg.Rand, c.rnd[:]); err != nil {
			return [4]byte{}, err
		}
		c.rndPos = 0
	}
	var k [4]byte
	copy(k[:], c.rnd[c.rndPos:])
	c.rndPos += 4
	return k, nil
}

// Ping sends a ping and waits for its pong, which a concurrent ReadMessage
// receives: without one, Ping waits until ctx ends. It returns ctx's error
// then, without closing the connection.
func (c *Conn) Ping(ctx context.Context) error {
	ch := make(chan struct{})
	c.wmu.Lock()
	err := c.ended()
	if err == nil && c.closeSent {
		err = ErrClosed
	}
	if err == nil {
		c.mu.Lock()
		c.pongs = append(c.pongs, ch)
		c.mu.Unlock()
		err = c.writeFrame(OpPing, 0, nil)
	}
	c.wmu.Unlock()
	if err != nil {
		return err
	}
	select {
	case <-ch:
		return nil
	case <-c.done:
		return c.ended()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// tick runs every PingInterval: after a silent interval with a Read
// waiting it pings, and after a silent PingTimeout more it fails the
// connection with ErrPingTimeout.
func (c *Conn) tick() {
	if c.ended() != nil {
		return
	}
	f := c.frames.Load()
	if c.reading.Load() == 0 || f != c.lastFrames.Load() {
		c.lastFrames.Store(f)
		c.pinged.Store(false)
		c.timer.Reset(c.cfg.PingInterval)
		return
	}
	if c.pinged.Swap(true) {
		c.fail(ErrPingTimeout)
		return
	}
	// Armed before the write: a write stuck on a peer that reads nothing
	// is cut off by the timeout's failure.
	c.timer.Reset(c.cfg.PingTimeout)
	if c.wmu.TryLock() {
		// A writer blocked on such a peer holds wmu: the timeout then
		// runs as if the ping went.
		if !c.closeSent {
			c.writeFrame(OpPing, 0, nil)
		}
		c.wmu.Unlock()
	}
}

// SendClose starts the close handshake: it sends a close frame with code
// and reason (code 0: none) and returns, reading nothing. ReadMessage goes
// on returning the messages the peer sent before its own close frame, then
// that frame as a remote *CloseError. Writes after it are ErrClosed. Close
// still ends the connection, within CloseTimeout. Its argument checks are
// Close's.
func (c *Conn) SendClose(code StatusCode, reason string) error {
	if code != 0 && !code.Sendable() || code == 0 && reason != "" || len(reason) > 123 || !utf8.ValidString(reason) {
		return ErrInvalidMessage
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if err := c.ended(); err != nil {
		return err
	}
	if c.closeSent {
		return nil
	}
	c.closeSent = true
	var p []byte
	if code != 0 {
		p = binary.BigEndian.AppendUint16(make([]byte, 0, 2+len(reason)), uint16(code))
		p = append(p, reason...)
	}
	return c.writeFrame(OpClose, 0, p)
}

// Close sends a close frame with code and reason (code 0: none), waits up
// to CloseTimeout for the peer's, and closes the Stream. It returns nil when
// the peer answered, and otherwise the error that ended the connection. A
// code that may not be sent, or a reason over 123 bytes or not UTF-8, is
// ErrInvalidMessage and sends nothing.
func (c *Conn) Close(code StatusCode, reason string) error {
	if code != 0 && !code.Sendable() || code == 0 && reason != "" || len(reason) > 123 || !utf8.ValidString(reason) {
		return ErrInvalidMessage
	}
	// Nothing below outlasts the timeout: a writer stuck on a peer that
	// reads nothing, or a peer that never answers, is cut off.
	t := time.AfterFunc(c.cfg.CloseTimeout, func() { c.fail(fmt.Errorf("%w: no close frame within %v", ErrDropped, c.cfg.CloseTimeout)) })
	defer t.Stop()
	c.wmu.Lock()
	if c.ended() == nil && !c.closeSent {
		c.closeSent = true
		var p []byte
		if code != 0 {
			p = binary.BigEndian.AppendUint16(make([]byte, 0, 2+len(reason)), uint16(code))
			p = append(p, reason...)
		}
		c.writeFrame(OpClose, 0, p)
	}
	c.wmu.Unlock()
	if c.rmu.TryLock() {
		for c.ended() == nil {
			if _, _, err := c.readMessage(); err != nil {
				c.failClose(err)
				c.fail(err)
			}
		}
		c.rmu.Unlock()
	} else {
		<-c.done
	}
	err := c.ended()
	c.mu.Lock()
	c.err = ErrClosed
	c.mu.Unlock()
	var ce *CloseError
	if errors.As(err, &ce) && ce.Remote {
		return nil
	}
	return err
}

// Done is closed when the connection has ended.
func (c *Conn) Done() <-chan struct{} { return c.done }

// Err returns the error that ended the connection, or nil while it is open.
func (c *Conn) Err() error { return c.ended() }
