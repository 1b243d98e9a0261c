package h2

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/guise-http/guise/fields"
)

// dialGoServer starts Go's net/http HTTP/2 server over TLS on loopback and
// returns a ClientConn to it.
func dialGoServer(t *testing.T, cfg *Config, h http.Handler) *ClientConn {
	t.Helper()
	srv := httptest.NewUnstartedServer(h)
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	tc, err := tls.Dial("tcp", srv.Listener.Addr().String(), &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2"}})
	if err != nil {
		t.Fatal(err)
	}
	if p := tc.ConnectionState().NegotiatedProtocol; p != "h2" {
		t.Fatalf("ALPN %q", p)
	}
	cc, err := NewClientConn(tc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return cc
}

func TestInteropGoServer(t *testing.T) {
	for name, cfg := range map[string]*Config{"chrome": chromeConfig(), "firefox": firefoxConfig()} {
		t.Run(name, func(t *testing.T) {
			cc := dialGoServer(t, cfg, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				w.Header().Set("Trailer", "x-sum")
				w.Header().Set("x-ua", r.Header.Get("User-Agent"))
				io.WriteString(w, r.Method+" "+r.URL.Path+" "+string(b)+" "+strings.Repeat("x", 100000))
				w.Header().Set("x-sum", "ok")
			}))
			ctx := context.Background()
			for i := range 3 {
				req := &Request{Method: "GET", Scheme: "https", Authority: "example.test", Path: "/p",
					Header: fields.Header{{Name: "user-agent", Value: "ua"}}, ContentLength: -1}
				if i == 1 {
					req.Method = "POST"
					req.BodyBytes = []byte("hello")
					req.ContentLength = 5
				}
				if i == 2 {
					req.Method = "PUT"
					req.Body = strings.NewReader(strings.Repeat("b", 300000))
					req.ContentLength = 300000
				}
				resp, err := cc.RoundTrip(ctx, req)
				if err != nil {
					t.Fatal(err)
				}
				b, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil {
					t.Fatal(err)
				}
				if resp.StatusCode != 200 || resp.Header.Get("x-ua") != "ua" || resp.Trailer.Get("x-sum") != "ok" {
					t.Fatalf("resp %d %v %v", resp.StatusCode, resp.Header, resp.Trailer)
				}
				want := req.Method + " /p "
				if !strings.HasPrefix(string(b), want) || len(b) < 100000 {
					t.Fatalf("body %q...", b[:min(len(b), 40)])
				}
				if i == 2 && len(b) != len(want)+300000+1+100000 {
					t.Fatalf("len %d", len(b))
				}
			}
		})
	}
}
