package h2

import (
	"context"
	"errors"
	"io"
	"testing"
	"testing/synctest"
	"time"
)

// TestH2_25ReservationsUnderLoweredLimit is RELIABILITY H2-25: slots
// reserved under the initial limit of 100, before the server's first
// SETTINGS lowered MAX_CONCURRENT_STREAMS to 2, open no stream past the new
// limit: each further HEADERS waits until a stream ends, ahead of requests
// that reserved nothing; a reservation whose context ends while it waits
// gives its slot back. (Go's server answers a stream over a limit it has
// seen acknowledged with PROTOCOL_ERROR.)
func TestH2_25ReservationsUnderLoweredLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cc, p := newPeer(t, plainConfig())
		p.nextOf(FrameSettings)
		for i := range 5 {
			if !cc.ReserveNewRequest() {
				t.Fatalf("reservation %d refused under the initial limit", i)
			}
		}
		p.writeSettings(Setting{ID: SettingMaxConcurrentStreams, Val: 2})
		for {
			if f := p.next(); f.Type == FrameSettings && f.Flags&FlagAck != 0 {
				break
			}
		}
		ctx := context.Background()
		short, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		var chs []<-chan result
		for range 4 {
			chs = append(chs, goRoundTrip(ctx, cc, get("/r")))
		}
		synctest.Wait()                                    // two streams open, two reservations wait
		gaveUp := goRoundTrip(short, cc, get("/gives-up")) // the fifth reservation, waiting
		synctest.Wait()
		unreserved := goRoundTrip(ctx, cc, get("/late"))
		synctest.Wait()

		open := map[uint32]bool{}
		var order []uint32
		read := func() {
			t.Helper()
			for {
				select {
				case f := <-p.frames:
					if f.Type == FrameHeaders {
						open[f.StreamID] = true
						order = append(order, f.StreamID)
					}
					continue
				default:
				}
				break
			}
			if len(open) > 2 {
				t.Fatalf("%d streams open under a limit of 2: %v", len(open), order)
			}
		}
		read()
		if len(open) != 2 {
			t.Fatalf("%d streams opened, want the limit of 2", len(open))
		}
		time.Sleep(2 * time.Second) // the fifth reservation's context ends
		if r := <-gaveUp; r.err != context.DeadlineExceeded {
			t.Fatalf("a waiting reservation whose context ended: %v", r.err)
		}
		// End the open streams one by one: each frees one slot.
		served := 0
		for served < 5 {
			var id uint32
			for k := range open {
				id = k
				break
			}
			if id == 0 {
				t.Fatalf("nothing open after %d served (order %v)", served, order)
			}
			delete(open, id)
			p.writeHeaders(id, true, ":status", "200")
			served++
			synctest.Wait()
			read()
		}
		for i, ch := range chs {
			if r := <-ch; r.err != nil {
				t.Fatalf("request %d: %v", i, r.err)
			}
		}
		if r := <-unreserved; r.err != nil {
			t.Fatal(r.err)
		}
		// The request without a reservation went last.
		if len(order) != 5 {
			t.Fatalf("%d HEADERS, want 5: %v", len(order), order)
		}
	})
}

// TestH2_26WaitersNotSent is RELIABILITY H2-26: when a GOAWAY ends a
// connection, a request still waiting for a stream under
// MAX_CONCURRENT_STREAMS gets an error matching ErrNotSent (and
// ErrRetryable): nothing of it was written, its body unread, so that the
// client may move it without spending its one retry; a request whose
// HEADERS went out above the last stream id is retryable but not ErrNotSent.
func TestH2_26WaitersNotSent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cc, p := ready(t, plainConfig(), Setting{ID: SettingMaxConcurrentStreams, Val: 2})
		ctx := context.Background()
		first := goRoundTrip(ctx, cc, get("/1"))
		id1 := p.nextOf(FrameHeaders).StreamID
		second := goRoundTrip(ctx, cc, get("/2"))
		p.nextOf(FrameHeaders)
		body := &countingReader{}
		waiter := goRoundTrip(ctx, cc, &Request{Method: "POST", Scheme: "https", Authority: "peer.test", Path: "/3", Body: body, ContentLength: -1})
		synctest.Wait()
		p.write(appendGoAway(nil, id1, ErrCodeNo, ""))
		r := <-waiter
		if !errors.Is(r.err, ErrNotSent) || !CanRetry(r.err) {
			t.Fatalf("the waiting request: %v, want ErrNotSent and retryable", r.err)
		}
		if body.reads != 0 {
			t.Fatalf("the waiting request's body was read %d times", body.reads)
		}
		r = <-second
		if errors.Is(r.err, ErrNotSent) || !CanRetry(r.err) {
			t.Fatalf("the request sent above the last stream: %v, want retryable and not ErrNotSent", r.err)
		}
		p.writeHeaders(id1, true, ":status", "200")
		if r := <-first; r.err != nil {
			t.Fatal(r.err)
		}
	})
}

type countingReader struct{ reads int }

func (c *countingReader) Read(p []byte) (int, error) {
	c.reads++
	return 0, io.EOF
}
