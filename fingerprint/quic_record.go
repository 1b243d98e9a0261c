package fingerprint

import (
	"errors"
	"slices"
	"time"

	"github.com/guise-http/guise/internal/quicwire"
)

// TransportQUIC names a QUIC connection in [ConnRecord.Transport].
const TransportQUIC = "quic"

// ProtoH3 is HTTP/3's ALPN name, in [ConnRecord.Protocol].
const ProtoH3 = "h3"

// Bounds on what a QUIC connection's record keeps.
const (
	maxQUICDatagrams   = 32       // datagrams kept with their bytes
	maxQUICStreams     = 64       // streams kept
	maxQUICStreamBytes = 64 << 10 // bytes kept per stream
	maxCryptoBytes     = 64 << 10 // reassembled Initial CRYPTO bytes
)

// QUICRecord is what the client sent on one QUIC connection: its
// datagrams as received (only those carrying a long-header packet keep
// their bytes; a 1-RTT datagram keeps its size) and the decrypted data of
// the streams it opened. Everything else ([ConnRecord.QUICFlight],
// [ConnRecord.HTTP3]) is derived from these bytes.
type QUICRecord struct {
	Datagrams      []QUICDatagram // the first ones, in arrival order
	DatagramsTotal int            // every datagram the client sent
	Streams        []QUICStream   // in the order the server accepted them
	// QPACKMaxTableCapacity and QPACKBlockedStreams are the QPACK settings
	// the server advertised (Server.QPACKMaxTableCapacity); zero when it
	// allowed no dynamic table. Decoding the field sections needs them.
	QPACKMaxTableCapacity, QPACKBlockedStreams uint64
	// Used0RTT says the server accepted the client's 0-RTT data.
	Used0RTT bool
	// FirstResponse is when the server wrote its first response, since
	// the connection's start (ConnRecord.Start); 0 before it did (and
	// in recordings made before it was kept).
	FirstResponse time.Duration
}

// QUICDatagram is one UDP datagram from the client.
type QUICDatagram struct {
	Size int
	Data []byte // nil for a datagram of 1-RTT packets only
}

// QUICStream is the start of one stream the client opened.
type QUICStream struct {
	ID    uint64
	Data  []byte // the first bytes, at most maxQUICStreamBytes
	Total int64  // every byte received
	Fin   bool   // the client ended the stream
	// Early says the stream's first bytes came in a 0-RTT packet.
	Early bool
	// At is when the server read the stream's first bytes, since the
	// connection's start (ConnRecord.Start); 0 in recordings made before
	// it was kept. The server reads the client's unidirectional streams
	// as they arrive, even while it holds its SETTINGS back.
	At time.Duration
}

// QUICFlight is the client's Initial packets taken apart: decrypted with
// the keys of the first Initial's Destination Connection ID (RFC 9001
// §5.2), their frames in order, and the ClientHello reassembled from their
// CRYPTO frames.
type QUICFlight struct {
	Version uint32
	// DCID and SCID are the first Initial's connection IDs; Token its
	// token.
	DCID, SCID, Token []byte
	// Datagrams are the datagrams that carried Initial packets, in order.
	Datagrams []FlightDatagram
	// CryptoBytes is how many contiguous CRYPTO bytes from offset 0 the
	// Initials carried.
	CryptoBytes int
	// ClientHelloMessage is the reassembled handshake message; nil if it
	// was incomplete.
	ClientHelloMessage []byte
	ClientHello        *ClientHello
	// TransportParameters are the hello's quic_transport_parameters in
	// wire order.
	TransportParameters []quicwire.TransportParameter
}

// FlightDatagram is one datagram of the flight.
type FlightDatagram struct {
	Index   int // in QUICRecord.Datagrams
	Size    int
	Packets []FlightPacket
	// Trailing counts the bytes after the last packet (padding outside
	// any packet).
	Trailing int
}

// FlightPacket is one packet of a datagram. Only Initial packets are
// decrypted; others keep their header facts.
type FlightPacket struct {
	Type         quicwire.PacketType
	Size         int
	DCIDLen      int
	SCIDLen      int
	TokenLen     int
	LengthSize   int // bytes of the Length field
	PacketNumber uint64
	PNLen        int
	Frames       []quicwire.Frame
	// Err says why the packet could not be read; the rest of the
	// datagram is then left out.
	Err error
}

