package guise

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/guise-http/guise/internal/testpeer"
)

// TestUncleanTLSCloseF10 (RELIABILITY.md F-10): over TLS, a
// close-delimited HTTP/1.1 body ended by the server's TCP FIN without a
// close_notify alert may have been cut short by anyone on the path, so
// reading it ends in ErrBodyTruncated (the bytes that came are delivered
// first); the same body ended by close_notify is complete, and so is a
// Content-Length body whose server then closes uncleanly.
func TestUncleanTLSCloseF10(t *testing.T) {
	cert := testpeer.Localhost(t)
	roots, cfg := cert.Roots, cert.ServerConfig("http/1.1")
	for _, tc := range []struct {
		name    string
		head    string
		clean   bool // close_notify before the FIN
		wantErr bool
	}{
		{"close-delimited, FIN only", "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n", false, true},
		{"close-delimited, close_notify", "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n", true, false},
		{"content-length, FIN only", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\nConnection: close\r\n\r\n", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			done := make(chan error, 1)
			go func() {
				raw, err := ln.Accept()
				if err != nil {
					done <- err
					return
				}
				defer raw.Close()
				tc2 := tls.Server(raw, cfg)
				if _, err := http.ReadRequest(bufio.NewReader(tc2)); err != nil {
					done <- err
					return
				}
				if _, err := io.WriteString(tc2, tc.head+"0123456789"); err != nil {
					done <- err
					return
				}
				if tc.clean {
					done <- tc2.Close() // close_notify, then the FIN
					return
				}
				done <- raw.Close() // the FIN alone
			}()
			s := &Session{RootCAs: roots}
			defer s.Close()
			resp, err := s.Get(context.Background(), "https://localhost:"+portOf(ln.Addr())+"/")
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(body) != "0123456789" {
				t.Errorf("body %q, want the 10 bytes sent", body)
			}
			if got := errors.Is(err, ErrBodyTruncated); got != tc.wantErr || !tc.wantErr && err != nil {
				t.Errorf("reading the body: %v (want ErrBodyTruncated: %v)", err, tc.wantErr)
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		})
	}
}

func portOf(a net.Addr) string {
	_, p, _ := net.SplitHostPort(a.String())
	return p
}

// TestALPNh2ButHTTP1 (RELIABILITY T-10): a server that picks h2 in ALPN
// and then answers in HTTP/1.1 fails the request with an error at once;
// nothing hangs and the connection is not kept.
func TestALPNh2ButHTTP1(t *testing.T) {
	cert := testpeer.Localhost(t)
	roots := cert.Roots
	ln, err := tls.Listen("tcp", "127.0.0.1:0", cert.ServerConfig("h2"))
	if err != nil {
		t.Fatal(err)
	}
	testpeer.Serve(t, ln, testpeer.Handle(func(c net.Conn) {
		c.(*tls.Conn).Handshake()
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		io.Copy(io.Discard, c) // until the client gives up
	}))
	s := &Session{RootCAs: roots}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	_, err = s.Get(ctx, "https://localhost:"+portOf(ln.Addr())+"/")
	var ge *Error
	if err == nil || !errors.As(err, &ge) || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want an *Error from the connection, not a timeout", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %v", d)
	}
}
