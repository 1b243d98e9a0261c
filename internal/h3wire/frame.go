package h3wire

import (
	"strconv"

	"github.com/guise-http/guise/internal/quicwire"
)

// StreamType is the type that opens a unidirectional stream (RFC 9114
// §6.2).
type StreamType uint64

// Stream types.
const (
	StreamControl      StreamType = 0x00
	StreamPush         StreamType = 0x01
	StreamQPACKEncoder StreamType = 0x02
	StreamQPACKDecoder StreamType = 0x03
)

// String names the stream type, "GREASE" for a reserved one.
func (t StreamType) String() string {
	switch t {
	case StreamControl:
		return "control"
	case StreamPush:
		return "push"
	case StreamQPACKEncoder:
		return "qpack_encoder"
	case StreamQPACKDecoder:
		return "qpack_decoder"
	}
	if IsGREASE(uint64(t)) {
		return "GREASE"
	}
	return "0x" + strconv.FormatUint(uint64(t), 16)
}

// IsGREASE reports whether v is a reserved value 0x1f*N + 0x21 of the
// HTTP/3 stream type, frame type, setting and error code spaces (RFC 9114
// §6.2.3, §7.2.8, §7.2.4.1, §8.1).
func IsGREASE(v uint64) bool { return v >= 0x21 && (v-0x21)%0x1f == 0 }

// FrameType is an HTTP/3 frame type.
type FrameType uint64

// Frame types (RFC 9114 §7.2, RFC 9218 §7.2).
const (
	FrameData               FrameType = 0x00
	FrameHeaders            FrameType = 0x01
	FrameCancelPush         FrameType = 0x03
	FrameSettings           FrameType = 0x04
	FramePushPromise        FrameType = 0x05
	FrameGoAway             FrameType = 0x07
	FrameMaxPushID          FrameType = 0x0d
	FramePriorityUpdate     FrameType = 0xf0700
	FramePriorityUpdatePush FrameType = 0xf0701
)

// String names the frame type, "GREASE" for a reserved one.
func (t FrameType) String() string {
	switch t {
	case FrameData:
		return "DATA"
	case FrameHeaders:
		return "HEADERS"
	case FrameCancelPush:
		return "CANCEL_PUSH"
	case FrameSettings:
		return "SETTINGS"
	case FramePushPromise:
		return "PUSH_PROMISE"
	case FrameGoAway:
		return "GOAWAY"
	case FrameMaxPushID:
		return "MAX_PUSH_ID"
	case FramePriorityUpdate:
		return "PRIORITY_UPDATE"
	case FramePriorityUpdatePush:
		return "PRIORITY_UPDATE_PUSH"
	}
	if IsGREASE(uint64(t)) {
		return "GREASE"
	}
	return "0x" + strconv.FormatUint(uint64(t), 16)
}

// reservedH2 are HTTP/2's frame types that HTTP/3 reserves (§7.2.8).
func reservedH2(t FrameType) bool { return t == 0x02 || t == 0x06 || t == 0x08 || t == 0x09 }

// Frame is one HTTP/3 frame; Payload aliases the input.
type Frame struct {
	Type    FrameType
	Payload []byte
	// Size is the encoded size, header included.
	Size int
}

// ParseFrame reads the frame at the start of b. ErrTruncated means b
// holds only part of it (more stream data may follow); the caller bounds
// how long it waits, as the frame's length may be up to 2^62.
func ParseFrame(b []byte) (Frame, error) {
	t, n := quicwire.Varint(b)
	if n == 0 {
		return Frame{}, truncated("frame type", 0)
	}
	l, m := quicwire.Varint(b[n:])
	if m == 0 {
		return Frame{}, truncated("frame length", n)
	}
	f := Frame{Type: FrameType(t)}
	if reservedH2(f.Type) {
		return f, &Error{What: f.Type.String(), Err: ErrReservedFrame}
	}
	off := n + m
	if l > uint64(len(b)-off) {
		return f, truncated(f.Type.String()+" payload", off)
	}
	f.Payload = b[off : off+int(l)]
	f.Size = off + int(l)
	return f, nil
}

// AppendFrame appends a frame of type t with payload p.
func AppendFrame(b []byte, t FrameType, p []byte) []byte {
	b = quicwire.AppendVarint(b, uint64(t))
	b = quicwire.AppendVarint(b, uint64(len(p)))
	return append(b, p...)
}

// SettingID identifies an HTTP/3 setting.
type SettingID uint64

// Settings with names (RFC 9114 §7.2.4.1, RFC 9204, RFC 9220, RFC 9297).
const (
	SettingQPACKMaxTableCapacity SettingID = 0x01
	SettingMaxFieldSectionSize   SettingID = 0x06
	SettingQPACKBlockedStreams   SettingID = 0x07
	SettingEnableConnectProtocol SettingID = 0x08
	SettingH3Datagram            SettingID = 0x33
)

// String names the setting, "GREASE" for a reserved one.
func (id SettingID) String() string {
	switch id {
	case SettingQPACKMaxTableCapacity:
		return "SETTINGS_QPACK_MAX_TABLE_CAPACITY"
	case SettingMaxFieldSectionSize:
		return "SETTINGS_MAX_FIELD_SECTION_SIZE"
	case SettingQPACKBlockedStreams:
		return "SETTINGS_QPACK_BLOCKED_STREAMS"
	case SettingEnableConnectProtocol:
		return "SETTINGS_ENABLE_CONNECT_PROTOCOL"
	case SettingH3Datagram:
		return "SETTINGS_H3_DATAGRAM"
	}
	if IsGREASE(uint64(id)) {
		return "GREASE"
	}
	return "0x" + strconv.FormatUint(uint64(id), 16)
}

// Setting is one identifier and value, in wire order within SETTINGS.
type Setting struct {
	ID    SettingID
	Value uint64
}

// ParseSettings reads a SETTINGS payload. An identifier sent twice or one
// of HTTP/2's (0x02 to 0x05) is ErrMalformed (H3_SETTINGS_ERROR, §7.2.4).
func ParseSettings(p []byte) ([]Setting, error) {
	var out []Setting
	for off := 0; off < len(p); {
		id, n := quicwire.Varint(p[off:])
		if n == 0 {
			return out, malformed("setting id", off) // a SETTINGS frame is complete: no truncation
		}
		v, m := quicwire.Varint(p[off+n:])
		if m == 0 {
			return out, malformed("setting value", off+n)
		}
		s := Setting{ID: SettingID(id), Value: v}
		if s.ID >= 0x02 && s.ID <= 0x05 {
			return out, malformed("http/2 setting "+s.ID.String(), off)
		}
		for _, o := range out {
			if o.ID == s.ID {
				return out, malformed("duplicate setting "+s.ID.String(), off)
			}
		}
		out = append(out, s)
		off += n + m
	}
	return out, nil
}

// AppendSettings appends a SETTINGS frame with settings in order.
func AppendSettings(b []byte, settings ...Setting) []byte {
	var p []byte
	for _, s := range settings {
		p = quicwire.AppendVarint(p, uint64(s.ID))
		p = quicwire.AppendVarint(p, s.Value)
	}
	return AppendFrame(b, FrameSettings, p)
}

// ParsePriorityUpdate reads a PRIORITY_UPDATE payload: the prioritized
// element's id and the priority field value (RFC 9218 §7.2).
func ParsePriorityUpdate(p []byte) (id uint64, field string, err error) {
	id, n := quicwire.Varint(p)
	if n == 0 {
		return 0, "", malformed("priority update element id", 0)
	}
	return id, string(p[n:]), nil
}
