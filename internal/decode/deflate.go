package decode

import (
	"bufio"
	"io"
	"sync"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/zlib"
)

var deflatePool = sync.Pool{New: func() any {
	d := &deflateDec{}
	d.br = *bufio.NewReaderSize(nil, inBufSize)
	return d
}}

// deflateDec decodes the "deflate" coding. RFC 9110 defines it as the zlib format
// (RFC 1950), but some servers send raw deflate (RFC 1951); like browsers, the first two
// bytes decide: a valid zlib header means zlib, anything else raw deflate.
type deflateDec struct {
	br   bufio.Reader
	zlib io.ReadCloser // also zlib.Resetter; nil until first needed
	raw  io.ReadCloser // also flate.Resetter; nil until first needed
	cur  io.Reader     // zlib or raw once the header was seen, else nil
	done bool
}

func newDeflate() decoder { return deflatePool.Get().(*deflateDec) }

func (d *deflateDec) start(src io.Reader) {
	d.br.Reset(src)
	d.cur = nil
	d.done = false
}

func (d *deflateDec) release() {
	d.br.Reset(nil)
	d.cur = nil
	deflatePool.Put(d)
}

// isZlibHeader reports whether b starts with a zlib CMF/FLG pair: method 8, window at
// most 32 KiB, and a check value making the pair a multiple of 31.
func isZlibHeader(b []byte) bool {
	return len(b) >= 2 && b[0]&0x0f == 8 && b[0]>>4 <= 7 && (uint16(b[0])<<8|uint16(b[1]))%31 == 0
}

func (d *deflateDec) Read(p []byte) (int, error) {
	if d.done {
		return 0, io.EOF
	}
	if d.cur == nil {
		b, err := d.br.Peek(2)
		if len(b) == 0 {
			return 0, err // io.EOF here means an empty body
		}
		if isZlibHeader(b) {
			if d.zlib == nil {
				d.zlib, err = zlib.NewReader(&d.br)
			} else {
				err = d.zlib.(zlib.Resetter).Reset(&d.br, nil)
			}
			if err != nil {
				return 0, noEOF(err)
			}
			d.cur = d.zlib
		} else {
			if d.raw == nil {
				d.raw = flate.NewReader(&d.br)
			} else if err := d.raw.(flate.Resetter).Reset(&d.br, nil); err != nil {
				return 0, err
			}
			d.cur = d.raw
		}
	}
	n, err := d.cur.Read(p)
	if err == io.EOF {
		// Look once past the end of the stream so that the body below sees its own
		// end (letting its connection be reused); trailing bytes are ignored.
		d.br.Peek(1)
		d.done = true
	}
	return n, err
}
