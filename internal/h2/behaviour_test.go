package h2

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/guise-http/guise/fields"
)

// RELIABILITY L-18.
func TestBodyCloseEarlyReturnsCredit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cc, p := ready(t, plainConfig())
		ch := goRoundTrip(context.Background(), cc, get("/"))
		h := p.nextOf(FrameHeaders)
		p.writeHeaders(h.StreamID, false, ":status", "200")
		p.writeData(h.StreamID, false, make([]byte, 16000))
		p.writeData(h.StreamID, false, make([]byte, 16000))
		r := <-ch
		synctest.Wait()
		r.resp.Body.Close()
		rst := p.nextOf(FrameRSTStream)
		if rst.StreamID != h.StreamID || ErrCode(binary.BigEndian.Uint32(rst.payload)) != ErrCodeCancel {
			t.Fatalf("RST %d %x", rst.StreamID, rst.payload)
		}
		p.writeData(h.StreamID, false, make([]byte, 1000)) // in flight; dropped
		wu := p.nextOf(FrameWindowUpdate)
		if wu.StreamID != 0 || binary.BigEndian.Uint32(wu.payload) != 33000 {
			t.Fatalf("WINDOW_UPDATE %d +%d, want 0 +33000", wu.StreamID, binary.BigEndian.Uint32(wu.payload))
		}
		if _, err := r.resp.Body.Read(make([]byte, 1)); !errors.Is(err, ErrBodyClosed) {
			t.Fatalf("read after close: %v", err)
		}
		if !cc.Idle() {
			t.Fatal("not idle")
		}
	})
}

func TestReceiveWindowUpdates(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cc, p := ready(t, firefoxConfig())
		ch := goRoundTrip(context.Background(), cc, get("/"))
		h := p.nextOf(FrameHeaders)
		if wu := p.next(); wu.Type != FrameWindowUpdate || wu.StreamID != h.StreamID {
			t.Fatalf("want stream WINDOW_UPDATE after HEADERS, got %v", wu.Type)
		}
		p.writeHeaders(h.StreamID, false, ":status", "200")
		r := <-ch
		// Stream window 131072+12451840; reading half of it owes an update.
		const total = 7 << 20
		chunk := make([]byte, 16384)
		go func() {
			for sent := 0; sent < total; sent += len(chunk) {
				p.writeData(h.StreamID, false, chunk)
			}
		}()
		if _, err := io.ReadFull(r.resp.Body, make([]byte, total)); err != nil {
			t.Fatal(err)
		}
		var streamWU, connWU bool
		for !streamWU || !connWU {
			f := p.nextOf(FrameWindowUpdate)
			streamWU = streamWU || f.StreamID == h.StreamID
			connWU = connWU || f.StreamID == 0
		}
		p.writeData(h.StreamID, true, nil)
		if n, err := io.Copy(io.Discard, r.resp.Body); n != 0 || err != nil {
			t.Fatalf("after the data: %d, %v", n, err)
		}
		r.resp.Body.Close()
	})
}

func TestContextCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cc, p := ready(t, plainConfig())
		ctx, cancel := context.WithCancel(context.Background())
		ch := goRoundTrip(ctx, cc, get("/"))
		h := p.nextOf(FrameHeaders)
		cancel()
		if r := <-ch; !errors.Is(r.err, context.Canceled) {
			t.Fatalf("got %v", r.err)
		}
		if f := p.nextOf(FrameRSTStream); f.StreamID != h.StreamID {
			t.Fatal("no RST_STREAM")
		}
		// Cancelling while reading the body.
		ctx, cancel = context.WithCancel(context.Background())
		ch = goRoundTrip(ctx, cc, get("/"))
		h = p.nextOf(FrameHeaders)
		p.writeHeaders(h.StreamID, false, ":status", "200")
		r := <-ch
		go func() { time.Sleep(time.Second); cancel() }()
		if _, err := io.ReadAll(r.resp.Body); !errors.Is(err, context.Canceled) {
			t.Fatalf("body: %v", err)
		}
		r.resp.Body.Close()
		if f := p.nextOf(FrameRSTStream); f.StreamID != h.StreamID {
			t.Fatal("no RST_STREAM")
		}
	})
}

