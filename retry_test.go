package guise

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/http2"

	"github.com/guise-http/guise/internal/testpeer"
)

// closingServer answers the first request on each connection with a small
// keep-alive response; a second request on the same connection is read and
// then the connection is closed without an answer, as a server that closes
// an idle connection just as it is reused. It records the request lines
// (method and path) per connection.
type closingServer struct {
	ln    net.Listener
	mu    sync.Mutex
	conns [][]string
}

func newClosingServer(t *testing.T) *closingServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &closingServer{ln: ln}
	testpeer.Serve(t, ln, testpeer.Handle(func(c net.Conn) {
		s.mu.Lock()
		i := len(s.conns)
		s.conns = append(s.conns, nil)
		s.mu.Unlock()
		br := bufio.NewReader(c)
		for n := 0; ; n++ {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns[i] = append(s.conns[i], req.Method+" "+req.URL.Path)
			s.mu.Unlock()
			if n > 0 {
				return // the second request: close without a word
			}
			io.Copy(io.Discard, req.Body)
			io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		}
	}))
	return s
}

func (s *closingServer) seen() [][]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([][]string, len(s.conns))
	for i, c := range s.conns {
		out[i] = append([]string(nil), c...)
	}
	return out
}

// TestStreamingPOSTNotReplayed (RELIABILITY X-06): a request on a reused
// connection that the server closes without answering is sent again on a
// new connection only when its body can be sent again: a POST of a
// streaming body gets the error, and the server sees it once; a POST of a
// *bytes.Buffer and a GET are retried once and succeed.
func TestStreamingPOSTNotReplayed(t *testing.T) {
	type streaming struct{ io.Reader } // no type guise can rewind
	for _, tc := range []struct {
		name    string
		req     func(url string) *Request
		retried bool
	}{
		{"streaming POST", func(u string) *Request {
			return &Request{Method: "POST", URL: u + "/post", Body: streaming{strings.NewReader("payload")}}
		}, false},
		{"buffered POST", func(u string) *Request {
			return &Request{Method: "POST", URL: u + "/post", Body: bytes.NewBufferString("payload")}
		}, true},
		{"GET", func(u string) *Request { return &Request{URL: u + "/get"} }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newClosingServer(t)
			url := "http://" + srv.ln.Addr().String()
			s := &Session{}
			defer s.Close()
			resp, err := s.Get(context.Background(), url+"/first")
			if err != nil {
				t.Fatal(err)
			}
			resp.Bytes() // the connection goes back to the pool
			resp, err = s.Do(context.Background(), tc.req(url))
			seen := srv.seen()
			if !tc.retried {
				var ge *Error
				if err == nil || !errors.As(err, &ge) {
					t.Fatalf("err = %v, want an *Error", err)
				}
				if len(seen) != 1 || len(seen[0]) != 2 {
					t.Fatalf("server saw %q, want the request once on the first connection", seen)
				}
				return
			}
			if err != nil {
				t.Fatalf("not retried: %v", err)
			}
			if b, _ := resp.Bytes(); string(b) != "ok" {
				t.Fatalf("body %q", b)
			}
			if len(seen) != 2 || len(seen[0]) != 2 || len(seen[1]) != 1 || seen[1][0] != seen[0][1] {
				t.Fatalf("server saw %q, want the request on the first connection, then once on a second", seen)
			}
		})
	}
}

// refusingH2 is an HTTP/2 server over TLS that refuses every stream with
// RST_STREAM(REFUSED_STREAM) before any processing. It counts the streams
// it saw and the connections they came on.
type refusingH2 struct {
	ln      net.Listener
	mu      sync.Mutex
	streams []int // per stream, the connection's index
	conns   int
}

