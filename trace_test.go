package guise

import (
	"context"
	"crypto/tls"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"slices"
	"strings"
	"sync"
	"testing"
)

// recorder is a ClientTrace that notes the events in order.
type recorder struct {
	mu     sync.Mutex
	events []string
}

func (r *recorder) add(e string) { r.mu.Lock(); r.events = append(r.events, e); r.mu.Unlock() }

func (r *recorder) trace() *httptrace.ClientTrace {
	return &httptrace.ClientTrace{
		GetConn:           func(string) { r.add("GetConn") },
		DNSStart:          func(httptrace.DNSStartInfo) { r.add("DNSStart") },
		DNSDone:           func(httptrace.DNSDoneInfo) { r.add("DNSDone") },
		ConnectStart:      func(string, string) { r.add("ConnectStart") },
		ConnectDone:       func(_, _ string, err error) { r.add("ConnectDone") },
		TLSHandshakeStart: func() { r.add("TLSHandshakeStart") },
		TLSHandshakeDone:  func(s tls.ConnectionState, err error) { r.add("TLSHandshakeDone:" + s.NegotiatedProtocol) },
		GotConn: func(i httptrace.GotConnInfo) {
			r.add(map[bool]string{true: "GotConn:reused", false: "GotConn:new"}[i.Reused])
		},
		WroteHeaders:         func() { r.add("WroteHeaders") },
		WroteRequest:         func(httptrace.WroteRequestInfo) { r.add("WroteRequest") },
		GotFirstResponseByte: func() { r.add("GotFirstResponseByte") },
	}
}

func TestClientTraceEvents(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(hello))
	defer ts.Close()
	var s Session
	defer s.Close()
	rec := &recorder{}
	ctx := httptrace.WithClientTrace(context.Background(), rec.trace())
	url := strings.Replace(ts.URL, "127.0.0.1", "localhost", 1)
	for i := 0; i < 2; i++ {
		resp, err := s.Get(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		resp.Bytes()
		if i == 0 && (resp.Timings.Reused || resp.Timings.Connect <= 0 || resp.Timings.Head < resp.Timings.GotConn) {
			t.Errorf("first request timings %+v", resp.Timings)
		}
		if i == 1 && (!resp.Timings.Reused || resp.Timings.Connect != 0) {
			t.Errorf("second request timings %+v", resp.Timings)
		}
	}
	want := []string{"GetConn", "DNSStart", "DNSDone", "ConnectStart", "ConnectDone", "GotConn:new",
		"WroteHeaders", "WroteRequest", "GotFirstResponseByte",
		"GetConn", "GotConn:reused", "WroteHeaders", "WroteRequest", "GotFirstResponseByte"}
	if !slices.Equal(rec.events, want) {
		t.Fatalf("events\n got %v\nwant %v", rec.events, want)
	}
}

// TestClientTraceTLS: over TLS, the trace sees the handshake, with the
// protocol ALPN chose, between the connect and the request.
func TestClientTraceTLS(t *testing.T) {
	run(t, func(t *testing.T, m mode) {
		o := newOrigin(t, m, http.HandlerFunc(hello))
		s := o.session(t, nil)
		rec := &recorder{}
		ctx := httptrace.WithClientTrace(context.Background(), rec.trace())
		resp, err := s.Get(ctx, o.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Bytes()
		if resp.Proto != m.proto() {
			t.Fatalf("proto %s, want %s", resp.Proto, m.proto())
		}
		want := []string{"GetConn", "ConnectStart", "ConnectDone", "TLSHandshakeStart", "TLSHandshakeDone:" + m.alpn(), "GotConn:new",
			"WroteHeaders", "WroteRequest", "GotFirstResponseByte"}
		if !slices.Equal(rec.events, want) {
			t.Fatalf("events\n got %v\nwant %v", rec.events, want)
		}
		if resp.Timings.TLS <= 0 {
			t.Errorf("no TLS time: %+v", resp.Timings)
		}
	})
}

// TestResumptionAfterHelloRetryRequest: a server that prefers a group the
// hello has no key share for answers with a HelloRetryRequest. uTLS cannot
// redo a hello that resumes a session, so the second connection's first
// attempt fails; guise retries it on a fresh connection.
func TestResumptionAfterHelloRetryRequest(t *testing.T) {
	ts := httptest.NewUnstartedServer(http.HandlerFunc(hello))
	ts.TLS = &tls.Config{CurvePreferences: []tls.CurveID{tls.CurveP256}}
	ts.Config.ErrorLog = log.New(io.Discard, "", 0) // the failed first attempts
	ts.StartTLS()
	defer ts.Close()
	tr := &Transport{}
	defer tr.Close()
	s := &Session{RootCAs: ts.Client().Transport.(*http.Transport).TLSClientConfig.RootCAs, Transport: tr}
	var resumed []bool
	for i := 0; i < 3; i++ {
		rec := &recorder{}
		tr := rec.trace()
		tr.TLSHandshakeDone = func(s tls.ConnectionState, err error) { resumed = append(resumed, s.DidResume) }
		resp, err := s.Get(httptrace.WithClientTrace(context.Background(), tr), ts.URL)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		resp.Bytes()
		s.Transport.CloseIdleConnections() // the next request needs a new connection
	}
	if len(resumed) != 3 {
		t.Fatalf("%d handshakes for 3 connections", len(resumed))
	}
}
