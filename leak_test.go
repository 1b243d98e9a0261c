//go:build unix

package guise

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/guise-http/guise/internal/testpeer"
)

// deadAddr returns a loopback address where nothing listens.
func deadAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestDeadPortDoesNotGrowThePool (RELIABILITY L-10): a thousand requests
// to a port nothing listens on each fail, and leave the pool with no
// connection counted, no idle entry and no extra goroutine.
func TestDeadPortDoesNotGrowThePool(t *testing.T) {
	addr := deadAddr(t)
	tr := &Transport{}
	defer tr.Close()
	s := &Session{Transport: tr}
	defer s.Close()
	before := runtime.NumGoroutine()
	for i := range 1000 {
		if _, err := s.Get(context.Background(), "http://"+addr+"/"); err == nil {
			t.Fatalf("request %d to a dead port succeeded", i)
		}
	}
	st := tr.init()
	if keys := st.pool.Keys(); keys != 0 {
		t.Errorf("the pool keeps %d keys after failed dials", keys)
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before+2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before+2 {
		t.Errorf("goroutines %d → %d", before, n)
	}
}

// TestPeerClosesDuringUpload (RELIABILITY L-16, L-17): a server that
// answers and closes while the request body is still being written gives
// the response, not the write error; a server that stops reading and
// half-closes gives a prompt error, not a spin; a body source that fails
// gives its own error.
func TestPeerClosesDuringUpload(t *testing.T) {
	early := newTestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Connection", "close")
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		io.WriteString(w, "too large")
	}))
	s := &Session{}
	defer s.Close()
	big := strings.Repeat("u", 64<<20)
	t.Run("response preferred over write error", func(t *testing.T) {
		resp, err := s.Do(context.Background(), &Request{Method: "POST", URL: early.URL, Body: strings.NewReader(big)})
		if err != nil {
			t.Fatalf("err = %v, want the 413 response", err)
		}
		b, _ := resp.Bytes()
		if resp.StatusCode != 413 || string(b) != "too large" {
			t.Fatalf("%d %q", resp.StatusCode, b)
		}
	})
	t.Run("body source error keeps its type", func(t *testing.T) {
		errSource := errors.New("source broke")
		ok := newTestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
		}))
		_, err := s.Do(context.Background(), &Request{Method: "POST", URL: ok.URL, Body: io.MultiReader(strings.NewReader("some"), &failing{errSource})})
		if !errors.Is(err, errSource) {
			t.Fatalf("err = %v, want it to wrap the body's error", err)
		}
	})
	t.Run("half-closed peer", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		release := make(chan struct{})
		served := make(chan struct{})
		defer func() { close(release); ln.Close(); <-served }()
		go func() {
			defer close(served)
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
			buf := make([]byte, 4096)
			c.Read(buf)                  // some of the head
			c.(*net.TCPConn).CloseRead() // stop reading
			c.(*net.TCPConn).CloseWrite()
			<-release // the socket stays open, not reading
		}()
		start := time.Now()
		cpu0 := processCPU()
		_, err = s.Do(context.Background(), &Request{Method: "POST", URL: "http://" + ln.Addr().String() + "/", Body: strings.NewReader(big)})
		if err == nil {
			t.Fatal("succeeded")
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("the error came after %v", d)
		}
		if cpu := time.Duration(processCPU() - cpu0); cpu > time.Second {
			t.Errorf("%v of CPU to fail", cpu)
		}
	})
}

type failing struct{ err error }

func (f *failing) Read([]byte) (int, error) { return 0, f.err }

