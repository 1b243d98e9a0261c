package ws

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/klauspost/compress/flate"
)

// byteStream is a Stream that reads b and discards writes.
type byteStream struct{ r *bytes.Reader }

func (s byteStream) Read(p []byte) (int, error)  { return s.r.Read(p) }
func (s byteStream) Write(p []byte) (int, error) { return len(p), nil }
func (s byteStream) Close() error                { return nil }

// FuzzReadFrames feeds the frame parser (and, with deflate on, the
// inflater) arbitrary server bytes: every read ends in a message or a typed
// error, never a panic, and text messages are UTF-8.
func FuzzReadFrames(f *testing.F) {
	var out bytes.Buffer
	w, _ := flate.NewWriter(&out, 6)
	w.Write([]byte("hello hello"))
	w.Flush()
	comp := out.Bytes()[:out.Len()-4]
	for _, seed := range [][]byte{
		{0x81, 5, 'h', 'e', 'l', 'l', 'o'},
		{0x01, 1, 'a', 0x89, 0, 0x80, 1, 'b', 0x88, 2, 3, 0xe8},
		{0x82, 126, 0, 4, 1, 2, 3, 4},
		{0x82, 127, 0, 0, 0, 0, 0, 0, 0, 1, 9},
		append([]byte{0xc1, byte(len(comp))}, comp...),
		{0x88, 0},
		{0x81, 0x81, 1, 2, 3, 4, 5},
	} {
		f.Add(seed, false)
		f.Add(seed, true)
	}
	f.Fuzz(func(t *testing.T, b []byte, deflate bool) {
		cfg := &Config{MaxMessageSize: 1 << 16, PingInterval: -1}
		cfg.Deflate.Enabled = deflate
		c := NewConn(byteStream{bytes.NewReader(b)}, cfg)
		for range 100 {
			op, p, err := c.ReadMessage(bg)
			if err != nil {
				var ce *CloseError
				if !errors.As(err, &ce) && !errors.Is(err, ErrDropped) {
					t.Fatalf("untyped error %v", err)
				}
				return
			}
			if op != OpText && op != OpBinary || int64(len(p)) > cfg.MaxMessageSize {
				t.Fatalf("message %v of %d bytes", op, len(p))
			}
		}
	})
}

// FuzzInflate inflates arbitrary compressed messages in a row, with the
// context taken over: output stays within the limit, and errors are
// CloseErrors with 1007 or 1009.
func FuzzInflate(f *testing.F) {
	var out bytes.Buffer
	w, _ := flate.NewWriter(&out, 9)
	w.Write(make([]byte, 1<<18))
	w.Flush()
	f.Add(out.Bytes()[:out.Len()-4], []byte{0})
	f.Add([]byte{0xf2, 0x48, 0xcd, 0xc9, 0xc9, 0x07, 0}, []byte{0xca, 0x40, 0x0, 0x0})
	f.Fuzz(func(t *testing.T, a, b []byte) {
		in := &inflater{takeover: true}
		for _, m := range [][]byte{a, b, a} {
			got, _, err := in.inflate(nil, append([]byte(nil), m...), 1<<16)
			if err != nil {
				var ce *CloseError
				if !errors.As(err, &ce) || ce.Code != StatusInvalidData && ce.Code != StatusTooBig {
					t.Fatalf("error %v", err)
				}
				return
			}
			if len(got) > 1<<16 {
				t.Fatalf("%d bytes past the limit", len(got))
			}
		}
	})
}

var _ io.Reader = byteStream{}
