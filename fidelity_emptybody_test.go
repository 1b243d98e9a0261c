package guise

import (
	"context"
	"testing"

	"github.com/guise-http/guise/fields"
	"github.com/guise-http/guise/internal/reqhead"
	"github.com/guise-http/guise/profile"
)

// TestEmptyBodyContentLength: a POST or PUT without a body goes out with
// Content-Length: 0 where the browser puts Content-Length, and with the
// fields of a request with a body; a fetch() without a body has no
// default Content-Type, a form submission keeps it; other methods get no
// Content-Length. Checked on the fields guise assembles, per profile and
// protocol, profiles without body sets included.
func TestEmptyBodyContentLength(t *testing.T) {
	for _, name := range []string{"chrome", "firefox", "safari18-macos", "okhttp4-android"} {
		c, err := compile(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, proto := range []profile.Proto{profile.HTTP1, profile.H2} {
			for _, tc := range []struct {
				method string
				kind   profile.RequestKind
				wantCL bool
				wantCT bool
			}{
				{"POST", profile.Navigate, true, true},
				{"PUT", profile.Navigate, true, true},
				{"POST", profile.Fetch, true, false},
				{"GET", profile.Navigate, false, false},
				{"DELETE", profile.Fetch, false, false},
			} {
				if c.p.HeaderSet(tc.kind, proto) == nil {
					continue
				}
				h, err := c.appendHeader(nil, &reqhead.Request{Proto: proto, Kind: tc.kind, Method: tc.method,
					Extra: fields.Header{{Name: "Host", Value: "fp.test"}}, Origin: &testOrigin})
				if err != nil {
					t.Fatal(err)
				}
				cl, hasCL := h.Lookup("content-length")
				if hasCL != tc.wantCL || hasCL && cl != "0" {
					t.Errorf("%s %s %v %v: content-length %q (%v), want it %v", name, proto, tc.method, tc.kind, cl, hasCL, tc.wantCL)
				}
				if c.p.BodyHeaderSet(tc.kind, proto) == nil {
					continue // no recorded Content-Type default to keep or drop
				}
				if _, hasCT := h.Lookup("content-type"); hasCT != tc.wantCT {
					t.Errorf("%s %s %v %v: content-type present %v, want %v", name, proto, tc.method, tc.kind, hasCT, tc.wantCT)
				}
			}
		}
	}
}

// TestEmptyBodyOnTheWire: through the echo server, a POST without a body
// carries content-length: 0 at the place of the browser's POST with a
// body, over h2 and HTTP/1.1; a GET carries none.
func TestEmptyBodyOnTheWire(t *testing.T) {
	run(t, func(t *testing.T, m mode) {
		e := newEchoSession(t, "chrome", m == modeH2)
		for _, method := range []string{"POST", "GET"} {
			resp, err := e.s.Do(context.Background(), &Request{Method: method, URL: e.origin + "/api/all", Kind: profile.Fetch})
			if err != nil {
				t.Fatal(err)
			}
			resp.Bytes()
		}
		got := e.received(t, 2)
		if v, ok := got[0].Lookup("content-length"); !ok || v != "0" {
			t.Errorf("POST without a body: content-length %q (%v), want \"0\"; fields %v", v, ok, names(got[0]))
		}
		if _, ok := got[0].Lookup("content-type"); ok {
			t.Errorf("a fetch() POST without a body sent a Content-Type")
		}
		if _, ok := got[1].Lookup("content-length"); ok {
			t.Errorf("GET sent a Content-Length")
		}
	})
}

// testOrigin is the request origin the header assembly tests give.
var testOrigin = "https://fp.test"
