package h2

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
)

// deliveries records how many body bytes WriteTo has handed over.
type deliveries struct {
	mu sync.Mutex
	n  int
}

func (d *deliveries) Write(p []byte) (int, error) {
	d.mu.Lock()
	d.n += len(p)
	d.mu.Unlock()
	return len(p), nil
}

func (d *deliveries) got() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.n
}

// bigWindows is a Config whose windows let a server send 8 MiB unasked,
// more than the downloads of these tests (at most 4 batches).
func bigWindows() *Config {
	return &Config{
		Settings:         []Setting{{ID: SettingEnablePush, Val: 0}, {ID: SettingInitialWindowSize, Val: 8 << 20}},
		ConnWindowUpdate: 8 << 20,
	}
}

// download starts a GET whose response has Content-Length n and copies its
// body into d from another goroutine (io.Copy, so through WriteTo); it
// returns the stream id and the copy's result. Call it inside a synctest
// bubble.
func download(t *testing.T, cc *ClientConn, p *peer, n int, d *deliveries) (uint32, <-chan error) {
	t.Helper()
	return downloadCtx(t, context.Background(), cc, p, n, d)
}

// downloadCtx is download with the request's context.
func downloadCtx(t *testing.T, ctx context.Context, cc *ClientConn, p *peer, n int, d *deliveries) (uint32, <-chan error) {
	t.Helper()
	ch := goRoundTrip(ctx, cc, get("/big"))
	h := p.nextOf(FrameHeaders)
	p.writeHeaders(h.StreamID, false, ":status", "200", "content-length", strconv.Itoa(n))
	r := <-ch
	if r.err != nil {
		t.Fatal(r.err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := io.Copy(d, r.resp.Body)
		r.resp.Body.Close()
		done <- err
	}()
	synctest.Wait()
	return h.StreamID, done
}

var block = bytes.Repeat([]byte{'x'}, chunkSize)

// TestLoneDownloadWakesPerBatch: a lone stream's WriteTo is woken once per
// batchBlocks frames while a whole batch is still to come, then per frame.
// The expected hand-overs come from a model of that rule.
func TestLoneDownloadWakesPerBatch(t *testing.T) {
	const frames = 2*batchBlocks + 5
	synctest.Test(t, func(t *testing.T) {
		cc, p := ready(t, bigWindows())
		var d deliveries
		id, done := download(t, cc, p, frames*chunkSize, &d)
		delivered, batching := 0, true // in blocks; the first wait saw frames >= batchBlocks to come
		for i := 1; i <= frames; i++ {
			p.writeData(id, i == frames, block)
			synctest.Wait()
			if !batching || i-delivered >= batchBlocks || i == frames {
				delivered = i
				batching = frames-delivered >= batchBlocks
			}
			if got, want := d.got(), delivered*chunkSize; got != want {
				t.Fatalf("after frame %d: %d bytes handed over, want %d", i, got, want)
			}
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}

// TestBatchEndsWhenTheRestCannotFill: the last bytes of a body, short of a
// batch, are handed over as they arrive even before END_STREAM.
func TestBatchEndsWhenTheRestCannotFill(t *testing.T) {
	const frames = batchBlocks + 4
	synctest.Test(t, func(t *testing.T) {
		cc, p := ready(t, bigWindows())
		var d deliveries
		id, done := download(t, cc, p, frames*chunkSize, &d)
		for range frames {
			p.writeData(id, false, block)
		}
		synctest.Wait()
		if got := d.got(); got != frames*chunkSize {
			t.Fatalf("%d bytes handed over before END_STREAM, want all %d", got, frames*chunkSize)
		}
		p.writeData(id, true, nil)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}

// TestBatchEndsForAnotherStream: a second stream on the connection wakes
// the batching one, which then takes its frames one by one: the windows
// are shared now.
func TestBatchEndsForAnotherStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cc, p := ready(t, bigWindows())
		var d deliveries
		id, done := download(t, cc, p, 4*batchBlocks*chunkSize, &d)
		p.writeData(id, false, block)
		synctest.Wait()
		if got := d.got(); got != 0 {
			t.Fatalf("%d bytes handed over, want the frame held", got)
		}
		ch := goRoundTrip(context.Background(), cc, get("/other"))
		h2 := p.nextOf(FrameHeaders)
		synctest.Wait()
		if got := d.got(); got != chunkSize {
			t.Fatalf("%d bytes handed over once another stream opened, want %d", got, chunkSize)
		}
		p.writeData(id, false, block)
		synctest.Wait()
		if got := d.got(); got != 2*chunkSize {
			t.Fatalf("%d bytes handed over with two streams open, want %d", got, 2*chunkSize)
		}
		p.writeHeaders(h2.StreamID, true, ":status", "204")
		if r := <-ch; r.err != nil {
			t.Fatal(r.err)
		}
		p.write(appendRSTStream(nil, id, ErrCodeCancel))
		if err := <-done; err == nil {
			t.Fatal("the reset download ended without an error")
		}
	})
}

// TestNoBatchWithinSmallWindows: with RFC 9113's 65,535-byte windows a
// batch could never fill without a WINDOW_UPDATE, so every frame is handed
// over at once (no deadlock).
func TestNoBatchWithinSmallWindows(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cc, p := ready(t, plainConfig())
		var d deliveries
		id, done := download(t, cc, p, 3*chunkSize, &d)
		for i := 1; i <= 3; i++ {
			p.writeData(id, i == 3, block)
			synctest.Wait()
			if got := d.got(); got != i*chunkSize {
				t.Fatalf("after frame %d: %d bytes handed over, want %d", i, got, i*chunkSize)
			}
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}

// TestBatchHeldFramesFailOnReset: a reset while frames are held ends the
// copy with the stream's error, and the connection goes on.
func TestBatchHeldFramesFailOnReset(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cc, p := ready(t, bigWindows())
		var d deliveries
		id, done := download(t, cc, p, 4*batchBlocks*chunkSize, &d)
		p.writeData(id, false, block)
		p.writeData(id, false, block)
		p.write(appendRSTStream(nil, id, ErrCodeInternal))
		wantStreamError(t, <-done, ErrCodeInternal)
		roundTripOK(t, cc, p)
	})
}

// TestBatchContextEnds: the request's context ending while frames are held
// ends the copy with the context's error.
func TestBatchContextEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cc, p := ready(t, bigWindows())
		ctx, cancel := context.WithCancel(context.Background())
		var d deliveries
		id, done := downloadCtx(t, ctx, cc, p, 4*batchBlocks*chunkSize, &d)
		p.writeData(id, false, block)
		synctest.Wait()
		cancel()
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("copy ended with %v, want the context's error", err)
		}
	})
}
