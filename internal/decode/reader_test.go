package decode

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/klauspost/compress/zstd"
)

var allCodings = []Coding{Gzip, Deflate, Brotli, Zstd}

func TestRoundTrip(t *testing.T) {
	payloads := map[string][]byte{
		"one byte":   {'x'},
		"text 10k":   text(10_000, 1),
		"random 70k": random(70_000, 2),
		"text 1M":    text(1<<20, 3),
	}
	for _, c := range allCodings {
		for name, data := range payloads {
			t.Run(c.String()+"/"+name, func(t *testing.T) {
				got, err := decodeAll(t, bytes.NewReader(encode(t, c, data)), []Coding{c}, 0, 32<<10)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, data) {
					t.Fatalf("decoded %d bytes, want %d equal bytes", len(got), len(data))
				}
			})
		}
	}
}

func TestRawDeflate(t *testing.T) {
	// Some servers send raw deflate for "deflate"; browsers accept it, and so do we.
	for _, data := range [][]byte{{'a'}, text(50_000, 4), random(40_000, 5)} {
		got, err := decodeAll(t, bytes.NewReader(rawDeflate(t, data)), []Coding{Deflate}, 0, 4096)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("raw deflate: %d bytes, err %v; want %d bytes", len(got), err, len(data))
		}
	}
}

func TestEmptyBody(t *testing.T) {
	// Content-Encoding on an empty body (a server that compressed nothing) is an empty body.
	for _, c := range allCodings {
		got, err := decodeAll(t, bytes.NewReader(nil), []Coding{c}, 0, 512)
		if err != nil || len(got) != 0 {
			t.Errorf("%v: empty body decoded to %q, %v", c, got, err)
		}
	}
	got, err := decodeAll(t, bytes.NewReader(nil), []Coding{Gzip, Brotli}, 0, 512)
	if err != nil || len(got) != 0 {
		t.Errorf("gzip, br: empty body decoded to %q, %v", got, err)
	}
	// An empty but well-formed stream is fine too.
	for _, c := range allCodings {
		got, err := decodeAll(t, bytes.NewReader(encode(t, c, nil)), []Coding{c}, 0, 512)
		if err != nil || len(got) != 0 {
			t.Errorf("%v: encoded empty stream decoded to %q, %v", c, got, err)
		}
	}
}

func TestNoCodings(t *testing.T) {
	data := text(1000, 6)
	got, err := decodeAll(t, bytes.NewReader(data), nil, 0, 100)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("identity: %d bytes, %v", len(got), err)
	}
	got, err = decodeAll(t, bytes.NewReader(data), nil, 999, 100)
	if !errors.Is(err, ErrDecodeLimit) || len(got) != 999 {
		t.Fatalf("identity over limit: %d bytes, %v; want 999 and ErrDecodeLimit", len(got), err)
	}
}

// D-06: codings are undone in reverse order of application.
func TestStackedOrder(t *testing.T) {
	data := text(20_000, 7)
	chains := [][]Coding{
		{Gzip, Brotli},
		{Brotli, Gzip},
		{Zstd, Deflate},
		{Gzip, Deflate, Brotli, Zstd, Gzip},
		{Gzip, Gzip, Gzip, Gzip, Gzip},
	}
	for _, chain := range chains {
		t.Run(fmt.Sprint(chain), func(t *testing.T) {
			body := encodeChain(t, chain, data)
			got, err := decodeAll(t, bytes.NewReader(body), chain, 0, 4096)
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("decoded %d bytes, err %v", len(got), err)
			}
		})
	}
	// Through Chain as the root package uses it: "gzip, br" means br(gzip(data)).
	codings, ok, err := Chain([]string{"GZIP, Br"})
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	body := encode(t, Brotli, encode(t, Gzip, data))
	got, err := decodeAll(t, bytes.NewReader(body), codings, 0, 4096)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("gzip, br: %d bytes, %v", len(got), err)
	}
	// The wrong order must not decode.
	if _, err := decodeAll(t, bytes.NewReader(body), []Coding{Brotli, Gzip}, 0, 4096); err == nil {
		t.Fatal("decoding br(gzip(x)) as gzip(br(x)) succeeded")
	}
}

