package tlsfp

import (
	"encoding/binary"
	"fmt"
	"io"
)

// rng draws the per-connection choices (extension order, GREASE values, ECH
// GREASE bytes) from the Config's reader, buffered so that one handshake
// does a few large reads.
type rng struct {
	r   io.Reader
	buf [128]byte
	off int
	err error
}

func newRNG(r io.Reader) *rng { return &rng{r: r, off: len(rng{}.buf)} }

// read fills p from the reader. Errors stick: after one, read fills zeros
// and err reports it.
func (g *rng) read(p []byte) {
	for len(p) > 0 && g.err == nil {
		if g.off == len(g.buf) {
			if _, err := io.ReadFull(g.r, g.buf[:]); err != nil {
				g.err = fmt.Errorf("tlsfp: reading randomness: %w", err)
				break
			}
			g.off = 0
		}
		n := copy(p, g.buf[g.off:])
		g.off += n
		p = p[n:]
	}
	if g.err != nil {
		clear(p)
	}
}

func (g *rng) uint32() uint32 {
	var b [4]byte
	g.read(b[:])
	return binary.BigEndian.Uint32(b[:])
}

// intn returns a uniform value in [0, n) for 0 < n < 2^31, by rejection.
func (g *rng) intn(n int) int {
	max := uint32(n)
	limit := ^uint32(0) - ^uint32(0)%max
	for i := 0; i < 64; i++ { // bounded: each try fails with p < 1/2
		v := g.uint32()
		if v < limit || g.err != nil {
			return int(v % max)
		}
	}
	return int(g.uint32() % max)
}

// grease returns a random GREASE value (0x?a?a with equal bytes), as
// BoringSSL draws one per field.
func (g *rng) grease() uint16 {
	var b [1]byte
	g.read(b[:])
	v := uint16(b[0]&0xf0) | 0x0a
	return v<<8 | v
}

func isGREASE(v uint16) bool { return v&0x0f0f == 0x0a0a && v>>8 == v&0xff }
