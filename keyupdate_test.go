package guise

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/guise-http/guise/internal/testpeer/tls13"
	"github.com/guise-http/guise/internal/tlsfp"
)

// TestKeyUpdates (RELIABILITY T-08, GO-2026-4870, GO-2026-6090): a server's
// TLS 1.3 KeyUpdate messages are followed, one or a few, with or without
// update_requested, even several in one record; a flood ends in
// tlsfp.ErrRecordFlood; nothing hangs (each call is bounded by
// certcompGet's 10 seconds).
func TestKeyUpdates(t *testing.T) {
	id := certcompIdentity(t)
	for _, tc := range []struct {
		name      string
		n         int
		together  bool
		requested bool
		ok        bool
	}{
		{"one", 1, false, false, true},
		{"one, update requested", 1, false, true, true},
		{"three in three records", 3, false, false, true},
		{"three in three records, update requested", 3, false, true, true},
		// RFC 8446 5.1 forbids handshake data after a key change in
		// the same record; uTLS follows them all the same. What counts
		// here is that nothing hangs.
		{"several in one record", 5, true, false, true},
		{"several in one record, update requested", 5, true, true, true},
		{"60 in a row", 60, false, false, true},
		// Past tlsfp's maxQuietRecords (64) records without data.
		{"flood", 1000, false, false, false},
		{"flood, update requested", 1000, false, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := certcompServer(t, tls13.Config{Identity: id, KeyUpdates: tc.n, KeyUpdateTogether: tc.together, KeyUpdateRequested: tc.requested})
			start := time.Now()
			body, err := certcompGet(t, s, "chrome", id.Roots)
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %v", d)
			}
			if tc.ok {
				if err != nil || !strings.Contains(body, "compressed cert ok") {
					t.Fatalf("body %q, err %v", body, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("succeeded with body %q, want an error", body)
			}
			var ge *Error
			if !errors.As(err, &ge) || !errors.Is(err, tlsfp.ErrRecordFlood) {
				t.Fatalf("err = %v, want an *Error wrapping tlsfp.ErrRecordFlood", err)
			}
		})
	}
}
