package quicwire

import "strconv"

// FrameType is a QUIC frame type (RFC 9000 §19).
type FrameType uint64

// The frame types an Initial or Handshake packet may carry (RFC 9000
// §12.4), the only ones this package parses.
const (
	FramePadding         FrameType = 0x00
	FramePing            FrameType = 0x01
	FrameAck             FrameType = 0x02
	FrameAckECN          FrameType = 0x03
	FrameCrypto          FrameType = 0x06
	FrameConnectionClose FrameType = 0x1c
)

// String returns the RFC's name of the frame type.
func (t FrameType) String() string {
	switch t {
	case FramePadding:
		return "PADDING"
	case FramePing:
		return "PING"
	case FrameAck:
		return "ACK"
	case FrameAckECN:
		return "ACK_ECN"
	case FrameCrypto:
		return "CRYPTO"
	case FrameConnectionClose:
		return "CONNECTION_CLOSE"
	}
	return "FrameType(0x" + strconv.FormatUint(uint64(t), 16) + ")"
}

// Frame is one frame of a decrypted Initial or Handshake payload. Only the
// fields of its Type are set; Data aliases the payload.
type Frame struct {
	Type FrameType
	// Size is the frame's encoded size; for PADDING, a run of consecutive
	// padding bytes is one Frame whose Size is the run's length.
	Size int
	// Offset and Data are a CRYPTO frame's.
	Offset uint64
	Data   []byte
	// LargestAcked, AckDelay, AckRanges (the number of ranges after the
	// first) and FirstAckRange are an ACK frame's.
	LargestAcked, AckDelay, AckRanges, FirstAckRange uint64
	// ErrorCode and Reason are a CONNECTION_CLOSE frame's.
	ErrorCode uint64
	Reason    []byte
}

// ParseFrames calls emit for each frame of payload, a decrypted Initial
// or Handshake packet payload, in order. It stops at the first frame that
// is malformed or not allowed there.
func ParseFrames(payload []byte, emit func(Frame)) error {
	off := 0
	for off < len(payload) {
		if payload[off] == 0 {
			n := off
			for n < len(payload) && payload[n] == 0 {
				n++
			}
			emit(Frame{Type: FramePadding, Size: n - off})
			off = n
			continue
		}
		f, n, err := parseFrame(payload[off:])
		if err != nil {
			if e, ok := err.(*Error); ok {
				e.Offset += off
			}
			return err
		}
		emit(f)
		off += n
	}
	return nil
}

// parseFrame reads one non-padding frame at the start of b.
func parseFrame(b []byte) (Frame, int, error) {
	t, off := Varint(b)
	if off == 0 {
		return Frame{}, 0, truncated("frame type", 0)
	}
	f := Frame{Type: FrameType(t)}
	// v reads the next varint of the frame.
	var bad error
	v := func(what string) uint64 {
		if bad != nil {
			return 0
		}
		x, n := Varint(b[off:])
		if n == 0 {
			bad = truncated(f.Type.String()+" "+what, off)
			return 0
		}
		off += n
		return x
	}
	// bytes reads n bytes of the frame.
	bytes := func(n uint64, what string) []byte {
		if bad != nil {
			return nil
		}
		if n > uint64(len(b)-off) {
			bad = truncated(f.Type.String()+" "+what, off)
			return nil
		}
		s := b[off : off+int(n)]
		off += int(n)
		return s
	}
	switch f.Type {
	case FramePing:
	case FrameAck, FrameAckECN:
		f.LargestAcked = v("largest acknowledged")
		f.AckDelay = v("ack delay")
		f.AckRanges = v("range count")
		f.FirstAckRange = v("first range")
		if f.FirstAckRange > f.LargestAcked {
			return f, 0, malformed("ACK first range", off)
		}
		// Each range is a gap and a length: at least two bytes, so a
		// count beyond the input is truncation, checked before looping.
		if bad == nil && f.AckRanges > uint64(len(b)-off)/2 {
			return f, 0, truncated("ACK ranges", off)
		}
		for i := uint64(0); i < f.AckRanges && bad == nil; i++ {
			v("gap")
			v("range length")
		}
		if f.Type == FrameAckECN {
			v("ect0")
			v("ect1")
			v("ecn-ce")
		}
	case FrameCrypto:
		f.Offset = v("offset")
		f.Data = bytes(v("length"), "data")
		if bad == nil && f.Offset+uint64(len(f.Data)) > MaxVarint {
			return f, 0, malformed("CRYPTO offset", off)
		}
	case FrameConnectionClose:
		f.ErrorCode = v("error code")
		v("frame type")
		f.Reason = bytes(v("reason length"), "reason")
	default:
		return f, 0, &Error{What: f.Type.String(), Offset: 0, Err: ErrFrameNotAllowed}
	}
	if bad != nil {
		return f, 0, bad
	}
	f.Size = off
	return f, off, nil
}
