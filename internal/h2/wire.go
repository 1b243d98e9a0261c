package h2

import (
	"encoding/binary"
	"fmt"
	"io"
)

// This file holds the HTTP/2 wire types and frame codec (RFC 9113 section
// 4 and 6). golang.org/x/net/http2's Framer cannot be used: it imports
// golang.org/x/net/idna and so golang.org/x/text, which the module does not
// require. The names and shapes follow that package so that they can become
// aliases of it.

// FrameType is an HTTP/2 frame type.
type FrameType uint8

// Frame types.
const (
	FrameData         FrameType = 0x0
	FrameHeaders      FrameType = 0x1
	FramePriority     FrameType = 0x2
	FrameRSTStream    FrameType = 0x3
	FrameSettings     FrameType = 0x4
	FramePushPromise  FrameType = 0x5
	FramePing         FrameType = 0x6
	FrameGoAway       FrameType = 0x7
	FrameWindowUpdate FrameType = 0x8
	FrameContinuation FrameType = 0x9
)

var frameNames = [...]string{"DATA", "HEADERS", "PRIORITY", "RST_STREAM", "SETTINGS",
	"PUSH_PROMISE", "PING", "GOAWAY", "WINDOW_UPDATE", "CONTINUATION"}

// String returns the frame type's RFC name.
func (t FrameType) String() string {
	if int(t) < len(frameNames) {
		return frameNames[t]
	}
	return fmt.Sprintf("UNKNOWN_FRAME_TYPE_%d", uint8(t))
}

// Frame flags.
const (
	FlagEndStream  = 0x1
	FlagAck        = 0x1
	FlagEndHeaders = 0x4
	FlagPadded     = 0x8
	FlagPriority   = 0x20
)

// SettingID is an HTTP/2 SETTINGS parameter.
type SettingID uint16

// SETTINGS parameters.
const (
	SettingHeaderTableSize      SettingID = 0x1
	SettingEnablePush           SettingID = 0x2
	SettingMaxConcurrentStreams SettingID = 0x3
	SettingInitialWindowSize    SettingID = 0x4
	SettingMaxFrameSize         SettingID = 0x5
	SettingMaxHeaderListSize    SettingID = 0x6
)

var settingNames = [...]string{"", "HEADER_TABLE_SIZE", "ENABLE_PUSH", "MAX_CONCURRENT_STREAMS",
	"INITIAL_WINDOW_SIZE", "MAX_FRAME_SIZE", "MAX_HEADER_LIST_SIZE"}

// String returns the setting's RFC name.
func (s SettingID) String() string {
	if s > 0 && int(s) < len(settingNames) {
		return settingNames[s]
	}
	return fmt.Sprintf("UNKNOWN_SETTING_%d", uint16(s))
}

// Setting is one SETTINGS parameter and value.
type Setting struct {
	ID  SettingID
	Val uint32
}

// Valid reports the connection error a peer's setting causes, or nil.
func (s Setting) Valid() error {
	switch s.ID {
	case SettingEnablePush:
		if s.Val > 1 {
			return ConnectionError{ErrCodeProtocol, fmt.Sprintf("invalid ENABLE_PUSH %d", s.Val)}
		}
	case SettingInitialWindowSize:
		if s.Val > maxWindow {
			return ConnectionError{ErrCodeFlowControl, fmt.Sprintf("INITIAL_WINDOW_SIZE %d too large", s.Val)}
		}
	case SettingMaxFrameSize:
		if s.Val < minMaxFrameSize || s.Val > maxMaxFrameSize {
			return ConnectionError{ErrCodeProtocol, fmt.Sprintf("invalid MAX_FRAME_SIZE %d", s.Val)}
		}
	}
	return nil
}

// ErrCode is an HTTP/2 error code.
type ErrCode uint32

