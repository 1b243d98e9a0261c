package guise

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/guise-http/guise/fields"
	"github.com/guise-http/guise/profile"
)

func hello(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Method", r.Method)
	io.WriteString(w, "hello "+r.URL.Path)
}

func TestSessionGetSendsProfileHeadersInOrder(t *testing.T) {
	ts := newTestServer(t, http.HandlerFunc(hello))
	var s Session
	defer s.Close()
	resp, err := s.Get(context.Background(), ts.URL+"/a?b=c")
	if err != nil {
		t.Fatal(err)
	}
	body, err := resp.Bytes()
	if err != nil || string(body) != "hello /a" {
		t.Fatalf("body %q, %v", body, err)
	}
	if resp.StatusCode != 200 || resp.Proto != "HTTP/1.1" || resp.Header.Get("x-method") != "GET" {
		t.Fatalf("status %d proto %q x-method %q", resp.StatusCode, resp.Proto, resp.Header.Get("x-method"))
	}
	heads := ts.Heads()
	if len(heads) != 1 {
		t.Fatalf("server saw %d heads", len(heads))
	}
	if !bytes.HasPrefix(heads[0], []byte("GET /a?b=c HTTP/1.1\r\n")) {
		t.Fatalf("request line: %q", heads[0])
	}
	p, _ := profile.Lookup(profile.Default)
	want := wantNames(p.HeaderSet(profile.Navigate, profile.HTTP1))
	if got := headerNames(heads[0]); !slices.Equal(got, want) {
		t.Fatalf("header order\n got %q\nwant %q", got, want)
	}
	host := strings.TrimPrefix(ts.URL, "http://")
	if !bytes.Contains(heads[0], []byte("\r\nHost: "+host+"\r\n")) && !bytes.HasPrefix(heads[0][bytes.IndexByte(heads[0], '\n')+1:], []byte("Host: "+host+"\r\n")) {
		t.Fatalf("no Host %s in %q", host, heads[0])
	}
}

// wantNames is the header names a request with no caller fields sends:
// the set's fields minus placeholders the request did not fill.
func wantNames(hs *profile.HeaderSet) []string {
	var names []string
	for _, f := range hs.Header {
		if f.Value == "" && slices.ContainsFunc(hs.PerRequest, func(n string) bool { return fields.EqualFold(n, f.Name) }) && !fields.EqualFold(f.Name, "host") {
			continue
		}
		names = append(names, f.Name)
	}
	return names
}

