package quic

import (
	"errors"
	"io"
	"time"

	"github.com/guise-http/guise/internal/quicwire"
	"github.com/guise-http/guise/profile"
)

// Flight is a QUIC client's first flight: its connection IDs, first packet
// number and the datagrams that carry the ClientHello.
type Flight struct {
	DCID, SCID []byte
	// FirstPacketNumber is the first Initial's packet number; the flight's
	// packets are numbered on from it.
	FirstPacketNumber uint64
	// Token is the Initial packets' token: one from a NEW_TOKEN frame of
	// an earlier connection, when it is resumed (Chromium sends it), or
	// none. Set it before Build.
	Token []byte
	// InitialRTT, if set, is sent as the initial_rtt transport parameter
	// (see AppendTransportParameters). Set it before TransportParameters.
	InitialRTT time.Duration
	// Datagrams are the UDP payloads in sending order, each
	// profile.QUIC.DatagramSize bytes.
	Datagrams [][]byte

	// ranges are the hello's [from, to) byte ranges each datagram's
	// packet carries, for its retransmission; packetLens the packets'
	// sizes, before the padding after them.
	ranges     [][][2]int
	packetLens []int
}

// Start draws a connection's connection IDs and first packet number by
// q's rules from r.
func Start(q *profile.QUIC, r io.Reader) (*Flight, error) {
	g := &rng{r: r}
	f := &Flight{}
	n := q.DCIDLen
	if q.DCIDRule == profile.ConnIDBiased {
		b := g.byte()
		n = max(8, 5+int(b&(b>>4)))
	}
	f.DCID = make([]byte, n)
	g.read(f.DCID)
	f.SCID = make([]byte, q.SCIDLen)
	g.read(f.SCID)
	f.FirstPacketNumber = q.FirstPacketNumber
	if q.FirstPacketRule == profile.PacketNumberRandom {
		r0, r1 := g.byte(), g.byte()
		f.FirstPacketNumber = uint64(r0&0x1f) + uint64(max(int(r1)-224, 0))<<5 + 1
	}
	return f, g.err
}

// TransportParameters returns the encoded transport parameters of the
// connection (see AppendTransportParameters), drawing from r.
func (f *Flight) TransportParameters(q *profile.QUIC, r io.Reader) ([]byte, error) {
	g := &rng{r: r}
	b := AppendTransportParameters(nil, q, f.SCID, f.InitialRTT, g)
	return b, g.err
}

// ErrHelloTooLarge means the ClientHello does not fit the flight's
// layout (more than a few datagrams).
var ErrHelloTooLarge = errors.New("quic: client hello too large for the first flight")

// maxFlightPackets bounds the datagrams of a first flight.
const maxFlightPackets = 4

// Build lays hello (the ClientHello handshake message, as the TLS stack
// hands it over at the Initial level) out in Initial packets as q's
// browser does and seals each in its own datagram with the client's
// Initial keys. The layout's random choices are drawn from r.
func (f *Flight) Build(q *profile.QUIC, hello []byte, r io.Reader) error {
	g := &rng{r: r}
	var pkts [][]frame
	switch q.Layout {
	case profile.LayoutChaos:
		pkts = f.chaosLayout(q, hello, g)
	case profile.LayoutSNISlice:
		pkts = f.sliceLayout(q, hello)
	default:
		return errors.New("quic: unknown crypto layout " + q.Layout.String())
	}
	if pkts == nil || len(pkts) > maxFlightPackets {
		return ErrHelloTooLarge
	}
	if g.err != nil {
		return g.err
	}
	keys := quicwire.ClientInitialKeys(f.DCID)
	f.Datagrams = f.Datagrams[:0]
	f.ranges = f.ranges[:0]
	f.packetLens = f.packetLens[:0]
	for i, fr := range pkts {
		var rs [][2]int
		for _, x := range fr {
			if x.kind == kindCrypto {
				rs = append(rs, [2]int{x.off, x.off + x.n})
			}
		}
		f.ranges = append(f.ranges, rs)
		pn := f.FirstPacketNumber + uint64(i)
		pnLen := f.pnLen(q, i)
		var payload []byte
		for _, x := range fr {
			payload = x.append(payload, hello)
		}
		hdr := f.header(pnLen, pn, len(payload))
		d := make([]byte, 0, q.DatagramSize)
		d = keys.Seal(d, hdr, pn, pnLen, payload)
		if len(d) > q.DatagramSize {
			return ErrHelloTooLarge // an invariant of the layouts: never
		}
		f.packetLens = append(f.packetLens, len(d))
		for len(d) < q.DatagramSize { // PaddingAfterPacket
			d = append(d, 0)
		}
		f.Datagrams = append(f.Datagrams, d)
	}
	return nil
}

