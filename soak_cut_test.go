package guise

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestCutBodiesNeverWhole (RELIABILITY S-6) sends GETs of every encoding
// through the soak's relay with the cut fault on every connection, over
// HTTP/2 and HTTP/1.1, on a Session and as isolated calls: every one ends
// in an error or in the whole body (its checksum checked). A zstd body cut
// before its first byte read as a whole empty body over HTTP/2 until the
// decoder stopped taking its input's failure for the end (internal/decode,
// TestSourceErrorAtEveryByte).
func TestCutBodiesNeverWhole(t *testing.T) {
	payloads, err := makePayloads(7)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []mode{modeH2, modeH1} {
		t.Run(string(m), func(t *testing.T) {
			e := &soakEnv{t: t, payloads: payloads, stats: &soakStats{}}
			o := newOrigin(t, m, soakHandler(payloads))
			r, err := newRelay(strings.TrimPrefix(o.URL, "https://"), 7, true, faultCut)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(r.Close)
			s := o.session(t, nil)
			failed := 0
			for n := range 200 {
				req := &Request{URL: fmt.Sprintf("https://%s/p?i=%d&enc=%s", r.addr(), 1+n%5, soakEncodings[(n/5)%4]),
					Timeout: 5 * time.Second, RootCAs: o.roots}
				var resp *Response
				if n%2 == 0 {
					resp, err = Do(context.Background(), req)
				} else {
					resp, err = s.Do(context.Background(), req)
				}
				if err == nil {
					err = e.check("cut", resp, false)
				}
				if err != nil {
					failed++
					if _, typed := errorLabel(err); !typed {
						t.Errorf("%s: untyped error %v", req.URL, err)
					}
				}
			}
			for _, f := range e.stats.failures {
				t.Error(f)
			}
			if failed == 0 {
				t.Fatal("no request met the cut: the relay did not cut")
			}
		})
	}
}