func TestCallerHeadersReplaceInPlace(t *testing.T) {
	ts := newTestServer(t, http.HandlerFunc(hello))
	var s Session
	defer s.Close()
	req := &Request{URL: ts.URL, Header: Header{{Name: "user-agent", Value: "mine/1.0"}, {Name: "X-Extra", Value: "1"}}}
	resp, err := s.Do(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	head := string(ts.Heads()[0])
	names := headerNames([]byte(head))
	if names[len(names)-1] != "X-Extra" {
		t.Fatalf("caller's new field not last: %q", names)
	}
	if !strings.Contains(head, "\r\nuser-agent: mine/1.0\r\n") {
		t.Fatalf("caller's user-agent not sent in its case: %q", head)
	}
	if strings.Count(strings.ToLower(head), "user-agent:") != 1 {
		t.Fatalf("user-agent sent twice: %q", head)
	}
	p, _ := profile.Lookup(profile.Default)
	defaults := wantNames(p.HeaderSet(profile.Navigate, profile.HTTP1))
	ua := slices.IndexFunc(defaults, func(n string) bool { return fields.EqualFold(n, "user-agent") })
	if ua >= 0 && !fields.EqualFold(names[ua], "user-agent") {
		t.Fatalf("user-agent moved from position %d: %q", ua, names)
	}
}

func TestSessionReusesOneConnection(t *testing.T) {
	ts := newTestServer(t, http.HandlerFunc(hello))
	var s Session
	defer s.Close()
	for i := 0; i < 20; i++ {
		resp, err := s.Get(context.Background(), ts.URL)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := resp.Bytes(); err != nil {
			t.Fatal(err)
		}
	}
	if n := ts.conns.Load(); n != 1 {
		t.Fatalf("20 sequential requests used %d connections, want 1", n)
	}
}

func TestIsolatedCallsNeverShare(t *testing.T) {
	ts := newTestServer(t, http.HandlerFunc(hello))
	for i := 0; i < 3; i++ {
		resp, err := Get(context.Background(), ts.URL)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := resp.Bytes(); err != nil {
			t.Fatal(err)
		}
	}
	if n := ts.conns.Load(); n != 3 {
		t.Fatalf("3 isolated calls used %d connections, want 3", n)
	}
}

// RELIABILITY L-11.
func TestSessionsShareOnlyThroughATransport(t *testing.T) {
	ts := newTestServer(t, http.HandlerFunc(hello))
	get := func(s *Session) {
		t.Helper()
		resp, err := s.Get(context.Background(), ts.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Bytes()
	}
	a, b := &Session{}, &Session{}
	defer a.Close()
	defer b.Close()
	get(a)
	get(b)
	if n := ts.conns.Load(); n != 2 {
		t.Fatalf("two separate sessions used %d connections, want 2", n)
	}
	tr := &Transport{}
	defer tr.Close()
	c, d := &Session{Transport: tr}, &Session{Transport: tr}
	get(c)
	get(d)
	if n := ts.conns.Load(); n != 3 {
		t.Fatalf("two sessions on one Transport opened %d more connections, want 1", n-2)
	}
	// A different profile on the same Transport is a different pool key.
	e := &Session{Transport: tr, Profile: "firefox"}
	get(e)
	if n := ts.conns.Load(); n != 4 {
		t.Fatalf("another profile reused a connection (conns %d)", n)
	}
}

func TestPostBodies(t *testing.T) {
	ts := newTestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %d %v %s", r.Method, len(b), r.TransferEncoding, r.Header.Get("Content-Type"))
	}))
	var s Session
	defer s.Close()
	big := bytes.Repeat([]byte("x"), 1<<20)
	cases := []struct {
		name string
		body io.Reader
		want string
	}{
		{"buffer", bytes.NewBufferString("a=1"), "POST 3 [] text/plain"},
		{"big buffer", bytes.NewBuffer(big), "POST 1048576 [] text/plain"},
		{"reader", bytes.NewReader(big), "POST 1048576 [] text/plain"},
		{"unknown length", io.MultiReader(strings.NewReader("ab"), strings.NewReader("cd")), "POST 4 [chunked] text/plain"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := s.Do(context.Background(), &Request{Method: "POST", URL: ts.URL, Body: tc.body,
				Header: Header{{Name: "content-type", Value: "text/plain"}}})
			if err != nil {
				t.Fatal(err)
			}
			got, err := resp.Bytes()
			if err != nil || string(got) != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

func TestBadInputIsRefusedBeforeSending(t *testing.T) {
	ts := newTestServer(t, http.HandlerFunc(hello))
	var s Session
	defer s.Close()
	cases := []*Request{
		{URL: ts.URL, Header: Header{{Name: "X-A", Value: "a\r\nInjected: 1"}}},
		{URL: ts.URL, Header: Header{{Name: "X A", Value: "a"}}},
		{URL: ts.URL, Header: Header{{Name: "X-A", Value: "a\x00"}}},
		{URL: ts.URL, Method: "GET /x HTTP/1.1\r\n"},
		{URL: ts.URL, Method: "G T"},
		{URL: "http://exa mple.com/"},
		{URL: "http:///nohost"},
		// RELIABILITY P-06: proxy credentials come from the proxy's URL.
		{URL: ts.URL, Header: Header{{Name: "Proxy-Authorization", Value: "Basic c2VjcmV0"}}},
		{URL: ts.URL, Header: Header{{Name: "proxy-authorization", Value: "Bearer t"}}},
	}
	for i, req := range cases {
		_, err := s.Do(context.Background(), req)
		var ge *Error
		if !errors.As(err, &ge) || !errors.Is(err, ErrRefusedToSend) {
			t.Errorf("case %d: err = %v, want *Error wrapping ErrRefusedToSend", i, err)
		}
	}
	_, err := s.Get(context.Background(), "ftp://127.0.0.1/")
	if !errors.Is(err, ErrUnsupportedScheme) {
		t.Errorf("ftp: err = %v", err)
	}
	if len(ts.Heads()) != 0 {
		t.Fatalf("refused requests reached the server: %q", ts.Heads())
	}
}

// RELIABILITY L-06, L-07.
func TestTimeouts(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	ts := newTestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slowbody" {
			w.Header().Set("Content-Length", "10")
			w.Write([]byte("12345"))
			w.(http.Flusher).Flush()
		}
		select {
		case <-block:
		case <-r.Context().Done():
		}
	}))
	t.Run("total before head", func(t *testing.T) {
		s := &Session{Timeout: 100 * time.Millisecond}
		defer s.Close()
		_, err := s.Get(context.Background(), ts.URL)
		var te *TimeoutError
		var ge *Error
		if !errors.As(err, &te) || te.Phase != PhaseTotal || !errors.As(err, &ge) || !ge.Timeout() {
			t.Fatalf("err = %v, want *Error with TimeoutError{total}", err)
		}
	})
	t.Run("response head", func(t *testing.T) {
		tr := &Transport{ResponseHeaderTimeout: 100 * time.Millisecond}
		defer tr.Close()
		s := &Session{Transport: tr}
		_, err := s.Get(context.Background(), ts.URL)
		var te *TimeoutError
		if !errors.As(err, &te) || te.Phase != PhaseHead {
			t.Fatalf("err = %v, want TimeoutError{head}", err)
		}
	})
	t.Run("body idle", func(t *testing.T) {
		tr := &Transport{BodyIdleTimeout: 100 * time.Millisecond}
		defer tr.Close()
		s := &Session{Transport: tr}
		resp, err := s.Get(context.Background(), ts.URL+"/slowbody")
		if err != nil {
			t.Fatal(err)
		}
		_, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		var te *TimeoutError
		if !errors.As(err, &te) || te.Phase != PhaseBodyIdle {
			t.Fatalf("err = %v, want TimeoutError{body idle}", err)
		}
	})
	t.Run("total while reading an endless body", func(t *testing.T) {
		// RELIABILITY L-08: the body never ends; Timeout ends it, and
		// the connection is not kept.
		endless := newTestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			chunk := bytes.Repeat([]byte("e"), 4096)
			for i := 0; i < 100000; i++ { // bounded: about 400 MB, far past the timeout
				if _, err := w.Write(chunk); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				if r.Context().Err() != nil {
					return
				}
			}
		}))
		s := &Session{Timeout: 200 * time.Millisecond}
		defer s.Close()
		start := time.Now()
		resp, err := s.Get(context.Background(), endless.URL)
		if err != nil {
			t.Fatal(err)
		}
		n, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		var te *TimeoutError
		var ge *Error
		if !errors.As(err, &te) || te.Phase != PhaseTotal || !errors.As(err, &ge) || !ge.Timeout() {
			t.Fatalf("after %d bytes: err = %v, want *Error with TimeoutError{total}", n, err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("the timeout of 200ms ended the body after %v", d)
		}
		// A new request gets a new connection: the interrupted one was
		// not kept.
		before := endless.conns.Load()
		resp, err = s.Get(context.Background(), endless.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if endless.conns.Load() != before+1 {
			t.Errorf("connections %d → %d: the timed-out connection was reused", before, endless.conns.Load())
		}
	})
	t.Run("context cancel", func(t *testing.T) {
		var s Session
		defer s.Close()
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(50*time.Millisecond, cancel)
		_, err := s.Get(ctx, ts.URL)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
	})
}

