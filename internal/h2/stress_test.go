package h2

import (
	"context"
	"errors"
	"io"
	"sync"
	"testing"
)

// TestConcurrentCancelStress runs 16 goroutines of GETs on one loopback
// connection, a third of them cancelled or closed mid-body: only the expected
// errors, the connection stays usable and no stream is left.
func TestConcurrentCancelStress(t *testing.T) {
	cc := loopback(t, newFastPeer(64<<10), chromeConfig())
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := range 16 {
		wg.Go(func() {
			buf := make([]byte, 4096)
			for i := range 40 {
				ctx, cancel := context.WithCancel(context.Background())
				resp, err := cc.RoundTrip(ctx, benchRequest())
				if err != nil {
					cancel()
					errs <- err
					return
				}
				switch (g + i) % 3 {
				case 0:
					resp.Body.Read(buf)
					cancel()
					if _, err := io.Copy(io.Discard, resp.Body); err != nil && !errors.Is(err, context.Canceled) {
						errs <- err
					}
				case 1:
					resp.Body.Read(buf)
					resp.Body.Close()
				default:
					if n, err := io.Copy(io.Discard, resp.Body); err != nil || n != 64<<10 {
						errs <- err
					}
				}
				resp.Body.Close()
				cancel()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	doGet(t, cc, benchRequest(), make([]byte, 4096))
	if n := cc.ActiveStreams(); n != 0 {
		t.Fatalf("%d streams left", n)
	}
}
