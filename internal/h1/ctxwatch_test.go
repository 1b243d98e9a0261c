package h1

import (
	"context"
	"errors"
	"io"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/guise-http/guise/fields"
)

// getSmall runs one GET on c under ctx and reads the body to the end.
func getSmall(t testing.TB, c *Conn, ctx context.Context, resp *Response) error {
	if err := c.RoundTrip(ctx, &Request{Method: "GET", Target: "/"}, resp); err != nil {
		return err
	}
	_, err := io.Copy(io.Discard, &resp.Body)
	return err
}

// TestLongLivedContextRegistersOnce: requests that follow one another
// under one cancellable context without a deadline cost no allocation for
// the context watch (it is registered once, by the first).
func TestLongLivedContextRegistersOnce(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("allocation budget measured in full runs without -race")
	}
	s := cannedServer(t, smallResp)
	c := s.dial(t, nil)
	c.SetRelease(func(*Conn, bool) {})
	var inline [16]fields.Field
	resp := &Response{Header: inline[:0]}
	req := &Request{Method: "GET", Target: "/"}
	buf := make([]byte, 512)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	run := func() {
		if err := c.RoundTrip(ctx, req, resp); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(&resp.Body, buf[:13]); err != nil {
			t.Fatal(err)
		}
		if _, err := resp.Body.Read(buf); err != io.EOF {
			t.Fatal(err)
		}
	}
	run()
	if n := testing.AllocsPerRun(200, run); n > 1 {
		t.Fatalf("%.1f allocations per GET under a long-lived context, want <= 1 (as with Background)", n)
	}
}

// TestContextEndsBetweenRequests: a context that ends while the
// connection is idle does not poison it; the next request (under another
// context) goes out on the same connection, and one more under the ended
// context fails before anything is written.
func TestContextEndsBetweenRequests(t *testing.T) {
	s := cannedServer(t, smallResp)
	c := s.dial(t, nil)
	var reuse []bool
	c.SetRelease(func(_ *Conn, r bool) { reuse = append(reuse, r) })
	var resp Response
	ctx1, cancel1 := context.WithCancel(context.Background())
	if err := getSmall(t, c, ctx1, &resp); err != nil {
		t.Fatal(err)
	}
	cancel1()
	// The callback runs in its own goroutine; let it run (and do nothing)
	// before the next request, as it usually does.
	for i := 0; i < 100; i++ {
		runtime.Gosched()
	}
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	for i := 0; i < 3; i++ {
		if err := getSmall(t, c, ctx2, &resp); err != nil {
			t.Fatalf("request %d after the first context ended: %v", i, err)
		}
	}
	if err := c.RoundTrip(ctx1, &Request{Method: "GET", Target: "/"}, &resp); !errors.Is(err, context.Canceled) {
		t.Fatalf("request under the ended context: %v", err)
	}
	want := []bool{true, true, true, true}
	if len(reuse) != len(want) {
		t.Fatalf("releases %v, want %v", reuse, want)
	}
	for i := range want {
		if reuse[i] != want[i] {
			t.Fatalf("releases %v, want %v", reuse, want)
		}
	}
}

// TestLongLivedContextCancelsLaterRequest: a context registered by an
// earlier request still cancels a later one in flight.
func TestLongLivedContextCancelsLaterRequest(t *testing.T) {
	n := 0
	s := newServer(t, func(nc net.Conn) {
		buf := make([]byte, 4096)
		for {
			if _, err := nc.Read(buf); err != nil {
				return
			}
			n++
			if n == 1 {
				nc.Write(smallResp)
			} // the second request gets no answer
		}
	})
	c := s.dial(t, nil)
	c.SetRelease(func(*Conn, bool) {})
	ctx, cancel := context.WithCancel(context.Background())
	var resp Response
	if err := getSmall(t, c, ctx, &resp); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.RoundTrip(ctx, &Request{Method: "GET", Target: "/"}, &resp) }()
	time.Sleep(20 * time.Millisecond)
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("cancel of the long-lived context did not end the request")
	}
}

// TestCloseDropsContextRegistration: a closed Conn leaves nothing
// registered on a context that lives on, and a per-request context (one
// with a deadline) is unregistered when its request ends.
func TestCloseDropsContextRegistration(t *testing.T) {
	s := cannedServer(t, smallResp)
	c := s.dial(t, nil)
	c.SetRelease(func(*Conn, bool) {})
	var resp Response

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := getSmall(t, c, ctx, &resp); err != nil {
		t.Fatal(err)
	}
	if registered(c) {
		t.Fatal("a per-request context stayed registered after its request")
	}

	long, cancelLong := context.WithCancel(context.Background())
	defer cancelLong()
	if err := getSmall(t, c, long, &resp); err != nil {
		t.Fatal(err)
	}
	if !registered(c) {
		t.Fatal("a long-lived context was not kept registered")
	}
	c.Close()
	if registered(c) {
		t.Fatal("Close left the context registered")
	}
}

func registered(c *Conn) bool {
	c.dmu.Lock()
	defer c.dmu.Unlock()
	return c.watchStop != nil
}
