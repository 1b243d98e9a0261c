package guise

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
	"testing/synctest"
	"time"

	"github.com/guise-http/guise/internal/testpeer"
)

// TestTimeoutPhasesInVirtualTime: each timeout ends its request at the
// moment it is due, to the nanosecond of virtual time, with its Phase: the
// response head's wait, a body that stops, and the whole request's Timeout
// against a body that trickles forever, over every protocol.
func TestTimeoutPhasesInVirtualTime(t *testing.T) {
	run(t, func(t *testing.T, m mode) {
		for _, c := range []struct {
			name    string
			head    time.Duration // ResponseHeaderTimeout
			idle    time.Duration // BodyIdleTimeout
			timeout time.Duration
			handler http.HandlerFunc
			phase   Phase
			after   time.Duration
			inBody  bool
		}{
			{
				name: "head", head: 30 * time.Second,
				handler: func(w http.ResponseWriter, r *http.Request) {
					select {
					case <-time.After(time.Hour):
					case <-r.Context().Done():
					}
				},
				phase: PhaseHead, after: 30 * time.Second,
			},
			{
				name: "body idle", idle: 20 * time.Second,
				handler: func(w http.ResponseWriter, r *http.Request) {
					w.Write([]byte("first"))
					w.(http.Flusher).Flush()
					select {
					case <-time.After(time.Hour):
					case <-r.Context().Done():
					}
				},
				phase: PhaseBodyIdle, after: 20 * time.Second, inBody: true,
			},
			{
				name: "total", idle: 20 * time.Second, timeout: 45 * time.Second,
				handler: func(w http.ResponseWriter, r *http.Request) {
					for {
						w.Write([]byte("."))
						w.(http.Flusher).Flush()
						select {
						case <-time.After(10 * time.Second):
						case <-r.Context().Done():
							return
						}
					}
				},
				phase: PhaseTotal, after: 45 * time.Second, inBody: true,
			},
		} {
			t.Run(c.name, func(t *testing.T) {
				cert := testpeer.Localhost(t) // made in real time, not the bubble's
				synctest.Test(t, func(t *testing.T) {
					tr, url := newPipeOrigin(t, m, cert, c.handler, &Transport{ResponseHeaderTimeout: c.head, BodyIdleTimeout: c.idle})
					// The bubble's clock starts in 2000, before the
					// certificate: what is tested here is time, not trust.
					s := &Session{Transport: tr, InsecureSkipVerify: true, Timeout: c.timeout}
					defer s.Close()
					start := time.Now()
					resp, err := s.Get(context.Background(), url)
					if err == nil {
						if !c.inBody {
							resp.Body.Close()
							t.Fatalf("got a response, want a %v timeout", c.phase)
						}
						if resp.Proto != m.proto() {
							t.Errorf("proto %s under %s", resp.Proto, m)
						}
						_, err = io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
					}
					var te *TimeoutError
					if !errors.As(err, &te) || te.Phase != c.phase {
						t.Fatalf("err = %v, want a %v TimeoutError", err, c.phase)
					}
					var ge *Error
					if !errors.As(err, &ge) || !ge.Timeout() {
						t.Errorf("err = %v: not a *guise.Error reporting Timeout", err)
					}
					if got := time.Since(start); got != c.after {
						t.Errorf("timed out after %v, want %v", got, c.after)
					}
				})
			})
		}
	})
}