// Error codes.
const (
	ErrCodeNo                 ErrCode = 0x0
	ErrCodeProtocol           ErrCode = 0x1
	ErrCodeInternal           ErrCode = 0x2
	ErrCodeFlowControl        ErrCode = 0x3
	ErrCodeSettingsTimeout    ErrCode = 0x4
	ErrCodeStreamClosed       ErrCode = 0x5
	ErrCodeFrameSize          ErrCode = 0x6
	ErrCodeRefusedStream      ErrCode = 0x7
	ErrCodeCancel             ErrCode = 0x8
	ErrCodeCompression        ErrCode = 0x9
	ErrCodeConnect            ErrCode = 0xa
	ErrCodeEnhanceYourCalm    ErrCode = 0xb
	ErrCodeInadequateSecurity ErrCode = 0xc
	ErrCodeHTTP11Required     ErrCode = 0xd
)

var errCodeNames = [...]string{"NO_ERROR", "PROTOCOL_ERROR", "INTERNAL_ERROR", "FLOW_CONTROL_ERROR",
	"SETTINGS_TIMEOUT", "STREAM_CLOSED", "FRAME_SIZE_ERROR", "REFUSED_STREAM", "CANCEL",
	"COMPRESSION_ERROR", "CONNECT_ERROR", "ENHANCE_YOUR_CALM", "INADEQUATE_SECURITY", "HTTP_1_1_REQUIRED"}

// String returns the code's RFC name.
func (c ErrCode) String() string {
	if int(c) < len(errCodeNames) {
		return errCodeNames[c]
	}
	return fmt.Sprintf("unknown error code 0x%x", uint32(c))
}

// PriorityParam is the priority of a HEADERS or PRIORITY frame (RFC 7540
// section 6.3). Weight is the wire value: the weight minus one.
type PriorityParam struct {
	StreamDep uint32
	Exclusive bool
	Weight    uint8
}

const (
	preface         = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
	frameHeaderLen  = 9
	minMaxFrameSize = 1 << 14
	maxMaxFrameSize = 1<<24 - 1
	maxWindow       = 1<<31 - 1
	initialWindow   = 65535
)

// frameHeader is the 9-byte header of a frame.
type frameHeader struct {
	Length   uint32
	Type     FrameType
	Flags    uint8
	StreamID uint32
}

// frameReader reads frames into one reused buffer.
type frameReader struct {
	r   io.Reader
	hdr [frameHeaderLen]byte
	buf []byte
	max uint32 // our SETTINGS_MAX_FRAME_SIZE
}

// next reads one frame. The payload is valid until the next call. A frame
// longer than max is a FRAME_SIZE_ERROR, reported before its payload is read.
func (fr *frameReader) next() (frameHeader, []byte, error) {
	if _, err := io.ReadFull(fr.r, fr.hdr[:]); err != nil {
		return frameHeader{}, nil, err
	}
	h := frameHeader{
		Length:   uint32(fr.hdr[0])<<16 | uint32(fr.hdr[1])<<8 | uint32(fr.hdr[2]),
		Type:     FrameType(fr.hdr[3]),
		Flags:    fr.hdr[4],
		StreamID: binary.BigEndian.Uint32(fr.hdr[5:]) & (1<<31 - 1),
	}
	if h.Length > fr.max {
		return h, nil, ConnectionError{ErrCodeFrameSize, fmt.Sprintf("%v frame of %d bytes exceeds %d", h.Type, h.Length, fr.max)}
	}
	if uint32(cap(fr.buf)) < h.Length {
		fr.buf = make([]byte, h.Length, max(h.Length, 1<<14))
	}
	p := fr.buf[:h.Length]
	if _, err := io.ReadFull(fr.r, p); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return h, nil, err
	}
	return h, p, nil
}

// unpad strips the padding of a PADDED frame payload.
func unpad(h frameHeader, p []byte) ([]byte, error) {
	if h.Flags&FlagPadded == 0 {
		return p, nil
	}
	if len(p) == 0 {
		return nil, ConnectionError{ErrCodeProtocol, "padded frame without pad length"}
	}
	n := int(p[0])
	if n >= len(p) {
		return nil, ConnectionError{ErrCodeProtocol, "pad size larger than data payload"}
	}
	return p[1 : len(p)-n], nil
}

