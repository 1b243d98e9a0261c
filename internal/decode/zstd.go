package decode

import (
	"io"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// MaxZstdWindow is the largest zstd window accepted, 8 MiB as for HTTP in RFC 9659
// and in browsers. A frame asking for more fails with *Error.
const MaxZstdWindow = 8 << 20

var zstdPool = sync.Pool{New: func() any {
	d := &zstdDec{}
	// Concurrency 1 decodes synchronously in the caller's goroutine: no goroutines
	// are started, so a decoder dropped by the pool leaks nothing.
	zd, err := zstd.NewReader(nil,
		zstd.WithDecoderConcurrency(1),
		zstd.WithDecoderMaxWindow(MaxZstdWindow),
		zstd.WithDecoderMaxMemory(MaxZstdWindow*2))
	if err != nil {
		// The options are constants that the library accepts; failing here is a
		// programming error caught by every test.
		panic("decode: zstd options rejected: " + err.Error())
	}
	d.d = zd
	return d
}}

// zstdDec decodes "zstd", one or more frames (skippable frames are skipped).
type zstdDec struct {
	in relay
	d  *zstd.Decoder
	n  int64 // bytes decoded from the current stream
}

func newZstd() decoder { return zstdPool.Get().(*zstdDec) }

func (d *zstdDec) start(src io.Reader) {
	d.in.r = src
	d.n = 0
	// Reset with a non-nil reader that is neither a *bytes.Buffer nor similar cannot
	// fail and reads nothing.
	d.d.Reset(&d.in)
}

func (d *zstdDec) release() {
	d.in.r = nil
	if d.n <= poolMaxDecoded {
		zstdPool.Put(d)
	}
}

func (d *zstdDec) Read(p []byte) (int, error) {
	n, err := d.d.Read(p)
	d.n += int64(n)
	return n, err
}