// RELIABILITY L-06, L-07. Both timeouts meet a peer silent since the
// request (or its head), which retires the connection (H2-24): the body's
// timeout is tested on a second connection.
func TestTimeouts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cc, _ := ready(t, plainConfig())
		req := get("/")
		req.HeadTimeout = 3 * time.Second
		req.BodyIdleTimeout = 2 * time.Second
		start := time.Now()
		_, err := cc.RoundTrip(context.Background(), req)
		var te *TimeoutError
		if !errors.As(err, &te) || te.Phase != PhaseHead || time.Since(start) != 3*time.Second {
			t.Fatalf("got %v after %v", err, time.Since(start))
		}
		synctest.Wait()
		if cc.Usable() {
			t.Fatal("the connection silent since the request that timed out is reused")
		}
		cc, p := ready(t, plainConfig())
		ch := goRoundTrip(context.Background(), cc, req)
		h := p.nextOf(FrameHeaders)
		p.writeHeaders(h.StreamID, false, ":status", "200")
		r := <-ch
		if _, err := io.ReadAll(r.resp.Body); !errors.As(err, &te) || te.Phase != PhaseBodyIdle {
			t.Fatalf("body: %v", err)
		}
		r.resp.Body.Close()
		synctest.Wait()
		if cc.Usable() {
			t.Fatal("the connection silent since the head of the body that timed out is reused")
		}
	})
}

func TestInterimResponses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cc, p := ready(t, plainConfig())
		ch := goRoundTrip(context.Background(), cc, get("/"))
		h := p.nextOf(FrameHeaders)
		p.writeHeaders(h.StreamID, false, ":status", "100")
		p.writeHeaders(h.StreamID, false, ":status", "103", "link", "</a>")
		p.writeHeaders(h.StreamID, true, ":status", "200", "x-a", "1")
		r := <-ch
		if r.err != nil || r.resp.StatusCode != 200 || r.resp.Header.Get("x-a") != "1" || r.resp.ContentLength != 0 {
			t.Fatalf("%v %+v", r.err, r.resp)
		}
		r.resp.Body.Close()
		ch = goRoundTrip(context.Background(), cc, get("/"))
		h = p.nextOf(FrameHeaders)
		for range 9 {
			p.writeHeaders(h.StreamID, false, ":status", "103")
		}
		wantStreamError(t, (<-ch).err, ErrCodeProtocol)
	})
}

// TestRequestBodyFlowControl sends a body larger than the peer's windows;
// it goes out as the peer grants credit, negative windows included.
func TestRequestBodyFlowControl(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cc, p := ready(t, plainConfig(), Setting{ID: SettingInitialWindowSize, Val: 1000})
		body := bytes.Repeat([]byte("0123456789"), 10000) // 100000 bytes
		req := get("/up")
		req.Method = "POST"
		req.Body = bytes.NewReader(body)
		req.ContentLength = int64(len(body))
		req.Trailer = fields.Header{{Name: "x-sum", Value: "ok"}}
		ch := goRoundTrip(context.Background(), cc, req)
		h := p.nextOf(FrameHeaders)
		if h.Flags&FlagEndStream != 0 {
			t.Fatal("END_STREAM on HEADERS with a body")
		}
		var got []byte
		var tr frame
		readData := func() {
			for {
				synctest.Wait()
				select {
				case f := <-p.frames:
					if f.Type == FrameData {
						got = append(got, f.payload...)
					}
					if f.Type == FrameHeaders {
						tr = f
					}
					continue
				default:
				}
				return
			}
		}
		readData()
		if len(got) != 1000 {
			t.Fatalf("sent %d bytes with a 1000-byte stream window", len(got))
		}
		// Shrink the window below zero: nothing more may be sent.
		p.writeSettings(Setting{ID: SettingInitialWindowSize, Val: 500})
		p.write(appendWindowUpdate(nil, h.StreamID, 400))
		readData()
		if len(got) != 1000 {
			t.Fatalf("sent with a negative window: %d", len(got))
		}
		p.writeSettings(Setting{ID: SettingInitialWindowSize, Val: 1 << 20})
		for len(got) < len(body) {
			p.write(appendWindowUpdate(nil, 0, 16384))
			readData()
		}
		if !bytes.Equal(got, body) {
			t.Fatal("body differs")
		}
		if tr.Flags&FlagEndStream == 0 {
			t.Fatal("trailers without END_STREAM")
		}
		if fs := p.decode(h); len(fs) == 0 {
			t.Fatal("no request fields")
		}
		if fs := p.decode(tr); len(fs) != 1 || fs[0].Name != "x-sum" {
			t.Fatalf("trailers %v", fs)
		}
		p.writeHeaders(h.StreamID, true, ":status", "201")
		if r := <-ch; r.err != nil || r.resp.StatusCode != 201 {
			t.Fatal(r.err)
		}
	})
}

