package h2

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"

	"github.com/guise-http/guise/fields"
	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

var (
	errNoStatus        = errors.New("missing or invalid :status")
	errTrailerNoEnd    = errors.New("trailers without END_STREAM")
	errDataBeforeHead  = errors.New("DATA before HEADERS")
	errLengthMismatch  = errors.New("body length does not match content-length")
	errBadPseudo       = errors.New("invalid pseudo-header field")
	errConnSpecificHdr = errors.New("connection-specific header field")
	errWindowOverflow  = errors.New("window update overflow")
	errZeroIncrement   = errors.New("zero WINDOW_UPDATE increment")
)

// connReader is the Framer's reader. It keeps the first error of the
// connection, so that an error of the Framer can be told from one of the
// transport, and it can cap the bytes of one header block.
type connReader struct {
	r      io.Reader
	err    error
	capped bool  // budget applies
	budget int64 // bytes the current header block may still take
}

// errBlockTooLarge is returned by connReader.Read past the budget.
var errBlockTooLarge = errors.New("header block too large")

func (r *connReader) Read(p []byte) (int, error) {
	if r.capped {
		if r.budget <= 0 {
			return 0, errBlockTooLarge
		}
		if int64(len(p)) > r.budget {
			p = p[:r.budget]
		}
	}
	n, err := r.r.Read(p)
	r.budget -= int64(n)
	if err != nil && r.err == nil {
		r.err = err
	}
	return n, err
}

// readLoop reads and dispatches frames until the connection ends.
func (cc *ClientConn) readLoop() {
	defer close(cc.readDone)
	defer cc.putReadBuf()
	if cc.idleTimer != nil {
		defer cc.idleTimer.Stop()
	}
	for {
		if err := cc.readFrame(); err != nil {
			cc.mu.Lock()
			if cc.goAway != nil && (err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF)) {
				err = *cc.goAway
			} else if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			cc.mu.Unlock()
			cc.fail(err)
			return
		}
	}
}

// readBufs holds the connections' read buffers (*bufio.Reader of
// readBufSize bytes): a connection takes one when it starts and its read
// loop gives it back when it ends, so that connections made one per
// request (isolated calls) do not each allocate and clear one.
var readBufs = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, readBufSize) }}

const readBufSize = 32 << 10

// putReadBuf gives the read buffer back; the read loop, its only user,
// has ended. A use after this panics on the nil reader instead of reading
// another connection's bytes.
func (cc *ClientConn) putReadBuf() {
	if br, ok := cc.rd.r.(*bufio.Reader); ok {
		br.Reset(nil)
		readBufs.Put(br)
	}
	cc.rd.r = nil
}

// readFrame reads one frame with the Framer and handles it. A returned error
// ends the connection.
//
// A header block that fits in its HEADERS frame is read and decoded by
// readHeaders without the Framer's frame allocation; one that continues in
// CONTINUATION frames is read frame by frame through the Framer (which
// allows nothing else until the block ends) and assembled by onHeaders and
// onContinuation. Such a block may take on the wire at most twice the
// header list size we accept plus the headers of maxEmptyFrames frames (the
// read budget), which also ends a flood of empty CONTINUATION frames
// (GO-2024-2687).
func (cc *ClientConn) readFrame() error {
	fh, err := cc.fr.ReadFrameHeader()
	if err != nil {
		return cc.readErr(fh, err)
	}
	cc.framesIn.Add(1)
	if !cc.sawSettings {
		if fh.Type != FrameSettings || fh.Flags.Has(http2.FlagSettingsAck) {
			return ConnectionError{Code: ErrCodeProtocol, Reason: fmt.Sprintf("first frame is %v, not SETTINGS", fh.Type)}
		}
		cc.sawSettings = true
	}
	if fh.Type == FrameData && fh.Length == chunkSize && fh.Flags&http2.FlagDataPadded == 0 && fh.StreamID != 0 && cc.wholeBlockFits(fh.StreamID) {
		return cc.readDataBlock(fh)
	}
	if fh.Type == FrameHeaders {
		if fh.Flags.Has(http2.FlagHeadersEndHeaders) {
			return cc.readHeaders(fh)
		}
		// The block goes on in CONTINUATION frames: the frames it takes,
		// headers included, are read within a budget until it ends.
		cc.rd.capped = true
		cc.rd.budget = 2*int64(cc.maxList) + frameHeaderLen*maxEmptyFrames
	}
	f, err := cc.fr.ReadFrameForHeader(fh)
	if err != nil {
		return cc.readErr(fh, err)
	}
	if cc.idleTimer != nil {
		cc.idleTimer.Reset(cc.cfg.ReadIdleTimeout)
	}
	err = cc.dispatch(f)
	cc.rd.capped = cc.contID != 0
	return err
}