// TestRequestAbortLoopHeap (RELIABILITY L-13): requests cancelled while
// their bodies stream, again and again, leave the heap where it was once
// the loop is warm.
func TestRequestAbortLoopHeap(t *testing.T) {
	if testing.Short() {
		t.Skip("a loop of thousands of requests")
	}
	ts := newTestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk := strings.Repeat("a", 1024)
		for i := 0; i < 1000 && r.Context().Err() == nil; i++ {
			io.WriteString(w, chunk)
			w.(http.Flusher).Flush()
		}
	}))
	s := &Session{}
	defer s.Close()
	round := func(n int) {
		for range n {
			ctx, cancel := context.WithCancel(context.Background())
			resp, err := s.Get(ctx, ts.URL)
			if err != nil {
				cancel()
				t.Fatal(err)
			}
			var one [1]byte
			resp.Body.Read(one[:])
			cancel() // abort mid-body
			resp.Body.Close()
		}
	}
	heap := func() uint64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	round(200)
	before := heap()
	round(1000)
	after := heap()
	if after > before+1<<20 { // a leak of 1 KiB per request would show
		t.Errorf("heap %d → %d bytes over 1000 aborted requests", before, after)
	}
}

// TestAbandonedH2DialGivesBackItsStream: a request that gives up while the
// HTTP/2 connection it started is still being dialed leaves, once the dial
// completes, a connection with no stream reserved (so it can go idle and be
// closed), not one held open for a request that is gone.
func TestAbandonedH2DialGivesBackItsStream(t *testing.T) {
	o := newOrigin(t, modeH2, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok")
	}))
	// A front that holds each connection 300ms before passing it on.
	front, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	testpeer.Serve(t, front, testpeer.Handle(func(c net.Conn) {
		time.Sleep(300 * time.Millisecond)
		up, err := net.Dial("tcp", o.Listener.Addr().String())
		if err != nil {
			return
		}
		defer up.Close()
		go func() { io.Copy(up, c); up.Close() }()
		io.Copy(c, up)
	}))
	tr := &Transport{}
	defer tr.Close() // before the front's handlers are awaited
	s := &Session{Transport: tr, RootCAs: o.roots}
	url := "https://127.0.0.1:" + portOf(front.Addr()) + "/"
	// The first request learns that the origin speaks h2 (the probe).
	resp, err := s.Get(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	resp.Bytes()
	st := tr.init()
	// Retire that connection so that the next request dials again.
	for _, c := range st.pool.Shares() {
		c.h2.Close()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	if _, err := s.Get(ctx, url); err == nil {
		t.Fatal("a request that gave up after 50ms succeeded")
	}
	cancel()
	deadline := time.Now().Add(5 * time.Second)
	for {
		n, busy := 0, 0
		for _, c := range st.pool.Shares() {
			n++
			if !c.h2.Idle() {
				busy++
			}
		}
		if n > 0 && busy == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d HTTP/2 connections, %d with a stream reserved for the request that gave up", n, busy)
		}
		time.Sleep(10 * time.Millisecond)
	}
	s.Close()
}

// TestH2ChurnSettlesEveryRequest (RELIABILITY L-14): concurrent HTTP/2
// requests through a front that cuts connections at random points (seeded)
// each end, in a response or an error, and none hangs.
//
// RELIABILITY S-9.
func TestH2ChurnSettlesEveryRequest(t *testing.T) {
	o := newOrigin(t, modeH2, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, strings.Repeat("b", 2048))
	}))
	front, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var seedMu sync.Mutex
	rng := rand.New(rand.NewPCG(1, 2))
	testpeer.Serve(t, front, testpeer.Handle(func(c net.Conn) {
		seedMu.Lock()
		cut := int64(-1) // never
		if rng.IntN(3) > 0 {
			cut = rng.Int64N(40000) // bytes towards the client before the cut
		}
		seedMu.Unlock()
		up, err := net.Dial("tcp", o.Listener.Addr().String())
		if err != nil {
			return
		}
		defer up.Close()
		go func() { io.Copy(up, c); up.Close() }()
		if cut < 0 {
			io.Copy(c, up)
			return
		}
		io.CopyN(c, up, cut) // then both close: the connection is cut
	}))
	tr := &Transport{}
	defer tr.Close()
	s := &Session{Transport: tr, RootCAs: o.roots}
	defer s.Close()
	url := "https://127.0.0.1:" + portOf(front.Addr()) + "/"
	var ok, failed atomic.Int32
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 25 {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				resp, err := s.Get(ctx, url)
				if err == nil {
					_, err = resp.Bytes()
				}
				cancel()
				if err != nil {
					if errors.Is(err, context.DeadlineExceeded) {
						t.Errorf("a request hung for 10s: %v", err)
					}
					failed.Add(1)
				} else {
					ok.Add(1)
				}
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("requests still unsettled after 60s")
	}
	t.Logf("%d ok %d failed", ok.Load(), failed.Load())
	if ok.Load()+failed.Load() != 200 || ok.Load() == 0 {
		t.Errorf("%d succeeded, %d failed, of 200", ok.Load(), failed.Load())
	}
}