// RELIABILITY L-05.
func TestRetryOnServerClosedIdleConnection(t *testing.T) {
	ts := newTestServer(t, http.HandlerFunc(hello))
	var s Session
	defer s.Close()
	resp, err := s.Get(context.Background(), ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Bytes()
	ts.CloseClientConnections() // the server drops the idle keep-alive connection
	resp, err = s.Get(context.Background(), ts.URL)
	if err != nil {
		t.Fatalf("GET on a connection the server closed was not retried: %v", err)
	}
	resp.Bytes()
	if n := ts.conns.Load(); n != 2 {
		t.Fatalf("conns = %d, want 2", n)
	}
}

func TestUnreadBodyIsDrainedForReuse(t *testing.T) {
	ts := newTestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Chunked: several flushes.
		for i := 0; i < 8; i++ {
			w.Write(bytes.Repeat([]byte("z"), 1000))
			w.(http.Flusher).Flush()
		}
	}))
	tr := &Transport{MaxConnsPerHost: 2}
	defer tr.Close()
	s := &Session{Transport: tr}
	for i := 0; i < 200; i++ {
		resp, err := s.Get(context.Background(), ts.URL)
		if err != nil {
			t.Fatal(err)
		}
		var one [1]byte
		if _, err := io.ReadFull(resp.Body, one[:]); err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if n := ts.conns.Load(); n > 2 {
		t.Fatalf("200 abandoned small bodies opened %d connections, pool size 2", n)
	}
}