// readHeaders reads and handles a HEADERS frame that holds its whole header
// block. It parses the frame itself, as the Framer would (the same checks,
// the same errors), to spare the Framer's allocation of a frame per
// response.
func (cc *ClientConn) readHeaders(fh http2.FrameHeader) error {
	if cap(cc.hpay) < int(fh.Length) {
		cc.hpay = make([]byte, fh.Length)
	}
	p := cc.hpay[:fh.Length]
	if _, err := io.ReadFull(&cc.rd, p); err != nil {
		return err
	}
	if fh.StreamID == 0 {
		return ConnectionError{Code: ErrCodeProtocol, Reason: "HEADERS frame with stream ID 0"}
	}
	pad := 0
	if fh.Flags.Has(http2.FlagHeadersPadded) {
		if len(p) < 1 {
			return tooShort(fh)
		}
		pad, p = int(p[0]), p[1:]
	}
	if fh.Flags.Has(http2.FlagHeadersPriority) {
		if len(p) < 5 {
			return tooShort(fh)
		}
		p = p[5:]
	}
	if pad > len(p) {
		return ConnectionError{Code: ErrCodeProtocol, Reason: "HEADERS frame with invalid padding"}
	}
	if cc.idleTimer != nil {
		cc.idleTimer.Reset(cc.cfg.ReadIdleTimeout)
	}
	cc.empty = 0
	return cc.onHeaderBlock(fh.StreamID, fh.Flags.Has(http2.FlagHeadersEndStream), p[:len(p)-pad])
}

// wholeBlockFits reports whether stream id would take a DATA payload of a
// whole block as it is (its queued bytes fill their blocks), so that the
// payload can be read straight into a block of its own.
func (cc *ClientConn) wholeBlockFits(id uint32) bool {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	s := cc.streams[id]
	return s != nil && s.data.full() && !s.bodyClosed
}

// readDataBlock reads the payload of an unpadded DATA frame of chunkSize
// bytes straight into a pooled block and hands the block to the stream,
// sparing the copy through the Framer's buffer. The checks are onData's.
func (cc *ClientConn) readDataBlock(fh http2.FrameHeader) error {
	blk := chunkPool.Get().(*[chunkSize]byte)
	if _, err := io.ReadFull(&cc.rd, blk[:]); err != nil {
		chunkPool.Put(blk)
		return err
	}
	if cc.idleTimer != nil {
		cc.idleTimer.Reset(cc.cfg.ReadIdleTimeout)
	}
	end := fh.Flags.Has(http2.FlagDataEndStream)
	err := cc.onDataBytes(fh.StreamID, chunkSize, blk[:], end, blk)
	if err == nil && end || cc.ctrlOwed() {
		cc.afterUnlock()
	}
	return err
}

// tooShort is the error of a frame too short for its fixed fields.
func tooShort(fh http2.FrameHeader) error {
	return ConnectionError{Code: ErrCodeFrameSize, Reason: fmt.Sprintf("%v frame of %d bytes too short", fh.Type, fh.Length)}
}

