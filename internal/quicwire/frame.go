package quicwire

import "strconv"

// FrameType is a QUIC frame type (RFC 9000 §19).
type FrameType uint64

// Frame types of RFC 9000 §19, RFC 9221 (DATAGRAM) and the ACK frequency
// extension's two.
const (
	FramePadding            FrameType = 0x00
	FramePing               FrameType = 0x01
	FrameAck                FrameType = 0x02
	FrameAckECN             FrameType = 0x03
	FrameResetStream        FrameType = 0x04
	FrameStopSending        FrameType = 0x05
	FrameCrypto             FrameType = 0x06
	FrameNewToken           FrameType = 0x07
	FrameStream             FrameType = 0x08 // 0x08 to 0x0f: the low bits are OFF, LEN, FIN
	FrameMaxData            FrameType = 0x10
	FrameMaxStreamData      FrameType = 0x11
	FrameMaxStreamsBidi     FrameType = 0x12
	FrameMaxStreamsUni      FrameType = 0x13
	FrameDataBlocked        FrameType = 0x14
	FrameStreamDataBlocked  FrameType = 0x15
	FrameStreamsBlockedBidi FrameType = 0x16
	FrameStreamsBlockedUni  FrameType = 0x17
	FrameNewConnectionID    FrameType = 0x18
	FrameRetireConnectionID FrameType = 0x19
	FramePathChallenge      FrameType = 0x1a
	FramePathResponse       FrameType = 0x1b
	FrameConnectionClose    FrameType = 0x1c
	FrameConnectionCloseApp FrameType = 0x1d
	FrameHandshakeDone      FrameType = 0x1e
	FrameImmediateAck       FrameType = 0x1f
	FrameDatagram           FrameType = 0x30
	FrameDatagramLen        FrameType = 0x31
	FrameAckFrequency       FrameType = 0xaf
)

// The bits of a STREAM frame's type.
const (
	StreamFin = 0x01
	StreamLen = 0x02
	StreamOff = 0x04
)

var frameNames = map[FrameType]string{
	FramePadding: "PADDING", FramePing: "PING", FrameAck: "ACK", FrameAckECN: "ACK_ECN",
	FrameResetStream: "RESET_STREAM", FrameStopSending: "STOP_SENDING", FrameCrypto: "CRYPTO",
	FrameNewToken: "NEW_TOKEN", FrameMaxData: "MAX_DATA", FrameMaxStreamData: "MAX_STREAM_DATA",
	FrameMaxStreamsBidi: "MAX_STREAMS", FrameMaxStreamsUni: "MAX_STREAMS_UNI",
	FrameDataBlocked: "DATA_BLOCKED", FrameStreamDataBlocked: "STREAM_DATA_BLOCKED",
	FrameStreamsBlockedBidi: "STREAMS_BLOCKED", FrameStreamsBlockedUni: "STREAMS_BLOCKED_UNI",
	FrameNewConnectionID: "NEW_CONNECTION_ID", FrameRetireConnectionID: "RETIRE_CONNECTION_ID",
	FramePathChallenge: "PATH_CHALLENGE", FramePathResponse: "PATH_RESPONSE",
	FrameConnectionClose: "CONNECTION_CLOSE", FrameConnectionCloseApp: "CONNECTION_CLOSE_APP",
	FrameHandshakeDone: "HANDSHAKE_DONE", FrameImmediateAck: "IMMEDIATE_ACK",
	FrameDatagram: "DATAGRAM", FrameDatagramLen: "DATAGRAM", FrameAckFrequency: "ACK_FREQUENCY",
}

// String returns the RFC's name of the frame type.
func (t FrameType) String() string {
	if t.IsStream() {
		return "STREAM"
	}
	if n, ok := frameNames[t]; ok {
		return n
	}
	return "FrameType(0x" + strconv.FormatUint(uint64(t), 16) + ")"
}

// IsStream reports whether t is one of the eight STREAM frame types.
func (t FrameType) IsStream() bool { return t >= 0x08 && t <= 0x0f }

// AllowedIn reports whether RFC 9000 §12.4 allows frames of type t in
// packets of type p: Initial and Handshake packets carry only PADDING,
// PING, ACK, CRYPTO and the transport CONNECTION_CLOSE.
func (t FrameType) AllowedIn(p PacketType) bool {
	switch p {
	case PacketInitial, PacketHandshake:
		switch t {
		case FramePadding, FramePing, FrameAck, FrameAckECN, FrameCrypto, FrameConnectionClose:
			return true
		}
		return false
	}
	return true
}

// AckEliciting reports whether a frame of type t makes its packet
// ack-eliciting (all but ACK, PADDING and CONNECTION_CLOSE, RFC 9002 §2).
func (t FrameType) AckEliciting() bool {
	switch t {
	case FrameAck, FrameAckECN, FramePadding, FrameConnectionClose, FrameConnectionCloseApp:
		return false
	}
	return true
}

