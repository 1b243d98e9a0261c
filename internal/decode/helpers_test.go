package decode

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"errors"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"
)

// text returns n bytes of deterministic, compressible, word-like text.
func text(n int, seed uint64) []byte {
	words := []string{"guise", "browser", "header", "the", "of", "content-encoding", "gzip",
		"zstd", "window", "frame", "stream", "<div class=\"x\">", "</div>\n", "{\"id\":", "}, ", "0123456789"}
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	var b bytes.Buffer
	for b.Len() < n {
		b.WriteString(words[r.IntN(len(words))])
		if r.IntN(8) == 0 {
			b.WriteByte(byte('a' + r.IntN(26)))
		}
		b.WriteByte(' ')
	}
	return b.Bytes()[:n]
}

// random returns n incompressible bytes.
func random(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// encode applies one coding to data with an encoder independent of the decoder where
// one exists (the standard library for gzip and deflate).
func encode(t testing.TB, c Coding, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	var w io.WriteCloser
	var err error
	switch c {
	case Gzip:
		w = gzip.NewWriter(&b)
	case Deflate:
		w = zlib.NewWriter(&b)
	case Brotli:
		w = brotli.NewWriterLevel(&b, 5)
	case Zstd:
		w, err = zstd.NewWriter(&b, zstd.WithEncoderConcurrency(1))
	default:
		t.Fatalf("encode: coding %v", c)
	}
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// rawDeflate encodes data as raw RFC 1951 deflate, as some servers wrongly send.
func rawDeflate(t testing.TB, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	w, err := flate.NewWriter(&b, flate.DefaultCompression)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(data)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// encodeChain applies codings in order, as a server would.
func encodeChain(t testing.TB, codings []Coding, data []byte) []byte {
	t.Helper()
	for _, c := range codings {
		data = encode(t, c, data)
	}
	return data
}

// decodeAll decodes body through NewReader, reading with a buffer of bufSize bytes
// (at most maxReads reads), and returns the output and the first error other than
// io.EOF.
func decodeAll(t testing.TB, body io.Reader, codings []Coding, limit int64, bufSize int) ([]byte, error) {
	t.Helper()
	r, err := NewReader(body, codings, limit)
	if err != nil {
		t.Fatalf("NewReader: %v", err)
	}
	defer r.Close()
	var out bytes.Buffer
	buf := make([]byte, bufSize)
	for range 1 << 26 {
		n, err := r.Read(buf)
		out.Write(buf[:n])
		if err == io.EOF {
			return out.Bytes(), nil
		}
		if err != nil {
			return out.Bytes(), err
		}
	}
	t.Fatal("decodeAll: too many reads")
	return nil, nil
}

// wantDecodeError fails unless err is a *Error for coding c.
func wantDecodeError(t testing.TB, err error, c Coding) {
	t.Helper()
	var de *Error
	if !errors.As(err, &de) {
		t.Fatalf("err = %v (%T), want *Error", err, err)
	}
	if de.Coding != c {
		t.Fatalf("err coding = %v, want %v (%v)", de.Coding, c, err)
	}
}