// readErr turns an error of the Framer reading the frame that starts with fh
// into h2's: a ConnectionError, nil for a stream error that only reset its
// stream, or the transport's error.
func (cc *ClientConn) readErr(fh http2.FrameHeader, err error) error {
	var ce http2.ConnectionError
	var se http2.StreamError
	switch {
	case errors.As(err, &ce):
		reason := fmt.Sprintf("invalid %v frame", fh.Type)
		if d := cc.fr.ErrorDetail(); d != nil {
			reason = d.Error()
		}
		return ConnectionError{Code: ErrCode(ce), Reason: reason}
	case errors.As(err, &se):
		return cc.onStreamError(fh, se)
	case errors.Is(err, errBlockTooLarge):
		return ConnectionError{Code: ErrCodeProtocol, Reason: fmt.Sprintf("header block over %d bytes", 2*int64(cc.maxList)+frameHeaderLen*maxEmptyFrames), Cause: ErrHeaderListTooLarge}
	case errors.Is(err, http2.ErrFrameTooLarge):
		if fh.Length > cc.maxFrame {
			return ConnectionError{Code: ErrCodeFrameSize, Reason: fmt.Sprintf("%v frame of %d bytes exceeds %d", fh.Type, fh.Length, cc.maxFrame), Cause: ErrFrameTooLarge}
		}
		return ConnectionError{Code: ErrCodeFrameSize, Reason: fmt.Sprintf("CONTINUATION frame exceeds %d bytes", cc.maxFrame), Cause: ErrFrameTooLarge}
	case cc.rd.err == nil:
		// The transport is fine: the Framer found the frame too short for
		// its fixed fields.
		return tooShort(fh)
	}
	return err
}

// onStreamError handles a stream error the Framer reported for the frame
// that starts with fh.
func (cc *ClientConn) onStreamError(fh http2.FrameHeader, se http2.StreamError) error {
	cause := se.Cause
	switch {
	case fh.Type == FrameHeaders && cause == nil:
		// Rejected before its header block was decoded: the HPACK state
		// can no longer be trusted.
		return ConnectionError{Code: ErrCodeProtocol, Reason: "HEADERS frame with invalid padding"}
	case fh.Type == FrameWindowUpdate:
		cause = errZeroIncrement
	case cause == nil:
		cause = fmt.Errorf("invalid %v frame", fh.Type)
	}
	cc.mu.Lock()
	s := cc.streams[se.StreamID]
	if s == nil {
		never := cc.neverOpenedLocked(se.StreamID)
		cc.mu.Unlock()
		if never {
			return ConnectionError{Code: ErrCodeProtocol, Reason: fmt.Sprintf("%v on idle stream", fh.Type)}
		}
		return nil
	}
	err := cc.streamErrorLocked(s, se.Code, cause)
	cc.mu.Unlock()
	cc.afterUnlock()
	return err
}

// dispatch handles one frame. A returned error ends the connection.
func (cc *ClientConn) dispatch(f http2.Frame) error {
	if _, ok := f.(*http2.DataFrame); !ok {
		cc.empty = 0
	}
	switch f := f.(type) {
	case *http2.DataFrame:
		err := cc.onData(f)
		if err == nil && f.StreamEnded() || cc.ctrlOwed() {
			cc.afterUnlock()
		}
		return err
	case *http2.HeadersFrame:
		return cc.onHeaders(f)
	case *http2.ContinuationFrame:
		return cc.onContinuation(f)
	case *http2.RSTStreamFrame:
		return cc.onRST(f)
	case *http2.SettingsFrame:
		return cc.onSettings(f)
	case *http2.PushPromiseFrame:
		return ConnectionError{Code: ErrCodeProtocol, Reason: "PUSH_PROMISE after ENABLE_PUSH=0"}
	case *http2.PingFrame:
		return cc.onPing(f)
	case *http2.GoAwayFrame:
		return cc.onGoAway(f)
	case *http2.WindowUpdateFrame:
		err := cc.onWindowUpdate(f)
		cc.afterUnlock()
		return err
	}
	// PRIORITY (checked by the Framer) and unknown frame types are ignored
	// (RFC 9113 5.5).
	return nil
}