// TestBodiesNotClosed (RELIABILITY L-02, L-12): a body read to its end
// gives its connection back without Close; a short body (the server
// promised more, then closed) is an error and its connection is not
// reused.
func TestBodiesNotClosed(t *testing.T) {
	ts := newTestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/short" {
			c, brw, err := http.NewResponseController(w).Hijack()
			if err != nil {
				return
			}
			brw.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly ten b")
			brw.Flush()
			c.Close()
			return
		}
		io.WriteString(w, strings.Repeat("f", 100))
	}))
	s := &Session{}
	defer s.Close()
	for range 50 {
		resp, err := s.Get(context.Background(), ts.URL+"/full")
		if err != nil {
			t.Fatal(err)
		}
		if b, err := io.ReadAll(resp.Body); len(b) != 100 || err != nil {
			t.Fatalf("%d bytes, %v", len(b), err)
		}
		// not closed
	}
	if n := ts.conns.Load(); n != 1 {
		t.Fatalf("%d connections for 50 bodies read to the end, want 1", n)
	}
	resp, err := s.Get(context.Background(), ts.URL+"/short")
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	if string(b) != "only ten b" || !errors.Is(err, ErrBodyTruncated) {
		t.Fatalf("short body: %q, %v", b, err)
	}
	before := ts.conns.Load()
	resp, err = s.Get(context.Background(), ts.URL+"/full")
	if err != nil {
		t.Fatal(err)
	}
	resp.Bytes()
	if ts.conns.Load() != before+1 {
		t.Errorf("the request after a short body did not get a new connection")
	}
}

// TestCloseWithRequestsInFlight (RELIABILITY L-15): CloseIdleConnections
// and then Close, while a body is being read over HTTP/1.1 (over TCP
// and TLS) and over HTTP/2, let that body finish; afterwards the Transport refuses new
// requests with ErrClosed.
func TestCloseWithRequestsInFlight(t *testing.T) {
	slow := func(release <-chan struct{}) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Write(bytes.Repeat([]byte("s"), 1024))
			w.(http.Flusher).Flush()
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
			w.Write(bytes.Repeat([]byte("s"), 1024))
		}
	}
	run(t, func(t *testing.T, m mode) {
		release := make(chan struct{})
		o := newOrigin(t, m, slow(release))
		url := o.URL
		tr := &Transport{}
		s := o.session(t, tr)
		resp, err := s.Get(context.Background(), url+"/")
		if err != nil {
			t.Fatal(err)
		}
		if resp.Proto != m.proto() {
			t.Fatalf("proto %s, want %s", resp.Proto, m.proto())
		}
		first := make([]byte, 1024)
		if _, err := io.ReadFull(resp.Body, first); err != nil {
			t.Fatal(err)
		}
		tr.CloseIdleConnections()
		tr.Close()
		close(release)
		rest, err := io.ReadAll(resp.Body)
		if len(rest) != 1024 || err != nil {
			t.Fatalf("the body in flight: %d more bytes, %v", len(rest), err)
		}
		resp.Body.Close()
		if _, err := s.Get(context.Background(), url+"/"); !errors.Is(err, ErrClosed) {
			t.Fatalf("after Close: %v, want ErrClosed", err)
		}
	}, modeH1Plain, modeH1, modeH2)
}