// appendFrameHeader appends a frame header.
func appendFrameHeader(dst []byte, length int, t FrameType, flags uint8, id uint32) []byte {
	return append(dst, byte(length>>16), byte(length>>8), byte(length), byte(t), flags,
		byte(id>>24), byte(id>>16), byte(id>>8), byte(id))
}

func appendSettings(dst []byte, s []Setting) []byte {
	dst = appendFrameHeader(dst, 6*len(s), FrameSettings, 0, 0)
	for _, v := range s {
		dst = append(dst, byte(v.ID>>8), byte(v.ID))
		dst = binary.BigEndian.AppendUint32(dst, v.Val)
	}
	return dst
}

func appendSettingsAck(dst []byte) []byte {
	return appendFrameHeader(dst, 0, FrameSettings, FlagAck, 0)
}

func appendWindowUpdate(dst []byte, id, incr uint32) []byte {
	dst = appendFrameHeader(dst, 4, FrameWindowUpdate, 0, id)
	return binary.BigEndian.AppendUint32(dst, incr&maxWindow)
}

func appendPriorityParam(dst []byte, p PriorityParam) []byte {
	dep := p.StreamDep & maxWindow
	if p.Exclusive {
		dep |= 1 << 31
	}
	return append(binary.BigEndian.AppendUint32(dst, dep), p.Weight)
}

func appendPriority(dst []byte, id uint32, p PriorityParam) []byte {
	return appendPriorityParam(appendFrameHeader(dst, 5, FramePriority, 0, id), p)
}

func appendRSTStream(dst []byte, id uint32, code ErrCode) []byte {
	dst = appendFrameHeader(dst, 4, FrameRSTStream, 0, id)
	return binary.BigEndian.AppendUint32(dst, uint32(code))
}

func appendPing(dst []byte, ack bool, data [8]byte) []byte {
	var f uint8
	if ack {
		f = FlagAck
	}
	return append(appendFrameHeader(dst, 8, FramePing, f, 0), data[:]...)
}

func appendGoAway(dst []byte, last uint32, code ErrCode, debug string) []byte {
	dst = appendFrameHeader(dst, 8+len(debug), FrameGoAway, 0, 0)
	dst = binary.BigEndian.AppendUint32(dst, last&maxWindow)
	dst = binary.BigEndian.AppendUint32(dst, uint32(code))
	return append(dst, debug...)
}

func appendData(dst []byte, id uint32, end bool, data []byte) []byte {
	var f uint8
	if end {
		f = FlagEndStream
	}
	return append(appendFrameHeader(dst, len(data), FrameData, f, id), data...)
}

// appendHeaders appends a HEADERS frame carrying block, split into
// CONTINUATION frames of at most maxFrame bytes.
func appendHeaders(dst []byte, id uint32, end bool, prio *PriorityParam, block []byte, maxFrame int) []byte {
	var f uint8
	if end {
		f |= FlagEndStream
	}
	room := maxFrame
	if prio != nil {
		f |= FlagPriority
		room -= 5
	}
	first := block
	if len(first) > room {
		first = block[:room]
	}
	block = block[len(first):]
	if len(block) == 0 {
		f |= FlagEndHeaders
	}
	n := len(first)
	if prio != nil {
		n += 5
	}
	dst = appendFrameHeader(dst, n, FrameHeaders, f, id)
	if prio != nil {
		dst = appendPriorityParam(dst, *prio)
	}
	dst = append(dst, first...)
	for len(block) > 0 {
		frag := block
		if len(frag) > maxFrame {
			frag = block[:maxFrame]
		}
		block = block[len(frag):]
		var cf uint8
		if len(block) == 0 {
			cf = FlagEndHeaders
		}
		dst = appendFrameHeader(dst, len(frag), FrameContinuation, cf, id)
		dst = append(dst, frag...)
	}
	return dst
}
