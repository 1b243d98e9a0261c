package h2

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

const (
	defaultMaxHeaderList   = 10 << 20
	defaultPingTimeout     = 15 * time.Second
	defaultMaxControlQueue = 1024
	defaultMax1xx          = 8
	provisionalMaxStreams  = 100
	maxEmptyFrames         = 1000 // empty DATA frames in a row; CONTINUATION headers per block
	maxStreamID            = 1<<31 - 1
	goAwayTimeout          = time.Second
)

// ClientConn is one HTTP/2 client connection. Its methods are safe for
// concurrent use. It owns the net.Conn given to NewClientConn and two
// goroutines (a frame reader and a control-frame writer) that Close waits for.
type ClientConn struct {
	nc  net.Conn
	cfg *Config

	// Reader side: owned by the read loop.
	fr          *http2.Framer
	rd          connReader
	hdec        *hdecoder
	emit        func(hpack.HeaderField) // cc.emitField, bound once
	hfields     []hpack.HeaderField     // decoded fields of the current block
	hpay        []byte                  // payload of a HEADERS frame read without the Framer
	hremain     uint32                  // header list bytes left in the current block
	hbad        error                   // first invalid field of the current block
	empty       int                     // empty DATA frames in a row
	maxList     uint32                  // response header list cap
	maxFrame    uint32                  // our SETTINGS_MAX_FRAME_SIZE
	sawSettings bool                    // the peer's first SETTINGS arrived
	// A header block continued in CONTINUATION frames: the stream it is
	// for (0: none), whether its HEADERS ended the stream, the block so
	// far, and the empty CONTINUATION frames it had.
	contID    uint32
	contEnd   bool
	contBuf   []byte
	contEmpty int

	// Writer side: wlock is a channel lock so that waiting can be cancelled;
	// wwait counts writers waiting for it, so that the holder flushes only
	// when nobody would add to the batch.
	// cc.fr's write methods are used under wlock and write into wb.
	wlock chan struct{}
	wwait atomic.Int32
	wb    frameBuf // frames not yet written; under wlock
	// flushing says that a writer sends a batch outside wlock; frames
	// added meanwhile are its to send next. spare is the buffer of the
	// batch sent last, for reuse. Both under wlock.
	flushing bool
	spare    []byte
	// nclock is held while a batch is written to nc, outside wlock.
	nclock chan struct{}
	werr   error  // first error of a frame write; under wlock
	hbuf   []byte // header block scratch; under wlock
	// boxes are idleBufs's holders of wb.b, spare and hbuf: empty while
	// the connection holds the buffers; see releaseBuffers. Under wlock.
	boxes [3]*[]byte
	enc   *encoder // under wlock
	wake  chan struct{}
	// The control writer runs only while there is work (see startWriter):
	// writerOn says it runs; wmu orders its start against Close, which
	// sets wstopped and waits for it in writers.
	writerOn atomic.Bool
	wmu      sync.Mutex
	wstopped bool
	writers  sync.WaitGroup

	readDone chan struct{}
	done     chan struct{} // closed by Close/fail
	// framesIn counts the frames read, so that a stream that meets its
	// deadline can tell whether the connection has been silent since its
	// own last frame (see retireIfSilentLocked).
	framesIn  atomic.Uint32
	closeOnce sync.Once
	bodies    sync.WaitGroup

	mu            sync.Mutex
	streams       map[uint32]*stream
	open          []*stream // open streams by id, for DepLatestOpen
	nextID        uint32
	lastID        uint32
	reserved      int
	held          int // reservations taken by requests that wait for the limit to allow them (takeSlot)
	starting      int
	maxConcurrent uint32
	peerWindow    int32 // peer's SETTINGS_INITIAL_WINDOW_SIZE
	peerMaxFrame  uint32
	peerMaxList   uint32 // 0: no limit announced
	peerTable     uint32
	peerTableSet  bool // peer sent HEADER_TABLE_SIZE not yet applied
	sendWindow    int64
	recvWindow    int64 // credit the peer has on the connection
	// batcher is the stream whose WriteTo waits for several blocks at a
	// time (see batchLocked), or nil. Guarded by mu.
	batcher         *stream
	recvMax         int64
	connUnacked     int64
	streamRecvInit  int32
	goAway          *GoAwayError
	closing         bool
	closed          bool
	err             error         // why the connection ended
	ctrl            []ctrlFrame   // owed, not yet in wb
	slotWait        chan struct{} // closed when a stream slot frees
	windowWait      chan struct{} // closed when send windows grow
	pingOutstanding bool
	pingData        [8]byte
	idleTimer       *time.Timer
	pingTimer       *time.Timer
	onIdle          func(*ClientConn)
	idleNotified    bool
	spareChans      []chan struct{} // notify channels of finished streams
	// peerSettings is closed when the peer's first SETTINGS has been
	// applied; peerConnect is its SETTINGS_ENABLE_CONNECT_PROTOCOL (RFC
	// 8441), under mu.
	peerSettings chan struct{}
	peerConnect  bool
}

