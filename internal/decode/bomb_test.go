package decode

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"runtime"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zstd"
)

const (
	bombSize  = 1 << 30  // decoded size of each bomb
	bombLimit = 10 << 20 // the limit it must stop at
)

// bomb returns a body that decodes to bombSize zero bytes.
func bomb(t *testing.T, c Coding) []byte {
	t.Helper()
	zeros := make([]byte, 1<<20)
	var b bytes.Buffer
	switch c {
	case Gzip:
		// One 64 MiB member, repeated: about 1 MiB on the wire.
		w, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
		for range 64 {
			w.Write(zeros)
		}
		w.Close()
		return bytes.Repeat(b.Bytes(), bombSize/(64<<20))
	case Deflate:
		w, _ := gzip.NewWriterLevel(&b, gzip.BestCompression) // raw deflate inside gzip
		for range 64 {
			w.Write(zeros)
		}
		w.Close()
		member := b.Bytes()
		// Strip the gzip framing: a zlib stream of 64 MiB, a prefix of the 1 GiB one, is
		// enough to cross the limit; decoding stops long before the end either way.
		return append([]byte{0x78, 0xda}, member[10:len(member)-8]...)
	case Brotli:
		w := brotli.NewWriterLevel(&b, 1)
		for range bombSize / len(zeros) {
			w.Write(zeros)
		}
		w.Close()
	case Zstd:
		w, _ := zstd.NewWriter(&b, zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(8<<20))
		for range bombSize / len(zeros) {
			w.Write(zeros)
		}
		w.Close()
	}
	return b.Bytes()
}

// D-02, S-12: 1 GiB bombs stop at a 10 MiB limit, fast and with bounded memory.
func TestBomb(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 1 GiB bombs")
	}
	if raceEnabled {
		t.Skip("time and memory bounds do not hold under the race detector; TestLimit covers the logic")
	}
	for _, c := range allCodings {
		t.Run(c.String(), func(t *testing.T) {
			body := bomb(t, c)
			t.Logf("%v bomb: %d bytes on the wire", c, len(body))
			checkBomb(t, body, []Coding{c})
		})
	}
	t.Run("gzip inside br", func(t *testing.T) {
		var b bytes.Buffer
		w := brotli.NewWriterLevel(&b, 1)
		w.Write(bomb(t, Gzip))
		w.Close()
		checkBomb(t, b.Bytes(), []Coding{Gzip, Brotli})
	})
}

func checkBomb(t *testing.T, body []byte, codings []Coding) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	r, err := NewReader(bytes.NewReader(body), codings, bombLimit)
	if err != nil {
		t.Fatal(err)
	}
	n, err := io.CopyBuffer(io.Discard, r, make([]byte, 32<<10))
	r.Close()
	elapsed := time.Since(start)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrDecodeLimit) || n != bombLimit {
		t.Fatalf("decoded %d bytes, err %v; want %d and ErrDecodeLimit", n, err, bombLimit)
	}
	const maxTime = 2 * time.Second
	if elapsed > maxTime {
		t.Errorf("took %v, want < %v", elapsed, maxTime)
	}
	heap := int64(after.HeapSys) - int64(before.HeapSys)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("%v: %v, HeapSys +%d KiB, allocated %d KiB", codings, elapsed, heap>>10, alloc>>10)
	if heap > 64<<20 || alloc > 64<<20 {
		t.Errorf("HeapSys grew %d bytes and %d were allocated, want both < 64 MiB", heap, alloc)
	}
}
