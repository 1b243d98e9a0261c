package quicwire

// Appenders of the frames a client sends. Each appends the whole frame to
// b and returns it; values must not exceed MaxVarint (the caller's
// invariant).

// AppendAckFrame appends an ACK frame whose ranges, largest first, are
// given as inclusive [lo, hi] pairs in ranges (at least one), with the
// ack delay already scaled by the sender's exponent.
func AppendAckFrame(b []byte, ranges [][2]uint64, delay uint64) []byte {
	b = append(b, byte(FrameAck))
	b = AppendVarint(b, ranges[0][1])
	b = AppendVarint(b, delay)
	b = AppendVarint(b, uint64(len(ranges)-1))
	b = AppendVarint(b, ranges[0][1]-ranges[0][0])
	lo := ranges[0][0]
	for _, r := range ranges[1:] {
		b = AppendVarint(b, lo-r[1]-2)
		b = AppendVarint(b, r[1]-r[0])
		lo = r[0]
	}
	return b
}

// AppendCryptoFrame appends a CRYPTO frame carrying data at off.
func AppendCryptoFrame(b []byte, off uint64, data []byte) []byte {
	b = append(b, byte(FrameCrypto))
	b = AppendVarint(b, off)
	b = AppendVarint(b, uint64(len(data)))
	return append(b, data...)
}

// StreamFrameOverhead is the most a STREAM frame's header takes for a
// stream id, offset and a length below 16384.
func StreamFrameOverhead(id, off uint64) int {
	n := 1 + VarintLen(id) + 2
	if off > 0 {
		n += VarintLen(off)
	}
	return n
}

// AppendStreamFrame appends a STREAM frame with an explicit length (in
// the 2-byte form, so len(data) must be below 16384).
func AppendStreamFrame(b []byte, id, off uint64, data []byte, fin bool) []byte {
	t := byte(FrameStream) | StreamLen
	if off > 0 {
		t |= StreamOff
	}
	if fin {
		t |= StreamFin
	}
	b = append(b, t)
	b = AppendVarint(b, id)
	if off > 0 {
		b = AppendVarint(b, off)
	}
	b = AppendVarintLen(b, uint64(len(data)), 2)
	return append(b, data...)
}

// AppendUintFrame appends a frame of type t with one varint field:
// MAX_DATA, MAX_STREAMS, DATA_BLOCKED, STREAMS_BLOCKED,
// RETIRE_CONNECTION_ID.
func AppendUintFrame(b []byte, t FrameType, v uint64) []byte {
	b = AppendVarint(b, uint64(t))
	return AppendVarint(b, v)
}

// AppendStreamUintFrame appends a frame of type t with a stream id and
// one more varint: MAX_STREAM_DATA, STREAM_DATA_BLOCKED, STOP_SENDING.
func AppendStreamUintFrame(b []byte, t FrameType, id, v uint64) []byte {
	b = AppendVarint(b, uint64(t))
	b = AppendVarint(b, id)
	return AppendVarint(b, v)
}

// AppendResetStreamFrame appends a RESET_STREAM frame.
func AppendResetStreamFrame(b []byte, id, code, finalSize uint64) []byte {
	b = append(b, byte(FrameResetStream))
	b = AppendVarint(b, id)
	b = AppendVarint(b, code)
	return AppendVarint(b, finalSize)
}

// AppendConnectionCloseFrame appends a CONNECTION_CLOSE frame: the
// application kind (0x1d) when app is set, else the transport kind with
// frameType.
func AppendConnectionCloseFrame(b []byte, app bool, code uint64, frameType FrameType, reason string) []byte {
	if app {
		b = append(b, byte(FrameConnectionCloseApp))
		b = AppendVarint(b, code)
	} else {
		b = append(b, byte(FrameConnectionClose))
		b = AppendVarint(b, code)
		b = AppendVarint(b, uint64(frameType))
	}
	b = AppendVarint(b, uint64(len(reason)))
	return append(b, reason...)
}

// AppendNewConnectionIDFrame appends a NEW_CONNECTION_ID frame (RFC 9000
// §19.15); id is 1 to 20 bytes.
func AppendNewConnectionIDFrame(b []byte, seq, retirePriorTo uint64, id []byte, token [16]byte) []byte {
	b = append(b, byte(FrameNewConnectionID))
	b = AppendVarint(b, seq)
	b = AppendVarint(b, retirePriorTo)
	b = append(b, byte(len(id)))
	b = append(b, id...)
	return append(b, token[:]...)
}

// AppendPathResponseFrame appends a PATH_RESPONSE echoing data (8 bytes).
func AppendPathResponseFrame(b []byte, data [8]byte) []byte {
	b = append(b, byte(FramePathResponse))
	return append(b, data[:]...)
}
