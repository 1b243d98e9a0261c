package guise

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"sync"
	"testing"
	"unsafe"

	"github.com/guise-http/guise/internal/testpeer"
)

// h2Canned is the HTTP/2 server of the allocation budgets: every request
// gets the same small response, with the head of a typical server (server,
// date, content-type, content-length), indexed in HPACK after the first
// time. The server allocates nothing per request, so that allocation counts
// measure the client.
var h2Canned = testpeer.H2Server{
	Head: [][2]string{
		{"server", "canned/1.0"},
		{"date", "Sun, 29 Nov 2026 21:00:00 GMT"},
		{"content-type", "text/plain"},
	},
	Body: []byte(h2CannedBody),
}

const h2CannedBody = "Hello, World!"

// h2Get makes one request the way bench/h2compare does: a new Request,
// the body copied to io.Discard, then closed.
func h2Get(ctx context.Context, s *Session, url string) error {
	resp, err := s.Do(ctx, &Request{URL: url})
	if err != nil {
		return err
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err == nil && (n != int64(len(h2CannedBody)) || resp.Proto != "HTTP/2.0") {
		err = fmt.Errorf("%s body of %d bytes", resp.Proto, n)
	}
	return err
}

// warmH2Session returns a Session on a new in-process HTTP/2 server, with
// its connection up after one GET, a cancellable context and the URL; all
// end with the test.
func warmH2Session(tb testing.TB) (context.Context, *Session, string) {
	tb.Helper()
	srv := h2Canned.ListenTLS(tb)
	s := &Session{RootCAs: testpeer.Localhost(tb).Roots}
	tb.Cleanup(func() { s.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	url := "https://" + srv.Addr + "/"
	if err := h2Get(ctx, s, url); err != nil {
		tb.Fatal(err)
	}
	return ctx, s, url
}

// h2AllocBudget is what one small HTTP/2 GET on a warm Session may
// allocate, client and in-process server together, one request at a time:
// the Response (which holds the stream and the request it refers to), one
// for uTLS's record read (the reader its record layer fills its buffer
// through) and one for the server's crypto/tls record read. The caller's
// new Request does not escape. With concurrent requests the record reads
// are shared by several requests (BenchmarkH2SessionDoParallel: about 1.3
// per request, the server's included).
const h2AllocBudget = 3

// TestH2AllocsPerRequest holds the HTTP/2 hot path's budget, measured as
// bench/h2compare's harness calls it: a new Request per call, a
// cancellable context, the body copied to io.Discard.
func TestH2AllocsPerRequest(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	ctx, s, url := warmH2Session(t)
	n := testing.AllocsPerRun(500, func() {
		if err := h2Get(ctx, s, url); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("%.2f allocations per HTTP/2 request", n)
	if n > h2AllocBudget {
		t.Fatalf("%.2f allocations per HTTP/2 request, budget %d", n, h2AllocBudget)
	}
}

// h2AllocBudgetConcurrent is the budget of the same GET made by 16
// goroutines on one connection, as in bench/h2compare's h2-small-c16:
// record reads are shared between requests there.
const h2AllocBudgetConcurrent = 2

// TestH2AllocsPerRequestConcurrent holds the budget with 16 goroutines
// sharing one Session, connection and cancellable context, counting every
// allocation of the process over 1600 requests.
func TestH2AllocsPerRequestConcurrent(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	ctx, s, url := warmH2Session(t)
	const workers, each = 16, 100
	run := func() error {
		errs := make(chan error, workers)
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for range each {
					if err := h2Get(ctx, s, url); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		return <-errs
	}
	if err := run(); err != nil { // warm: streams, buffers, pools
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := run(); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	n := float64(after.Mallocs-before.Mallocs) / (workers * each)
	t.Logf("%.2f allocations per HTTP/2 request, 16 at a time", n)
	if n > h2AllocBudgetConcurrent {
		t.Fatalf("%.2f allocations per HTTP/2 request, 16 at a time, budget %d", n, h2AllocBudgetConcurrent)
	}
}

// TestResponseSizeClasses keeps the per-request allocations within the
// malloc size classes they were fitted to: one byte more moves them to
// the next class (1408 bytes for h2Response, the next one up for the
// HTTP/1.1 ones), 10% to 20% more memory per request for the garbage
// collector.
func TestResponseSizeClasses(t *testing.T) {
	if n := unsafe.Sizeof(h2Response{}); n > 1280 {
		t.Errorf("h2Response is %d bytes, over the 1280-byte size class", n)
	}
	for _, c := range []struct {
		name       string
		size, want uintptr
	}{
		{"h1Response4", unsafe.Sizeof(h1Response4{}), 640},
		{"h1Response8", unsafe.Sizeof(h1Response8{}), 768},
		{"h1Response16", unsafe.Sizeof(h1Response16{}), 1024},
		{"h1Response32", unsafe.Sizeof(h1Response32{}), 1536},
		// A caller's Request per call, as most code makes them.
		{"Request", unsafe.Sizeof(Request{}), 288},
	} {
		if c.size > c.want {
			t.Errorf("%s is %d bytes, over the %d-byte size class", c.name, c.size, c.want)
		}
	}
	// The HTTP/1.1 Responses with room for the head fill their class,
	// the runtime's 8-byte header included: not a byte more (the next
	// class) nor less (room wasted).
	for _, c := range []struct {
		name        string
		size, class uintptr
	}{
		{"h1Response768", unsafe.Sizeof(h1Response768{}), 768},
		{"h1Response896", unsafe.Sizeof(h1Response896{}), 896},
		{"h1Response1024", unsafe.Sizeof(h1Response1024{}), 1024},
		{"h1Response1280", unsafe.Sizeof(h1Response1280{}), 1280},
		{"h1Response1536", unsafe.Sizeof(h1Response1536{}), 1536},
		{"h1Response2048", unsafe.Sizeof(h1Response2048{}), 2048},
		{"h1Response2688", unsafe.Sizeof(h1Response2688{}), 2688},
		{"h1Response4096", unsafe.Sizeof(h1Response4096{}), 4096},
	} {
		if c.size+mallocHeader != c.class {
			t.Errorf("%s is %d bytes and the runtime's header %d, not its %d-byte size class", c.name, c.size, mallocHeader, c.class)
		}
	}
}

// BenchmarkH2SessionDo is one goroutine's small HTTP/2 GETs.
func BenchmarkH2SessionDo(b *testing.B) {
	ctx, s, url := warmH2Session(b)
	b.ReportAllocs()
	for b.Loop() {
		if err := h2Get(ctx, s, url); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkH2SessionDoParallel is bench/h2compare's h2-small-c16 in
// process: 16 goroutines share one Session, one HTTP/2 connection and one
// cancellable context.
func BenchmarkH2SessionDoParallel(b *testing.B) {
	ctx, s, url := warmH2Session(b)
	b.ReportAllocs()
	b.SetParallelism((16 + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := h2Get(ctx, s, url); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
