package decode

import (
	"io"
	"sync"

	"github.com/andybalholm/brotli"
)

var brotliPool = sync.Pool{New: func() any {
	d := &brotliDec{}
	d.r = brotli.NewReader(&d.in)
	return d
}}

// brotliDec decodes "br". The window is at most 16 MiB: the large-window extension
// is not accepted, as in browsers.
type brotliDec struct {
	in relay
	r  *brotli.Reader
	n  int64 // bytes decoded from the current stream
}

func newBrotli() decoder { return brotliPool.Get().(*brotliDec) }

func (d *brotliDec) start(src io.Reader) {
	d.in.r = src
	d.n = 0
	d.r.Reset(&d.in)
}

func (d *brotliDec) release() {
	d.in.r = nil
	if d.n <= poolMaxDecoded {
		brotliPool.Put(d)
	}
}

func (d *brotliDec) Read(p []byte) (int, error) {
	n, err := d.r.Read(p)
	d.n += int64(n)
	return n, err
}

// poolMaxDecoded is the size check on returning a brotli or zstd decoder to its pool:
// the window buffer they keep grows with the stream (up to 16 MiB for brotli and
// MaxZstdWindow for zstd), so a decoder that produced more than this is left to the
// garbage collector rather than kept idle with a large buffer.
const poolMaxDecoded = 4 << 20

// relay lets a pooled decoder keep pointing at one reader while the body behind it
// changes; release sets r to nil so that an idle decoder holds no body.
type relay struct{ r io.Reader }

func (r *relay) Read(p []byte) (int, error) {
	if r.r == nil {
		return 0, ErrClosed
	}
	return r.r.Read(p)
}
