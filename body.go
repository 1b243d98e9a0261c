package guise

import (
	"context"
	"errors"
	"io"
	"os"

	"github.com/guise-http/guise/internal/h1"
	"github.com/guise-http/guise/internal/h2"
	"github.com/guise-http/guise/internal/h3"
)

// responseBody is Response.Body: the engine's body plus what the request's
// lifetime needs (its timeout's cancel) and error wrapping.
type responseBody struct {
	r       io.ReadCloser
	plain   readerOnly // r without its WriterTo, for io.Copy
	cancel  context.CancelFunc
	op, url string
	timeout bool
	done    bool
	// session is the Session the response came from, held so that a
	// Session the program dropped is not closed under its body.
	session *Session
}

// readerOnly hides every method of r but Read.
type readerOnly struct{ r io.Reader }

func (o *readerOnly) Read(p []byte) (int, error) { return o.r.Read(p) }

func (b *responseBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil {
		err = b.finish(err)
	}
	return n, err
}

// WriteTo copies the body to w without an intermediate buffer of the
// caller's (io.Copy uses it).
func (b *responseBody) WriteTo(w io.Writer) (int64, error) {
	var n int64
	var err error
	if wt, ok := b.r.(io.WriterTo); ok {
		n, err = wt.WriteTo(w)
	} else {
		// Only Read, so that io.Copy does not come back here; a field,
		// so that the wrapper costs no allocation.
		b.plain.r = b.r
		n, err = io.Copy(w, &b.plain)
		b.plain.r = nil
	}
	if err == nil {
		err = io.EOF
	}
	if err = b.finish(err); err == io.EOF {
		err = nil
	}
	return n, err
}

// Close closes the body: an unfinished one is drained (up to the
// Transport's DrainLimit) so its connection can be reused, or closed.
func (b *responseBody) Close() error {
	err := b.r.Close()
	b.finish(io.EOF)
	return err
}

func (b *responseBody) finish(err error) error {
	if !b.done {
		b.done = true
		b.session = nil // its connection is back: the Session may go
		if b.cancel != nil {
			defer b.cancel()
		}
	}
	if err == io.EOF {
		return err
	}
	var te *h1.TimeoutError
	var te2 *h2.TimeoutError
	var te3 *h3.TimeoutError
	switch {
	case errors.As(err, &te), errors.As(err, &te2), errors.As(err, &te3):
		err = &TimeoutError{Phase: PhaseBodyIdle, Err: err}
	case b.timeout && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded)):
		err = &TimeoutError{Phase: PhaseTotal, Err: err}
	}
	return &Error{Op: b.op, URL: redact(b.url), Err: err}
}
