package ws

import (
	"encoding/binary"
)

// Header is a frame header as it goes on the wire.
type Header struct {
	Fin        bool
	RSV        uint8 // the three reserved bits: RSV1 is 4, RSV2 2, RSV3 1
	Op         Opcode
	Masked     bool
	Mask       [4]byte
	PayloadLen int64
}

// maxHeader is the longest frame header: 2 bytes, 8 of length, 4 of mask.
const maxHeader = 14

// ParseHeader parses the frame header at the start of b. It returns the
// header and its length, 0 when b holds less than a whole header, or a
// *CloseError for a length with its top bit set. It checks nothing else:
// Conn's reader judges bits and opcodes against what was negotiated.
func ParseHeader(b []byte) (Header, int, error) {
	if len(b) < 2 {
		return Header{}, 0, nil
	}
	h := Header{Fin: b[0]&0x80 != 0, RSV: b[0] >> 4 & 7, Op: Opcode(b[0] & 0xf), Masked: b[1]&0x80 != 0}
	n := 2
	switch l := b[1] & 0x7f; l {
	case 126:
		if len(b) < 4 {
			return Header{}, 0, nil
		}
		h.PayloadLen = int64(binary.BigEndian.Uint16(b[2:]))
		n = 4
	case 127:
		if len(b) < 10 {
			return Header{}, 0, nil
		}
		v := binary.BigEndian.Uint64(b[2:])
		if v>>63 != 0 {
			return Header{}, 0, fail(StatusProtocolError, "payload length with the top bit set")
		}
		h.PayloadLen = int64(v)
		n = 10
	default:
		h.PayloadLen = int64(l)
	}
	if h.Masked {
		if len(b) < n+4 {
			return Header{}, 0, nil
		}
		copy(h.Mask[:], b[n:])
		n += 4
	}
	return h, n, nil
}

// AppendHeader appends h to dst in the shortest length form.
func AppendHeader(dst []byte, h Header) []byte {
	b0 := byte(h.Op) | h.RSV<<4
	if h.Fin {
		b0 |= 0x80
	}
	var m byte
	if h.Masked {
		m = 0x80
	}
	switch l := h.PayloadLen; {
	case l <= 125:
		dst = append(dst, b0, m|byte(l))
	case l <= 0xffff:
		dst = append(dst, b0, m|126, byte(l>>8), byte(l))
	default:
		dst = append(dst, b0, m|127)
		dst = binary.BigEndian.AppendUint64(dst, uint64(l))
	}
	if h.Masked {
		dst = append(dst, h.Mask[:]...)
	}
	return dst
}

// maskBytes XORs b with key, starting at key offset pos, and returns the
// offset after b.
func maskBytes(key [4]byte, pos int, b []byte) int {
	if len(b) >= 16 {
		k := [4]byte{key[pos&3], key[(pos+1)&3], key[(pos+2)&3], key[(pos+3)&3]}
		k32 := binary.LittleEndian.Uint32(k[:])
		k64 := uint64(k32) | uint64(k32)<<32
		for len(b) >= 8 {
			binary.LittleEndian.PutUint64(b, binary.LittleEndian.Uint64(b)^k64)
			b = b[8:]
		}
		// pos advanced by a multiple of 8: the key offset is unchanged.
	}
	for i := range b {
		b[i] ^= key[pos&3]
		pos++
	}
	return pos & 3
}

// Mask XORs b with key from key offset pos (0 to 3) and returns the offset
// after b: masking and unmasking are the same operation. Servers and tests
// use it; Conn masks its own frames.
func Mask(key [4]byte, pos int, b []byte) int { return maskBytes(key, pos&3, b) }
