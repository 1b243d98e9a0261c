package profile

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/guise-http/guise/fields"
)

// TestChromeAndroid: chrome156-android is chrome156-linux (the recorded
// Chromium 156) with the platform's values: the same hellos and HTTP/2,
// the same header sets field for field, but for the mobile user-agent,
// sec-ch-ua-mobile ?1 and sec-ch-ua-platform "Android" in every set that
// has them; and it says it is derived.
func TestChromeAndroid(t *testing.T) {
	a, err := Lookup("chrome-android")
	if err != nil {
		t.Fatal(err)
	}
	l, err := Lookup("chrome156-linux")
	if err != nil {
		t.Fatal(err)
	}
	if a.Name != "chrome156-android" || a.Browser != Chrome || a.OS != Android || a.Version != 156 {
		t.Fatalf("chrome-android is %s (%v %d %v)", a.Name, a.Browser, a.Version, a.OS)
	}
	if a.Recorded || !strings.HasPrefix(a.Source, "not recorded") || !strings.Contains(a.Source, "chrome156-linux") {
		t.Errorf("not marked derived: recorded %v, source %q", a.Recorded, a.Source)
	}
	if !bytes.Equal(a.TLS.Hello, l.TLS.Hello) || !bytes.Equal(a.TLS.HelloHTTP1, l.TLS.HelloHTTP1) || !bytes.Equal(a.TLS.HelloResumed, l.TLS.HelloResumed) ||
		!reflect.DeepEqual(a.HTTP2, l.HTTP2) || !reflect.DeepEqual(a.HTTP1, l.HTTP1) {
		t.Error("TLS or HTTP/2 differs from chrome156-linux")
	}
	want := map[string]string{
		"user-agent":         "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Mobile Safari/537.36",
		"sec-ch-ua-mobile":   "?1",
		"sec-ch-ua-platform": `"Android"`,
	}
	if len(a.Headers) != len(l.Headers) {
		t.Fatalf("%d header sets, linux has %d", len(a.Headers), len(l.Headers))
	}
	changed := 0
	for i, as := range a.Headers {
		ls := l.Headers[i]
		if as.Kind != ls.Kind || as.Proto != ls.Proto || len(as.Header) != len(ls.Header) || !reflect.DeepEqual(as.PerRequest, ls.PerRequest) {
			t.Fatalf("set %d (%v %v) differs in shape from linux's", i, as.Kind, as.Proto)
		}
		for j, f := range as.Header {
			lf := ls.Header[j]
			if f.Name != lf.Name {
				t.Errorf("%v %v: field %d is %s, linux %s", as.Kind, as.Proto, j, f.Name, lf.Name)
			}
			if v, ok := want[strings.ToLower(f.Name)]; ok {
				changed++
				if f.Value != v {
					t.Errorf("%v %v: %s: %q, want %q", as.Kind, as.Proto, f.Name, f.Value, v)
				}
			} else if f.Value != lf.Value {
				t.Errorf("%v %v: %s: %q, linux %q", as.Kind, as.Proto, f.Name, f.Value, lf.Value)
			}
		}
	}
	nav := a.HeaderSet(Navigate, H2)
	// Every set carries the user-agent; the client hints only the sets
	// whose recording has them (a WebSocket handshake has none).
	if nav == nil || fields.Header(nav.Header).Get("sec-ch-ua-mobile") != "?1" || changed < len(a.Headers) {
		t.Errorf("navigation set %+v; %d platform values in %d sets", nav, changed, len(a.Headers))
	}
}