func TestSessionDroppedWithoutCloseReleasesConnections(t *testing.T) {
	testSessionDropped(t, context.Background())
}

// TestSessionDroppedUnderLongLivedContext: a context that outlives the
// Session (its connections stay registered on it between requests) must
// not keep the Session reachable.
func TestSessionDroppedUnderLongLivedContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	testSessionDropped(t, ctx)
}

func testSessionDropped(t *testing.T, ctx context.Context) {
	closed := make(chan struct{}, 1)
	ts := newTestServer(t, http.HandlerFunc(hello), func(s *http.Server) {
		s.ConnState = func(c net.Conn, st http.ConnState) {
			if st == http.StateClosed {
				select {
				case closed <- struct{}{}:
				default:
				}
			}
		}
	})
	func() {
		s := &Session{}
		resp, err := s.Get(ctx, ts.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Bytes()
	}()
	deadline := time.After(5 * time.Second)
	for {
		runtime.GC()
		select {
		case <-closed:
			return
		case <-deadline:
			t.Fatal("a garbage-collected Session kept its connection open")
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// RELIABILITY R-07.
func TestErrorMasksPassword(t *testing.T) {
	_, err := Get(context.Background(), "http://user:secret@127.0.0.1:1/")
	if err == nil || strings.Contains(err.Error(), "secret") {
		t.Fatalf("err = %v", err)
	}
}

// TestConcurrentRequestsOnFewConnections: 16 goroutines share 4
// connections whose small bodies arrive inline with the head (the
// connection is released before RoundTrip returns); every request must
// reach the server intact.
func TestConcurrentRequestsOnFewConnections(t *testing.T) {
	var bad atomic.Int32
	ts := newTestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("User-Agent") == "" || r.Header.Get("X-N") == "" || r.URL.Path != "/n/"+r.Header.Get("X-N") {
			bad.Add(1)
		}
		io.WriteString(w, r.Header.Get("X-N"))
	}))
	tr := &Transport{MaxConnsPerHost: 4}
	defer tr.Close()
	s := &Session{Transport: tr}
	var wg sync.WaitGroup
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 100; i++ {
				n := strconv.Itoa(g*1000 + i)
				resp, err := s.Do(context.Background(), &Request{URL: ts.URL + "/n/" + n, Header: Header{{Name: "X-N", Value: n}}})
				if err != nil {
					t.Error(err)
					return
				}
				b, err := resp.Bytes()
				if err != nil || string(b) != n || resp.StatusCode != 200 {
					t.Errorf("request %s: %d %q %v", n, resp.StatusCode, b, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if bad.Load() != 0 || ts.conns.Load() > 4 {
		t.Fatalf("%d malformed requests, %d connections for a limit of 4", bad.Load(), ts.conns.Load())
	}
}

func TestURLCacheServesNewRequests(t *testing.T) {
	u := "http://127.0.0.1:1/cached?q=1"
	a := &Request{URL: u}
	pa, err := a.parse()
	if err != nil {
		t.Fatal(err)
	}
	b := &Request{URL: u}
	pb, err := b.parse()
	if err != nil || *pa != *pb || pa == pb {
		t.Fatalf("a new Request for a seen URL: %+v %v", pb, err)
	}
	if n := testing.AllocsPerRun(100, func() { c := &Request{URL: u}; c.parse() }); n > 1 && !raceEnabled {
		t.Fatalf("%v allocations to parse a cached URL, want at most the Request itself", n)
	}
	if _, err := (&Request{URL: "http://bad host/"}).parse(); err == nil {
		t.Fatal("a bad URL parsed")
	}
}
