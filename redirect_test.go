package guise

import (
	"bytes"
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mccutchen/go-httpbin/v2/httpbin"
)

func newHTTPBin(t *testing.T) *httptest.Server {
	ts := httptest.NewServer(httpbin.New())
	t.Cleanup(ts.Close)
	return ts
}

// anything decodes go-httpbin's echo of a request.
type anything struct {
	Method  string              `json:"method"`
	Headers map[string][]string `json:"headers"`
	Data    string              `json:"data"`
	URL     string              `json:"url"`
}

func getJSON(t *testing.T, resp *Response, v any) {
	t.Helper()
	b, err := resp.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%v in %q", err, b)
	}
}

// RELIABILITY R-08.
func TestRedirectsFollowedLikeABrowser(t *testing.T) {
	hb := newHTTPBin(t)
	var s Session
	defer s.Close()
	ctx := context.Background()

	resp, err := s.Get(ctx, hb.URL+"/redirect/3")
	if err != nil {
		t.Fatal(err)
	}
	resp.Bytes()
	if resp.StatusCode != 200 || !strings.HasSuffix(resp.URL, "/get") {
		t.Fatalf("after 3 redirects: %d at %s", resp.StatusCode, resp.URL)
	}

	_, err = s.Get(ctx, hb.URL+"/redirect/21")
	if !errors.Is(err, ErrTooManyRedirects) {
		t.Fatalf("21 hops: err = %v, want ErrTooManyRedirects", err)
	}
	short := &Session{MaxRedirects: 2, Transport: s.Transport}
	if _, err = short.Get(ctx, hb.URL+"/redirect/3"); !errors.Is(err, ErrTooManyRedirects) {
		t.Fatalf("MaxRedirects 2: err = %v", err)
	}

	resp, err = s.Do(ctx, &Request{URL: hb.URL + "/redirect/1", Redirect: RedirectManual})
	if err != nil || resp.StatusCode != 302 {
		t.Fatalf("manual: %v %v", resp, err)
	}
	resp.Body.Close()
	if _, err = s.Do(ctx, &Request{URL: hb.URL + "/redirect/1", Redirect: RedirectError}); !errors.Is(err, ErrRedirect) {
		t.Fatalf("error policy: %v", err)
	}
}

// RELIABILITY R-09.
func TestRedirectMethodAndBody(t *testing.T) {
	hb := newHTTPBin(t)
	var s Session
	defer s.Close()
	for _, tc := range []struct {
		status     string
		wantMethod string
		wantData   string
	}{
		{"301", "GET", ""}, {"302", "GET", ""}, {"303", "GET", ""},
		{"307", "POST", "payload"}, {"308", "POST", "payload"},
	} {
		t.Run(tc.status, func(t *testing.T) {
			u := hb.URL + "/redirect-to?status_code=" + tc.status + "&url=" + url.QueryEscape("/anything")
			resp, err := s.Do(context.Background(), &Request{Method: "POST", URL: u, Body: strings.NewReader("payload"),
				Header: Header{{Name: "content-type", Value: "text/plain"}}})
			if err != nil {
				t.Fatal(err)
			}
			var a anything
			getJSON(t, resp, &a)
			if a.Method != tc.wantMethod || a.Data != tc.wantData {
				t.Fatalf("got %s %q, want %s %q", a.Method, a.Data, tc.wantMethod, tc.wantData)
			}
			if tc.wantData == "" && a.Headers["Content-Type"] != nil {
				t.Fatalf("content-type kept after the body was dropped: %v", a.Headers["Content-Type"])
			}
		})
	}
	// A 307 whose body cannot be sent again hands the 307 back.
	u := hb.URL + "/redirect-to?status_code=307&url=" + url.QueryEscape("/anything")
	resp, err := s.Do(context.Background(), &Request{Method: "POST", URL: u, Body: io.MultiReader(strings.NewReader("x"))})
	if err != nil || resp.StatusCode != 307 {
		t.Fatalf("unreplayable 307: %v %v", resp, err)
	}
	resp.Body.Close()
}

// echoHeaders answers with the request's headers as JSON; on /go it
// redirects to the URL in ?to=.
func echoHeaders(w http.ResponseWriter, r *http.Request) {
	if to := r.URL.Query().Get("to"); to != "" {
		http.Redirect(w, r, to, http.StatusFound)
		return
	}
	json.NewEncoder(w).Encode(r.Header)
}

