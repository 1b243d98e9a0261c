package h2

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/guise-http/guise/internal/fields"
	"golang.org/x/net/http2/hpack"
)

var (
	errNoStatus        = errors.New("missing or invalid :status")
	errTooMany1xx      = errors.New("too many 1xx responses")
	errTrailerNoEnd    = errors.New("trailers without END_STREAM")
	errDataBeforeHead  = errors.New("DATA before HEADERS")
	errLengthMismatch  = errors.New("body length does not match content-length")
	errBadPseudo       = errors.New("invalid pseudo-header field")
	errConnSpecificHdr = errors.New("connection-specific header field")
	errWindowOverflow  = errors.New("window update overflow")
)

// readLoop reads and dispatches frames until the connection ends.
func (cc *ClientConn) readLoop() {
	defer close(cc.readDone)
	if cc.idleTimer != nil {
		defer cc.idleTimer.Stop()
	}
	for {
		h, p, err := cc.fr.next()
		if err == nil {
			if cc.idleTimer != nil {
				cc.idleTimer.Reset(cc.cfg.ReadIdleTimeout)
			}
			err = cc.dispatch(h, p)
		}
		if err != nil {
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

// dispatch handles one frame. A returned error ends the connection.
func (cc *ClientConn) dispatch(h frameHeader, p []byte) error {
	cc.mu.Lock()
	first := !cc.gotSettings
	cc.mu.Unlock()
	if first && (h.Type != FrameSettings || h.Flags&FlagAck != 0) {
		return ConnectionError{ErrCodeProtocol, fmt.Sprintf("first frame is %v, not SETTINGS", h.Type)}
	}
	if h.Type != FrameData && h.Type != FrameContinuation {
		cc.empty = 0
	}
	switch h.Type {
	case FrameData:
		err := cc.onData(h, p)
		if err == nil && h.Flags&FlagEndStream != 0 || cc.ctrlOwed() {
			cc.afterUnlock()
		}
		return err
	case FrameHeaders:
		return cc.onHeaders(h, p)
	case FramePriority:
		if h.StreamID == 0 {
			return ConnectionError{ErrCodeProtocol, "PRIORITY on stream 0"}
		}
		return nil
	case FrameRSTStream:
		return cc.onRST(h, p)
	case FrameSettings:
		return cc.onSettings(h, p)
	case FramePushPromise:
		return ConnectionError{ErrCodeProtocol, "PUSH_PROMISE after ENABLE_PUSH=0"}
	case FramePing:
		return cc.onPing(h, p)
	case FrameGoAway:
		return cc.onGoAway(h, p)
	case FrameWindowUpdate:
		err := cc.onWindowUpdate(h, p)
		cc.afterUnlock()
		return err
	case FrameContinuation:
		return ConnectionError{ErrCodeProtocol, "CONTINUATION without HEADERS"}
	}
	return nil // unknown frame types are ignored (RFC 9113 5.5)
}

func (cc *ClientConn) onSettings(h frameHeader, p []byte) error {
	if h.StreamID != 0 {
		return ConnectionError{ErrCodeProtocol, "SETTINGS on a stream"}
	}
	if h.Flags&FlagAck != 0 {
		if len(p) != 0 {
			return ConnectionError{ErrCodeFrameSize, "SETTINGS ACK with payload"}
		}
		return nil
	}
	if len(p)%6 != 0 {
		return ConnectionError{ErrCodeFrameSize, "SETTINGS length not a multiple of 6"}
	}
	for i := 0; i < len(p); i += 6 {
		s := Setting{SettingID(binary.BigEndian.Uint16(p[i:])), binary.BigEndian.Uint32(p[i+2:])}
		if err := s.Valid(); err != nil {
			return err
		}
	}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	cc.gotSettings = true
	for i := 0; i < len(p); i += 6 {
		id, v := SettingID(binary.BigEndian.Uint16(p[i:])), binary.BigEndian.Uint32(p[i+2:])
		switch id {
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
					return ConnectionError{ErrCodeFlowControl, "INITIAL_WINDOW_SIZE overflows a stream window"}
				}
			}
			cc.peerWindow = int32(v)
			cc.wakeWindowsLocked()
		case SettingMaxFrameSize:
			cc.peerMaxFrame = v
		case SettingMaxHeaderListSize:
			cc.peerMaxList = v
		}
	}
	if !cc.queueLocked(appendSettingsAck) {
		return errCalm
	}
	cc.kick()
	return nil
}

func (cc *ClientConn) onPing(h frameHeader, p []byte) error {
	if h.StreamID != 0 {
		return ConnectionError{ErrCodeProtocol, "PING on a stream"}
	}
	if len(p) != 8 {
		return ConnectionError{ErrCodeFrameSize, "PING length not 8"}
	}
	var data [8]byte
	copy(data[:], p)
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if h.Flags&FlagAck != 0 {
		if cc.pingOutstanding && data == cc.pingData {
			cc.pingOutstanding = false
			cc.pingTimer.Stop()
		}
		return nil
	}
	if !cc.queueLocked(func(b []byte) []byte { return appendPing(b, true, data) }) {
		return errCalm
	}
	cc.kick()
	return nil
}

func (cc *ClientConn) onGoAway(h frameHeader, p []byte) error {
	if h.StreamID != 0 {
		return ConnectionError{ErrCodeProtocol, "GOAWAY on a stream"}
	}
	if len(p) < 8 {
		return ConnectionError{ErrCodeFrameSize, "GOAWAY shorter than 8 bytes"}
	}
	ga := GoAwayError{
		LastStreamID: binary.BigEndian.Uint32(p) & maxWindow,
		Code:         ErrCode(binary.BigEndian.Uint32(p[4:])),
		DebugData:    string(p[8:]),
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

func (cc *ClientConn) onWindowUpdate(h frameHeader, p []byte) error {
	if len(p) != 4 {
		return ConnectionError{ErrCodeFrameSize, "WINDOW_UPDATE length not 4"}
	}
	inc := int64(binary.BigEndian.Uint32(p) & maxWindow)
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if h.StreamID == 0 {
		if inc == 0 {
			return ConnectionError{ErrCodeProtocol, "zero WINDOW_UPDATE increment"}
		}
		cc.sendWindow += inc
		if cc.sendWindow > maxWindow {
			return ConnectionError{ErrCodeFlowControl, "connection window above 2^31-1"}
		}
		cc.wakeWindowsLocked()
		return nil
	}
	s := cc.streams[h.StreamID]
	if s == nil {
		if cc.neverOpenedLocked(h.StreamID) {
			return ConnectionError{ErrCodeProtocol, "WINDOW_UPDATE on idle stream"}
		}
		return nil
	}
	if inc == 0 {
		return cc.streamErrorLocked(s, ErrCodeProtocol, errors.New("zero WINDOW_UPDATE increment"))
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
	return cc.ctrlN > 0
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

func (cc *ClientConn) onRST(h frameHeader, p []byte) error {
	if h.StreamID == 0 {
		return ConnectionError{ErrCodeProtocol, "RST_STREAM on stream 0"}
	}
	if len(p) != 4 {
		return ConnectionError{ErrCodeFrameSize, "RST_STREAM length not 4"}
	}
	code := ErrCode(binary.BigEndian.Uint32(p))
	cc.mu.Lock()
	s := cc.streams[h.StreamID]
	if s == nil {
		never := cc.neverOpenedLocked(h.StreamID)
		cc.mu.Unlock()
		if never {
			return ConnectionError{ErrCodeProtocol, "RST_STREAM on idle stream"}
		}
		return nil
	}
	var err error = StreamError{s.id, code, nil}
	if code == ErrCodeRefusedStream && !s.gotHead {
		err = retryable{err}
	}
	cc.creditLocked(int64(s.data.len()))
	s.failLocked(err)
	cc.forgetLocked(s)
	cc.mu.Unlock()
	cc.afterUnlock()
	return nil
}

func (cc *ClientConn) onData(h frameHeader, p []byte) error {
	if h.StreamID == 0 {
		return ConnectionError{ErrCodeProtocol, "DATA on stream 0"}
	}
	full := int64(len(p))
	data, err := unpad(h, p)
	if err != nil {
		return err
	}
	end := h.Flags&FlagEndStream != 0
	if len(p) == 0 && !end {
		cc.empty++
		if cc.empty > maxEmptyFrames {
			return ConnectionError{ErrCodeEnhanceYourCalm, "flood of empty DATA frames"}
		}
	} else {
		cc.empty = 0
	}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if full > cc.recvWindow {
		return ConnectionError{ErrCodeFlowControl, "DATA beyond the connection window"}
	}
	cc.recvWindow -= full
	s := cc.streams[h.StreamID]
	if s == nil {
		if cc.neverOpenedLocked(h.StreamID) {
			return ConnectionError{ErrCodeProtocol, "DATA on idle stream"}
		}
		// A stream we reset or finished: drop, but return the credit.
		if !cc.creditLocked(full) {
			return errCalm
		}
		cc.kick()
		return nil
	}
	if full > s.recvWindow {
		return ConnectionError{ErrCodeFlowControl, "DATA beyond the stream window"}
	}
	s.recvWindow -= full
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
	if s.bodyClosed {
		cc.creditLocked(int64(len(data)))
	} else {
		s.data.write(data)
	}
	if end {
		s.recvEnd = true
		cc.forgetLocked(s)
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
		cc.hdec.SetEmitEnabled(false)
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

// readBlock decodes the header block starting in a HEADERS frame, reading
// CONTINUATION frames. Wire bytes are capped at twice the header list bytes
// still allowed; past that the connection ends without decoding the rest.
func (cc *ClientConn) readBlock(h frameHeader, frag []byte) error {
	cc.hfields = cc.hfields[:0]
	cc.hbad = nil
	cc.hremain = cc.maxList
	cc.hdec.SetEmitEnabled(true)
	budget := 2 * int64(cc.maxList)
	for {
		budget -= int64(len(frag))
		if budget < 0 {
			return ConnectionError{ErrCodeProtocol, "header block too large"}
		}
		if _, err := cc.hdec.Write(frag); err != nil {
			return ConnectionError{ErrCodeCompression, err.Error()}
		}
		if h.Flags&FlagEndHeaders != 0 {
			break
		}
		var err error
		var p []byte
		id := h.StreamID
		h, p, err = cc.fr.next()
		if err != nil {
			return err
		}
		if h.Type != FrameContinuation || h.StreamID != id {
			return ConnectionError{ErrCodeProtocol, fmt.Sprintf("%v frame inside a header block", h.Type)}
		}
		if len(p) == 0 {
			cc.empty++
			if cc.empty > maxEmptyFrames {
				return ConnectionError{ErrCodeEnhanceYourCalm, "flood of empty CONTINUATION frames"}
			}
		}
		frag = p
	}
	if err := cc.hdec.Close(); err != nil {
		return ConnectionError{ErrCodeCompression, err.Error()}
	}
	return nil
}

func (cc *ClientConn) onHeaders(h frameHeader, p []byte) error {
	if h.StreamID == 0 {
		return ConnectionError{ErrCodeProtocol, "HEADERS on stream 0"}
	}
	frag, err := unpad(h, p)
	if err != nil {
		return err
	}
	if h.Flags&FlagPriority != 0 {
		if len(frag) < 5 {
			return ConnectionError{ErrCodeFrameSize, "HEADERS too short for priority"}
		}
		frag = frag[5:]
	}
	if err := cc.readBlock(h, frag); err != nil {
		return err
	}
	end := h.Flags&FlagEndStream != 0
	cc.mu.Lock()
	s := cc.streams[h.StreamID]
	if s == nil {
		never := cc.neverOpenedLocked(h.StreamID)
		cc.mu.Unlock()
		if never {
			return ConnectionError{ErrCodeProtocol, "HEADERS on idle stream"}
		}
		return nil
	}
	err = cc.onHeadersLocked(s, end)
	cc.mu.Unlock()
	cc.afterUnlock()
	return err
}

func (cc *ClientConn) onHeadersLocked(s *stream, end bool) error {
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
		s.resp.Trailer = toHeader(fs)
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
		if s.n1xx > limit {
			return cc.streamErrorLocked(s, ErrCodeProtocol, errTooMany1xx)
		}
		return nil
	}
	s.gotHead = true
	s.resp.StatusCode = code
	s.resp.Header = toHeader(fs)
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

func toHeader(fs []hpack.HeaderField) fields.Header {
	if len(fs) == 0 {
		return nil
	}
	h := make(fields.Header, len(fs))
	for i, f := range fs {
		h[i] = fields.Field{Name: f.Name, Value: f.Value}
	}
	return h
}