// NewClientConn starts an HTTP/2 connection on nc, which must have
// negotiated h2. It writes the preface, SETTINGS, WINDOW_UPDATE and PRIORITY
// frames of cfg in one write and starts the connection's goroutines; it does
// not wait for the server's SETTINGS. cfg is shared and must not change. A
// preface the Framer refuses to write (a PRIORITY frame on stream 0, a
// WINDOW_UPDATE increment above 2^31-1) is an error before anything is
// written. On error nc is closed.
func NewClientConn(nc net.Conn, cfg *Config) (*ClientConn, error) {
	if cfg == nil {
		cfg = &Config{}
	}
	cc := &ClientConn{
		nc:            nc,
		cfg:           cfg,
		wlock:         make(chan struct{}, 1),
		nclock:        make(chan struct{}, 1),
		wake:          make(chan struct{}, 1),
		readDone:      make(chan struct{}),
		done:          make(chan struct{}),
		peerSettings:  make(chan struct{}),
		streams:       make(map[uint32]*stream),
		nextID:        cfg.FirstStreamID,
		maxConcurrent: provisionalMaxStreams,
		peerWindow:    initialWindow,
		peerMaxFrame:  minMaxFrameSize,
		sendWindow:    initialWindow,
		enc:           newEncoder(&cfg.HPACK),
	}
	if cc.nextID == 0 {
		cc.nextID = 1
	}
	cc.streamRecvInit = initialWindow
	if v, ok := cfg.setting(SettingInitialWindowSize); ok && v <= maxWindow {
		cc.streamRecvInit = int32(v)
	}
	cc.streamRecvInit = int32(min(int64(cc.streamRecvInit)+int64(cfg.StreamWindowUpdate), maxWindow))
	cc.recvMax = min(initialWindow+int64(cfg.ConnWindowUpdate), maxWindow)
	cc.recvWindow = cc.recvMax
	cc.maxFrame = minMaxFrameSize
	if v, ok := cfg.setting(SettingMaxFrameSize); ok && v >= minMaxFrameSize && v <= maxMaxFrameSize {
		cc.maxFrame = v
	}
	tableSize := uint32(defaultTableSize)
	if v, ok := cfg.setting(SettingHeaderTableSize); ok {
		tableSize = v
	}
	maxList := cfg.MaxHeaderListSize
	if maxList == 0 {
		maxList = defaultMaxHeaderList
		if v, ok := cfg.setting(SettingMaxHeaderListSize); ok && v > 0 {
			maxList = v
		}
	}
	cc.emit = cc.emitField
	cc.hdec = newHDecoder(tableSize, int(maxList))
	if _, ok := nc.(interface{ Handshake() error }); ok {
		// A TLS connection keeps each record's plaintext: frames are read
		// from it directly, so that a DATA block is copied once into its
		// block and not through a second buffer as well.
		cc.rd.r = nc
	} else {
		br := readBufs.Get().(*bufio.Reader)
		br.Reset(nc)
		cc.rd.r = br
	}
	cc.fr = newFramer(&cc.wb, &cc.rd, cc.maxFrame)

	cc.wb.b = append(make([]byte, 0, 256), preface...)
	err := cc.fr.WriteSettings(cfg.Settings...)
	if err == nil && cfg.ConnWindowUpdate > 0 {
		err = cc.fr.WriteWindowUpdate(0, cfg.ConnWindowUpdate)
	}
	for _, p := range cfg.PriorityFrames {
		if err == nil {
			err = cc.fr.WritePriority(p.StreamID, p.PriorityParam)
		}
	}
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("h2: invalid preface in Config: %v", err)
	}
	if _, err := nc.Write(cc.wb.b); err != nil {
		nc.Close()
		return nil, err
	}
	cc.wb.reset()
	if cfg.ReadIdleTimeout > 0 {
		cc.idleTimer = time.AfterFunc(cfg.ReadIdleTimeout, cc.sendHealthPing)
	}
	cc.maxList = maxList
	go cc.readLoop()
	return cc, nil
}

