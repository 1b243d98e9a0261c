package decode

import (
	"errors"
	"io"
	"sync"
)

// decoder is a pooled decoder for one coding. start points it at a new encoded
// stream without doing any I/O; Read decodes; release drops the stream and returns
// the decoder to its pool, after which it must not be used.
type decoder interface {
	io.Reader
	start(src io.Reader)
	release()
}

var newDecoder = [...]func() decoder{Gzip: newGzip, Deflate: newDeflate, Brotli: newBrotli, Zstd: newZstd}

// NewReader returns a reader that undoes codings, given in the order they were
// applied (as Chain returns them), over the encoded body r: the last coding is undone
// first. With no codings it returns r's bytes unchanged, still under the limit.
//
// The reader fails with ErrDecodeLimit once more than limit decoded bytes would be
// produced (limit 0 means no limit); the bytes it returned up to then are at most
// limit. Intermediate data between stacked codings is capped at twice the limit. A
// body that is not valid for its coding (bad header, corrupt data, wrong checksum,
// truncated stream) fails with *Error; errors from r itself are returned unchanged.
// An empty body (r gives no byte at all) decodes to an empty body for every coding.
// Errors are sticky: once Read returned one, every later Read returns it again.
//
// NewReader does no I/O. The reader is not safe for concurrent Reads, but Close may
// be called concurrently with a Read to abort it. Close closes r when r is an
// io.Closer (interrupting a Read blocked in r), waits for a Read in progress, and
// returns the decoders to their pools; Read then returns ErrClosed. Close is
// idempotent and returns the error of closing r. The caller must Close the reader
// to recycle its decoders; one that is not closed is simply garbage collected.
//
// NewReader fails with ErrTooManyEncodings for more than MaxCodings codings, and
// with an error for a nil r, a Coding value that is not one of the constants or a
// negative limit; it never reads r in those cases.
func NewReader(r io.Reader, codings []Coding, limit int64) (io.ReadCloser, error) {
	if len(codings) > MaxCodings {
		return nil, ErrTooManyEncodings
	}
	if r == nil {
		return nil, errors.New("decode: nil body")
	}
	if limit < 0 {
		return nil, errors.New("decode: negative limit")
	}
	for _, c := range codings {
		if !c.valid() {
			return nil, errors.New("decode: unknown coding " + c.String())
		}
	}
	d := &reader{src: r, limit: limit, nl: len(codings)}
	var inter int64 // cap on data between stacked codings
	if limit > 0 {
		inter = limit * 2
		if inter < limit { // overflow
			inter = 0
		}
	}
	below := r
	for i := range d.nl {
		l := &d.layers[i]
		l.coding = codings[d.nl-1-i]
		l.in.r = below
		if i > 0 {
			l.in.max = inter
		}
		l.dec = newDecoder[l.coding]()
		l.dec.start(&l.in)
		below = l
	}
	d.top = below
	return d, nil
}

// reader is the io.ReadCloser returned by NewReader.
type reader struct {
	mu     sync.Mutex // held by Read and by Close's release of the decoders
	top    io.Reader  // the outermost layer, or src without codings
	src    io.Reader
	limit  int64 // 0 = none
	n      int64 // decoded bytes returned so far
	err    error // sticky
	closed bool  // guarded by cmu
	cmu    sync.Mutex
	nl     int
	layers [MaxCodings]layer
}

func (d *reader) Read(p []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.err != nil {
		return 0, d.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if d.limit > 0 {
		// Ask for at most one byte past the limit: getting it proves the body is
		// too large without producing more than needed.
		if rem := d.limit - d.n; int64(len(p)) > rem+1 {
			p = p[:rem+1]
		}
	}
	n, err := d.top.Read(p)
	if n < 0 || n > len(p) {
		n, err = 0, errors.New("decode: invalid read count from body")
	}
	if d.limit > 0 && d.n+int64(n) > d.limit {
		n = int(d.limit - d.n)
		err = ErrDecodeLimit
	}
	d.n += int64(n)
	if err != nil {
		d.err = err
	}
	return n, err
}

func (d *reader) Close() error {
	d.cmu.Lock()
	first := !d.closed
	d.closed = true
	d.cmu.Unlock()
	if !first {
		return nil
	}
	var err error
	if c, ok := d.src.(io.Closer); ok {
		err = c.Close()
	}
	d.mu.Lock()
	for i := range d.nl {
		l := &d.layers[i]
		l.dec.release()
		l.dec = nil
		l.in.r = nil
	}
	d.nl = 0
	d.top = closedReader{}
	d.err = ErrClosed
	d.mu.Unlock()
	return err
}

type closedReader struct{}

func (closedReader) Read([]byte) (int, error) { return 0, ErrClosed }

// layer undoes one coding, reading the encoded bytes through in.
type layer struct {
	coding Coding
	in     source
	dec    decoder
}

// Read decodes and sorts the decoder's errors: errors that came from the input are
// passed on as they are, an empty input is an empty output, and everything else is a
// defect of the encoding, reported as *Error.
//
// An end of the decoded stream after the input failed is the input's error: the
// decoder may have taken the failure for an end (klauspost's zstd decoder reports
// io.EOF when io.ErrUnexpectedEOF comes before a frame's first byte), and a body
// whose input failed is never delivered as complete.
func (l *layer) Read(p []byte) (int, error) {
	n, err := l.dec.Read(p)
	if err == io.EOF && l.in.err != nil {
		return n, l.in.err
	}
	if err == nil || err == io.EOF {
		return n, err
	}
	if in := &l.in; in.err != nil && (err == in.err || errors.Is(err, in.err)) {
		return n, in.err
	} else if in.eof && in.n == 0 {
		return n, io.EOF
	}
	return n, &Error{Coding: l.coding, Err: err}
}

// source reads a layer's encoded input, counting bytes and remembering what ended it.
type source struct {
	r   io.Reader
	n   int64 // bytes read
	max int64 // 0 = no cap
	err error // first error from r other than io.EOF, or ErrDecodeLimit
	eof bool
}

func (s *source) Read(p []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	if s.r == nil {
		return 0, ErrClosed
	}
	n, err := s.r.Read(p)
	s.n += int64(n)
	if s.max > 0 && s.n > s.max {
		s.err = ErrDecodeLimit
		return 0, s.err
	}
	if err == io.EOF {
		s.eof = true
	} else if err != nil {
		s.err = err
	}
	return n, err
}
