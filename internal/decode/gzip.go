package decode

import (
	"bufio"
	"io"
	"sync"

	"github.com/klauspost/compress/gzip"
)

// inBufSize is the input buffer of the gzip and deflate decoders, which read their
// input a byte at a time through it.
const inBufSize = 16 << 10

// gzipPool holds idle gzip decoders; entries hold no reference to any body.
var gzipPool = sync.Pool{New: func() any {
	d := &gzipDec{}
	d.br = *bufio.NewReaderSize(nil, inBufSize)
	return d
}}

// gzip member states.
const (
	gzHeader  = iota // the next bytes are a member header
	gzBody           // inside a member's deflate data
	gzBetween        // after a member's trailer
	gzDone           // end of the body; any further input is ignored
)

// gzipDec decodes one or more gzip members. It drives the members itself (the
// library reader runs with Multistream(false)) so that any number of members,
// including 100k empty ones, is decoded iteratively, and so that bytes after the
// last member that do not start another member are ignored, as browsers do.
type gzipDec struct {
	br    bufio.Reader
	zr    gzip.Reader
	state int
}

func newGzip() decoder { return gzipPool.Get().(*gzipDec) }

func (d *gzipDec) start(src io.Reader) {
	d.br.Reset(src)
	d.state = gzHeader
}

func (d *gzipDec) release() {
	d.br.Reset(nil)
	gzipPool.Put(d)
}

func (d *gzipDec) Read(p []byte) (int, error) {
	for {
		switch d.state {
		case gzHeader:
			if err := d.zr.Reset(&d.br); err != nil {
				return 0, err // io.EOF here means an empty body
			}
			d.zr.Multistream(false)
			d.state = gzBody
		case gzBody:
			n, err := d.zr.Read(p)
			if err == io.EOF {
				d.state = gzBetween
				if n > 0 {
					return n, nil
				}
				continue
			}
			return n, err
		case gzBetween:
			b, err := d.br.Peek(2)
			if len(b) == 2 && b[0] == 0x1f && b[1] == 0x8b {
				if err := d.zr.Reset(&d.br); err != nil {
					return 0, noEOF(err)
				}
				d.zr.Multistream(false)
				d.state = gzBody
				continue
			}
			if err != nil && err != io.EOF {
				return 0, err
			}
			d.state = gzDone
		default:
			return 0, io.EOF
		}
	}
}

func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
