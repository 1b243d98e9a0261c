package fingerprint

import (
	"strconv"

	"github.com/guise-http/guise/fields"
	"golang.org/x/net/http2/hpack"
)

// http2ClientPreface is the fixed string every HTTP/2 client sends first.
const http2ClientPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

const http2FrameHeaderLen = 9

// FrameType is an HTTP/2 frame type (RFC 9113 section 6).
type FrameType uint8

// HTTP/2 frame types.
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

var frameTypeNames = [...]string{
	"DATA", "HEADERS", "PRIORITY", "RST_STREAM", "SETTINGS",
	"PUSH_PROMISE", "PING", "GOAWAY", "WINDOW_UPDATE", "CONTINUATION",
}

// String returns the RFC name of t ("WINDOW_UPDATE"), or "UNKNOWN_0x.." .
func (t FrameType) String() string {
	if int(t) < len(frameTypeNames) {
		return frameTypeNames[t]
	}
	return "UNKNOWN_0x" + strconv.FormatUint(uint64(t), 16)
}

// HTTP/2 frame flags the parser reads.
const (
	flagEndStream  = 0x1
	flagAck        = 0x1
	flagEndHeaders = 0x4
	flagPadded     = 0x8
	flagPriority   = 0x20
)

var settingNames = [...]string{
	1: "HEADER_TABLE_SIZE", 2: "ENABLE_PUSH", 3: "MAX_CONCURRENT_STREAMS",
	4: "INITIAL_WINDOW_SIZE", 5: "MAX_FRAME_SIZE", 6: "MAX_HEADER_LIST_SIZE",
	8: "ENABLE_CONNECT_PROTOCOL", 9: "NO_RFC7540_PRIORITIES",
}

// SettingName returns the RFC name of a SETTINGS identifier
// ("INITIAL_WINDOW_SIZE"), or "UNKNOWN_SETTING_<n>".
func SettingName(id uint16) string {
	if int(id) < len(settingNames) && settingNames[id] != "" {
		return settingNames[id]
	}
	return "UNKNOWN_SETTING_" + strconv.Itoa(int(id))
}

// Setting is one SETTINGS parameter as sent.
type Setting struct {
	ID    uint16
	Value uint32
}

// Priority is the stream priority carried by a PRIORITY frame or a HEADERS
// frame with the PRIORITY flag. Weight is the effective weight, 1..256 (the
// wire byte plus one), as the Akamai string prints it.
type Priority struct {
	Exclusive bool
	StreamDep uint32
	Weight    int
}

// PriorityFrame is a PRIORITY frame: the stream it is about and its
// priority.
type PriorityFrame struct {
	StreamID uint32
	Priority Priority
}

// Frame is one HTTP/2 frame as sent. Raw is the whole frame, header
// included, aliasing the input of ParseHTTP2.
type Frame struct {
	Type     FrameType
	Flags    uint8
	StreamID uint32
	Length   int
	Raw      []byte
}

// Payload returns the frame's payload (Raw without the 9-byte header).
func (f Frame) Payload() []byte {
	if len(f.Raw) < http2FrameHeaderLen {
		return nil
	}
	return f.Raw[http2FrameHeaderLen:]
}

// WindowIncrement returns the increment of a WINDOW_UPDATE frame; ok is
// false for any other frame.
func (f Frame) WindowIncrement() (inc uint32, ok bool) {
	p := f.Payload()
	if f.Type != FrameWindowUpdate || len(p) != 4 {
		return 0, false
	}
	return (uint32(p[0])<<24 | uint32(p[1])<<16 | uint32(p[2])<<8 | uint32(p[3])) & 0x7fffffff, true
}

// HTTP2Request is one decoded header block (a HEADERS frame and its
// CONTINUATIONs).
type HTTP2Request struct {
	StreamID uint32
	// PseudoOrder lists the pseudo-header names in wire order (":method", ...).
	PseudoOrder []string
	// Header holds every field in wire order, pseudo-headers included.
	Header []fields.Field
	// Priority is the HEADERS frame's priority, nil without the PRIORITY flag.
	Priority  *Priority
	EndStream bool
	// Trailer is true when the stream already had a header block.
	Trailer bool
	// HeaderBlock is the raw HPACK block (fragments joined, padding and
	// priority fields removed), for byte comparison.
	HeaderBlock []byte
}