func (cc *ClientConn) onSettings(f *http2.SettingsFrame) error {
	// The Framer checked the stream, the length and INITIAL_WINDOW_SIZE.
	if f.IsAck() {
		return nil
	}
	n := f.NumSettings()
	for i := range n {
		if err := validSetting(f.Setting(i)); err != nil {
			return err
		}
	}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	for i := range n {
		s := f.Setting(i)
		v := s.Val
		switch s.ID {
		case SettingHeaderTableSize:
			cc.peerTable, cc.peerTableSet = v, true
		case SettingMaxConcurrentStreams:
			cc.maxConcurrent = v
			cc.wakeSlotsLocked()
		case SettingInitialWindowSize:
			delta := int64(v) - int64(cc.peerWindow)
			for _, s := range cc.streams {
				s.sendWindow += delta
				if s.sendWindow > maxWindow {
					return ConnectionError{Code: ErrCodeFlowControl, Reason: "INITIAL_WINDOW_SIZE overflows a stream window"}
				}
			}
			cc.peerWindow = int32(v)
			cc.wakeWindowsLocked()
		case SettingMaxFrameSize:
			cc.peerMaxFrame = v
		case SettingMaxHeaderListSize:
			cc.peerMaxList = v
		case SettingEnableConnectProtocol:
			if cc.peerConnect && v == 0 {
				return ConnectionError{Code: ErrCodeProtocol, Reason: "ENABLE_CONNECT_PROTOCOL withdrawn"}
			}
			cc.peerConnect = v == 1
		}
	}
	select {
	case <-cc.peerSettings:
	default:
		close(cc.peerSettings)
	}
	if !cc.queueLocked(ctrlFrame{typ: FrameSettings}) {
		return errCalm
	}
	cc.kick()
	return nil
}

func (cc *ClientConn) onPing(f *http2.PingFrame) error {
	data := f.Data
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if f.IsAck() {
		if cc.pingOutstanding && data == cc.pingData {
			cc.pingOutstanding = false
			cc.pingTimer.Stop()
		}
		return nil
	}
	if !cc.queueLocked(ctrlFrame{typ: FramePing, ack: true, data: data}) {
		return errCalm
	}
	cc.kick()
	return nil
}

func (cc *ClientConn) onGoAway(f *http2.GoAwayFrame) error {
	ga := GoAwayError{
		LastStreamID: f.LastStreamID,
		Code:         f.ErrCode,
		DebugData:    string(f.DebugData()),
	}
	cc.mu.Lock()
	if cc.goAway != nil && ga.LastStreamID > cc.goAway.LastStreamID {
		ga.LastStreamID = cc.goAway.LastStreamID // may only decrease
	}
	cc.goAway = &ga
	for id, s := range cc.streams {
		if id > ga.LastStreamID {
			cc.creditLocked(int64(s.data.len()))
			s.failLocked(retryable{ga})
			cc.forgetLocked(s)
		}
	}
	cc.wakeSlotsLocked()
	cc.mu.Unlock()
	cc.afterUnlock()
	return nil
}

func (cc *ClientConn) onWindowUpdate(f *http2.WindowUpdateFrame) error {
	// The Framer reported a zero increment as an error.
	inc := int64(f.Increment)
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if f.StreamID == 0 {
		cc.sendWindow += inc
		if cc.sendWindow > maxWindow {
			return ConnectionError{Code: ErrCodeFlowControl, Reason: "connection window above 2^31-1"}
		}
		cc.wakeWindowsLocked()
		return nil
	}
	s := cc.streams[f.StreamID]
	if s == nil {
		if cc.neverOpenedLocked(f.StreamID) {
			return ConnectionError{Code: ErrCodeProtocol, Reason: "WINDOW_UPDATE on idle stream"}
		}
		return nil
	}
	s.sendWindow += inc
	if s.sendWindow > maxWindow {
		return cc.streamErrorLocked(s, ErrCodeFlowControl, errWindowOverflow)
	}
	cc.wakeWindowsLocked()
	return nil
}

