package fingerprint

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// startServer starts a Server on loopback and closes it in Cleanup,
// checking that no goroutine outlives it.
func startServer(t *testing.T, s *Server) *Server {
	t.Helper()
	if s == nil {
		s = &Server{}
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		goleak.VerifyNone(t)
	})
	return s
}

// clientTLS is a client config that trusts s and sends SNI fp.test.
func clientTLS(s *Server) *tls.Config {
	return &tls.Config{RootCAs: s.CertPool(), ServerName: "fp.test"}
}

// transport returns an HTTP client transport to s; h2 picks the protocol.
func transport(t *testing.T, s *Server, h2 bool, conf *tls.Config) *http.Transport {
	t.Helper()
	if conf == nil {
		conf = clientTLS(s)
	}
	addr := s.ListenAddr()
	tr := &http.Transport{
		TLSClientConfig: conf,
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "tcp", addr)
		},
	}
	var p http.Protocols
	if h2 {
		p.SetHTTP2(true)
	} else {
		p.SetHTTP1(true)
	}
	tr.Protocols = &p
	t.Cleanup(tr.CloseIdleConnections)
	return tr
}

// get fetches url with tr and returns the response body.
func get(t *testing.T, tr http.RoundTripper, url string, hdr map[string][]string) (*http.Response, []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header[k] = v
	}
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// rawH1 sends head over a new TLS (or plain) connection to s and returns
// the response to it.
func rawH1(t *testing.T, s *Server, useTLS bool, head string) (*http.Response, []byte) {
	t.Helper()
	c, err := net.DialTimeout("tcp", s.ListenAddr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if useTLS {
		conf := clientTLS(s)
		conf.NextProtos = []string{"http/1.1"}
		tc := tls.Client(c, conf)
		if err := tc.Handshake(); err != nil {
			t.Fatal(err)
		}
		c = tc
	}
	if _, err := io.WriteString(c, head); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}

// waitRecords waits (bounded) until pred holds for the server's records.
func waitRecords(t *testing.T, s *Server, pred func([]*ConnRecord) bool) []*ConnRecord {
	t.Helper()
	timeout := time.NewTimer(10 * time.Second)
	defer timeout.Stop()
	for {
		ch := s.Changed()
		recs := s.Records()
		if pred(recs) {
			return recs
		}
		select {
		case <-ch:
		case <-timeout.C:
			t.Fatalf("records never matched; have %d", len(recs))
		}
	}
}

func TestServerZeroValueCloseBeforeStart(t *testing.T) {
	var s Server
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != ErrServerClosed {
		t.Fatalf("Start after Close = %v, want ErrServerClosed", err)
	}
	if s.URL() != "" {
		t.Fatalf("URL = %q before Start", s.URL())
	}
}

func TestServerStartTwice(t *testing.T) {
	s := startServer(t, nil)
	if err := s.Start(); err != ErrServerStarted {
		t.Fatalf("second Start = %v, want ErrServerStarted", err)
	}
	if !strings.HasPrefix(s.URL(), "https://127.0.0.1:") {
		t.Fatalf("URL = %q", s.URL())
	}
}

func TestServerHTTP1KeepsRawHead(t *testing.T) {
	s := startServer(t, nil)
	head := "GET /api/fetch HTTP/1.1\r\nHost: fp.test\r\nX-Zeta: 1\r\nuser-AGENT: raw-test\r\naccept: */*\r\n\r\n"
	resp, _ := rawH1(t, s, true, head)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	recs := waitRecords(t, s, func(r []*ConnRecord) bool { return len(r) == 1 && r[0].Requests == 1 })
	r := recs[0]
	if r.Transport != TransportTLS || r.Protocol != ProtoHTTP1 {
		t.Fatalf("transport %q protocol %q", r.Transport, r.Protocol)
	}
	if r.Negotiated == nil || r.Negotiated.ALPN != "http/1.1" || r.Negotiated.ServerName != "fp.test" || r.Negotiated.Version != "TLS 1.3" {
		t.Fatalf("negotiated %+v", r.Negotiated)
	}
	if r.Negotiated.Group != "X25519MLKEM768" {
		t.Errorf("group %q, want X25519MLKEM768 (Go's default first key share)", r.Negotiated.Group)
	}
	if len(r.ClientHelloRecord) < 5 || r.ClientHelloRecord[0] != 0x16 {
		t.Fatalf("client hello record % x", r.ClientHelloRecord[:min(5, len(r.ClientHelloRecord))])
	}
	heads := r.HTTP1Heads()
	if len(heads) != 1 || string(heads[0]) != head {
		t.Fatalf("heads %q, want [%q]", heads, head)
	}
}

func TestServerPlainHTTP(t *testing.T) {
	s := startServer(t, nil)
	head := "GET /api/fetch HTTP/1.1\r\nHost: localhost\r\nFoo: bar\r\n\r\n"
	resp, body := rawH1(t, s, false, head)
	if resp.StatusCode != 200 || !bytes.Contains(body, []byte(`"ok"`)) {
		t.Fatalf("status %d body %q", resp.StatusCode, body)
	}
	recs := waitRecords(t, s, func(r []*ConnRecord) bool { return len(r) == 1 && r[0].Requests == 1 })
	r := recs[0]
	if r.Transport != TransportTCP || r.Protocol != ProtoHTTP1 || r.Negotiated != nil || r.ClientHelloRecord != nil {
		t.Fatalf("record %+v", r)
	}
	if string(r.ClientBytes) != head {
		t.Fatalf("client bytes %q, want %q", r.ClientBytes, head)
	}
}

func TestServerH2(t *testing.T) {
	s := startServer(t, nil)
	tr := transport(t, s, true, nil)
	resp, _ := get(t, tr, "https://fp.test/api/fetch", nil)
	if resp.ProtoMajor != 2 {
		t.Fatalf("proto %s", resp.Proto)
	}
	tr.CloseIdleConnections()
	recs := waitRecords(t, s, func(r []*ConnRecord) bool { return len(r) == 1 && !r[0].Open() })
	r := recs[0]
	if r.Protocol != ProtoH2 || r.Negotiated.ALPN != "h2" {
		t.Fatalf("protocol %q alpn %q", r.Protocol, r.Negotiated.ALPN)
	}
	if !isPreface(r.ClientBytes) {
		t.Fatalf("client bytes do not start with the preface: %q", r.ClientBytes[:min(24, len(r.ClientBytes))])
	}
	if r.HTTP1Heads() != nil {
		t.Fatal("HTTP1Heads on an h2 connection")
	}
}

func TestServerPlainH2PriorKnowledge(t *testing.T) {
	s := startServer(t, nil)
	addr := s.ListenAddr()
	var p http.Protocols
	p.SetUnencryptedHTTP2(true)
	tr := &http.Transport{Protocols: &p}
	t.Cleanup(tr.CloseIdleConnections)
	resp, _ := get(t, tr, "http://"+addr+"/api/fetch", nil)
	if resp.ProtoMajor != 2 {
		t.Fatalf("proto %s", resp.Proto)
	}
	recs := waitRecords(t, s, func(r []*ConnRecord) bool { return len(r) == 1 && r[0].Requests == 1 })
	if recs[0].Transport != TransportTCP || recs[0].Protocol != ProtoH2 {
		t.Fatalf("transport %q protocol %q", recs[0].Transport, recs[0].Protocol)
	}
}

func TestServerRecordsResumption(t *testing.T) {
	for _, h2 := range []bool{false, true} {
		name := map[bool]string{false: "h1", true: "h2"}[h2]
		t.Run(name, func(t *testing.T) {
			var ended []*ConnRecord
			done := make(chan struct{}, 4)
			s := &Server{OnRecord: func(r *ConnRecord) { ended = append(ended, r); done <- struct{}{} }}
			startServer(t, s)
			conf := clientTLS(s)
			conf.ClientSessionCache = tls.NewLRUClientSessionCache(4)
			for i := range 2 {
				tr := transport(t, s, h2, conf)
				get(t, tr, "https://fp.test/api/fetch", nil)
				tr.CloseIdleConnections()
				select {
				case <-done:
				case <-time.After(10 * time.Second):
					t.Fatalf("connection %d never ended", i+1)
				}
			}
			if len(ended) != 2 {
				t.Fatalf("%d records", len(ended))
			}
			if ended[0].Negotiated.Resumed || !ended[1].Negotiated.Resumed {
				t.Fatalf("resumed = %v, %v; want false, true", ended[0].Negotiated.Resumed, ended[1].Negotiated.Resumed)
			}
		})
	}
}

func TestServerBadClientHello(t *testing.T) {
	got := make(chan *ConnRecord, 1)
	s := startServer(t, &Server{OnRecord: func(r *ConnRecord) { got <- r }})
	c, err := net.Dial("tcp", s.ListenAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// A handshake record whose message is a ServerHello (type 2).
	c.Write([]byte{0x16, 3, 1, 0, 4, 2, 0, 0, 0})
	select {
	case r := <-got:
		if r.Err == "" || r.Transport != TransportTLS || len(r.ClientHelloRecord) != 9 {
			t.Fatalf("record %+v", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no record")
	}
}

func TestServerCloseWithOpenConnections(t *testing.T) {
	s := &Server{}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	tr1 := transport(t, s, true, nil)
	tr2 := transport(t, s, false, nil)
	get(t, tr1, "https://fp.test/api/fetch", nil)
	get(t, tr2, "https://fp.test/api/fetch", nil)
	// An idle client that never sends anything, and one mid-hello.
	c1, err := net.Dial("tcp", s.ListenAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Close()
	c2, err := net.Dial("tcp", s.ListenAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	c2.Write([]byte{0x16, 3, 1, 1, 0})
	waitRecords(t, s, func(r []*ConnRecord) bool { return len(r) == 4 })
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	tr1.CloseIdleConnections()
	tr2.CloseIdleConnections()
	goleak.VerifyNone(t)
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

// responseReader reads consecutive HTTP/1 responses from one connection.
type responseReader struct{ br *bufio.Reader }

func newResponseReader(c net.Conn) *responseReader { return &responseReader{bufio.NewReader(c)} }

func (rr *responseReader) next(t *testing.T) []byte {
	t.Helper()
	resp, err := http.ReadResponse(rr.br, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	return b
}

func TestServerLimits(t *testing.T) {
	s := startServer(t, &Server{MaxClientBytes: 64, MaxRecords: 2})
	for i := range 3 {
		head := "GET /api/fetch HTTP/1.1\r\nHost: fp.test\r\nX-Pad: " + strings.Repeat("p", 100) + "\r\n\r\n"
		rawH1(t, s, i%2 == 0, head)
	}
	recs := waitRecords(t, s, func(r []*ConnRecord) bool { return len(r) == 2 && r[1].ID == 3 && r[1].Requests == 1 })
	if recs[0].ID != 2 {
		t.Fatalf("kept records %d and %d, want the newest two (2, 3)", recs[0].ID, recs[1].ID)
	}
	for _, r := range recs {
		if len(r.ClientBytes) != 64 || !r.Truncated() || r.ClientBytesTotal <= 64 {
			t.Errorf("#%d: kept %d of %d bytes", r.ID, len(r.ClientBytes), r.ClientBytesTotal)
		}
	}
	// The head is cut off: the report says order and case are lost.
	_, body := rawH1(t, s, true, "GET /api/all HTTP/1.1\r\nHost: fp.test\r\nX-Pad: "+strings.Repeat("p", 100)+"\r\n\r\n")
	if rep := decodeReport(t, body); rep.HeadersSource != "net/http" || len(rep.Headers) == 0 {
		t.Errorf("truncated head: source %q headers %v", rep.HeadersSource, rep.Headers)
	}
}

func BenchmarkServerHTTP1Request(b *testing.B) {
	s := &Server{}
	if err := s.Start(); err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	c, err := net.Dial("tcp", s.ListenAddr())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	head := []byte("GET /api/fetch HTTP/1.1\r\nHost: fp.test\r\nUser-Agent: bench\r\n\r\n")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Write(head); err != nil {
			b.Fatal(err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}