// QUICFlight decrypts and parses the record's Initial packets. It returns
// an error if the record has no QUIC datagrams or its first datagram
// holds no readable Initial; later failures are kept per packet, and a
// missing ClientHello leaves ClientHello nil with the parse error.
func (r *ConnRecord) QUICFlight() (*QUICFlight, error) {
	if r.QUIC == nil || len(r.QUIC.Datagrams) == 0 {
		return nil, errors.New("fingerprint: no quic datagrams")
	}
	var fl *QUICFlight
	var keys *quicwire.Keys
	crypto := make([]byte, 0, 4096)
	var have []bool // per crypto byte, whether it arrived
	for i, d := range r.QUIC.Datagrams {
		if d.Data == nil {
			continue
		}
		fd := FlightDatagram{Index: i, Size: d.Size}
		b := d.Data
		initial := false
		for len(b) > 0 {
			h, err := quicwire.ParseHeader(b)
			p := FlightPacket{Type: h.Type, DCIDLen: len(h.DCID), SCIDLen: len(h.SCID), TokenLen: len(h.Token), LengthSize: h.LengthSize, Size: h.Size}
			if err != nil {
				p.Err = err
				fd.Packets = append(fd.Packets, p)
				break
			}
			if h.Type == quicwire.PacketShort {
				fd.Packets = append(fd.Packets, p)
				break
			}
			if h.Type == quicwire.PacketInitial {
				if fl == nil {
					fl = &QUICFlight{Version: h.Version, DCID: h.DCID, SCID: h.SCID, Token: h.Token}
					keys = quicwire.ClientInitialKeys(h.DCID)
				}
				initial = true
				pkt, err := keys.Open(b, h)
				if err != nil {
					p.Err = err
				} else {
					p.PacketNumber, p.PNLen = pkt.PacketNumber, pkt.PNLen
					err = quicwire.ParseFrames(pkt.Payload, func(f quicwire.Frame) {
						if f.Type == quicwire.FrameCrypto {
							crypto, have = placeCrypto(crypto, have, f)
						}
						f.Reason = nil
						p.Frames = append(p.Frames, f)
					})
					p.Err = err
				}
			}
			fd.Packets = append(fd.Packets, p)
			b = b[h.Size:]
			if len(b) > 0 && b[0] == 0 {
				fd.Trailing = len(b)
				break
			}
		}
		if initial {
			fl.Datagrams = append(fl.Datagrams, fd)
		}
	}
	if fl == nil {
		return nil, errors.New("fingerprint: no quic initial packet")
	}
	fl.CryptoBytes = slices.Index(have, false)
	if fl.CryptoBytes < 0 {
		fl.CryptoBytes = len(have)
	}
	msg := crypto[:fl.CryptoBytes]
	if len(msg) >= 4 {
		n := int(msg[1])<<16 | int(msg[2])<<8 | int(msg[3])
		if len(msg) >= 4+n {
			fl.ClientHelloMessage = msg[:4+n]
		}
	}
	ch, err := ParseClientHelloMessage(msg)
	if err != nil {
		return fl, err
	}
	fl.ClientHello = ch
	if tp, ok := ch.Extension(57); ok {
		fl.TransportParameters, err = quicwire.ParseTransportParameters(tp)
	}
	return fl, err
}

// placeCrypto copies a CRYPTO frame's data to its offset, bounded by
// maxCryptoBytes (bytes beyond are dropped).
func placeCrypto(buf []byte, have []bool, f quicwire.Frame) ([]byte, []bool) {
	if f.Offset >= maxCryptoBytes {
		return buf, have
	}
	end := min(f.Offset+uint64(len(f.Data)), maxCryptoBytes)
	for uint64(len(buf)) < end {
		buf = append(buf, 0)
		have = append(have, false)
	}
	copy(buf[f.Offset:end], f.Data)
	for i := f.Offset; i < end; i++ {
		have[i] = true
	}
	return buf, have
}

// JA4 returns the hello's JA4 with the QUIC transport letter 'q'.
func (fl *QUICFlight) JA4() string {
	if fl.ClientHello == nil {
		return ""
	}
	return fl.ClientHello.JA4WithTransport('q')
}
