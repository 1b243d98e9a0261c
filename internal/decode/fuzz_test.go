package decode

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

const fuzzLimit = 256 << 10

// FuzzDecodeChain feeds Content-Encoding lines (separated by '\n') and a body through
// Chain and NewReader. Invariants: no panic; at most MaxCodings codings; output never
// above the limit; every error is ErrDecodeLimit or *Error (the body is a bytes.Reader
// that never fails); reading with 1-byte and 32 KiB buffers gives the same bytes.
func FuzzDecodeChain(f *testing.F) {
	data := text(3000, 42)
	for _, chain := range [][]Coding{{Gzip}, {Deflate}, {Brotli}, {Zstd}, {Gzip, Brotli}, {Zstd, Deflate, Gzip}} {
		var names []string
		for _, c := range chain {
			names = append(names, c.String())
		}
		f.Add(strings.Join(names, ", "), encodeChain(f, chain, data))
	}
	f.Add("x-gzip", encode(f, Gzip, nil))
	f.Add("GZIP\nidentity\nBR", encode(f, Brotli, encode(f, Gzip, []byte("hello"))))
	f.Add("deflate", rawDeflate(f, data))
	f.Add("gzip", bytes.Repeat(encode(f, Gzip, nil), 50))
	f.Add("gzip,gzip,gzip\ngzip,gzip,gzip", []byte{})
	f.Add("compress", []byte("raw"))
	f.Add("", []byte("plain body"))
	f.Add("zstd", []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 0xf8, 1, 0, 0})
	f.Fuzz(func(t *testing.T, values string, body []byte) {
		codings, ok, err := Chain(strings.Split(values, "\n"))
		if err != nil {
			if !errors.Is(err, ErrTooManyEncodings) {
				t.Fatalf("Chain error %v", err)
			}
			return
		}
		if len(codings) > MaxCodings {
			t.Fatalf("%d codings", len(codings))
		}
		if !ok {
			return
		}
		big, errBig := fuzzDecode(t, body, codings, 32<<10)
		small, errSmall := fuzzDecode(t, body, codings, 1)
		if errBig == nil && errSmall == nil && !bytes.Equal(big, small) {
			t.Fatalf("1-byte reads gave %d bytes, 32 KiB reads %d", len(small), len(big))
		}
		if n := min(len(big), len(small)); !bytes.Equal(big[:n], small[:n]) {
			t.Fatalf("1-byte and 32 KiB reads differ within the first %d bytes", n)
		}
	})
}

func fuzzDecode(t *testing.T, body []byte, codings []Coding, bufSize int) ([]byte, error) {
	r, err := NewReader(bytes.NewReader(body), codings, fuzzLimit)
	if err != nil {
		t.Fatalf("NewReader: %v", err)
	}
	defer r.Close()
	var out []byte
	buf := make([]byte, bufSize)
	for range fuzzLimit + 1<<20 {
		n, err := r.Read(buf)
		if n < 0 || n > len(buf) {
			t.Fatalf("Read returned %d", n)
		}
		out = append(out, buf[:n]...)
		if len(out) > fuzzLimit {
			t.Fatalf("%d bytes out, limit %d", len(out), fuzzLimit)
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			var de *Error
			if !errors.Is(err, ErrDecodeLimit) && !errors.As(err, &de) {
				t.Fatalf("untyped error %v (%T)", err, err)
			}
			if de != nil && !strings.HasPrefix(de.Error(), "decode: ") {
				t.Fatalf("error %q lacks the prefix", de)
			}
			return out, err
		}
	}
	t.Fatal("too many reads")
	return nil, nil
}
