package guise

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/guise-http/guise/internal/testpeer/quicgo"
)

var loopback = netip.MustParseAddr("127.0.0.1")

// TestResolveH3Forced: with Transport.Resolve pointing a name at the
// HTTP/3 server, Protocol HTTP3 goes there over guise's own QUIC (it was
// refused: curl's --resolve with --http3 had no equivalent).
func TestResolveH3Forced(t *testing.T) {
	srv := quicgo.HTTP3Server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, r.Proto+" "+r.Host)
	}))
	port := strconv.Itoa(srv.Addr.Port)
	tr := &Transport{Resolve: map[string]netip.Addr{"Staging.Test:" + port: loopback}}
	defer tr.Close()
	s := &Session{Transport: tr, Protocol: HTTP3, InsecureSkipVerify: true}
	defer s.Close()
	resp, err := s.Get(t.Context(), "https://staging.test:"+port+"/")
	if err != nil {
		t.Fatal(err)
	}
	b, err := resp.Bytes()
	if err != nil || string(b) != "HTTP/3.0 staging.test:"+port {
		t.Fatalf("%q %v", b, err)
	}
}

// TestResolveAltSvc: an origin pinned by Resolve, whose Alt-Svc names h3
// on another port, is reached over h3 at the pinned address on that port;
// TCP went to the pinned address too.
func TestResolveAltSvc(t *testing.T) {
	var alt atomic.Value
	h := protoHandler(&alt)
	h3s := quicgo.HTTP3Server(t, h)
	alt.Store(`h3=":` + strconv.Itoa(h3s.Addr.Port) + `"; ma=60`)
	o := newOrigin(t, modeH2, h)
	_, port, _ := net.SplitHostPort(o.Listener.Addr().String())
	tr := &Transport{Resolve: map[string]netip.Addr{"staging.test:" + port: loopback}}
	defer tr.Close()
	s := &Session{Transport: tr, InsecureSkipVerify: true}
	defer s.Close()
	url := "https://staging.test:" + port + "/"
	if p, _ := getProto(t, s, url); p != "HTTP/2.0" {
		t.Fatalf("first request over %s", p)
	}
	got := ""
	for i := 0; i < 200 && got != "HTTP/3.0"; i++ {
		got, _ = getProto(t, s, url)
		if got != "HTTP/3.0" {
			time.Sleep(10 * time.Millisecond)
		}
	}
	if got != "HTTP/3.0" {
		t.Fatal("never upgraded to h3 through Alt-Svc at the pinned address")
	}
}

// TestResolveDialContext: the caller's DialContext gets the pinned
// address, and stays TCP only.
func TestResolveDialContext(t *testing.T) {
	o := newOrigin(t, modeH1, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, r.Host) }))
	_, port, _ := net.SplitHostPort(o.Listener.Addr().String())
	var dialed []string
	var d net.Dialer
	tr := &Transport{
		Resolve: map[string]netip.Addr{"staging.test:" + port: loopback},
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			dialed = append(dialed, addr)
			return d.DialContext(ctx, network, addr)
		},
	}
	defer tr.Close()
	s := &Session{Transport: tr, InsecureSkipVerify: true}
	defer s.Close()
	resp, err := s.Get(t.Context(), "https://staging.test:"+port+"/")
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := resp.Bytes(); string(b) != "staging.test:"+port {
		t.Errorf("Host %q", b)
	}
	if len(dialed) != 1 || dialed[0] != "127.0.0.1:"+port {
		t.Errorf("DialContext got %v, want [127.0.0.1:%s]", dialed, port)
	}
	s3 := &Session{Transport: tr, InsecureSkipVerify: true, Protocol: HTTP3}
	defer s3.Close()
	if _, err := s3.Get(t.Context(), "https://staging.test:"+port+"/"); !errors.Is(err, ErrProtocolUnsupported) {
		t.Errorf("HTTP3 with a DialContext: %v, want ErrProtocolUnsupported", err)
	}
}

// TestResolveBadKey: a key that is not host:port refuses every request
// before any connection (RELIABILITY Q-76).
func TestResolveBadKey(t *testing.T) {
	for _, m := range []map[string]netip.Addr{
		{"staging.test": loopback},
		{"staging.test:443": {}},
	} {
		tr := &Transport{Resolve: m}
		s := &Session{Transport: tr}
		_, err := s.Get(t.Context(), "https://staging.test/")
		if !errors.Is(err, ErrRefusedToSend) {
			t.Errorf("Resolve %v: %v, want ErrRefusedToSend", m, err)
		}
		s.Close()
		tr.Close()
	}
}