// RELIABILITY.
func TestCrossOriginRedirectDropsCredentialsForGood(t *testing.T) {
	a := httptest.NewServer(http.HandlerFunc(echoHeaders))
	defer a.Close()
	b := httptest.NewServer(http.HandlerFunc(echoHeaders)) // same host, other port: another origin
	defer b.Close()
	var s Session
	defer s.Close()
	// A1 → B → A2: the credentials leave at B and never come back.
	a2 := a.URL + "/final"
	viaB := b.URL + "/go?to=" + url.QueryEscape(a2)
	req := &Request{URL: a.URL + "/go?to=" + url.QueryEscape(viaB), Header: Header{
		{Name: "Authorization", Value: "Bearer secret"},
		{Name: "Cookie", Value: "session=secret"},
		{Name: "Cookie2", Value: "$Version=1"},
		{Name: "WWW-Authenticate", Value: "Basic realm=x"},
		{Name: "Proxy-Authenticate", Value: "Basic realm=p"},
		{Name: "X-Foo", Value: "kept"},
	}}
	resp, err := s.Do(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var h http.Header
	getJSON(t, resp, &h)
	// (A caller's Proxy-Authorization never reaches an origin at all:
	// TestRequestProxyAuthorization, RELIABILITY P-06; R-03's other half.)
	for _, name := range []string{"Authorization", "Cookie", "Cookie2", "WWW-Authenticate", "Proxy-Authenticate"} {
		if h.Get(name) != "" {
			t.Errorf("%s came back after a cross-origin hop: %q", name, h.Get(name))
		}
	}
	if h.Get("X-Foo") != "kept" {
		t.Errorf("X-Foo dropped")
	}

	// Same origin keeps them.
	resp, err = s.Do(context.Background(), &Request{URL: a.URL + "/go?to=/final", Header: Header{{Name: "Authorization", Value: "Bearer ok"}}})
	if err != nil {
		t.Fatal(err)
	}
	getJSON(t, resp, &h)
	if h.Get("Authorization") != "Bearer ok" {
		t.Errorf("same-origin redirect dropped Authorization")
	}
}

// RELIABILITY R-10.
func TestBadLocationSendsNothing(t *testing.T) {
	hits := 0
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits++
		w.Header().Set("Location", "ftp://127.0.0.1/x")
		w.WriteHeader(302)
	}))
	defer ts.Close()
	var s Session
	defer s.Close()
	_, err := s.Get(context.Background(), ts.URL)
	if !errors.Is(err, ErrBadLocation) || hits != 1 {
		t.Fatalf("err = %v, hits %d", err, hits)
	}
}