// OnIdle sets f to be called, outside the connection's locks and on the
// goroutine that ended it, when the last active stream ends (once per idle
// period). f must not block. It replaces an earlier hook; nil removes it.
func (cc *ClientConn) OnIdle(f func(*ClientConn)) {
	cc.mu.Lock()
	cc.onIdle = f
	cc.mu.Unlock()
}

// canTakeLocked reports whether one more stream fits. cc.mu is held.
func (cc *ClientConn) canTakeLocked() bool {
	return !cc.closed && !cc.closing && cc.goAway == nil &&
		uint32(len(cc.streams)+cc.reserved+cc.held+cc.starting) < cc.maxConcurrent &&
		cc.nextID+2*uint32(cc.reserved+cc.held+cc.starting) <= maxStreamID
}

// CanTakeNewRequest reports whether a new request could start now: false
// after GOAWAY, Shutdown or Close, or when the streams in use (counting
// reservations) would exceed the peer's MAX_CONCURRENT_STREAMS.
func (cc *ClientConn) CanTakeNewRequest() bool {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return cc.canTakeLocked()
}

// Usable reports whether the connection may take new requests, now or once
// a stream slot frees: false after GOAWAY, Shutdown, CloseWhenIdle, Close or
// a failure, and once stream ids run out.
func (cc *ClientConn) Usable() bool {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return cc.refusalLocked() == nil
}

// ReserveNewRequest atomically checks CanTakeNewRequest and reserves a stream
// slot. The next RoundTrip uses the reservation and does not wait for a slot.
func (cc *ClientConn) ReserveNewRequest() bool {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if !cc.canTakeLocked() {
		return false
	}
	cc.reserved++
	return true
}

// CancelReservation gives back a slot taken by ReserveNewRequest that will
// not be used.
func (cc *ClientConn) CancelReservation() {
	cc.mu.Lock()
	if cc.reserved > 0 {
		cc.reserved--
		cc.wakeSlotsLocked()
	}
	cc.mu.Unlock()
	cc.afterUnlock()
}

// Idle reports whether no stream is active or reserved.
func (cc *ClientConn) Idle() bool {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return len(cc.streams)+cc.reserved+cc.held+cc.starting == 0
}

// ActiveStreams returns the number of streams open or being opened.
func (cc *ClientConn) ActiveStreams() int {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return len(cc.streams) + cc.starting
}

// Err returns why the connection ended, or nil while it is usable.
func (cc *ClientConn) Err() error {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return cc.err
}

// Shutdown closes the connection gracefully: it sends GOAWAY, refuses new
// requests with a retryable error, and waits for the streams in flight to
// finish or for ctx to end, then closes. It returns ctx's error if ctx ended
// first (the connection is closed anyway).
func (cc *ClientConn) Shutdown(ctx context.Context) error {
	cc.mu.Lock()
	if cc.closed {
		cc.mu.Unlock()
		return nil
	}
	cc.closing = true
	cc.mu.Unlock()
	if cc.lockWrite(ctx) {
		cc.wrote(cc.fr.WriteGoAway(0, ErrCodeNo, nil))
		cc.unlockWrite()
	}
	for {
		cc.mu.Lock()
		if len(cc.streams)+cc.starting == 0 || cc.closed {
			cc.mu.Unlock()
			break
		}
		ch := cc.slotChanLocked()
		cc.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			cc.Close()
			return ctx.Err()
		}
	}
	return cc.Close()
}

// CloseWhenIdle closes the connection gracefully without waiting: it sends
// GOAWAY and refuses new requests, and the connection closes once the
// streams in flight have finished (at once when there are none, which may
// leave the GOAWAY unsent if a write of other frames is under way).
func (cc *ClientConn) CloseWhenIdle() {
	cc.mu.Lock()
	if cc.closed || cc.closing {
		cc.mu.Unlock()
		return
	}
	cc.closing = true
	cc.mu.Unlock()
	if cc.lockWrite(nil) {
		cc.wrote(cc.fr.WriteGoAway(0, ErrCodeNo, nil))
		cc.unlockWrite()
	}
	cc.afterUnlock() // closes now if no stream is left
}

// Close closes the connection at once. Streams in flight fail with an error
// matching ErrClosed. Close waits for the connection's goroutines, including
// request-body writers (which may wait in the caller's Body.Read).
func (cc *ClientConn) Close() error {
	cc.fail(ErrClosed)
	<-cc.readDone
	cc.wmu.Lock()
	cc.wstopped = true
	cc.wmu.Unlock()
	cc.writers.Wait()
	cc.bodies.Wait()
	return nil
}