// writeCounter counts Write calls on a net.Conn.
type writeCounter struct {
	net.Conn
	mu     sync.Mutex
	writes int
}

func (w *writeCounter) Write(b []byte) (int, error) {
	w.mu.Lock()
	w.writes++
	w.mu.Unlock()
	return w.Conn.Write(b)
}

func TestSmallRequestOneWrite(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, s := net.Pipe()
		wc := &writeCounter{Conn: c}
		done := make(chan []byte)
		go func() {
			b, _ := io.ReadAll(s)
			done <- b
		}()
		cc, err := NewClientConn(wc, firefoxConfig())
		if err != nil {
			t.Fatal(err)
		}
		req := get("/")
		req.Method = "POST"
		req.BodyBytes = []byte("hello")
		req.ContentLength = 5
		ctx, cancel := context.WithCancel(context.Background())
		go cc.RoundTrip(ctx, req)
		synctest.Wait()
		wc.mu.Lock()
		n := wc.writes
		wc.mu.Unlock()
		if n != 2 {
			t.Fatalf("%d writes for preface + one request, want 2", n)
		}
		cancel()
		synctest.Wait()
		cc.Close()
		s.Close()
		b := <-done
		// HEADERS, WINDOW_UPDATE, DATA+END_STREAM follow the preface frames.
		if !bytes.Contains(b, appendData(nil, 3, true, []byte("hello"))) {
			t.Fatal("no DATA with END_STREAM")
		}
	})
}

func TestShutdownAndReserve(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cc, p := ready(t, plainConfig(), Setting{ID: SettingMaxConcurrentStreams, Val: 2})
		idle := make(chan struct{}, 4)
		cc.OnIdle(func(*ClientConn) { idle <- struct{}{} })
		if !cc.ReserveNewRequest() || !cc.ReserveNewRequest() || cc.ReserveNewRequest() {
			t.Fatal("reservations do not follow MAX_CONCURRENT_STREAMS")
		}
		ch := goRoundTrip(context.Background(), cc, get("/"))
		h := p.nextOf(FrameHeaders)
		ch2 := goRoundTrip(context.Background(), cc, get("/2"))
		h2 := p.nextOf(FrameHeaders)
		if cc.ActiveStreams() != 2 || cc.CanTakeNewRequest() {
			t.Fatal("slots")
		}
		p.writeHeaders(h2.StreamID, true, ":status", "204")
		(<-ch2).resp.Body.Close()
		done := make(chan error)
		go func() { done <- cc.Shutdown(context.Background()) }()
		if f := p.nextOf(FrameGoAway); f.StreamID != 0 {
			t.Fatal("GOAWAY")
		}
		if _, err := cc.RoundTrip(context.Background(), get("/late")); !CanRetry(err) {
			t.Fatalf("request during shutdown: %v", err)
		}
		p.writeHeaders(h.StreamID, true, ":status", "204")
		r := <-ch
		if r.err != nil {
			t.Fatal(r.err)
		}
		r.resp.Body.Close()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if _, err := cc.RoundTrip(context.Background(), get("/")); !errors.Is(err, ErrClosed) {
			t.Fatalf("after shutdown: %v", err)
		}
	})
}

