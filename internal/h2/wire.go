package h2

import (
	"encoding/binary"
	"fmt"

	"golang.org/x/net/http2"
)

// This file holds the HTTP/2 wire types, which are golang.org/x/net/http2's,
// and the checks h2 applies to what the peer sends.

// FrameType is an HTTP/2 frame type (golang.org/x/net/http2's).
type FrameType = http2.FrameType

// Frame types.
const (
	FrameData         = http2.FrameData
	FrameHeaders      = http2.FrameHeaders
	FramePriority     = http2.FramePriority
	FrameRSTStream    = http2.FrameRSTStream
	FrameSettings     = http2.FrameSettings
	FramePushPromise  = http2.FramePushPromise
	FramePing         = http2.FramePing
	FrameGoAway       = http2.FrameGoAway
	FrameWindowUpdate = http2.FrameWindowUpdate
	FrameContinuation = http2.FrameContinuation
)

// Frame flags.
const (
	FlagEndStream  = 0x1
	FlagAck        = 0x1
	FlagEndHeaders = 0x4
	FlagPadded     = 0x8
	FlagPriority   = 0x20
)

// SettingID is an HTTP/2 SETTINGS parameter (golang.org/x/net/http2's).
type SettingID = http2.SettingID

// SETTINGS parameters.
const (
	SettingHeaderTableSize       = http2.SettingHeaderTableSize
	SettingEnablePush            = http2.SettingEnablePush
	SettingMaxConcurrentStreams  = http2.SettingMaxConcurrentStreams
	SettingInitialWindowSize     = http2.SettingInitialWindowSize
	SettingMaxFrameSize          = http2.SettingMaxFrameSize
	SettingMaxHeaderListSize     = http2.SettingMaxHeaderListSize
	SettingEnableConnectProtocol = http2.SettingEnableConnectProtocol
	SettingNoRFC7540Priorities   = http2.SettingNoRFC7540Priorities
)

// Setting is one SETTINGS parameter and value (golang.org/x/net/http2's):
// Setting{ID: id, Val: v}.
type Setting = http2.Setting

// validSetting returns the connection error a peer's setting causes, or nil.
func validSetting(s Setting) error {
	switch s.ID {
	case SettingEnablePush, SettingEnableConnectProtocol, SettingNoRFC7540Priorities:
		if s.Val > 1 {
			return ConnectionError{ErrCodeProtocol, fmt.Sprintf("invalid %v %d", s.ID, s.Val)}
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

// ErrCode is an HTTP/2 error code (golang.org/x/net/http2's); String
// returns its RFC name.
type ErrCode = http2.ErrCode

// Error codes.
const (
	ErrCodeNo                 = http2.ErrCodeNo
	ErrCodeProtocol           = http2.ErrCodeProtocol
	ErrCodeInternal           = http2.ErrCodeInternal
	ErrCodeFlowControl        = http2.ErrCodeFlowControl
	ErrCodeSettingsTimeout    = http2.ErrCodeSettingsTimeout
	ErrCodeStreamClosed       = http2.ErrCodeStreamClosed
	ErrCodeFrameSize          = http2.ErrCodeFrameSize
	ErrCodeRefusedStream      = http2.ErrCodeRefusedStream
	ErrCodeCancel             = http2.ErrCodeCancel
	ErrCodeCompression        = http2.ErrCodeCompression
	ErrCodeConnect            = http2.ErrCodeConnect
	ErrCodeEnhanceYourCalm    = http2.ErrCodeEnhanceYourCalm
	ErrCodeInadequateSecurity = http2.ErrCodeInadequateSecurity
	ErrCodeHTTP11Required     = http2.ErrCodeHTTP11Required
)

// PriorityParam is the priority of a HEADERS or PRIORITY frame (RFC 7540
// section 6.3), golang.org/x/net/http2's; set it with keyed fields
// (StreamDep, Exclusive, Weight). Weight is the wire value: the weight minus
// one.
type PriorityParam = http2.PriorityParam

const (
	preface         = http2.ClientPreface
	frameHeaderLen  = 9
	minMaxFrameSize = 1 << 14
	maxMaxFrameSize = 1<<24 - 1
	maxWindow       = 1<<31 - 1
	initialWindow   = 65535
)

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
