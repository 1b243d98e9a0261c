package h2

import (
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
			return ConnectionError{Code: ErrCodeProtocol, Reason: fmt.Sprintf("invalid %v %d", s.ID, s.Val)}
		}
	case SettingInitialWindowSize:
		if s.Val > maxWindow {
			return ConnectionError{Code: ErrCodeFlowControl, Reason: fmt.Sprintf("INITIAL_WINDOW_SIZE %d too large", s.Val)}
		}
	case SettingMaxFrameSize:
		if s.Val < minMaxFrameSize || s.Val > maxMaxFrameSize {
			return ConnectionError{Code: ErrCodeProtocol, Reason: fmt.Sprintf("invalid MAX_FRAME_SIZE %d", s.Val)}
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
