package guise

import (
	"context"
	"net/http"
	"testing"
)

// TestTrailer: once the body has been read to its end, a response's
// trailer fields hold what the server sent after the body, over every
// protocol.
func TestTrailer(t *testing.T) {
	run(t, func(t *testing.T, m mode) {
		o := newOrigin(t, m, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Trailer", "X-Sum")
			w.Write([]byte("body"))
			w.(http.Flusher).Flush()
			w.Header().Set("X-Sum", "42")
		}))
		resp, err := o.session(t, nil).Get(context.Background(), o.URL+"/")
		if err != nil {
			t.Fatal(err)
		}
		if b, err := resp.Bytes(); err != nil || string(b) != "body" {
			t.Fatalf("body %q, %v", b, err)
		}
		if got := resp.Trailer().Get("x-sum"); got != "42" {
			t.Errorf("trailer X-Sum = %q, want 42 (trailer %v)", got, resp.Trailer())
		}
	})
}
