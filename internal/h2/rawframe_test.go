package h2

import (
	"encoding/binary"
	"fmt"
	"io"
)

// This file is the tests' own frame codec, written independently of
// golang.org/x/net/http2, so that scripted peers can read the client's exact
// bytes and write frames the Framer refuses to (malformed, oversized).

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
		return h, nil, ConnectionError{Code: ErrCodeFrameSize, Reason: fmt.Sprintf("%v frame of %d bytes exceeds %d", h.Type, h.Length, fr.max)}
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

// Frame flags.
const (
	FlagEndStream  = 0x1
	FlagAck        = 0x1
	FlagEndHeaders = 0x4
	FlagPadded     = 0x8
	FlagPriority   = 0x20
)

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
