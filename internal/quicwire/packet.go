package quicwire

import "strconv"

// Version1 is QUIC version 1 (RFC 9000).
const Version1 = 0x00000001

// MaxConnIDLen is the longest connection ID QUIC version 1 allows.
const MaxConnIDLen = 20

// PacketType is the kind of a QUIC packet, from its first byte.
type PacketType uint8

// Packet types. The long-header ones are QUIC version 1's.
const (
	PacketInitial PacketType = iota
	Packet0RTT
	PacketHandshake
	PacketRetry
	PacketVersionNegotiation
	PacketShort // a short-header (1-RTT) packet
	PacketOtherVersion
)

var packetTypeNames = [...]string{"Initial", "0-RTT", "Handshake", "Retry", "VersionNegotiation", "1-RTT", "OtherVersion"}

// String returns the RFC's name of the packet type.
func (t PacketType) String() string {
	if int(t) < len(packetTypeNames) {
		return packetTypeNames[t]
	}
	return "PacketType(" + strconv.Itoa(int(t)) + ")"
}

// Header is a parsed long header (RFC 9000 §17.2), or the little a
// short-header packet shows without its connection ID length. Its byte
// slices alias the input.
type Header struct {
	Type      PacketType
	FirstByte byte // as received: still under header protection
	Version   uint32
	DCID      []byte
	SCID      []byte
	// Token is an Initial packet's token (empty when none was sent).
	Token []byte
	// Length is the Length field: the packet number and payload bytes.
	Length uint64
	// LengthSize is how many bytes the Length field took (browsers may
	// use the 2-byte form for small values).
	LengthSize int
	// PNOffset is the offset of the packet number in the packet.
	PNOffset int
	// Size is the packet's size in the datagram: the offset of the next
	// coalesced packet. For packets without a Length field (1-RTT,
	// Retry, Version Negotiation) it is the rest of the datagram.
	Size int
}

// ParseHeader reads the header of the packet at the start of b, a
// datagram or its remainder after earlier coalesced packets. For a
// version other than 1 it returns the header as far as the connection IDs
// with ErrVersion (Type PacketOtherVersion).
func ParseHeader(b []byte) (Header, error) {
	var h Header
	if len(b) == 0 {
		return h, truncated("packet", 0)
	}
	h.FirstByte = b[0]
	if b[0]&0x80 == 0 {
		h.Type, h.Size = PacketShort, len(b)
		return h, nil
	}
	if len(b) < 7 {
		return h, truncated("long header", 0)
	}
	h.Version = uint32(b[1])<<24 | uint32(b[2])<<16 | uint32(b[3])<<8 | uint32(b[4])
	off := 5
	var ok bool
	if h.DCID, off, ok = connID(b, off); !ok {
		return h, truncated("destination connection id", off)
	}
	if h.SCID, off, ok = connID(b, off); !ok {
		return h, truncated("source connection id", off)
	}
	switch h.Version {
	case 0:
		h.Type, h.Size = PacketVersionNegotiation, len(b)
		return h, nil
	case Version1:
	default:
		h.Type, h.Size = PacketOtherVersion, len(b)
		return h, &Error{What: "version " + strconv.FormatUint(uint64(h.Version), 16), Offset: 1, Err: ErrVersion}
	}
	if len(h.DCID) > MaxConnIDLen || len(h.SCID) > MaxConnIDLen {
		return h, malformed("connection id length", 5)
	}
	h.Type = PacketType(b[0] >> 4 & 3)
	if h.Type == PacketRetry {
		h.Size = len(b)
		return h, nil
	}
	if h.Type == PacketInitial {
		n, w := Varint(b[off:])
		if w == 0 {
			return h, truncated("token length", off)
		}
		off += w
		if n > uint64(len(b)-off) {
			return h, truncated("token", off)
		}
		h.Token = b[off : off+int(n)]
		off += int(n)
	}
	l, w := Varint(b[off:])
	if w == 0 {
		return h, truncated("length", off)
	}
	h.Length, h.LengthSize = l, w
	off += w
	h.PNOffset = off
	if l > uint64(len(b)-off) {
		return h, truncated("packet payload", off)
	}
	h.Size = off + int(l)
	return h, nil
}

// connID reads a length-prefixed connection ID at b[off:].
func connID(b []byte, off int) ([]byte, int, bool) {
	if off >= len(b) {
		return nil, off, false
	}
	n := int(b[off])
	off++
	if n > len(b)-off {
		return nil, off - 1, false
	}
	return b[off : off+n], off + n, true
}