// TestCloseWhenIdle: CloseWhenIdle sends GOAWAY and returns at once; a
// request after it is refused as retryable, the stream in flight finishes,
// and the connection closes with it.
func TestCloseWhenIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cc, p := ready(t, plainConfig())
		ch := goRoundTrip(context.Background(), cc, get("/"))
		h := p.nextOf(FrameHeaders)
		p.writeHeaders(h.StreamID, false, ":status", "200")
		r := <-ch
		if r.err != nil {
			t.Fatal(r.err)
		}
		cc.CloseWhenIdle()
		if f := p.nextOf(FrameGoAway); f.StreamID != 0 {
			t.Fatal("GOAWAY")
		}
		if _, err := cc.RoundTrip(context.Background(), get("/late")); !CanRetry(err) {
			t.Fatalf("request after CloseWhenIdle: %v", err)
		}
		if cc.Err() != nil {
			t.Fatalf("closed with a stream in flight: %v", cc.Err())
		}
		p.writeData(h.StreamID, true, []byte("rest"))
		if b, err := io.ReadAll(r.resp.Body); string(b) != "rest" || err != nil {
			t.Fatalf("the stream in flight: %q, %v", b, err)
		}
		synctest.Wait()
		if !errors.Is(cc.Err(), ErrClosed) {
			t.Fatalf("after the last stream: %v, want closed", cc.Err())
		}
	})
	synctest.Test(t, func(t *testing.T) {
		cc, _ := ready(t, plainConfig())
		cc.CloseWhenIdle() // nothing in flight: closed at once (its GOAWAY, best effort)
		synctest.Wait()
		if !errors.Is(cc.Err(), ErrClosed) {
			t.Fatalf("idle connection: %v, want closed", cc.Err())
		}
	})
}

func TestCloseFailsStreams(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cc, p := ready(t, plainConfig())
		ch := goRoundTrip(context.Background(), cc, get("/"))
		p.nextOf(FrameHeaders)
		cc.Close()
		if r := <-ch; !errors.Is(r.err, ErrClosed) {
			t.Fatalf("got %v", r.err)
		}
		req := get("/")
		req.Body = strings.NewReader("x")
		if _, err := cc.RoundTrip(context.Background(), req); !CanRetry(err) {
			t.Fatalf("got %v", err)
		}
	})
}

func TestHeadAndNoContent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cc, p := ready(t, plainConfig())
		req := get("/")
		req.Method = "HEAD"
		ch := goRoundTrip(context.Background(), cc, req)
		h := p.nextOf(FrameHeaders)
		p.writeHeaders(h.StreamID, true, ":status", "200", "content-length", "1234")
		r := <-ch
		if r.err != nil || r.resp.ContentLength != 1234 {
			t.Fatalf("HEAD: %v", r.err)
		}
		if n, err := io.Copy(io.Discard, r.resp.Body); n != 0 || err != nil {
			t.Fatalf("HEAD body %d %v", n, err)
		}
		r.resp.Body.Close()
	})
}

func TestOnIdleAndReservation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cc, p := ready(t, plainConfig(), Setting{ID: SettingMaxConcurrentStreams, Val: 1})
		idle := 0
		cc.OnIdle(func(*ClientConn) { idle++ })
		if !cc.ReserveNewRequest() || cc.CanTakeNewRequest() {
			t.Fatal("reserve")
		}
		cc.CancelReservation()
		if !cc.CanTakeNewRequest() || idle != 1 {
			t.Fatalf("after cancel: idle hook %d", idle)
		}
		roundTripOK(t, cc, p)
		roundTripOK(t, cc, p)
		synctest.Wait()
		if idle != 3 {
			t.Fatalf("idle hook ran %d times, want 3", idle)
		}
	})
}