// ctrlOwed reports whether control frames wait to be written, which also
// means a stream may just have been reset.
func (cc *ClientConn) ctrlOwed() bool {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	return len(cc.ctrl) > 0
}

// streamErrorLocked resets s with code and fails it with a StreamError.
func (cc *ClientConn) streamErrorLocked(s *stream, code ErrCode, cause error) error {
	if !cc.resetLocked(s, code, StreamError{s.id, code, cause}) {
		return errCalm
	}
	cc.kick()
	return nil
}

// neverOpenedLocked reports whether id names a stream we never opened.
func (cc *ClientConn) neverOpenedLocked(id uint32) bool {
	return id%2 == 0 || id >= cc.nextID || id < cc.cfg.FirstStreamID
}

func (cc *ClientConn) onRST(f *http2.RSTStreamFrame) error {
	code := f.ErrCode
	cc.mu.Lock()
	s := cc.streams[f.StreamID]
	if s == nil {
		never := cc.neverOpenedLocked(f.StreamID)
		cc.mu.Unlock()
		if never {
			return ConnectionError{Code: ErrCodeProtocol, Reason: "RST_STREAM on idle stream"}
		}
		return nil
	}
	if code == ErrCodeNo && (s.recvEnd || completeByLength(s)) {
		// A complete response, then RST_STREAM(NO_ERROR): the server asks
		// the client to stop sending the request body, and the response
		// stands (RFC 9113 §8.1: clients must not discard it). The body
		// writer sees reset and stops; the received body stays readable.
		//
		// A response is complete when END_STREAM came, or when its head
		// came and its body has every byte its Content-Length declared (or
		// it has no body: HEAD, 204, 304), as Node's http2 compatibility
		// layer sends when a handler never read the request. Chromium
		// treats any RST_STREAM(NO_ERROR) after the head as the end of the
		// body (SpdyStream::OnClose turns it into OK); x/net/http2 fails
		// the body unless END_STREAM came first. Here a body without a
		// declared length, or short of it, fails with the StreamError, so
		// that a truncated body is never delivered as whole.
		s.recvEnd = true
		s.reset = true
		cc.forgetLocked(s)
		s.signal()
		cc.mu.Unlock()
		cc.afterUnlock()
		return nil
	}
	var err error = StreamError{s.id, code, nil}
	if code == ErrCodeRefusedStream && !s.gotHead {
		err = retryable{err}
	}
	if s.tunnel && s.gotHead {
		// An extended CONNECT's stream is a tunnel: the DATA that came
		// before the reset belongs to it (a WebSocket's close frame, which
		// haproxy 2.6 follows with RST_STREAM(CANCEL)) and is read before
		// the error, as Chromium hands each DATA frame on as it arrives.
		// Its credit goes back as it is read, or at Close.
		if s.err == nil {
			s.err = err
		}
		s.reset = true
		cc.forgetLocked(s)
		s.signal()
		cc.mu.Unlock()
		cc.afterUnlock()
		return nil
	}
	cc.creditLocked(int64(s.data.len()))
	s.failLocked(err)
	cc.forgetLocked(s)
	cc.mu.Unlock()
	cc.afterUnlock()
	return nil
}

// completeByLength reports whether s has its response head and every byte
// of the body the head declared: a Content-Length all received, or a
// response that has no body (HEAD, 204, 304).
func completeByLength(s *stream) bool {
	if !s.gotHead {
		return false
	}
	if s.req.Method == "HEAD" || s.resp.StatusCode == 204 || s.resp.StatusCode == 304 {
		return true
	}
	return s.contentLength >= 0 && s.received == s.contentLength
}