// fail ends the connection with err: every stream fails, waiters wake, the
// net.Conn is closed. A ConnectionError we detected is sent as GOAWAY first,
// best effort.
func (cc *ClientConn) fail(err error) {
	cc.mu.Lock()
	if cc.closed {
		cc.mu.Unlock()
		return
	}
	cc.closed = true
	cc.err = err
	var ce ConnectionError
	sendGoAway := errors.As(err, &ce)
	streamErr := err
	if cc.goAway != nil && !sendGoAway && err != ErrClosed {
		streamErr = *cc.goAway
	}
	var bodies []io.Closer
	for _, s := range cc.streams {
		s.failLocked(streamErr)
		if c, ok := s.req.Body.(io.Closer); ok && !s.sentEnd {
			bodies = append(bodies, c)
		}
	}
	clear(cc.streams)
	cc.open = cc.open[:0]
	cc.wakeSlotsLocked()
	cc.wakeWindowsLocked()
	if cc.idleTimer != nil {
		cc.idleTimer.Stop()
	}
	if cc.pingTimer != nil {
		cc.pingTimer.Stop()
	}
	last := cc.lastID
	cc.mu.Unlock()
	cc.closeOnce.Do(func() { close(cc.done) })
	for _, c := range bodies {
		c.Close()
	}
	if sendGoAway {
		// Best effort: a writer blocked on a peer that does not read must
		// not hold up the close.
		t := time.NewTimer(goAwayTimeout)
		select {
		case cc.wlock <- struct{}{}:
			// After the batch being written, if any.
			select {
			case cc.nclock <- struct{}{}:
				cc.nc.SetWriteDeadline(time.Now().Add(goAwayTimeout))
				if cc.fr.WriteGoAway(last, ce.Code, nil) == nil {
					cc.nc.Write(cc.wb.b)
				}
				<-cc.nclock
			case <-t.C:
			}
			cc.wb.reset()
			<-cc.wlock
		case <-t.C:
		}
		t.Stop()
	}
	cc.nc.Close()
}

var errCalm = ConnectionError{Code: ErrCodeEnhanceYourCalm, Reason: "too many control frames owed"}

func (cc *ClientConn) slotChanLocked() chan struct{} {
	if cc.slotWait == nil {
		cc.slotWait = make(chan struct{})
	}
	return cc.slotWait
}

func (cc *ClientConn) wakeSlotsLocked() {
	if cc.slotWait != nil {
		close(cc.slotWait)
		cc.slotWait = nil
	}
}

func (cc *ClientConn) windowChanLocked() chan struct{} {
	if cc.windowWait == nil {
		cc.windowWait = make(chan struct{})
	}
	return cc.windowWait
}

func (cc *ClientConn) wakeWindowsLocked() {
	if cc.windowWait != nil {
		close(cc.windowWait)
		cc.windowWait = nil
	}
}

// sendHealthPing runs when ReadIdleTimeout passed without a frame.
func (cc *ClientConn) sendHealthPing() {
	cc.mu.Lock()
	if cc.closed || cc.pingOutstanding {
		cc.mu.Unlock()
		return
	}
	cc.pingOutstanding = true
	cc.pingData[7]++
	data := cc.pingData
	ok := cc.queueLocked(ctrlFrame{typ: FramePing, data: data})
	timeout := cc.cfg.PingTimeout
	if timeout <= 0 {
		timeout = defaultPingTimeout
	}
	if cc.pingTimer == nil {
		cc.pingTimer = time.AfterFunc(timeout, cc.pingLost)
	} else {
		cc.pingTimer.Reset(timeout)
	}
	cc.mu.Unlock()
	if !ok {
		cc.fail(errCalm)
		return
	}
	cc.kick()
}

func (cc *ClientConn) pingLost() {
	cc.mu.Lock()
	lost := cc.pingOutstanding
	cc.mu.Unlock()
	if lost {
		cc.fail(&TimeoutError{Phase: PhasePing})
	}
}

// newFramer returns the connection's Framer: it reads frames of at most
// maxFrame bytes from r, rejects what RFC 9113 forbids (AllowIllegalReads
// stays false: among others, anything but CONTINUATION frames of its
// stream after a HEADERS frame that does not end its block), reuses DATA
// frames, and writes to w. It leaves header blocks to the connection
// (ReadMetaHeaders stays nil), which decodes them with its hdecoder.
func newFramer(w io.Writer, r io.Reader, maxFrame uint32) *http2.Framer {
	fr := http2.NewFramer(w, r)
	fr.SetReuseFrames()
	fr.SetMaxReadFrameSize(maxFrame)
	return fr
}