// HTTP2 is what a client sent on an HTTP/2 connection, in order. It holds
// no reference to internal state; it is safe for concurrent reads.
type HTTP2 struct {
	// Settings are the parameters of the first non-ACK SETTINGS frame, in order.
	Settings []Setting
	// ConnWindowUpdate is the increment of the first WINDOW_UPDATE on
	// stream 0 before the first HEADERS frame; 0 if there was none.
	ConnWindowUpdate uint32
	// Priorities are the PRIORITY frames sent before the first HEADERS frame.
	Priorities []PriorityFrame
	// Frames lists every complete frame in order.
	Frames []Frame
	// Requests lists every header block in order.
	Requests []HTTP2Request
	// Consumed is the number of input bytes parsed: the preface and every
	// complete frame. Bytes after it belong to an incomplete frame.
	Consumed int
}

// ParseHTTP2 parses a client's HTTP/2 byte stream: the connection preface,
// then frames in order. A truncated last frame is not an error: ParseHTTP2
// returns what is complete, and Consumed tells where the incomplete frame
// starts, so a caller can parse a growing prefix. Header blocks are
// decoded with one HPACK decoder per call, as the server would. Frame Raw
// and HeaderBlock slices alias clientBytes. It never panics; it returns a
// *ParseError (ErrTruncated only for an incomplete preface, ErrMalformed
// otherwise) together with what it parsed before the problem.
func ParseHTTP2(clientBytes []byte) (*HTTP2, error) {
	const p = "h2"
	h := &HTTP2{}
	n := min(len(clientBytes), len(http2ClientPreface))
	if string(clientBytes[:n]) != http2ClientPreface[:n] {
		return h, malformed(p, "connection preface", 0)
	}
	if n < len(http2ClientPreface) {
		return h, truncated(p, "connection preface", len(clientBytes))
	}
	pos := len(http2ClientPreface)
	h.Consumed = pos

	// The client's encoder table is at most what the server allowed; a
	// larger table here decodes the same indices, and accepting any size
	// update keeps an observer from rejecting what the real server accepted.
	dec := hpack.NewDecoder(65536, nil)
	dec.SetAllowedMaxDynamicTableSize(1 << 24)
	var (
		sawHeaders   bool
		sawSettings  bool
		open         *HTTP2Request // header block awaiting CONTINUATION
		block        []byte        // its fragments, when there is more than one
		streamBlocks = map[uint32]bool{}
	)
	finish := func(off int) error {
		if block != nil {
			open.HeaderBlock = block
		}
		hf, err := dec.DecodeFull(open.HeaderBlock)
		if err != nil {
			return malformed(p, "hpack header block", off)
		}
		open.Header = make([]fields.Field, 0, len(hf))
		for _, f := range hf {
			open.Header = append(open.Header, fields.Field{Name: f.Name, Value: f.Value})
			if f.IsPseudo() {
				open.PseudoOrder = append(open.PseudoOrder, f.Name)
			}
		}
		open.Trailer = streamBlocks[open.StreamID]
		streamBlocks[open.StreamID] = true
		h.Requests = append(h.Requests, *open)
		open, block = nil, nil
		return nil
	}

	for len(clientBytes)-pos >= http2FrameHeaderLen {
		hdr := clientBytes[pos : pos+http2FrameHeaderLen]
		length := int(hdr[0])<<16 | int(hdr[1])<<8 | int(hdr[2])
		typ := FrameType(hdr[3])
		flags := hdr[4]
		sid := (uint32(hdr[5])<<24 | uint32(hdr[6])<<16 | uint32(hdr[7])<<8 | uint32(hdr[8])) & 0x7fffffff
		if len(clientBytes)-pos-http2FrameHeaderLen < length {
			break // incomplete last frame: not an error
		}
		off := pos
		raw := clientBytes[pos : pos+http2FrameHeaderLen+length : pos+http2FrameHeaderLen+length]
		payload := raw[http2FrameHeaderLen:]
		pos += len(raw)

		if open != nil && (typ != FrameContinuation || sid != open.StreamID) {
			return h, malformed(p, "frame interleaved in a header block", off)
		}
		switch typ {
		case FrameSettings:
			if sid != 0 || length%6 != 0 || flags&flagAck != 0 && length != 0 {
				return h, malformed(p, "SETTINGS frame", off)
			}
			if flags&flagAck == 0 && !sawSettings {
				sawSettings = true
				h.Settings = make([]Setting, 0, length/6)
				for i := 0; i < length; i += 6 {
					h.Settings = append(h.Settings, Setting{
						ID:    uint16(payload[i])<<8 | uint16(payload[i+1]),
						Value: uint32(payload[i+2])<<24 | uint32(payload[i+3])<<16 | uint32(payload[i+4])<<8 | uint32(payload[i+5]),
					})
				}
			}
		case FrameWindowUpdate:
			if length != 4 {
				return h, malformed(p, "WINDOW_UPDATE frame", off)
			}
			inc := (uint32(payload[0])<<24 | uint32(payload[1])<<16 | uint32(payload[2])<<8 | uint32(payload[3])) & 0x7fffffff
			if sid == 0 && !sawHeaders && h.ConnWindowUpdate == 0 {
				h.ConnWindowUpdate = inc
			}
		case FramePriority:
			if length != 5 || sid == 0 {
				return h, malformed(p, "PRIORITY frame", off)
			}
			if !sawHeaders {
				h.Priorities = append(h.Priorities, PriorityFrame{StreamID: sid, Priority: readPriority(payload)})
			}
		case FrameRSTStream:
			if length != 4 || sid == 0 {
				return h, malformed(p, "RST_STREAM frame", off)
			}
		case FramePing:
			if length != 8 || sid != 0 {
				return h, malformed(p, "PING frame", off)
			}
		case FrameGoAway:
			if length < 8 || sid != 0 {
				return h, malformed(p, "GOAWAY frame", off)
			}
		case FrameData:
			if sid == 0 {
				return h, malformed(p, "DATA frame", off)
			}
			if _, ok := unpad(payload, flags); !ok {
				return h, malformed(p, "DATA frame padding", off)
			}
		case FrameHeaders:
			if sid == 0 {
				return h, malformed(p, "HEADERS frame", off)
			}
			frag, ok := unpad(payload, flags)
			if !ok {
				return h, malformed(p, "HEADERS frame padding", off)
			}
			req := &HTTP2Request{StreamID: sid, EndStream: flags&flagEndStream != 0}
			if flags&flagPriority != 0 {
				if len(frag) < 5 {
					return h, malformed(p, "HEADERS frame priority", off)
				}
				pr := readPriority(frag)
				req.Priority = &pr
				frag = frag[5:]
			}
			sawHeaders = true
			req.HeaderBlock = frag
			open = req
			if flags&flagEndHeaders != 0 {
				if err := finish(off); err != nil {
					return h, err
				}
			}
		case FrameContinuation:
			if open == nil {
				return h, malformed(p, "CONTINUATION without HEADERS", off)
			}
			if block == nil {
				block = append(make([]byte, 0, len(open.HeaderBlock)+len(payload)), open.HeaderBlock...)
			}
			block = append(block, payload...)
			if flags&flagEndHeaders != 0 {
				if err := finish(off); err != nil {
					return h, err
				}
			}
		}
		h.Frames = append(h.Frames, Frame{Type: typ, Flags: flags, StreamID: sid, Length: length, Raw: raw})
		h.Consumed = pos
	}
	return h, nil
}