func (cc *ClientConn) onData(f *http2.DataFrame) error {
	// The Framer checked the stream id and the padding.
	return cc.onDataBytes(f.StreamID, int64(f.Length), f.Data(), f.StreamEnded(), nil)
}

// onDataBytes handles the data of a DATA frame on stream id whose payload
// (padding included, which flow control counts) is full bytes long. When
// blk is not nil, data is blk's first bytes and the stream may take blk
// instead of a copy of them; otherwise blk goes back to the pool.
func (cc *ClientConn) onDataBytes(id uint32, full int64, data []byte, end bool, blk *[chunkSize]byte) error {
	if blk != nil {
		defer func() {
			if blk != nil {
				chunkPool.Put(blk)
			}
		}()
	}
	if full == 0 && !end {
		cc.empty++
		if cc.empty > maxEmptyFrames {
			return ConnectionError{Code: ErrCodeEnhanceYourCalm, Reason: "flood of empty DATA frames"}
		}
	} else {
		cc.empty = 0
	}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if full > cc.recvWindow {
		return ConnectionError{Code: ErrCodeFlowControl, Reason: "DATA beyond the connection window"}
	}
	cc.recvWindow -= full
	s := cc.streams[id]
	if cc.batcher != nil && cc.batcher != s {
		cc.wakeBatcherLocked() // another stream shares the windows now
	}
	if s == nil {
		if cc.neverOpenedLocked(id) {
			return ConnectionError{Code: ErrCodeProtocol, Reason: "DATA on idle stream"}
		}
		// A stream we reset or finished: drop, but return the credit.
		if !cc.creditLocked(full) {
			return errCalm
		}
		cc.kick()
		return nil
	}
	if full > s.recvWindow {
		return ConnectionError{Code: ErrCodeFlowControl, Reason: "DATA beyond the stream window"}
	}
	s.recvWindow -= full
	s.seen = cc.framesIn.Load()
	if !cc.creditLocked(full - int64(len(data))) {
		return errCalm
	}
	if s.recvEnd {
		cc.creditLocked(int64(len(data)))
		return cc.streamErrorLocked(s, ErrCodeStreamClosed, errors.New("DATA after END_STREAM"))
	}
	if !s.gotHead {
		cc.creditLocked(int64(len(data)))
		return cc.streamErrorLocked(s, ErrCodeProtocol, errDataBeforeHead)
	}
	s.received += int64(len(data))
	if s.contentLength >= 0 && (s.received > s.contentLength || end && s.received != s.contentLength) {
		cc.creditLocked(int64(len(data)))
		return cc.streamErrorLocked(s, ErrCodeProtocol, errLengthMismatch)
	}
	switch {
	case s.bodyClosed:
		cc.creditLocked(int64(len(data)))
	case blk != nil && s.data.full():
		s.data.attach(blk, len(data))
		blk = nil
	default:
		s.data.write(data)
	}
	if end {
		s.recvEnd = true
		cc.forgetLocked(s)
	}
	if cc.holdLocked(s, end) {
		return nil
	}
	s.signal()
	return nil
}

// emitField collects one decoded field of the current header block.
func (cc *ClientConn) emitField(f hpack.HeaderField) {
	if cc.hbad != nil {
		return
	}
	size := f.Size()
	if size > cc.hremain {
		cc.hbad = ErrHeaderListTooLarge
		cc.hremain = 0
		return
	}
	cc.hremain -= size
	if strings.HasPrefix(f.Name, ":") {
		if f.Name != ":status" || len(cc.hfields) > 0 {
			cc.hbad = errBadPseudo
		}
	} else if !validLowerName(f.Name) || !fields.ValidValue(f.Value) {
		cc.hbad = fmt.Errorf("invalid response field %q", f.Name)
	}
	cc.hfields = append(cc.hfields, f)
}

// beginBlock resets the state of the header block being collected.
func (cc *ClientConn) beginBlock() {
	cc.hfields = cc.hfields[:0]
	cc.hbad = nil
	cc.hremain = cc.maxList
}

