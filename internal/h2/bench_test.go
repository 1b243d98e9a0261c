package h2

import (
	"bytes"
	"context"
	"io"
	"net"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/guise-http/guise/fields"
	"github.com/guise-http/guise/internal/testpeer"
)

// newFastPeer is the HTTP/2 server of the benchmarks: it answers every
// request with :status 200 and body bytes of 'x', and announces 1000
// concurrent streams, a stream window of 1 MiB and a connection window of
// 1 GiB.
func newFastPeer(body int) *testpeer.H2Server {
	return &testpeer.H2Server{
		Settings: []testpeer.H2Setting{
			{ID: testpeer.H2MaxConcurrentStreams, Val: 1000},
			{ID: testpeer.H2InitialWindowSize, Val: 1 << 20},
		},
		ConnWindow: 1 << 30,
		Body:       bytes.Repeat([]byte{'x'}, body),
	}
}

// loopback starts fp on a 127.0.0.1 listener and returns a ClientConn to it.
func loopback(tb testing.TB, fp *testpeer.H2Server, cfg *Config) *ClientConn {
	cc, _ := loopbackCounted(tb, fp, cfg)
	return cc
}

// loopbackCounted is loopback that also counts the client's write calls.
func loopbackCounted(tb testing.TB, fp *testpeer.H2Server, cfg *Config) (*ClientConn, *writeCounter) {
	tb.Helper()
	srv := fp.Listen(tb)
	nc, err := net.Dial("tcp", srv.Addr)
	if err != nil {
		tb.Fatal(err)
	}
	wc := &writeCounter{Conn: nc}
	cc, err := NewClientConn(wc, cfg)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cc.Close() })
	return cc, wc
}

func benchRequest() *Request {
	req := get("/bench")
	req.Header = chromeNav
	req.Priority = Priority{Send: true, Exclusive: true, Weight: 256, Dep: DepLatestOpen}
	return req
}

func doGet(tb testing.TB, cc *ClientConn, req *Request, buf []byte) {
	resp, err := cc.RoundTrip(context.Background(), req)
	if err != nil {
		tb.Fatal(err)
	}
	for {
		_, err := resp.Body.Read(buf)
		if err == io.EOF {
			break
		}
		if err != nil {
			tb.Fatal(err)
		}
	}
	resp.Body.Close()
}

// BenchmarkParallelGET runs 16 concurrent small GETs on one connection.
func BenchmarkParallelGET(b *testing.B) {
	cc, wc := loopbackCounted(b, newFastPeer(2), chromeConfig())
	req := benchRequest()
	b.ReportAllocs()
	wc.mu.Lock()
	wc.writes = 0
	wc.mu.Unlock()
	defer func() {
		wc.mu.Lock()
		b.ReportMetric(float64(wc.writes)/float64(b.N), "writes/op")
		wc.mu.Unlock()
	}()
	b.SetParallelism((16 + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
	b.RunParallel(func(pb *testing.PB) {
		buf := make([]byte, 512)
		for pb.Next() {
			doGet(b, cc, req, buf)
		}
	})
}

// BenchmarkDownload8MiB downloads an 8 MiB body with Chromium's windows.
func BenchmarkDownload8MiB(b *testing.B) {
	cc := loopback(b, newFastPeer(8<<20), chromeConfig())
	req := benchRequest()
	buf := make([]byte, 32<<10)
	b.SetBytes(8 << 20)
	b.ReportAllocs()
	for b.Loop() {
		doGet(b, cc, req, buf)
	}
}

// BenchmarkUpload8MiB sends an 8 MiB request body held in memory; the peer
// answers after the body's END_STREAM.
func BenchmarkUpload8MiB(b *testing.B) {
	cc := loopback(b, newFastPeer(2), chromeConfig())
	req := benchRequest()
	req.Method = "POST"
	req.BodyBytes = make([]byte, 8<<20)
	req.ContentLength = int64(len(req.BodyBytes))
	buf := make([]byte, 512)
	b.SetBytes(8 << 20)
	b.ReportAllocs()
	for b.Loop() {
		doGet(b, cc, req, buf)
	}
}

// TestAllocsPerRequest pins the allocations of one small GET, client and
// in-process server together.
func TestAllocsPerRequest(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("allocation counts need a normal build")
	}
	cc := loopback(t, newFastPeer(2), chromeConfig())
	req := benchRequest()
	buf := make([]byte, 512)
	doGet(t, cc, req, buf)
	n := testing.AllocsPerRun(200, func() { doGet(t, cc, req, buf) })
	t.Logf("%.1f allocs per request", n)
	if n > allocBudget {
		t.Fatalf("%.1f allocs per request, budget %d", n, allocBudget)
	}
}

// TestSlowReadersBounded opens 16 streams of 8 MiB each and reads none: the
// bytes buffered stay within the connection receive window.
func TestSlowReadersBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c, s := net.Pipe()
		fp := newFastPeer(8 << 20)
		done := make(chan struct{})
		go func() { fp.ServeConn(s); close(done) }()
		cfg := chromeConfig()
		cc, err := NewClientConn(c, cfg)
		if err != nil {
			t.Fatal(err)
		}
		var resps []*Response
		for range 16 {
			resp, err := cc.RoundTrip(context.Background(), &Request{Method: "GET", Scheme: "https",
				Authority: "a", Path: "/", Header: fields.Header{{Name: "accept", Value: "*/*"}}})
			if err != nil {
				t.Fatal(err)
			}
			resps = append(resps, resp)
		}
		synctest.Wait()
		cc.mu.Lock()
		buffered := 0
		for _, st := range cc.streams {
			buffered += st.data.len()
		}
		limit := int(cc.recvMax)
		cc.mu.Unlock()
		t.Logf("buffered %d bytes for 16 unread 8 MiB streams (connection window %d)", buffered, limit)
		if buffered > limit || buffered < limit/2 {
			t.Fatalf("buffered %d, connection window %d", buffered, limit)
		}
		// Slow readers finish: every stream reads its 8 MiB while the
		// buffered total stays within the connection window.
		var wg sync.WaitGroup
		errs := make(chan error, 16)
		for _, r := range resps {
			wg.Go(func() {
				buf := make([]byte, 4096)
				n := 0
				for {
					k, err := r.Body.Read(buf)
					n += k
					if err == io.EOF {
						break
					}
					if err != nil {
						errs <- err
						return
					}
					if n%(1<<20) < 4096 {
						time.Sleep(time.Millisecond) // slow
					}
				}
				if n != 8<<20 {
					errs <- io.ErrShortBuffer
				}
				r.Body.Close()
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		cc.Close()
		<-done
	})
}

// TestIdleConnHoldsNoWriteBuffers checks that a connection gives its write
// buffers (the batch, the spare batch, the header block scratch) back once
// its last stream is over, and works again after: the next request takes
// buffers, and it too leaves none.
func TestIdleConnHoldsNoWriteBuffers(t *testing.T) {
	cc := loopback(t, newFastPeer(2), chromeConfig())
	req := benchRequest()
	buf := make([]byte, 512)
	for i := range 3 {
		doGet(t, cc, req, buf)
		held := func() int {
			cc.wlock <- struct{}{}
			defer func() { <-cc.wlock }()
			return cap(cc.wb.b) + cap(cc.spare) + cap(cc.hbuf)
		}
		deadline := time.Now().Add(5 * time.Second)
		for held() > 0 {
			if time.Now().After(deadline) {
				t.Fatalf("request %d: the idle connection holds %d bytes of write buffers", i, held())
			}
			time.Sleep(time.Millisecond)
		}
	}
}