// D-11: output is the same for any read sizes, from the body and by the caller.
func TestSmallReads(t *testing.T) {
	data := text(40_000, 8)
	chains := [][]Coding{{Gzip}, {Deflate}, {Brotli}, {Zstd}, {Gzip, Brotli}, {Zstd, Deflate, Gzip}}
	type shape struct {
		name string
		wrap func(io.Reader) io.Reader
		buf  int
	}
	shapes := []shape{
		{"one byte source", iotest.OneByteReader, 32 << 10},
		{"one byte caller", func(r io.Reader) io.Reader { return r }, 1},
		{"one byte both", iotest.OneByteReader, 1},
		{"half reads, 7 byte caller", iotest.HalfReader, 7},
		{"data with EOF", iotest.DataErrReader, 3},
	}
	for _, chain := range chains {
		body := encodeChain(t, chain, data)
		if chain[0] == Deflate {
			body = encodeChain(t, chain[1:], rawDeflate(t, data))
		}
		for _, s := range shapes {
			t.Run(fmt.Sprint(chain)+"/"+s.name, func(t *testing.T) {
				got, err := decodeAll(t, s.wrap(bytes.NewReader(body)), chain, 0, s.buf)
				if err != nil || !bytes.Equal(got, data) {
					t.Fatalf("decoded %d bytes, err %v; want %d bytes", len(got), err, len(data))
				}
			})
		}
	}
}

// D-05: many gzip members are decoded iteratively, and their contents concatenated.
func TestGzipMembers(t *testing.T) {
	empty := encode(t, Gzip, nil)
	body := bytes.Repeat(empty, 100_000)
	start := time.Now()
	got, err := decodeAll(t, bytes.NewReader(body), []Coding{Gzip}, 0, 512)
	if err != nil || len(got) != 0 {
		t.Fatalf("100k empty members: %q, %v", got, err)
	}
	t.Logf("100k empty members (%d bytes) in %v", len(body), time.Since(start))

	var b bytes.Buffer
	var want []byte
	for i := range 50 {
		part := text(i*97, uint64(i))
		want = append(want, part...)
		b.Write(encode(t, Gzip, part))
		b.Write(empty)
	}
	got, err = decodeAll(t, iotest.HalfReader(bytes.NewReader(b.Bytes())), []Coding{Gzip}, 0, 1000)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("multi-member: %d bytes, %v; want %d", len(got), err, len(want))
	}
}

// D-04: the body is decoded once per listed coding, never again because the result is
// itself compressed (a gzip quine would otherwise recurse forever).
func TestDecodedOnce(t *testing.T) {
	inner := encode(t, Gzip, text(5000, 9))
	body := encode(t, Gzip, inner)
	got, err := decodeAll(t, bytes.NewReader(body), []Coding{Gzip}, 0, 4096)
	if err != nil || !bytes.Equal(got, inner) {
		t.Fatalf("gzip(gzip(x)) with one coding: %d bytes, %v; want the inner gzip stream", len(got), err)
	}
}

func TestTrailingBytes(t *testing.T) {
	data := text(3000, 10)
	// After a complete gzip or deflate stream, bytes that do not start another member
	// are ignored, as browsers ignore them.
	for _, tail := range []string{"\x00", "\n", "garbage after the end", "\x1f"} {
		for _, body := range [][]byte{encode(t, Gzip, data), encode(t, Deflate, data), rawDeflate(t, data)} {
			c := Deflate
			if body[0] == 0x1f {
				c = Gzip
			}
			got, err := decodeAll(t, bytes.NewReader(append(body, tail...)), []Coding{c}, 0, 4096)
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("%v + %q: %d bytes, %v", c, tail, len(got), err)
			}
		}
	}
	// A second member that starts but is broken is an error, never a silent cut.
	body := append(encode(t, Gzip, data), 0x1f, 0x8b, 8, 0, 0)
	_, err := decodeAll(t, bytes.NewReader(body), []Coding{Gzip}, 0, 4096)
	wantDecodeError(t, err, Gzip)
}

