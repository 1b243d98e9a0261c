package guise

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/guise-http/guise/internal/h2"
	"github.com/guise-http/guise/internal/testpeer"
	"golang.org/x/net/http2"
)

// The engines' errors reach the caller
// inside the *Error a call returns (errors.go re-exports them).

// wantGuiseError checks that err is an *Error and returns it.
func wantGuiseError(t *testing.T, err error) *Error {
	t.Helper()
	var ge *Error
	if !errors.As(err, &ge) {
		t.Fatalf("err = %v (%T), want an *Error", err, err)
	}
	return ge
}

// TestStreamErrorReachesCaller: an HTTP/2 server (net/http's) that aborts
// its handler resets the stream with INTERNAL_ERROR; one that refuses every
// stream, with REFUSED_STREAM, which guise retries once and then returns.
func TestStreamErrorReachesCaller(t *testing.T) {
	t.Run("internal", func(t *testing.T) {
		o := newOrigin(t, modeH2, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
			panic(http.ErrAbortHandler)
		}))
		_, err := o.session(t, nil).Get(context.Background(), o.URL+"/")
		wantGuiseError(t, err)
		var se StreamError
		if !errors.As(err, &se) || se.Code != ErrCodeInternal || se.StreamID == 0 || se.Cause != nil {
			t.Fatalf("err = %v, want StreamError{INTERNAL_ERROR} from the server", err)
		}
		if errors.Is(err, ErrRefusedStream) {
			t.Errorf("%v matches ErrRefusedStream", err)
		}
	})
	t.Run("refused", func(t *testing.T) {
		srv := newRefusingH2(t)
		s := &Session{RootCAs: testpeer.Localhost(t).Roots}
		defer s.Close()
		_, err := s.Get(context.Background(), "https://localhost:"+portOf(srv.ln.Addr())+"/")
		wantGuiseError(t, err)
		var se StreamError
		if !errors.As(err, &se) || se.Code != ErrCodeRefusedStream || !errors.Is(err, ErrRefusedStream) {
			t.Fatalf("err = %v, want StreamError{REFUSED_STREAM} matching ErrRefusedStream", err)
		}
	})
}

// TestGoAwayErrorReachesCaller: a server that answers each request with
// GOAWAY(ENHANCE_YOUR_CALM, last stream 0) and closes.
func TestGoAwayErrorReachesCaller(t *testing.T) {
	cert := testpeer.Localhost(t)
	srv := testpeer.ListenTLS(t, testpeer.Handle(func(c net.Conn) {
		c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := io.ReadFull(c, make([]byte, len(http2.ClientPreface))); err != nil {
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
			if _, ok := f.(*http2.HeadersFrame); ok {
				fr.WriteGoAway(0, http2.ErrCodeEnhanceYourCalm, []byte("calm down"))
				return
			}
		}
	}), "h2")
	s := &Session{RootCAs: cert.Roots}
	defer s.Close()
	_, err := s.Get(context.Background(), "https://"+srv.Addr+"/")
	wantGuiseError(t, err)
	var ga GoAwayError
	if !errors.As(err, &ga) || ga.Code != ErrCodeEnhanceYourCalm || ga.LastStreamID != 0 || ga.DebugData != "calm down" {
		t.Fatalf("err = %v, want GoAwayError{0, ENHANCE_YOUR_CALM, \"calm down\"}", err)
	}
	var ce ConnectionError
	if errors.As(err, &ce) {
		t.Errorf("the server's GOAWAY reads as our ConnectionError: %v", err)
	}
}

// TestAlertErrorReachesCaller: a TLS server that shares no application
// protocol with the profile's offer sends no_application_protocol.
func TestAlertErrorReachesCaller(t *testing.T) {
	cert := testpeer.Localhost(t)
	srv := testpeer.ListenTLS(t, testpeer.Handle(func(c net.Conn) {
		c.SetDeadline(time.Now().Add(10 * time.Second))
		c.(*tls.Conn).Handshake()
	}), "x-none")
	s := &Session{RootCAs: cert.Roots}
	defer s.Close()
	_, err := s.Get(context.Background(), "https://"+srv.Addr+"/")
	wantGuiseError(t, err)
	var ae *AlertError
	var he *HandshakeError
	if !errors.As(err, &ae) || ae.Alert != AlertNoApplicationProtocol || !errors.As(err, &he) {
		t.Fatalf("err = %v, want *AlertError{no application protocol} in a *HandshakeError", err)
	}
	if ae.Alert.String() != "no application protocol" {
		t.Errorf("Alert.String() = %q", ae.Alert.String())
	}
}

// TestProxyAuthRequiredReachesCaller: a CONNECT proxy that answers 407.
func TestProxyAuthRequiredReachesCaller(t *testing.T) {
	srv := testpeer.Listen(t, testpeer.Handle(func(c net.Conn) {
		c.SetDeadline(time.Now().Add(10 * time.Second))
		br := bufio.NewReader(c)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			if strings.TrimRight(line, "\r\n") == "" {
				break
			}
		}
		io.WriteString(c, "HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"p\"\r\nContent-Length: 0\r\n\r\n")
	}))
	s := &Session{Proxy: "http://" + srv.Addr}
	defer s.Close()
	_, err := s.Get(context.Background(), "https://origin.test/")
	wantGuiseError(t, err)
	var pse *ProxyStatusError
	if !errors.As(err, &pse) || pse.StatusCode != 407 || !errors.Is(err, ErrProxyAuthRequired) {
		t.Fatalf("err = %v, want a 407 ProxyStatusError matching ErrProxyAuthRequired", err)
	}
	if got := pse.Header.Get("proxy-authenticate"); got != `Basic realm="p"` {
		t.Errorf("Proxy-Authenticate = %q", got)
	}
}

// TestRefusedToSendInEveryProtocol: a request HTTP/2 cannot carry as given
// (a te field other than "trailers") is refused before anything is sent,
// and matches ErrRefusedToSend as an HTTP/1.1 refusal does.
func TestRefusedToSendInEveryProtocol(t *testing.T) {
	o := newOrigin(t, modeH2, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("the server got %s %s", r.Method, r.URL)
	}))
	_, err := o.session(t, nil).Do(context.Background(), &Request{URL: o.URL + "/", Header: Header{{Name: "te", Value: "gzip"}}})
	wantGuiseError(t, err)
	if !errors.Is(err, ErrRefusedToSend) || !errors.Is(err, h2.ErrRefusedToSend) {
		t.Fatalf("err = %v, want one matching ErrRefusedToSend", err)
	}
}