func TestRefererAndFetchSiteOnRedirects(t *testing.T) {
	a := httptest.NewServer(http.HandlerFunc(echoHeaders))
	defer a.Close()
	b := httptest.NewServer(http.HandlerFunc(echoHeaders))
	defer b.Close()
	var s Session
	defer s.Close()
	get := func(req *Request) http.Header {
		t.Helper()
		resp, err := s.Do(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		var h http.Header
		getJSON(t, resp, &h)
		return h
	}
	// A typed navigation: no Referer; redirect to another port of the
	// same host is same-site.
	h := get(&Request{URL: a.URL + "/go?to=" + url.QueryEscape(b.URL+"/x")})
	if h.Get("Referer") != "" || h.Get("Sec-Fetch-Site") != "same-site" {
		t.Fatalf("navigation via another origin: referer %q site %q", h.Get("Referer"), h.Get("Sec-Fetch-Site"))
	}
	// To another site (localhost vs 127.0.0.1).
	other := strings.Replace(b.URL, "127.0.0.1", "localhost", 1)
	h = get(&Request{URL: a.URL + "/go?to=" + url.QueryEscape(other+"/x")})
	if h.Get("Sec-Fetch-Site") != "cross-site" {
		t.Fatalf("cross-site hop: sec-fetch-site %q", h.Get("Sec-Fetch-Site"))
	}
	// A request from a page: full referrer to its own origin, the origin
	// elsewhere, never credentials or fragment.
	h = get(&Request{URL: a.URL + "/x", Referrer: a.URL + "/page?q=1#frag", Kind: 2})
	if want := a.URL + "/page?q=1"; h.Get("Referer") != want || h.Get("Sec-Fetch-Site") != "same-origin" {
		t.Fatalf("same-origin: referer %q (want %q) site %q", h.Get("Referer"), want, h.Get("Sec-Fetch-Site"))
	}
	h = get(&Request{URL: b.URL + "/x", Referrer: "http://user:pw@" + strings.TrimPrefix(a.URL, "http://") + "/page"})
	if want := a.URL + "/"; h.Get("Referer") != want {
		t.Fatalf("cross-origin referer %q, want %q", h.Get("Referer"), want)
	}
}

// RELIABILITY R-06.
func TestRefererPolicy(t *testing.T) {
	u := func(s string) *url.URL { v, _ := url.Parse(s); return v }
	for _, tc := range []struct{ ref, target, want string }{
		{"https://a.com/p?q#f", "https://a.com/x", "https://a.com/p?q"},
		{"https://u:p@a.com/p", "https://a.com/x", "https://a.com/p"},
		{"https://a.com/p", "https://b.com/x", "https://a.com/"},
		{"https://a.com/p", "http://a.com/x", ""},
		{"http://a.com:8080/p", "http://a.com/x", "http://a.com:8080/"},
	} {
		if got := refererFor(u(tc.ref), u(tc.target)); got != tc.want {
			t.Errorf("refererFor(%s, %s) = %q, want %q", tc.ref, tc.target, got, tc.want)
		}
	}
	_ = bytes.MinRead
}

// TestEndlessRedirectsWithLargeHeads (RELIABILITY H1-14): a server that
// redirects forever, each response with a head just under the limit, gets
// DefaultMaxRedirects+1 requests and then ErrTooManyRedirects, all on one
// connection.
//
// RELIABILITY R-08.
func TestEndlessRedirectsWithLargeHeads(t *testing.T) {
	const limit = 64 << 10
	big := strings.Repeat("x", limit-1024)
	var hits atomic.Int32
	ts := newTestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := hits.Add(1)
		w.Header().Set("X-Big", big)
		http.Redirect(w, r, fmt.Sprintf("/hop/%d", n), http.StatusFound)
	}))
	tr := &Transport{MaxResponseHeaderBytes: limit}
	defer tr.Close()
	s := &Session{Transport: tr}
	defer s.Close()
	_, err := s.Get(context.Background(), ts.URL+"/hop/0")
	if !errors.Is(err, ErrTooManyRedirects) {
		t.Fatalf("err = %v, want ErrTooManyRedirects", err)
	}
	if n := hits.Load(); n != DefaultMaxRedirects+1 {
		t.Errorf("%d requests, want %d", n, DefaultMaxRedirects+1)
	}
	if n := ts.conns.Load(); n != 1 {
		t.Errorf("%d connections for the chain, want 1 (each hop's body drained)", n)
	}
}

// TestDowngradeRedirect (RELIABILITY ): from https to http on the
// same host, the hop is cross-origin: Authorization and Cookie are dropped,
// and no Referer goes to the http origin (strict-origin-when-cross-origin
// sends none on a downgrade).
func TestDowngradeRedirect(t *testing.T) {
	plain := httptest.NewServer(http.HandlerFunc(echoHeaders))
	defer plain.Close()
	secure := httptest.NewTLSServer(http.HandlerFunc(echoHeaders))
	defer secure.Close()
	roots := x509.NewCertPool()
	roots.AddCert(secure.Certificate())
	s := &Session{RootCAs: roots}
	defer s.Close()
	req := &Request{
		URL:      secure.URL + "/go?to=" + url.QueryEscape(plain.URL+"/landed"),
		Referrer: secure.URL + "/page",
		Header: Header{
			{Name: "Authorization", Value: "Bearer secret"},
			{Name: "Cookie", Value: "session=secret"},
		},
	}
	resp, err := s.Do(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var h http.Header
	getJSON(t, resp, &h)
	for _, name := range []string{"Authorization", "Cookie", "Referer"} {
		if v := h.Get(name); v != "" {
			t.Errorf("%s reached the http origin after a downgrade: %q", name, v)
		}
	}
}