// D-03: every truncation of a stream is a typed error, never a short body.
func TestTruncated(t *testing.T) {
	data := text(3000, 11)
	bodies := map[string][]byte{}
	for _, c := range allCodings {
		bodies[c.String()] = encode(t, c, data)
	}
	bodies["raw deflate"] = rawDeflate(t, data)
	for name, body := range bodies {
		c := map[string]Coding{"gzip": Gzip, "deflate": Deflate, "raw deflate": Deflate, "br": Brotli, "zstd": Zstd}[name]
		t.Run(name, func(t *testing.T) {
			for k := 1; k < len(body); k++ {
				got, err := decodeAll(t, bytes.NewReader(body[:k]), []Coding{c}, 0, 4096)
				if err == nil {
					t.Fatalf("prefix %d/%d: no error, %d bytes", k, len(body), len(got))
				}
				wantDecodeError(t, err, c)
			}
		})
	}
}

func TestCorrupt(t *testing.T) {
	data := text(3000, 12)
	gz := encode(t, Gzip, data)
	flip := func(b []byte, i int, x byte) []byte {
		b = bytes.Clone(b)
		b[i] ^= x
		return b
	}
	hugeComment := append([]byte{0x1f, 0x8b, 8, 1 << 4, 0, 0, 0, 0, 0, 255}, bytes.Repeat([]byte("c"), 1<<20)...)
	hugeExtra := append([]byte{0x1f, 0x8b, 8, 1 << 2, 0, 0, 0, 0, 0, 255, 0xff, 0xff}, bytes.Repeat([]byte("e"), 1000)...)
	zl := encode(t, Deflate, data)
	tests := []struct {
		name string
		c    Coding
		body []byte
	}{
		{"gzip bad magic", Gzip, flip(gz, 0, 1)},
		{"gzip bad method", Gzip, flip(gz, 2, 1)},
		{"gzip reserved flag", Gzip, flip(gz, 3, 0x80)},
		{"gzip crc", Gzip, flip(gz, len(gz)-6, 1)},
		{"gzip size", Gzip, flip(gz, len(gz)-2, 1)},
		{"gzip data", Gzip, flip(gz, 30, 0xff)},
		{"gzip not gzip", Gzip, []byte("<html>hello</html>")},
		{"gzip huge comment", Gzip, hugeComment},
		{"gzip huge extra, truncated", Gzip, hugeExtra},
		{"zlib checksum", Deflate, flip(zl, len(zl)-1, 1)},
		{"zlib preset dictionary", Deflate, []byte{0x78, 0xbb, 0, 0, 0, 1, 3, 0}},
		{"deflate reserved block type", Deflate, []byte{0x07, 0, 0}},
		{"deflate stored length mismatch", Deflate, []byte{0x01, 5, 0, 5, 0, 'a'}},
		{"brotli bad header", Brotli, []byte{0xff, 0xff, 0xff, 0xff, 0xff}},
		{"brotli html", Brotli, []byte("<html>hello</html>")},
		{"brotli trailing data", Brotli, append(encode(t, Brotli, data), "xyz"...)},
		{"zstd trailing data", Zstd, append(encode(t, Zstd, data), "xyzw"...)},
		{"zstd bad magic", Zstd, []byte("<html>hello</html>")},
		{"zstd corrupt block", Zstd, flip(encode(t, Zstd, data), 20, 0xff)},
		// Frame header: magic, descriptor 0 (window descriptor follows), window exponent 31.
		{"zstd window too large", Zstd, []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 0xf8, 1, 0, 0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			got, err := decodeAll(t, bytes.NewReader(tt.body), []Coding{tt.c}, 0, 4096)
			if err == nil {
				t.Fatalf("no error, %d bytes", len(got))
			}
			wantDecodeError(t, err, tt.c)
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("took %v", d)
			}
			if !strings.HasPrefix(err.Error(), "decode: ") {
				t.Errorf("error %q lacks the package prefix", err)
			}
		})
	}
}

// A gzip header with a 64 KiB extra field is valid and decodes.
func TestGzipLargeExtra(t *testing.T) {
	data := text(100, 13)
	gz := encode(t, Gzip, data)
	hdr := []byte{0x1f, 0x8b, 8, 1 << 2, 0, 0, 0, 0, 0, 255, 0xff, 0xff}
	body := append(append(hdr, make([]byte, 0xffff)...), gz[10:]...)
	got, err := decodeAll(t, bytes.NewReader(body), []Coding{Gzip}, 0, 4096)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("%d bytes, %v", len(got), err)
	}
}

