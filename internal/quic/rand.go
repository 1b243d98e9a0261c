package quic

import (
	"encoding/binary"
	"fmt"
	"io"
)

// rng draws the per-connection choices from the caller's reader. Errors
// stick: after one, every draw is zero and err says why.
type rng struct {
	r   io.Reader
	err error
}

func (g *rng) read(p []byte) {
	if g.err != nil {
		clear(p)
		return
	}
	if _, err := io.ReadFull(g.r, p); err != nil {
		g.err = fmt.Errorf("quic: reading randomness: %w", err)
		clear(p)
	}
}

// uint64 is quiche's InsecureRandUint64: eight bytes, big-endian.
func (g *rng) uint64() uint64 {
	var b [8]byte
	g.read(b[:])
	return binary.BigEndian.Uint64(b[:])
}

func (g *rng) byte() byte {
	var b [1]byte
	g.read(b[:])
	return b[0]
}
