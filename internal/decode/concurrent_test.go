package decode

import (
	"bytes"
	"fmt"
	"sync"
	"testing"
)

// Many bodies decoded at once share the decoder pools; each must get exactly its own
// bytes (a decoder handed to two bodies would mix them).
func TestConcurrentBodies(t *testing.T) {
	type job struct {
		chain []Coding
		body  []byte
		want  []byte
	}
	var jobs []job
	for i, chain := range [][]Coding{{Gzip}, {Deflate}, {Brotli}, {Zstd}, {Gzip, Brotli}, {Zstd, Gzip}} {
		data := text(5000+i*3000, uint64(100+i))
		jobs = append(jobs, job{chain, encodeChain(t, chain, data), data})
	}
	const workers, rounds = 8, 40
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for w := range workers {
		wg.Go(func() {
			for i := range rounds {
				j := jobs[(w+i)%len(jobs)]
				r, err := NewReader(bytes.NewReader(j.body), j.chain, 0)
				if err != nil {
					errs <- err
					return
				}
				got := make([]byte, 0, len(j.want))
				buf := make([]byte, 1+(w*997+i*131)%4096)
				abandon := i%5 == 4 // return its decoders to the pools mid-stream
				for range len(j.want) + 2 {
					n, err := r.Read(buf)
					got = append(got, buf[:n]...)
					if err != nil || abandon {
						break
					}
				}
				r.Close()
				if abandon {
					if !bytes.HasPrefix(j.want, got) {
						errs <- fmt.Errorf("worker %d round %d %v: abandoned body read wrong bytes", w, i, j.chain)
						return
					}
					continue
				}
				if !bytes.Equal(got, j.want) {
					errs <- fmt.Errorf("worker %d round %d %v: got %d bytes, want %d", w, i, j.chain, len(got), len(j.want))
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
