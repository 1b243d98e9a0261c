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
