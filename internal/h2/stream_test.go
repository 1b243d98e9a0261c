package h2

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
	"testing/synctest"
)

// TestStreamUsedTwice: a Stream carries one request; passing it again is
// refused before anything is sent.
func TestStreamUsedTwice(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cc, p := ready(t, plainConfig())
		var st Stream
		done := make(chan error, 1)
		go func() {
			resp, err := cc.RoundTripStream(context.Background(), get("/"), &st)
			if err == nil {
				resp.Body.Close()
			}
			done <- err
		}()
		h := p.nextOf(FrameHeaders)
		p.writeHeaders(h.StreamID, true, ":status", "204")
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if _, err := cc.RoundTripStream(context.Background(), get("/"), &st); !errors.Is(err, errStreamReused) {
			t.Fatalf("second use: %v", err)
		}
	})
}

// TestCloseDuringReadThenNewStreams closes a body while another goroutine
// waits in its Read: the waiting Read ends with ErrBodyClosed, and later
// streams (which may get the closed stream's notify channel) still get
// their wakeups.
func TestCloseDuringReadThenNewStreams(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cc, p := ready(t, plainConfig())
		ch := goRoundTrip(context.Background(), cc, get("/"))
		h := p.nextOf(FrameHeaders)
		p.writeHeaders(h.StreamID, false, ":status", "200")
		r := <-ch
		if r.err != nil {
			t.Fatal(r.err)
		}
		readErr := make(chan error, 1)
		go func() {
			_, err := r.resp.Body.Read(make([]byte, 10))
			readErr <- err
		}()
		synctest.Wait() // the Read waits for data
		r.resp.Body.Close()
		if err := <-readErr; !errors.Is(err, ErrBodyClosed) {
			t.Fatalf("waiting Read ended with %v, want ErrBodyClosed", err)
		}
		for i := range 3 {
			ch := goRoundTrip(context.Background(), cc, get("/"))
			h := p.nextOf(FrameHeaders)
			p.writeHeaders(h.StreamID, true, ":status", "204")
			r := <-ch
			if r.err != nil {
				t.Fatalf("request %d: %v", i, r.err)
			}
			r.resp.Body.Close()
		}
	})
}

// TestNotifyChannelsReused: sequential requests whose bodies are closed
// reuse one notify channel instead of making one each.
func TestNotifyChannelsReused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cc, p := ready(t, plainConfig())
		for i := range 4 {
			ch := goRoundTrip(context.Background(), cc, get("/"))
			h := p.nextOf(FrameHeaders)
			p.writeHeaders(h.StreamID, true, ":status", "204")
			r := <-ch
			if r.err != nil {
				t.Fatalf("request %d: %v", i, r.err)
			}
			r.resp.Body.Close()
			cc.mu.Lock()
			spare := len(cc.spareChans)
			cc.mu.Unlock()
			if spare != 1 {
				t.Fatalf("after request %d: %d spare channels, want 1", i, spare)
			}
		}
	})
}

// TestBodyWriteTo copies a body of whole and partial blocks with io.Copy,
// which uses WriteTo: every byte arrives, in order, and the windows are
// given back (the peer could send more than the initial windows allow).
func TestBodyWriteTo(t *testing.T) {
	const size = 8<<20 + 12345 // past the stream window of 6 MiB
	cc := loopback(t, newFastPeer(size), chromeConfig())
	resp, err := cc.RoundTrip(context.Background(), benchRequest())
	if err != nil {
		t.Fatal(err)
	}
	var w xCounter
	n, err := io.Copy(&w, resp.Body)
	if err != nil || n != size || w.n != size || w.bad {
		t.Fatalf("copied %d bytes (%d written, foreign bytes %v): %v", n, w.n, w.bad, err)
	}
	if err := resp.Body.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestBodyWriteToReset: a reset in the middle of the body ends WriteTo
// with the StreamError.
func TestBodyWriteToReset(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cc, p := ready(t, plainConfig())
		ch := goRoundTrip(context.Background(), cc, get("/"))
		h := p.nextOf(FrameHeaders)
		p.writeHeaders(h.StreamID, false, ":status", "200")
		r := <-ch
		if r.err != nil {
			t.Fatal(r.err)
		}
		p.nc.Write(appendData(nil, h.StreamID, false, bytes.Repeat([]byte("x"), 100)))
		p.nc.Write(appendRSTStream(nil, h.StreamID, ErrCodeInternal))
		var w xCounter
		_, err := io.Copy(&w, r.resp.Body)
		var se StreamError
		if !errors.As(err, &se) || se.Code != ErrCodeInternal {
			t.Fatalf("got %v, want a StreamError INTERNAL_ERROR", err)
		}
		r.resp.Body.Close()
	})
}

// xCounter counts the bytes written to it and notes any that is not 'x'.
type xCounter struct {
	n   int64
	bad bool
}

func (w *xCounter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	if len(bytes.Trim(p, "x")) > 0 {
		w.bad = true
	}
	return len(p), nil
}