type failingReader struct {
	data []byte
	err  error
}

func (f *failingReader) Read(p []byte) (int, error) {
	if len(f.data) == 0 {
		return 0, f.err
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

// Errors of the body below are not decode errors: they come back unchanged.
func TestSourceErrorPassesThrough(t *testing.T) {
	boom := errors.New("connection reset")
	data := text(20_000, 14)
	for _, chain := range [][]Coding{{Gzip}, {Deflate}, {Brotli}, {Zstd}, {Gzip, Zstd}} {
		body := encodeChain(t, chain, data)
		for _, cut := range []int{0, 1, len(body) / 2} {
			_, err := decodeAll(t, &failingReader{data: body[:cut], err: boom}, chain, 0, 1024)
			if err != boom {
				t.Errorf("%v cut at %d: err = %v (%T), want the body's error unchanged", chain, cut, err, err)
			}
		}
	}
}

func TestLimit(t *testing.T) {
	data := text(100_000, 15)
	for _, c := range allCodings {
		body := encode(t, c, data)
		got, err := decodeAll(t, bytes.NewReader(body), []Coding{c}, int64(len(data)), 4096)
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("%v: limit == size: %d bytes, %v", c, len(got), err)
		}
		for _, limit := range []int64{1, 4096, int64(len(data)) - 1} {
			got, err = decodeAll(t, bytes.NewReader(body), []Coding{c}, limit, 4096)
			if !errors.Is(err, ErrDecodeLimit) || int64(len(got)) != limit || !bytes.Equal(got, data[:limit]) {
				t.Errorf("%v: limit %d: %d bytes, %v; want exactly the limit, then ErrDecodeLimit", c, limit, len(got), err)
			}
		}
	}
	// A legitimate stacked body at the limit is not hurt by the intermediate cap, even
	// when the data does not compress and the intermediate is larger than the output.
	rnd := random(200_000, 19)
	for _, chain := range [][]Coding{{Gzip, Gzip}, {Brotli, Zstd, Deflate}} {
		got, err := decodeAll(t, bytes.NewReader(encodeChain(t, chain, rnd)), chain, int64(len(rnd)), 4096)
		if err != nil || !bytes.Equal(got, rnd) {
			t.Errorf("%v of random data at the limit: %d bytes, %v", chain, len(got), err)
		}
	}
	// Intermediate data between stacked codings is capped too: 100k empty gzip members,
	// gzipped again, decode to nothing but would cost unbounded work per output byte.
	inner := bytes.Repeat(encode(t, Gzip, nil), 100_000)
	body := encode(t, Gzip, inner)
	got, err := decodeAll(t, bytes.NewReader(body), []Coding{Gzip, Gzip}, 100_000, 4096)
	if !errors.Is(err, ErrDecodeLimit) || len(got) != 0 {
		t.Errorf("intermediate over the cap: %d bytes, %v", len(got), err)
	}
}

func TestNewReaderErrors(t *testing.T) {
	if _, err := NewReader(strings.NewReader(""), []Coding{Gzip, Gzip, Gzip, Gzip, Gzip, Gzip}, 0); !errors.Is(err, ErrTooManyEncodings) {
		t.Errorf("six codings: %v", err)
	}
	if _, err := NewReader(strings.NewReader(""), []Coding{0}, 0); err == nil {
		t.Error("coding 0 accepted")
	}
	if _, err := NewReader(nil, []Coding{Gzip}, 0); err == nil {
		t.Error("nil body accepted")
	}
	if _, err := NewReader(strings.NewReader(""), []Coding{Gzip}, -1); err == nil {
		t.Error("negative limit accepted")
	}
}

type closeCounter struct {
	io.Reader
	closes int
}

func (c *closeCounter) Close() error { c.closes++; return errors.New("close error") }

func TestClose(t *testing.T) {
	data := text(50_000, 16)
	for _, c := range allCodings {
		src := &closeCounter{Reader: bytes.NewReader(encode(t, c, data))}
		r, err := NewReader(src, []Coding{c}, 0)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 100)
		if _, err := io.ReadFull(r, buf); err != nil {
			t.Fatal(err)
		}
		if err := r.Close(); err == nil || err.Error() != "close error" {
			t.Errorf("%v: Close = %v, want the body's Close error", c, err)
		}
		if err := r.Close(); err != nil || src.closes != 1 {
			t.Errorf("%v: second Close = %v, body closed %d times", c, err, src.closes)
		}
		if n, err := r.Read(buf); n != 0 || !errors.Is(err, ErrClosed) {
			t.Errorf("%v: Read after Close = %d, %v", c, n, err)
		}
		// The decoder abandoned mid-stream went back to its pool; the next body
		// decodes cleanly.
		got, err := decodeAll(t, bytes.NewReader(encode(t, c, data[:777])), []Coding{c}, 0, 512)
		if err != nil || !bytes.Equal(got, data[:777]) {
			t.Errorf("%v: after an abandoned body: %d bytes, %v", c, len(got), err)
		}
	}
}