// onHeaders handles a HEADERS frame read by the Framer: one whose block
// goes on in CONTINUATION frames (readHeaders reads the others), or, the
// same way, one that holds its whole block.
func (cc *ClientConn) onHeaders(f *http2.HeadersFrame) error {
	if f.HeadersEnded() {
		return cc.onHeaderBlock(f.StreamID, f.StreamEnded(), f.HeaderBlockFragment())
	}
	cc.contID, cc.contEnd, cc.contEmpty = f.StreamID, f.StreamEnded(), 0
	return cc.continueBlock(f.HeaderBlockFragment())
}

// onContinuation adds a CONTINUATION frame to the block it continues (the
// Framer checked that one is open, on its stream) and handles the block
// when the frame ends it. A block's wire bytes are capped at twice the
// header list size we accept, and its empty frames at maxEmptyFrames (the
// read budget bounds both as well: GO-2024-2687).
func (cc *ClientConn) onContinuation(f *http2.ContinuationFrame) error {
	frag := f.HeaderBlockFragment()
	if len(frag) == 0 {
		if cc.contEmpty++; cc.contEmpty > maxEmptyFrames {
			return ConnectionError{Code: ErrCodeProtocol, Reason: "too many empty CONTINUATION frames"}
		}
	}
	if err := cc.continueBlock(frag); err != nil || !f.HeadersEnded() {
		return err
	}
	id, end, blk := cc.contID, cc.contEnd, cc.contBuf
	cc.contID = 0
	if cap(cc.contBuf) > 64<<10 {
		cc.contBuf = nil // not kept for the connection's life
	} else {
		cc.contBuf = cc.contBuf[:0]
	}
	return cc.onHeaderBlock(id, end, blk)
}

// continueBlock appends frag to the open block, within its cap.
func (cc *ClientConn) continueBlock(frag []byte) error {
	if int64(len(cc.contBuf))+int64(len(frag)) > 2*int64(cc.maxList) {
		return ConnectionError{Code: ErrCodeProtocol, Reason: "header block too large", Cause: ErrHeaderListTooLarge}
	}
	cc.contBuf = append(cc.contBuf, frag...)
	return nil
}

// onHeaderBlock decodes frag, the whole header block of a HEADERS frame on
// stream id, and hands it to the stream.
func (cc *ClientConn) onHeaderBlock(id uint32, end bool, frag []byte) error {
	if int64(len(frag)) > 2*int64(cc.maxList) {
		return ConnectionError{Code: ErrCodeProtocol, Reason: "header block too large", Cause: ErrHeaderListTooLarge}
	}
	cc.beginBlock()
	if err := cc.hdec.decode(frag, cc.emit); err != nil {
		return ConnectionError{Code: ErrCodeCompression, Reason: err.Error()}
	}
	return cc.onBlock(id, end)
}

// onBlock hands the decoded header block of stream id to its stream.
func (cc *ClientConn) onBlock(id uint32, end bool) error {
	cc.mu.Lock()
	s := cc.streams[id]
	if s == nil {
		never := cc.neverOpenedLocked(id)
		cc.mu.Unlock()
		if never {
			return ConnectionError{Code: ErrCodeProtocol, Reason: "HEADERS on idle stream"}
		}
		return nil
	}
	err := cc.onHeadersLocked(s, end)
	cc.mu.Unlock()
	cc.afterUnlock()
	return err
}