func newRefusingH2(t *testing.T) *refusingH2 {
	ln, err := tls.Listen("tcp", "127.0.0.1:0", testpeer.Localhost(t).ServerConfig("h2"))
	if err != nil {
		t.Fatal(err)
	}
	s := &refusingH2{ln: ln}
	testpeer.Serve(t, ln, testpeer.Handle(func(c net.Conn) {
		s.mu.Lock()
		ci := s.conns
		s.conns++
		s.mu.Unlock()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		preface := make([]byte, len(http2.ClientPreface))
		if _, err := io.ReadFull(c, preface); err != nil {
			return
		}
		fr := http2.NewFramer(c, c)
		if fr.WriteSettings() != nil {
			return
		}
		for {
			f, err := fr.ReadFrame()
			if err != nil {
				return
			}
			switch f := f.(type) {
			case *http2.SettingsFrame:
				if !f.IsAck() && fr.WriteSettingsAck() != nil {
					return
				}
			case *http2.HeadersFrame:
				s.mu.Lock()
				s.streams = append(s.streams, ci)
				s.mu.Unlock()
				if fr.WriteRSTStream(f.StreamID, http2.ErrCodeRefusedStream) != nil {
					return
				}
			}
		}
	}))
	return s
}

// TestRefusedStreamRetriedOnce (RELIABILITY H2-15): a stream the server
// refuses unprocessed is sent again once, on the same connection while it
// takes streams (as Chromium's restarted transaction finds its session
// again), when its body can be sent again (a GET, a POST of a
// *bytes.Buffer), and then the error is the caller's; a POST of a
// streaming body is not sent again.
func TestRefusedStreamRetriedOnce(t *testing.T) {
	roots := testpeer.Localhost(t).Roots
	type streaming struct{ io.Reader }
	for _, tc := range []struct {
		name  string
		req   func(url string) *Request
		sends int
	}{
		{"GET", func(u string) *Request { return &Request{URL: u} }, 2},
		{"buffered POST", func(u string) *Request {
			return &Request{Method: "POST", URL: u, Body: bytes.NewBufferString("payload")}
		}, 2},
		{"streaming POST", func(u string) *Request {
			return &Request{Method: "POST", URL: u, Body: streaming{strings.NewReader("payload")}}
		}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newRefusingH2(t)
			s := &Session{RootCAs: roots}
			defer s.Close()
			_, err := s.Do(context.Background(), tc.req("https://localhost:"+portOf(srv.ln.Addr())+"/"))
			var ge *Error
			if err == nil || !errors.As(err, &ge) {
				t.Fatalf("err = %v, want an *Error", err)
			}
			srv.mu.Lock()
			defer srv.mu.Unlock()
			if len(srv.streams) != tc.sends {
				t.Fatalf("server saw %d streams, want %d (%v)", len(srv.streams), tc.sends, err)
			}
			if tc.sends == 2 && srv.streams[0] != srv.streams[1] {
				t.Errorf("the retry dialed a connection of its own; the refusing one still took streams")
			}
		})
	}
}

// TestKeepAliveTimeoutHonoured (RELIABILITY X-08): a server that answers
// with Keep-Alive: timeout=1 closes an idle connection after a second; guise
// reuses the connection soon after a response, and opens a new one once it
// has been idle for half of that, rather than send a request the server may
// be closing the connection under.
func TestKeepAliveTimeoutHonoured(t *testing.T) {
	ts := newTestServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Keep-Alive", "timeout=1")
		io.WriteString(w, "ok")
	}))
	s := &Session{}
	defer s.Close()
	get := func() {
		t.Helper()
		resp, err := s.Get(context.Background(), ts.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Bytes()
	}
	get()
	get() // at once: the same connection
	if n := ts.conns.Load(); n != 1 {
		t.Fatalf("%d connections for two requests in a row, want 1", n)
	}
	time.Sleep(600 * time.Millisecond) // past half of timeout=1
	get()
	if n := ts.conns.Load(); n != 2 {
		t.Fatalf("%d connections after 600ms idle under Keep-Alive: timeout=1, want 2", n)
	}
}