// Close may be called while a Read is blocked in the body: it closes the body, which
// ends the Read, and neither hangs.
func TestCloseDuringRead(t *testing.T) {
	for _, c := range allCodings {
		pr, pw := io.Pipe()
		r, err := NewReader(pr, []Coding{c}, 0)
		if err != nil {
			t.Fatal(err)
		}
		body := encode(t, c, text(10_000, 17))
		go pw.Write(body[:len(body)/2]) // ends when the pipe is closed
		readDone := make(chan error, 1)
		go func() {
			_, err := io.Copy(io.Discard, r)
			readDone <- err
		}()
		r.Close()
		select {
		case err := <-readDone:
			if err == nil {
				t.Errorf("%v: Read after Close ended without error", c)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%v: Read still blocked 10s after Close", c)
		}
		pw.Close()
	}
}

func TestZstdWindowCap(t *testing.T) {
	body := []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 0xf8, 1, 0, 0}
	_, err := decodeAll(t, bytes.NewReader(body), []Coding{Zstd}, 0, 4096)
	if !errors.Is(err, zstd.ErrWindowSizeExceeded) {
		t.Fatalf("err = %v, want *Error wrapping zstd.ErrWindowSizeExceeded", err)
	}
	// 16 MiB window: over MaxZstdWindow.
	var b bytes.Buffer
	w, _ := zstd.NewWriter(&b, zstd.WithWindowSize(16<<20), zstd.WithEncoderConcurrency(1), zstd.WithSingleSegment(false))
	w.Write(text(20<<20, 18))
	w.Close()
	_, err = decodeAll(t, bytes.NewReader(b.Bytes()), []Coding{Zstd}, 0, 32<<10)
	if !errors.Is(err, zstd.ErrWindowSizeExceeded) {
		t.Fatalf("16 MiB window: err = %v, want ErrWindowSizeExceeded", err)
	}
	wantDecodeError(t, err, Zstd)
}

// A body that fails with io.ErrUnexpectedEOF (what an HTTP/2 body returns
// when its connection drops) or any other error, at every byte of the
// encoded stream, fails with that error: never a clean io.EOF with fewer
// bytes. klauspost's zstd decoder turned an io.ErrUnexpectedEOF before a
// frame's first byte into io.EOF: a zstd body cut off by a dropped
// connection before its first DATA frame read as a whole empty body
// (found by TestSoak's cut fault over HTTP/2).
func TestSourceErrorAtEveryByte(t *testing.T) {
	data := text(3000, 16)
	for _, boom := range []error{io.ErrUnexpectedEOF, errors.New("connection reset")} {
		for _, chain := range [][]Coding{{Gzip}, {Deflate}, {Brotli}, {Zstd}, {Gzip, Zstd}, {Zstd, Brotli}} {
			body := encodeChain(t, chain, data)
			for cut := range len(body) {
				got, err := decodeAll(t, &failingReader{data: body[:cut], err: boom}, chain, 0, 1024)
				if err != boom {
					t.Fatalf("%v cut at %d/%d by %q: %d bytes, err = %v (%T), want the body's error unchanged", chain, cut, len(body), boom, len(got), err, err)
				}
			}
		}
	}
}
