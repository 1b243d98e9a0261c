package h2

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// TestSilentTimeoutRetiresConn (RELIABILITY H2-24): a request whose
// deadline passes while nothing at all has arrived on its connection since
// it was sent leaves the connection in doubt (a stalled peer, a dead path):
// it takes no new stream, and closes once its streams end. Without this a
// stalled connection stayed in the pool and every request sent on it waited
// out its deadline (TestSoak: a quarter of the pooled requests to a
// stalling relay). A deadline on a connection that goes on receiving
// frames, or a cancelled context (the caller's choice, not the peer's
// silence), leaves it in use.
func TestSilentTimeoutRetiresConn(t *testing.T) {
	t.Run("silent", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			cc, p := ready(t, plainConfig())
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			ch := goRoundTrip(ctx, cc, get("/stalled"))
			p.nextOf(FrameHeaders)
			time.Sleep(2 * time.Second)
			if r := <-ch; !errors.Is(r.err, context.DeadlineExceeded) {
				t.Fatalf("got %v, want the deadline", r.err)
			}
			synctest.Wait()
			if cc.CanTakeNewRequest() || cc.Usable() {
				t.Fatal("a connection silent since the request that timed out takes new requests")
			}
			if cc.Err() == nil {
				t.Fatal("the silent connection, idle now, is still open")
			}
		})
	})
	t.Run("silent-head-timeout", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			cc, p := ready(t, plainConfig())
			req := get("/stalled")
			req.HeadTimeout = time.Second
			ch := goRoundTrip(context.Background(), cc, req)
			p.nextOf(FrameHeaders)
			time.Sleep(2 * time.Second)
			var te *TimeoutError
			if r := <-ch; !errors.As(r.err, &te) {
				t.Fatalf("got %v, want a TimeoutError", r.err)
			}
			synctest.Wait()
			if cc.Usable() {
				t.Fatal("a connection silent since the request that timed out takes new requests")
			}
		})
	})
	t.Run("silent-with-others", func(t *testing.T) {
		// Streams in flight go on; new ones go elsewhere.
		synctest.Test(t, func(t *testing.T) {
			cc, p := ready(t, plainConfig())
			other := goRoundTrip(context.Background(), cc, get("/other"))
			f := p.nextOf(FrameHeaders)
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			ch := goRoundTrip(ctx, cc, get("/stalled"))
			p.nextOf(FrameHeaders)
			time.Sleep(2 * time.Second)
			if r := <-ch; !errors.Is(r.err, context.DeadlineExceeded) {
				t.Fatalf("got %v, want the deadline", r.err)
			}
			synctest.Wait()
			if cc.Usable() {
				t.Fatal("a connection silent since the request that timed out takes new requests")
			}
			p.writeHeaders(f.StreamID, true, ":status", "200")
			if r := <-other; r.err != nil {
				t.Fatalf("the stream in flight failed: %v", r.err)
			}
			synctest.Wait()
			if cc.Err() == nil {
				t.Fatal("the connection in doubt, idle now, is still open")
			}
		})
	})
	t.Run("frames-arrive", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			cc, p := ready(t, plainConfig())
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			ch := goRoundTrip(ctx, cc, get("/slow"))
			p.nextOf(FrameHeaders)
			time.Sleep(500 * time.Millisecond)
			p.write(appendPing(nil, false, [8]byte{7}))
			p.nextOf(FramePing)
			time.Sleep(time.Second)
			if r := <-ch; !errors.Is(r.err, context.DeadlineExceeded) {
				t.Fatalf("got %v, want the deadline", r.err)
			}
			synctest.Wait()
			if !cc.CanTakeNewRequest() {
				t.Fatal("a connection that answered a PING after the request was sent was retired by its deadline")
			}
		})
	})
	t.Run("cancelled", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			cc, p := ready(t, plainConfig())
			ctx, cancel := context.WithCancel(context.Background())
			ch := goRoundTrip(ctx, cc, get("/left"))
			p.nextOf(FrameHeaders)
			time.Sleep(time.Second)
			cancel()
			if r := <-ch; !errors.Is(r.err, context.Canceled) {
				t.Fatalf("got %v, want context.Canceled", r.err)
			}
			synctest.Wait()
			if !cc.CanTakeNewRequest() {
				t.Fatal("a cancelled request retired its connection")
			}
		})
	})
}