// unpad strips the padding of a DATA or HEADERS payload with the PADDED
// flag.
func unpad(payload []byte, flags uint8) ([]byte, bool) {
	if flags&flagPadded == 0 {
		return payload, true
	}
	if len(payload) < 1 {
		return nil, false
	}
	pad := int(payload[0])
	if pad > len(payload)-1 {
		return nil, false
	}
	return payload[1 : len(payload)-pad], true
}

// readPriority decodes the five priority bytes (E bit, stream dependency,
// weight). b must hold at least five bytes.
func readPriority(b []byte) Priority {
	dep := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
	return Priority{Exclusive: dep>>31 == 1, StreamDep: dep & 0x7fffffff, Weight: int(b[4]) + 1}
}

// Method returns the :method pseudo-header, or "".
func (r *HTTP2Request) Method() string { return r.pseudo(":method") }

// Path returns the :path pseudo-header, or "".
func (r *HTTP2Request) Path() string { return r.pseudo(":path") }

// Authority returns the :authority pseudo-header, or "".
func (r *HTTP2Request) Authority() string { return r.pseudo(":authority") }

func (r *HTTP2Request) pseudo(name string) string {
	for _, f := range r.Header {
		if f.Name == name {
			return f.Value
		}
	}
	return ""
}

// HeaderOrder returns the names of the regular (non-pseudo) fields in wire
// order.
func (r *HTTP2Request) HeaderOrder() []string {
	out := make([]string, 0, len(r.Header))
	for _, f := range r.Header {
		if len(f.Name) == 0 || f.Name[0] != ':' {
			out = append(out, f.Name)
		}
	}
	return out
}

// HTTPRequest returns the request as JA4H sees it: method from :method,
// Proto "HTTP/2", Target from :path and the regular fields in order.
func (r *HTTP2Request) HTTPRequest() *HTTPRequest {
	hr := &HTTPRequest{Method: r.Method(), Proto: "HTTP/2", Target: r.Path()}
	for _, f := range r.Header {
		if len(f.Name) == 0 || f.Name[0] != ':' {
			hr.Header = append(hr.Header, f)
		}
	}
	return hr
}
