package h3

import (
	"bufio"
	"context"
	"errors"
	"io"
	"sync"
	"sync/atomic"

	"github.com/guise-http/guise/internal/h3wire"
	"github.com/guise-http/guise/internal/quicwire"
)

// maxControlFrame bounds a control stream frame we read whole (SETTINGS,
// GOAWAY, ...); an unknown frame of any length is skipped unread.
const maxControlFrame = 16 << 10

// ClientConn is an HTTP/3 client connection over one QUIC connection. It
// is safe for concurrent use; each RoundTrip takes a request stream.
// Close, or the peer's GOAWAY once every older stream is done, ends it.
type ClientConn struct {
	qc       Conn
	cfg      *Config
	enc      encoder
	dyn      dynEncoder
	dec      *decoder
	maxField int
	pseudo   []string

	// released: the QUIC connection was told its first flight may go
	// (ReleaseFlight).
	released atomic.Bool

	ctrlMu sync.Mutex // the control stream's writes
	ctrl   SendStream
	pbuf   []byte // control stream scratch, under ctrlMu
	fbuf   []byte // the PRIORITY_UPDATE frame written, under ctrlMu

	// qpackMu is over decStream and encStream, opened by openQPACK when
	// they were not opened at once. It is never held while taking decMu,
	// encMu or dyn.mu.
	qpackMu   sync.Mutex
	decStream SendStream
	encStream SendStream
	decMu     sync.Mutex // the decoder stream's writes
	decTyped  bool       // its type is written, under decMu
	encMu     sync.Mutex // the encoder stream's writes
	encTyped  bool       // its type is written, under encMu

	mu           sync.Mutex
	settings     []h3wire.Setting // the peer's, once received
	gotSettings  chan struct{}
	peerMaxField uint64 // 0: no limit
	goaway       bool
	goawayID     uint64
	retired      bool // CloseWhenIdle: no new request, closed once idle
	streams      map[uint64]*stream
	err          error // the connection's end
	closed       bool
	sawControl   bool
	sawEncoder   bool
	sawDecoder   bool

	onIdle func() // called when the last stream ends

	ctx    context.Context // ends with the connection; for the accept loop only
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// NewClientConn starts HTTP/3 on qc: it writes the control stream's
// SETTINGS and GREASE frame and, with Config.QPACKStreams, opens the QPACK
// streams, then reads the peer's unidirectional streams in the
// background. The ClientConn owns qc from then on. A nil cfg is the
// zero Config.
func NewClientConn(qc Conn, cfg *Config) (*ClientConn, error) {
	if cfg == nil {
		cfg = &Config{}
	}
	maxCap, _ := cfg.setting(h3wire.SettingQPACKMaxTableCapacity)
	blocked, _ := cfg.setting(h3wire.SettingQPACKBlockedStreams)
	if blocked > 1<<16 {
		blocked = 1 << 16
	}
	if maxCap > 1<<30 {
		maxCap = 1 << 30
	}
	cc := &ClientConn{
		qc:          qc,
		cfg:         cfg,
		enc:         encoder{huffman: cfg.Huffman},
		dyn:         dynEncoder{rule: cfg.QPACKDynamic, capacity: cfg.QPACKCapacity, huffman: cfg.Huffman},
		dec:         newDecoder(maxCap, int(blocked)),
		maxField:    cfg.maxFieldSection(),
		pseudo:      cfg.pseudoOrder(),
		gotSettings: make(chan struct{}),
		streams:     make(map[uint64]*stream),
	}
	cc.ctx, cc.cancel = context.WithCancel(context.Background())
	ctx := cc.ctx
	ctrl, err := qc.OpenUniStream(ctx)
	if err != nil {
		cc.cancel()
		qc.CloseWithError(uint64(ErrCodeInternal), "")
		return nil, err
	}
	cc.ctrl = ctrl
	if _, err := ctrl.Write(cfg.appendControlPreface(nil)); err != nil {
		cc.cancel()
		qc.CloseWithError(uint64(ErrCodeInternal), "")
		return nil, err
	}
	if cfg.QPACKStreams {
		for _, t := range []h3wire.StreamType{h3wire.StreamQPACKEncoder, h3wire.StreamQPACKDecoder} {
			s, err := qc.OpenUniStream(ctx)
			if err == nil {
				_, err = s.Write(quicwire.AppendVarint(nil, uint64(t)))
			}
			if err != nil {
				cc.cancel()
				qc.CloseWithError(uint64(ErrCodeInternal), "")
				return nil, err
			}
			if t == h3wire.StreamQPACKEncoder {
				cc.encStream, cc.encTyped = s, true
			} else {
				cc.decStream, cc.decTyped = s, true
			}
		}
	}
	cc.wg.Add(2)
	go cc.acceptLoop()
	go cc.watch()
	return cc, nil
}

// ReleaseFlight tells the QUIC connection, if it is a FlightReleaser,
// that what its first 0-RTT packet carries is written: RoundTrip does
// after the first request; a caller that waits for the handshake before
// its first request (one not sent in 0-RTT) does before it waits. Only
// the first call does anything.
func (cc *ClientConn) ReleaseFlight() {
	if cc.released.Swap(true) {
		return
	}
	if r, ok := cc.qc.(FlightReleaser); ok {
		r.ReleaseFlight()
	}
}

// watch records the QUIC connection's end.
func (cc *ClientConn) watch() {
	defer cc.wg.Done()
	select {
	case <-cc.qc.Done():
		cc.fail(closeErr(cc.qc.Err()))
	case <-cc.ctx.Done():
	}
}

// closeErr turns the QUIC connection's end into the connection's error.
func closeErr(err error) error {
	var ce *CloseError
	if errors.As(err, &ce) && ce.Remote {
		return &ConnectionError{Code: ce.Code, Remote: true, Reason: ce.Reason}
	}
	if err == nil {
		return ErrClosed
	}
	return err
}

// fail ends the connection with err: every stream fails with it. It
// closes the QUIC connection with err's code when err is a
// ConnectionError of ours.
func (cc *ClientConn) fail(err error) {
	cc.mu.Lock()
	if cc.err != nil {
		cc.mu.Unlock()
		return
	}
	cc.err = err
	streams := make([]*stream, 0, len(cc.streams))
	for _, s := range cc.streams {
		streams = append(streams, s)
	}
	cc.mu.Unlock()
	code, reason := ErrCodeNoError, ""
	var ce *ConnectionError
	if errors.As(err, &ce) && !ce.Remote {
		code, reason = ce.Code, ce.Reason
	}
	cc.qc.CloseWithError(uint64(code), reason)
	for _, s := range streams {
		s.abort(err)
	}
	cc.cancel()
}

// connError fails the connection with a ConnectionError of ours.
func (cc *ClientConn) connError(code ErrCode, reason string, cause error) error {
	err := &ConnectionError{Code: code, Reason: reason, Cause: cause}
	cc.fail(err)
	return cc.Err()
}

// Err returns why the connection ended, or nil while it is open.
func (cc *ClientConn) Err() error {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return cc.err
}

// Close closes the connection (H3_NO_ERROR) and waits for its goroutines.
// Requests in flight fail with ErrClosed.
func (cc *ClientConn) Close() error {
	cc.mu.Lock()
	cc.closed = true
	cc.mu.Unlock()
	cc.fail(ErrClosed)
	cc.wg.Wait()
	return nil
}

// CanTakeNewRequest reports whether a new request may use the connection:
// it is open and no GOAWAY arrived.
func (cc *ClientConn) CanTakeNewRequest() bool {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return cc.err == nil && !cc.goaway && !cc.retired
}

// CloseWhenIdle refuses new requests and closes the connection once its
// requests in flight are done.
func (cc *ClientConn) CloseWhenIdle() {
	cc.mu.Lock()
	cc.retired = true
	idle := len(cc.streams) == 0
	cc.mu.Unlock()
	if idle {
		cc.fail(ErrClosed)
	}
}

// OnIdle sets f to be called, outside the connection's locks, whenever
// its last request in flight ends. Set it before the first RoundTrip.
func (cc *ClientConn) OnIdle(f func()) { cc.onIdle = f }

// ActiveStreams is the number of requests in flight.
func (cc *ClientConn) ActiveStreams() int {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return len(cc.streams)
}

// PeerSettings returns the peer's SETTINGS in wire order, and false
// before they arrived.
func (cc *ClientConn) PeerSettings() ([]h3wire.Setting, bool) {
	select {
	case <-cc.gotSettings:
		return cc.settings, true
	default:
		return nil, false
	}
}

// acceptLoop reads the peer's unidirectional streams.
func (cc *ClientConn) acceptLoop() {
	defer cc.wg.Done()
	for {
		rs, err := cc.qc.AcceptUniStream(cc.ctx)
		if err != nil {
			return
		}
		cc.wg.Add(1)
		go cc.readUni(rs)
	}
}

// readUni dispatches a peer's unidirectional stream by its type.
func (cc *ClientConn) readUni(rs ReceiveStream) {
	defer cc.wg.Done()
	br := bufio.NewReaderSize(rs, 4096)
	t, err := readVarint(br)
	if err != nil {
		return // the stream ended before its type: ignored (RFC 9114 §6.2)
	}
	dup := func(seen *bool, what string) bool {
		cc.mu.Lock()
		defer cc.mu.Unlock()
		if *seen {
			return true
		}
		*seen = true
		return false
	}
	switch h3wire.StreamType(t) {
	case h3wire.StreamControl:
		if dup(&cc.sawControl, "control") {
			cc.connError(ErrCodeStreamCreation, "second control stream", nil)
			return
		}
		err := cc.readControl(br)
		if cc.Err() == nil {
			cc.connError(ErrCodeClosedCriticalStream, "control stream ended", err)
		}
	case h3wire.StreamQPACKEncoder:
		if dup(&cc.sawEncoder, "encoder") {
			cc.connError(ErrCodeStreamCreation, "second qpack encoder stream", nil)
			return
		}
		err := cc.readEncoder(br)
		if cc.Err() == nil {
			if errors.Is(err, errEncoderInstruction) {
				cc.connError(ErrCodeQPACKEncoderStream, "", err)
				return
			}
			cc.connError(ErrCodeClosedCriticalStream, "qpack encoder stream ended", err)
		}
	case h3wire.StreamQPACKDecoder:
		if dup(&cc.sawDecoder, "decoder") {
			cc.connError(ErrCodeStreamCreation, "second qpack decoder stream", nil)
			return
		}
		err := cc.readDecoder(br)
		if cc.Err() == nil {
			if errors.Is(err, errDecoderInstruction) {
				cc.connError(ErrCodeQPACKDecoderStream, "", err)
				return
			}
			cc.connError(ErrCodeClosedCriticalStream, "qpack decoder stream ended", err)
		}
	case h3wire.StreamPush:
		// No MAX_PUSH_ID was sent, so no push id is valid (§4.6).
		cc.connError(ErrCodeID, "push stream without MAX_PUSH_ID", nil)
	default:
		rs.CancelRead(uint64(ErrCodeStreamCreation)) // unknown or GREASE: §6.2.3
	}
}

var (
	errEncoderInstruction = errors.New("h3: bad qpack encoder instruction")
	errDecoderInstruction = errors.New("h3: bad qpack decoder instruction")
)

// readControl reads the peer's control stream until it fails.
func (cc *ClientConn) readControl(br *bufio.Reader) error {
	first := true
	for {
		t, l, err := readFrameHeader(br)
		if err != nil {
			if errors.Is(err, io.EOF) && !first {
				return err
			}
			return err
		}
		ft := h3wire.FrameType(t)
		if first && ft != h3wire.FrameSettings {
			cc.connError(ErrCodeMissingSettings, "first control frame is "+ft.String(), nil)
			return nil
		}
		switch ft {
		case h3wire.FrameSettings, h3wire.FrameGoAway, h3wire.FrameCancelPush:
			if l > maxControlFrame {
				cc.connError(ErrCodeExcessiveLoad, ft.String()+" frame too large", nil)
				return nil
			}
			p := make([]byte, l)
			if _, err := io.ReadFull(br, p); err != nil {
				return err
			}
			if err := cc.controlFrame(ft, p, first); err != nil {
				return nil
			}
		case h3wire.FrameData, h3wire.FrameHeaders, h3wire.FramePushPromise, h3wire.FrameMaxPushID,
			h3wire.FramePriorityUpdate, h3wire.FramePriorityUpdatePush, 0x02, 0x06, 0x08, 0x09:
			// Frames a server may not send on its control stream, and
			// HTTP/2's reserved types (§7.2.8).
			cc.connError(ErrCodeFrameUnexpected, ft.String()+" on the control stream", nil)
			return nil
		default:
			if _, err := io.CopyN(io.Discard, br, int64(l)); err != nil {
				return err
			}
		}
		first = false
	}
}

// controlFrame handles one whole control frame; a non-nil error means the
// connection failed.
func (cc *ClientConn) controlFrame(ft h3wire.FrameType, p []byte, first bool) error {
	switch ft {
	case h3wire.FrameSettings:
		if !first {
			return cc.connError(ErrCodeFrameUnexpected, "second SETTINGS", nil)
		}
		ss, err := h3wire.ParseSettings(p)
		if err != nil {
			return cc.connError(ErrCodeSettings, "", err)
		}
		var maxField, maxTable, blocked uint64
		announced := false
		for _, s := range ss {
			switch s.ID {
			case h3wire.SettingQPACKMaxTableCapacity:
				maxTable, announced = s.Value, true
			case h3wire.SettingQPACKBlockedStreams:
				blocked = s.Value
			case h3wire.SettingMaxFieldSectionSize:
				maxField = s.Value
			case h3wire.SettingH3Datagram, h3wire.SettingEnableConnectProtocol:
				if s.Value > 1 {
					return cc.connError(ErrCodeSettings, s.ID.String()+" not 0 or 1", nil)
				}
			}
		}
		cc.mu.Lock()
		cc.settings, cc.peerMaxField = ss, maxField
		cc.mu.Unlock()
		cc.dyn.setPeer(announced, maxTable, blocked, cc.writeEncoder)
		close(cc.gotSettings)
	case h3wire.FrameGoAway:
		id, n := quicwire.Varint(p)
		if n == 0 || n != len(p) {
			return cc.connError(ErrCodeFrame, "malformed GOAWAY", nil)
		}
		if id%4 != 0 {
			return cc.connError(ErrCodeID, "GOAWAY with a non-request stream id", nil)
		}
		return cc.goAway(id)
	case h3wire.FrameCancelPush:
		return cc.connError(ErrCodeID, "CANCEL_PUSH without MAX_PUSH_ID", nil)
	}
	return nil
}

// goAway stops new requests and fails those on streams at or above id,
// which the server will not process. A GOAWAY may only lower the id.
func (cc *ClientConn) goAway(id uint64) error {
	cc.mu.Lock()
	if cc.goaway && id > cc.goawayID {
		cc.mu.Unlock()
		return cc.connError(ErrCodeID, "GOAWAY id increased", nil)
	}
	cc.goaway, cc.goawayID = true, id
	var drop []*stream
	for sid, s := range cc.streams {
		if sid >= id {
			drop = append(drop, s)
		}
	}
	idle := len(cc.streams) == len(drop)
	cc.mu.Unlock()
	for _, s := range drop {
		s.abort(&GoAwayError{StreamID: id})
	}
	if idle {
		cc.closeIfDrained()
	}
	return nil
}

// closeIfDrained closes a connection that got GOAWAY once no stream is
// left.
func (cc *ClientConn) closeIfDrained() {
	cc.mu.Lock()
	drained := (cc.goaway || cc.retired) && len(cc.streams) == 0 && cc.err == nil
	retired := cc.retired && !cc.goaway
	cc.mu.Unlock()
	if drained && retired {
		cc.fail(ErrClosed)
	} else if drained {
		cc.fail(retryable{&GoAwayError{StreamID: cc.goawayID}})
	}
}

// readEncoder feeds the peer's encoder stream to the decoder and
// acknowledges the inserts.
func (cc *ClientConn) readEncoder(br *bufio.Reader) error {
	buf := make([]byte, 4096)
	for {
		n, err := br.Read(buf)
		if n > 0 {
			// Counted and written under decMu: a section that
			// needs these inserts is decoded once feed has them,
			// and its Section Acknowledgment (writeDecoder, under
			// decMu too) must follow the Insert Count Increment
			// that counts them, or the encoder counts them twice
			// (RFC 9204 §4.4.3: beyond the inserts sent, an error).
			cc.decMu.Lock()
			inc, ferr := cc.dec.feed(buf[:n])
			if ferr == nil && inc > 0 {
				cc.writeDecoderLocked(appendInsertCountIncrement(nil, inc))
			}
			cc.decMu.Unlock()
			if ferr != nil {
				return errors.Join(errEncoderInstruction, ferr)
			}
		}
		if err != nil {
			return err
		}
	}
}

// readDecoder reads the peer's decoder stream: Section Acknowledgments,
// Stream Cancellations and Insert Count Increments of what the encoder
// sent (with no dynamic table in use, any acknowledgement or increment
// is of something never sent).
func (cc *ClientConn) readDecoder(br *bufio.Reader) error {
	var buf [16]byte
	for {
		c, err := br.ReadByte()
		if err != nil {
			return err
		}
		b := append(buf[:0], c)
		for {
			kind, v, _, perr := parseDecoderInstruction(b)
			if perr == nil {
				if err := cc.dyn.decoderInstruction(kind, v); err != nil {
					return errors.Join(errDecoderInstruction, err)
				}
				break
			}
			if !errors.Is(perr, errQPACKTruncated) {
				return errors.Join(errDecoderInstruction, perr)
			}
			c, err := br.ReadByte()
			if err != nil {
				return err
			}
			b = append(b, c)
		}
	}
}

// openQPACK opens the QPACK streams not opened at once (Chromium's
// way): the decoder stream, then the encoder stream, whichever is needed
// first, as quiche creates them together after the control stream. It
// writes nothing: each stream's type goes with its first instruction.
// It waits for the peer's stream credit (RFC 9114 §6.2 requires room for
// three) until ctx ends, and returns the streams open so far.
func (cc *ClientConn) openQPACK(ctx context.Context) (dec, enc SendStream) {
	cc.qpackMu.Lock()
	defer cc.qpackMu.Unlock()
	if cc.decStream == nil {
		s, err := cc.qc.OpenUniStream(ctx)
		if err != nil {
			return nil, nil
		}
		cc.decStream = s
	}
	if cc.encStream == nil {
		if s, err := cc.qc.OpenUniStream(ctx); err == nil {
			cc.encStream = s
		}
	}
	return cc.decStream, cc.encStream
}

// writeEncoder writes encoder stream instructions, preceded by the
// stream's type the first time, opening the stream if it is not open.
func (cc *ClientConn) writeEncoder(b []byte) {
	_, enc := cc.openQPACK(cc.ctx)
	if enc == nil {
		return
	}
	cc.encMu.Lock()
	defer cc.encMu.Unlock()
	if !cc.encTyped {
		cc.encTyped = true
		b = append(quicwire.AppendVarint(nil, uint64(h3wire.StreamQPACKEncoder)), b...)
	}
	enc.Write(b)
}

// writeDecoder writes decoder instructions, preceded by the stream's
// type the first time.
func (cc *ClientConn) writeDecoder(b []byte) {
	cc.decMu.Lock()
	defer cc.decMu.Unlock()
	cc.writeDecoderLocked(b)
}

// writeDecoderLocked is writeDecoder with decMu held.
func (cc *ClientConn) writeDecoderLocked(b []byte) {
	dec, _ := cc.openQPACK(cc.ctx)
	if dec == nil {
		return
	}
	if !cc.decTyped {
		cc.decTyped = true
		b = append(quicwire.AppendVarint(nil, uint64(h3wire.StreamQPACKDecoder)), b...)
	}
	dec.Write(b)
}

// readVarint reads a QUIC variable-length integer.
func readVarint(br *bufio.Reader) (uint64, error) {
	c, err := br.ReadByte()
	if err != nil {
		return 0, err
	}
	n := 1 << (c >> 6)
	v := uint64(c & 0x3f)
	for i := 1; i < n; i++ {
		c, err := br.ReadByte()
		if err != nil {
			return 0, io.ErrUnexpectedEOF
		}
		v = v<<8 | uint64(c)
	}
	return v, nil
}

// readFrameHeader reads a frame's type and length. io.EOF means the
// stream ended at a frame boundary; io.ErrUnexpectedEOF inside a header.
func readFrameHeader(br *bufio.Reader) (t, l uint64, err error) {
	t, err = readVarint(br)
	if err != nil {
		return 0, 0, err
	}
	l, err = readVarint(br)
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return t, l, err
}