func (cc *ClientConn) onHeadersLocked(s *stream, end bool) error {
	s.seen = cc.framesIn.Load()
	if cc.hbad != nil {
		code := ErrCodeProtocol
		if cc.hbad == ErrHeaderListTooLarge {
			return cc.streamErrorLocked(s, ErrCodeCancel, ErrHeaderListTooLarge)
		}
		return cc.streamErrorLocked(s, code, cc.hbad)
	}
	if s.recvEnd {
		return cc.streamErrorLocked(s, ErrCodeStreamClosed, errors.New("HEADERS after END_STREAM"))
	}
	fs := cc.hfields
	if s.gotHead { // trailers
		if !end {
			return cc.streamErrorLocked(s, ErrCodeProtocol, errTrailerNoEnd)
		}
		if len(fs) > 0 && fs[0].Name[0] == ':' {
			return cc.streamErrorLocked(s, ErrCodeProtocol, errBadPseudo)
		}
		if s.contentLength >= 0 && s.received != s.contentLength {
			return cc.streamErrorLocked(s, ErrCodeProtocol, errLengthMismatch)
		}
		var dst fields.Header
		if n := len(s.resp.Header); n < inlineFields {
			dst = s.hdr[n:n] // after the head's fields
		}
		s.resp.Trailer = toHeader(dst, fs)
		s.recvEnd = true
		cc.forgetLocked(s)
		s.signal()
		return nil
	}
	if len(fs) == 0 || fs[0].Name != ":status" {
		return cc.streamErrorLocked(s, ErrCodeProtocol, errNoStatus)
	}
	code, ok := parseStatus(fs[0].Value)
	if !ok {
		return cc.streamErrorLocked(s, ErrCodeProtocol, errNoStatus)
	}
	fs = fs[1:]
	for _, f := range fs {
		for _, c := range connSpecific[:5] {
			if f.Name == c {
				return cc.streamErrorLocked(s, ErrCodeProtocol, errConnSpecificHdr)
			}
		}
	}
	if code < 200 {
		if end {
			return cc.streamErrorLocked(s, ErrCodeProtocol, errors.New("1xx response with END_STREAM"))
		}
		s.n1xx++
		limit := cc.cfg.Max1xx
		if limit <= 0 {
			limit = defaultMax1xx
		}
		if int(s.n1xx) > limit {
			return cc.streamErrorLocked(s, ErrCodeProtocol, ErrTooMany1xx)
		}
		return nil
	}
	s.gotHead = true
	s.resp.StatusCode = code
	s.resp.Header = toHeader(s.hdr[:0], fs)
	s.resp.ContentLength = -1
	s.contentLength = -1
	for _, f := range fs {
		if f.Name == "content-length" {
			n, err := strconv.ParseInt(f.Value, 10, 64)
			if err != nil || n < 0 || (s.contentLength >= 0 && n != s.contentLength) {
				return cc.streamErrorLocked(s, ErrCodeProtocol, errors.New("invalid content-length"))
			}
			s.contentLength = n
		}
	}
	s.resp.ContentLength = s.contentLength
	if s.req.Method == "HEAD" || code == 204 || code == 304 {
		s.contentLength = -1 // describes a body that is not sent
	}
	if end {
		if s.contentLength > 0 {
			return cc.streamErrorLocked(s, ErrCodeProtocol, errLengthMismatch)
		}
		if s.resp.ContentLength < 0 {
			s.resp.ContentLength = 0
		}
		s.recvEnd = true
		cc.forgetLocked(s)
	}
	s.signal()
	return nil
}

func parseStatus(v string) (int, bool) {
	if len(v) != 3 || v[0] < '1' || v[0] > '9' || v[1] < '0' || v[1] > '9' || v[2] < '0' || v[2] > '9' {
		return 0, false
	}
	return int(v[0]-'0')*100 + int(v[1]-'0')*10 + int(v[2]-'0'), true
}

// toHeader converts fs into dst's capacity when it fits, else into a new
// slice. The result's capacity is its length, so that a caller's append
// never writes over fields that follow it in dst's array.
func toHeader(dst fields.Header, fs []hpack.HeaderField) fields.Header {
	if len(fs) == 0 {
		return nil
	}
	if cap(dst)-len(dst) < len(fs) {
		dst = make(fields.Header, 0, len(fs))
	}
	for _, f := range fs {
		dst = append(dst, fields.Field{Name: f.Name, Value: f.Value})
	}
	return dst[:len(dst):len(dst)]
}