// pnLen is the packet number length of the flight's i-th packet.
func (f *Flight) pnLen(q *profile.QUIC, i int) int {
	if len(q.PacketNumberLens) > 0 {
		return q.PacketNumberLens[min(i, len(q.PacketNumberLens)-1)]
	}
	// neqo: the bytes that hold pn+1 (no packet acknowledged yet).
	v := f.FirstPacketNumber + uint64(i) + 1
	n := 1
	for v >>= 8; v > 0; v >>= 8 {
		n++
	}
	return n
}

// headerLen is the long header's size with a pnLen-byte packet number
// and a 2-byte Length field (both browsers use the 2-byte form).
func (f *Flight) headerLen(pnLen int) int {
	return 1 + 4 + 1 + len(f.DCID) + 1 + len(f.SCID) + quicwire.VarintLen(uint64(len(f.Token))) + len(f.Token) + 2 + pnLen
}

// header encodes an Initial's long header for a payload of n bytes.
func (f *Flight) header(pnLen int, pn uint64, n int) []byte {
	h := make([]byte, 0, f.headerLen(pnLen))
	h = append(h, 0xc0|byte(pnLen-1), 0, 0, 0, 1)
	h = append(h, byte(len(f.DCID)))
	h = append(h, f.DCID...)
	h = append(h, byte(len(f.SCID)))
	h = append(h, f.SCID...)
	h = quicwire.AppendVarint(h, uint64(len(f.Token)))
	h = append(h, f.Token...)
	h = quicwire.AppendVarintLen(h, uint64(pnLen+n+16), 2)
	for i := pnLen - 1; i >= 0; i-- {
		h = append(h, byte(pn>>(8*i)))
	}
	return h
}

// tagLen is the AEAD tag size of Initial packets.
const tagLen = 16

// frameKind is what a planned frame is.
type frameKind uint8

const (
	kindCrypto frameKind = iota
	kindPing
	kindPadding
)

// frame is one planned frame: CRYPTO data [off, off+n) of the hello, a
// PING, or n PADDING bytes.
type frame struct {
	kind frameKind
	off  int
	n    int
}

// size is the frame's encoded size.
func (x frame) size() int {
	switch x.kind {
	case kindCrypto:
		return cryptoFrameSize(x.off, x.n)
	case kindPing:
		return 1
	}
	return x.n
}

func (x frame) append(b, hello []byte) []byte {
	switch x.kind {
	case kindCrypto:
		b = append(b, byte(quicwire.FrameCrypto))
		b = quicwire.AppendVarint(b, uint64(x.off))
		b = quicwire.AppendVarint(b, uint64(x.n))
		return append(b, hello[x.off:x.off+x.n]...)
	case kindPing:
		return append(b, byte(quicwire.FramePing))
	}
	for range x.n {
		b = append(b, 0)
	}
	return b
}

// cryptoFrameSize is a CRYPTO frame's header plus data (quiche's
// GetMinCryptoFrameSize plus n).
func cryptoFrameSize(off, n int) int {
	return cryptoOverhead(off, n) + n
}

func cryptoOverhead(off, n int) int {
	return 1 + quicwire.VarintLen(uint64(off)) + quicwire.VarintLen(uint64(n))
}
