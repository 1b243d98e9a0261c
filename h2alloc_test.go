package guise

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"fmt"
	"io"
	"math/big"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"
	"unsafe"
)

// h2CannedServer is an HTTP/2 server over TLS on 127.0.0.1 that answers
// every request with the same small response, allocating nothing per
// request once a connection is up, so that allocation counts measure the
// client. Its response head is that of a typical server (server, date,
// content-type, content-length), sent with incremental indexing the first
// time and as indexed fields afterwards, as HPACK encoders do for repeated
// fields.
type h2CannedServer struct {
	ln    net.Listener
	roots *x509.CertPool
	wg    sync.WaitGroup
}

const h2CannedBody = "Hello, World!"

// h2CannedHead are the response fields after :status 200.
var h2CannedHead = [...][2]string{
	{"server", "canned/1.0"},
	{"date", "Sun, 29 Nov 2026 21:00:00 GMT"},
	{"content-type", "text/plain"},
	{"content-length", "13"},
}

func newH2CannedServer(tb testing.TB) *h2CannedServer {
	tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:         true,

		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		tb.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		tb.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(cert)
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{
		Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}},
		NextProtos:   []string{"h2"},
	})
	if err != nil {
		tb.Fatal(err)
	}
	s := &h2CannedServer{ln: ln, roots: roots}
	s.wg.Add(1)
	go s.accept()
	tb.Cleanup(func() { ln.Close(); s.wg.Wait() })
	return s
}

func (s *h2CannedServer) URL() string { return "https://" + s.ln.Addr().String() + "/" }

func (s *h2CannedServer) accept() {
	defer s.wg.Done()
	var conns []net.Conn
	var mu sync.Mutex
	defer func() {
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	}()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		mu.Lock()
		conns = append(conns, c)
		mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer c.Close()
			serveCannedH2(c)
		}()
	}
}

// h2Frame appends a frame header.
func h2Frame(dst []byte, length int, typ, flags byte, id uint32) []byte {
	dst = append(dst, byte(length>>16), byte(length>>8), byte(length), typ, flags)
	return binary.BigEndian.AppendUint32(dst, id)
}

// serveCannedH2 runs one server connection until it fails.
func serveCannedH2(c net.Conn) {
	br := bufio.NewReaderSize(c, 64<<10)
	pre := make([]byte, len("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"))
	if _, err := io.ReadFull(br, pre); err != nil {
		return
	}
	// The first response indexes its fields; later ones refer to them
	// (dynamic indexes 62 and up, newest first).
	var first, again []byte
	first = append(first, 0x88) // :status 200
	again = append(again, 0x88)
	for i, f := range h2CannedHead {
		first = append(first, 0x40, byte(len(f[0])))
		first = append(first, f[0]...)
		first = append(first, byte(len(f[1])))
		first = append(first, f[1]...)
		again = append(again, 0x80|byte(62+len(h2CannedHead)-1-i))
	}
	out := make([]byte, 0, 64<<10)
	out = h2Frame(out, 6, 0x4, 0, 0) // SETTINGS
	out = append(out, 0, 3, 0, 0, 0, 100)
	head := make([]byte, 9)
	payload := make([]byte, 0, 1<<14)
	sent := false
	for {
		if len(out) > 0 && br.Buffered() == 0 {
			if _, err := c.Write(out); err != nil {
				return
			}
			out = out[:0]
		}
		if _, err := io.ReadFull(br, head); err != nil {
			return
		}
		n := int(head[0])<<16 | int(head[1])<<8 | int(head[2])
		if n > cap(payload) {
			return
		}
		payload = payload[:n]
		if _, err := io.ReadFull(br, payload); err != nil {
			return
		}
		typ, flags, id := head[3], head[4], binary.BigEndian.Uint32(head[5:])&(1<<31-1)
		switch typ {
		case 0x4: // SETTINGS
			if flags&0x1 == 0 {
				out = h2Frame(out, 0, 0x4, 0x1, 0)
			}
		case 0x6: // PING
			if flags&0x1 == 0 {
				out = h2Frame(out, 8, 0x6, 0x1, 0)
				out = append(out, payload...)
			}
		case 0x1: // HEADERS
			if flags&0x1 == 0 { // no END_STREAM: this server takes no bodies
				return
			}
			blk := again
			if !sent {
				blk, sent = first, true
			}
			out = h2Frame(out, len(blk), 0x1, 0x4, id) // END_HEADERS
			out = append(out, blk...)
			out = h2Frame(out, len(h2CannedBody), 0x0, 0x1, id) // END_STREAM
			out = append(out, h2CannedBody...)
		}
	}
}

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
	srv := newH2CannedServer(tb)
	s := &Session{RootCAs: srv.roots}
	tb.Cleanup(func() { s.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	url := srv.URL()
	if err := h2Get(ctx, s, url); err != nil {
		tb.Fatal(err)
	}
	return ctx, s, url
}

// h2AllocBudget is what one small HTTP/2 GET on a warm Session may
// allocate, client and in-process server together, one request at a time:
// the Request (the caller's), the Response (which holds the stream), and one
// each for uTLS's record write (a deferred call in a loop) and record read
// (its atLeastReader) and for the server's crypto/tls record read. With
// concurrent requests the record reads and writes are shared by several
// requests (BenchmarkH2SessionDoParallel: 3 per request).
const h2AllocBudget = 5

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
// record reads and writes are shared between requests there.
const h2AllocBudgetConcurrent = 4

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
// the next class (1408 bytes for h2Response; 704, 896, 1152 and 1792 for
// the HTTP/1.1 ones), 10% to 20% more memory per request for the garbage
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
