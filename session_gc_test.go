package guise

import (
	"context"
	"net/http"
	"runtime"
	"sync"
	"testing"
	"time"
)

// TestDroppedSessionLivesUntilBodyClosed (RELIABILITY L-19): a Session the program no longer
// references once its call has begun is not closed under the request by
// its garbage-collection cleanup: the call and its body keep it alive.
func TestDroppedSessionLivesUntilBodyClosed(t *testing.T) {
	run(t, func(t *testing.T, m mode) {
		o := newOrigin(t, m, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			time.Sleep(time.Millisecond)
			w.(http.Flusher).Flush()
			time.Sleep(time.Millisecond)
			w.Write([]byte("ok"))
		}))
		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { // the collector keeps running
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
					runtime.GC()
				}
			}
		}()
		defer func() { close(stop); wg.Wait() }()
		for i := range 100 {
			resp, err := (&Session{RootCAs: o.roots}).Get(context.Background(), o.URL+"/")
			if err != nil {
				t.Fatalf("request %d: %v", i, err)
			}
			runtime.GC()
			if b, err := resp.Bytes(); err != nil || string(b) != "ok" {
				t.Fatalf("request %d: body %q, %v", i, b, err)
			}
		}
	})
}