// Frame is one parsed frame. Only the fields of its Type are set; byte
// slices alias the payload.
type Frame struct {
	Type FrameType
	// Size is the frame's encoded size; for PADDING, a run of consecutive
	// padding bytes is one Frame whose Size is the run's length.
	Size int
	// StreamID is a STREAM, RESET_STREAM, STOP_SENDING, MAX_STREAM_DATA
	// or STREAM_DATA_BLOCKED frame's.
	StreamID uint64
	// Offset and Data are a CRYPTO or STREAM frame's (Fin a STREAM
	// frame's). Data is also NEW_TOKEN's token, PATH_CHALLENGE's and
	// PATH_RESPONSE's 8 bytes and a DATAGRAM's payload.
	Offset uint64
	Data   []byte
	Fin    bool
	// LargestAcked, AckDelay, AckRanges (the number of ranges after the
	// first) and FirstAckRange are an ACK frame's; walk all its ranges
	// with AckRangeIter. ECN counts are ECT0, ECT1, ECNCE.
	LargestAcked, AckDelay, AckRanges, FirstAckRange uint64
	ECT0, ECT1, ECNCE                                uint64
	rangeData                                        []byte
	// Maximum is a MAX_DATA, MAX_STREAM_DATA, MAX_STREAMS, DATA_BLOCKED,
	// STREAM_DATA_BLOCKED or STREAMS_BLOCKED frame's value.
	Maximum uint64
	// ErrorCode is a RESET_STREAM, STOP_SENDING or CONNECTION_CLOSE
	// frame's; FinalSize a RESET_STREAM's.
	ErrorCode uint64
	FinalSize uint64
	// FrameType and Reason are a CONNECTION_CLOSE frame's (FrameType
	// only for the transport kind, 0x1c).
	FrameType FrameType
	Reason    []byte
	// Seq, RetirePriorTo, ConnID and ResetToken are a NEW_CONNECTION_ID
	// frame's (Seq also RETIRE_CONNECTION_ID's and ACK_FREQUENCY's).
	Seq, RetirePriorTo uint64
	ConnID             []byte
	ResetToken         []byte
}

// AckRangeIter walks an ACK frame's ranges, largest first.
type AckRangeIter struct {
	b      []byte
	lo     uint64
	left   uint64
	first  bool
	hi0    uint64
	first0 uint64
}

// AckRangeIter returns an iterator over f's acknowledged ranges.
func (f *Frame) AckRangeIter() AckRangeIter {
	return AckRangeIter{b: f.rangeData, left: f.AckRanges, first: true, hi0: f.LargestAcked, first0: f.FirstAckRange}
}

// Next returns the next range [lo, hi], or ok false after the last. The
// frame's parser checked every range, so Next never underflows.
func (it *AckRangeIter) Next() (lo, hi uint64, ok bool) {
	if it.first {
		it.first = false
		it.lo = it.hi0 - it.first0
		return it.lo, it.hi0, true
	}
	if it.left == 0 {
		return 0, 0, false
	}
	it.left--
	gap, n := Varint(it.b)
	it.b = it.b[n:]
	l, n := Varint(it.b)
	it.b = it.b[n:]
	hi = it.lo - gap - 2
	it.lo = hi - l
	return it.lo, hi, true
}

