package h2

import (
	"bytes"
	"testing"
)

// TestChunksWriteAttachRead interleaves copied and attached blocks and
// reads them back in odd sizes: the bytes come out in order, and blocks are
// attached only where the queue's blocks are full.
func TestChunksWriteAttachRead(t *testing.T) {
	var c chunks
	var want []byte
	next := byte(0)
	fill := func(n int) []byte {
		p := make([]byte, n)
		for i := range p {
			p[i] = next
			next++
		}
		return p
	}
	var got []byte
	buf := make([]byte, 7001)
	for round := 0; round < 50; round++ {
		for _, n := range []int{1, 100, chunkSize, 5000, chunkSize, chunkSize - 1} {
			p := fill(n)
			want = append(want, p...)
			if n == chunkSize && c.full() {
				blk := chunkPool.Get().(*[chunkSize]byte)
				copy(blk[:], p)
				c.attach(blk, n)
			} else {
				c.write(p)
			}
			for i, sg := range c.segs[:max(len(c.segs)-1, 0)] {
				if sg.end != chunkSize && (i+1 >= len(c.segs) || c.segs[i+1].end != chunkSize) {
					t.Fatalf("round %d: block %d holds %d bytes before a partial one", round, i, sg.end)
				}
			}
		}
		for c.len() > round*10 {
			k := c.read(buf)
			got = append(got, buf[:k]...)
		}
	}
	for c.len() > 0 {
		k := c.read(buf)
		got = append(got, buf[:k]...)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("read %d bytes, wrote %d; contents differ", len(got), len(want))
	}
	c.release()
}
