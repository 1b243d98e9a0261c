package main

import (
	"crypto/tls"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/guise-http/guise/internal/testpeer/quicgo"
)

// TestGetProtocolFlags: --http1.1 offers http/1.1 alone and speaks
// HTTP/1.1 to a server that would take h2; --http2 and no flag offer h2
// and speak it; both at once are refused.
func TestGetProtocolFlags(t *testing.T) {
	var mu sync.Mutex
	var offered [][]string
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.Proto+"\n")
	}))
	ts.EnableHTTP2 = true
	ts.TLS = &tls.Config{GetConfigForClient: func(chi *tls.ClientHelloInfo) (*tls.Config, error) {
		mu.Lock()
		offered = append(offered, slices.Clone(chi.SupportedProtos))
		mu.Unlock()
		return nil, nil
	}}
	ts.StartTLS()
	defer ts.Close()
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: ts.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		flag, proto string
		offer       []string
	}{
		{"--http1.1", "HTTP/1.1", []string{"http/1.1"}},
		{"--http2", "HTTP/2.0", []string{"h2", "http/1.1"}},
		{"", "HTTP/2.0", []string{"h2", "http/1.1"}},
	} {
		mu.Lock()
		offered = nil
		mu.Unlock()
		args := []string{"-i", "--cacert", ca, ts.URL + "/"}
		if c.flag != "" {
			args = append([]string{c.flag}, args...)
		}
		out, errOut, code := get(t, args...)
		if code != 0 || !strings.HasPrefix(out, c.proto+" 200") || !strings.HasSuffix(out, "\r\n\r\n"+c.proto+"\n") {
			t.Errorf("guise get %q: exit %d, out %q, stderr %q", args, code, out, errOut)
		}
		mu.Lock()
		if len(offered) != 1 || !slices.Equal(offered[0], c.offer) {
			t.Errorf("guise get %q: hellos offered %q, want one offering %q", args, offered, c.offer)
		}
		mu.Unlock()
	}
	if _, _, code := get(t, "--http1.1", "--http2", "--cacert", ca, ts.URL+"/"); code == 0 {
		t.Errorf("--http1.1 with --http2: exit %d, want a usage error", code)
	}
	if _, _, code := get(t, "--http3", "--http2", "--cacert", ca, ts.URL+"/"); code == 0 {
		t.Errorf("--http3 with --http2: exit %d, want a usage error", code)
	}
	// --http3 goes to QUIC alone: a server on TCP only refuses it at
	// once (the connected UDP socket sees the port unreachable), with no
	// fallback and no TCP hello.
	mu.Lock()
	offered = nil
	mu.Unlock()
	start := time.Now()
	if _, errOut, code := get(t, "--http3", "-m", "5s", "--cacert", ca, ts.URL+"/"); code == 0 || !strings.Contains(errOut, "refused") {
		t.Errorf("--http3 to a TCP-only server: exit %d, stderr %q, want a refusal", code, errOut)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("--http3 to a TCP-only server took %v", d)
	}
	mu.Lock()
	if len(offered) != 0 {
		t.Errorf("--http3 sent %d TCP hellos", len(offered))
	}
	mu.Unlock()
}

// TestGetHTTP3: --http3 fetches over guise's own QUIC from an independent
// HTTP/3 server (quic-go's), for both browsers.
func TestGetHTTP3(t *testing.T) {
	srv := quicgo.HTTP3Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.Proto+" "+r.Header.Get("User-Agent")[:7]+"\n")
	}))
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, srv.Cert.CAPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	url := "https://127.0.0.1:" + strconv.Itoa(srv.Addr.Port) + "/"
	for _, p := range []string{"chrome", "firefox"} {
		out, errOut, code := get(t, "--http3", "--profile", p, "--cacert", ca, url)
		if code != 0 || out != "HTTP/3.0 Mozilla\n" {
			t.Errorf("--http3 --profile %s: exit %d, out %q, stderr %q", p, code, out, errOut)
		}
	}
	// --resolve points a name at the server over QUIC too, as curl's does
	// (it was refused: "h3 with a Transport.DialContext").
	port := strconv.Itoa(srv.Addr.Port)
	out, errOut, code := get(t, "--http3", "-k", "--resolve", "staging.test:"+port+":127.0.0.1", "https://staging.test:"+port+"/")
	if code != 0 || out != "HTTP/3.0 Mozilla\n" {
		t.Errorf("--http3 --resolve: exit %d, out %q, stderr %q", code, out, errOut)
	}
}
