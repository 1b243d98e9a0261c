package decode

import (
	"bytes"
	stdgzip "compress/gzip"
	"io"
	"testing"
)

// readAll reads r to its end with buf and returns the byte count.
func readAll(r io.Reader, buf []byte) (int, error) {
	total := 0
	for {
		n, err := r.Read(buf)
		total += n
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

// decodeOnce is one warm request: wrap, read to the end, close.
func decodeOnce(src *bytes.Reader, body []byte, codings []Coding, buf []byte) error {
	src.Reset(body)
	r, err := NewReader(src, codings, 64<<20)
	if err != nil {
		return err
	}
	_, err = readAll(r, buf)
	r.Close()
	return err
}

// The budget for a warm 4 KiB gzip body: the reader itself, nothing else.
func TestAllocsGzip4K(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	data := text(4096, 20)
	for _, c := range allCodings {
		body := encode(t, c, data)
		src := bytes.NewReader(body)
		buf := make([]byte, 32<<10)
		if err := decodeOnce(src, body, []Coding{c}, buf); err != nil {
			t.Fatal(err)
		}
		allocs := testing.AllocsPerRun(200, func() {
			if err := decodeOnce(src, body, []Coding{c}, buf); err != nil {
				t.Fatal(err)
			}
		})
		t.Logf("%v 4 KiB body: %v allocs per request", c, allocs)
		if c == Gzip && allocs > 1 {
			t.Errorf("gzip 4 KiB body: %v allocs per warm request, want <= 1", allocs)
		}
	}
}

func BenchmarkGzip4K(b *testing.B) {
	data := text(4096, 20)
	body := encode(b, Gzip, data)
	src := bytes.NewReader(body)
	buf := make([]byte, 32<<10)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if err := decodeOnce(src, body, []Coding{Gzip}, buf); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStdlibGzip4K is the reference: compress/gzip with its Reader reused.
func BenchmarkStdlibGzip4K(b *testing.B) {
	data := text(4096, 20)
	body := encode(b, Gzip, data)
	src := bytes.NewReader(body)
	buf := make([]byte, 32<<10)
	zr, err := stdgzip.NewReader(src)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		src.Reset(body)
		if err := zr.Reset(src); err != nil {
			b.Fatal(err)
		}
		if _, err := readAll(zr, buf); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecode8M(b *testing.B) {
	data := text(8<<20, 21)
	for _, c := range allCodings {
		body := encode(b, c, data)
		b.Run(c.String(), func(b *testing.B) {
			src := bytes.NewReader(body)
			buf := make([]byte, 32<<10)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			b.ReportMetric(float64(len(data))/float64(len(body)), "ratio")
			for b.Loop() {
				if err := decodeOnce(src, body, []Coding{c}, buf); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("stdlib-gzip", func(b *testing.B) {
		body := encode(b, Gzip, data)
		src := bytes.NewReader(body)
		buf := make([]byte, 32<<10)
		zr, err := stdgzip.NewReader(src)
		if err != nil {
			b.Fatal(err)
		}
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			src.Reset(body)
			if err := zr.Reset(src); err != nil {
				b.Fatal(err)
			}
			if _, err := readAll(zr, buf); err != nil {
				b.Fatal(err)
			}
		}
	})
}