// ParseFrames calls emit for each frame of payload, a decrypted Initial
// or Handshake packet payload, in order. It stops at the first frame that
// is malformed or not allowed there.
func ParseFrames(payload []byte, emit func(Frame)) error {
	off := 0
	for off < len(payload) {
		var f Frame
		var n int
		var err error
		if t, w := Varint(payload[off:]); w > 0 && !FrameType(t).AllowedIn(PacketInitial) {
			err = &Error{What: FrameType(t).String(), Offset: 0, Err: ErrFrameNotAllowed}
		} else {
			f, n, err = ParseFrame(payload[off:])
		}
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

// ParseFrame reads the frame at the start of b, of any type this package
// knows, and returns it with its size. A run of PADDING bytes is one
// frame. An unknown type is ErrFrameNotAllowed (FRAME_ENCODING_ERROR,
// RFC 9000 §12.4); which packet types may carry it is AllowedIn's to say.
func ParseFrame(b []byte) (Frame, int, error) {
	if len(b) > 0 && b[0] == 0 {
		n := 1
		for n < len(b) && b[n] == 0 {
			n++
		}
		return Frame{Type: FramePadding, Size: n}, n, nil
	}
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
	switch {
	case f.Type == FramePing, f.Type == FrameHandshakeDone, f.Type == FrameImmediateAck:
	case f.Type == FrameAck, f.Type == FrameAckECN:
		f.LargestAcked = v("largest acknowledged")
		f.AckDelay = v("ack delay")
		f.AckRanges = v("range count")
		f.FirstAckRange = v("first range")
		if bad == nil && f.FirstAckRange > f.LargestAcked {
			return f, 0, malformed("ACK first range", off)
		}
		// Each range is a gap and a length: at least two bytes, so a
		// count beyond the input is truncation, checked before looping.
		if bad == nil && f.AckRanges > uint64(len(b)-off)/2 {
			return f, 0, truncated("ACK ranges", off)
		}
		start := off
		lo := f.LargestAcked - f.FirstAckRange
		for i := uint64(0); i < f.AckRanges && bad == nil; i++ {
			gap := v("gap")
			l := v("range length")
			if bad == nil && (lo < gap+2 || lo-gap-2 < l) {
				return f, 0, malformed("ACK range", off)
			}
			lo = lo - gap - 2 - l
		}
		f.rangeData = b[start:off]
		if f.Type == FrameAckECN {
			f.ECT0 = v("ect0")
			f.ECT1 = v("ect1")
			f.ECNCE = v("ecn-ce")
		}
	case f.Type == FrameResetStream:
		f.StreamID = v("stream id")
		f.ErrorCode = v("error code")
		f.FinalSize = v("final size")
	case f.Type == FrameStopSending:
		f.StreamID = v("stream id")
		f.ErrorCode = v("error code")
	case f.Type == FrameCrypto:
		f.Offset = v("offset")
		f.Data = bytes(v("length"), "data")
		if bad == nil && f.Offset+uint64(len(f.Data)) > MaxVarint {
			return f, 0, malformed("CRYPTO offset", off)
		}
	case f.Type == FrameNewToken:
		f.Data = bytes(v("length"), "token")
		if bad == nil && len(f.Data) == 0 {
			return f, 0, malformed("NEW_TOKEN empty token", off)
		}
	case f.Type.IsStream():
		f.StreamID = v("stream id")
		if t&StreamOff != 0 {
			f.Offset = v("offset")
		}
		if t&StreamLen != 0 {
			f.Data = bytes(v("length"), "data")
		} else if bad == nil {
			f.Data = b[off:]
			off = len(b)
		}
		f.Fin = t&StreamFin != 0
		if bad == nil && f.Offset+uint64(len(f.Data)) > MaxVarint {
			return f, 0, malformed("STREAM offset", off)
		}
	case f.Type == FrameMaxData, f.Type == FrameDataBlocked:
		f.Maximum = v("maximum")
	case f.Type == FrameMaxStreamData, f.Type == FrameStreamDataBlocked:
		f.StreamID = v("stream id")
		f.Maximum = v("maximum")
	case f.Type >= FrameMaxStreamsBidi && f.Type <= FrameMaxStreamsUni,
		f.Type >= FrameStreamsBlockedBidi && f.Type <= FrameStreamsBlockedUni:
		f.Maximum = v("maximum")
		if bad == nil && f.Maximum > 1<<60 {
			return f, 0, malformed(f.Type.String()+" beyond 2^60", off)
		}
	case f.Type == FrameNewConnectionID:
		f.Seq = v("sequence number")
		f.RetirePriorTo = v("retire prior to")
		if bad == nil && off >= len(b) {
			return f, 0, truncated("NEW_CONNECTION_ID length", off)
		}
		if bad == nil {
			n := uint64(b[off])
			off++
			if n < 1 || n > MaxConnIDLen {
				return f, 0, malformed("NEW_CONNECTION_ID length", off-1)
			}
			f.ConnID = bytes(n, "connection id")
			f.ResetToken = bytes(16, "stateless reset token")
			if bad == nil && f.RetirePriorTo > f.Seq {
				return f, 0, malformed("NEW_CONNECTION_ID retire prior to", off)
			}
		}
	case f.Type == FrameRetireConnectionID:
		f.Seq = v("sequence number")
	case f.Type == FramePathChallenge, f.Type == FramePathResponse:
		f.Data = bytes(8, "data")
	case f.Type == FrameConnectionClose, f.Type == FrameConnectionCloseApp:
		f.ErrorCode = v("error code")
		if f.Type == FrameConnectionClose {
			f.FrameType = FrameType(v("frame type"))
		}
		f.Reason = bytes(v("reason length"), "reason")
	case f.Type == FrameDatagram:
		f.Data = b[off:]
		off = len(b)
	case f.Type == FrameDatagramLen:
		f.Data = bytes(v("length"), "data")
	case f.Type == FrameAckFrequency:
		f.Seq = v("sequence number")
		v("ack-eliciting threshold")
		f.Maximum = v("request max ack delay")
		v("reordering threshold")
	default:
		return f, 0, &Error{What: f.Type.String(), Offset: 0, Err: ErrFrameNotAllowed}
	}
	if bad != nil {
		return f, 0, bad
	}
	f.Size = off
	return f, off, nil
}
