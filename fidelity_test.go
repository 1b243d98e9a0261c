package guise

import (
	"context"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/guise-http/guise/fingerprint"
	"github.com/guise-http/guise/profile"
)

// visit makes n requests to a fresh echo server as name (each on a new
// Session unless shared) and returns the server's records.
func visit(t *testing.T, name string, n int, shared bool) []*fingerprint.ConnRecord {
	t.Helper()
	srv := &fingerprint.Server{}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	// Browsers send no SNI to an IP address; visit a name, as they were
	// recorded doing, and dial the server for it.
	_, port, _ := net.SplitHostPort(srv.ListenAddr())
	addr := srv.ListenAddr()
	var d net.Dialer
	newSession := func() *Session {
		return &Session{Profile: name, RootCAs: srv.CertPool(), Transport: &Transport{
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return d.DialContext(ctx, network, addr)
			}}}
	}
	s := newSession()
	defer func() { s.Transport.Close() }()
	for i := 0; i < n; i++ {
		if !shared && i > 0 {
			s.Transport.Close()
			s = newSession()
		}
		resp, err := s.Get(context.Background(), "https://fp.test:"+port+"/api/all")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := resp.Bytes(); err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 200 || resp.Proto != "HTTP/2.0" {
			t.Fatalf("status %d proto %s", resp.StatusCode, resp.Proto)
		}
	}
	s.Transport.Close()
	srv.Close()
	return srv.Records()
}

// TestFingerprintsMatchRecordings sends requests as each recorded profile
// to the echo server and compares JA4, JA3N, the Akamai string and the
// navigation's pseudo-header and header order with the profile's recording.
func TestFingerprintsMatchRecordings(t *testing.T) {
	for _, name := range []string{"chrome", "firefox"} {
		t.Run(name, func(t *testing.T) {
			p, err := profile.Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			want, err := fingerprint.ParseClientHello(p.TLS.Hello)
			if err != nil {
				t.Fatal(err)
			}
			recs := visit(t, name, 3, false)
			if len(recs) != 3 {
				t.Fatalf("%d connections for 3 isolated sessions", len(recs))
			}
			ja3s := map[string]bool{}
			for _, rec := range recs {
				ch, err := rec.ClientHello()
				if err != nil {
					t.Fatal(err)
				}
				if ch.JA4() != want.JA4() {
					t.Errorf("JA4 %s, recording %s", ch.JA4(), want.JA4())
				}
				if ch.JA3N() != want.JA3N() {
					t.Errorf("JA3N %s, recording %s", ch.JA3N(), want.JA3N())
				}
				ja3s[ch.JA3()] = true
				h2, err := rec.HTTP2()
				if err != nil {
					t.Fatal(err)
				}
				if got, want := h2.Akamai(), akamai(p); got != want {
					t.Errorf("Akamai %s, profile %s", got, want)
				}
				if len(h2.Requests) != 1 {
					t.Fatalf("%d requests on the connection", len(h2.Requests))
				}
				r := h2.Requests[0]
				if !slices.Equal(r.PseudoOrder, p.HTTP2.PseudoOrder) {
					t.Errorf("pseudo order %v, profile %v", r.PseudoOrder, p.HTTP2.PseudoOrder)
				}
				hs := p.HeaderSet(profile.Navigate, profile.H2)
				if got, want := r.HeaderOrder(), wantNames(hs); !slices.Equal(got, want) {
					t.Errorf("header order\n got %v\nwant %v", got, want)
				}
			}
			if p.TLS.ShuffleExtensions && len(ja3s) < 2 {
				t.Errorf("JA3 the same on 3 connections; Chrome shuffles extensions")
			}
			if !p.TLS.ShuffleExtensions && len(ja3s) != 1 {
				t.Errorf("JA3 varies (%d values) for a browser that does not shuffle", len(ja3s))
			}
		})
	}
}

// akamai is the Akamai HTTP/2 string the profile should produce.
func akamai(p *profile.Profile) string {
	h := &fingerprint.HTTP2{ConnWindowUpdate: p.HTTP2.ConnWindowUpdate}
	for _, s := range p.HTTP2.Settings {
		h.Settings = append(h.Settings, fingerprint.Setting{ID: uint16(s.ID), Value: s.Value})
	}
	for _, pf := range p.HTTP2.Priorities {
		h.Priorities = append(h.Priorities, fingerprint.PriorityFrame{StreamID: pf.StreamID,
			Priority: fingerprint.Priority{Exclusive: pf.Exclusive, StreamDep: pf.DependsOn, Weight: pf.Weight}})
	}
	h.Requests = []fingerprint.HTTP2Request{{PseudoOrder: p.HTTP2.PseudoOrder}}
	return h.Akamai()
}

func TestSessionResumesTLSAndReusesH2(t *testing.T) {
	recs := visit(t, "chrome", 4, true)
	if len(recs) != 1 {
		t.Fatalf("a session's 4 requests used %d connections, want 1 (h2)", len(recs))
	}
}

// RELIABILITY L-04.
func TestIdleH2ConnectionsClose(t *testing.T) {
	srv := &fingerprint.Server{}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	tr := &Transport{IdleConnTimeout: 50 * time.Millisecond}
	defer tr.Close()
	s := &Session{RootCAs: srv.CertPool(), Transport: tr}
	resp, err := s.Get(context.Background(), srv.URL()+"/api/all")
	if err != nil {
		t.Fatal(err)
	}
	resp.Bytes()
	deadline := time.Now().Add(5 * time.Second)
	for {
		recs := srv.Records()
		if len(recs) == 1 && !recs[0].Open() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("an idle HTTP/2 connection stayed open past IdleConnTimeout")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestIsolatedH2CallClosesItsConnection: an isolated call over HTTP/2
// closes its connection once the body is done, and a refused request
// (bad field) leaves nothing open either.
func TestIsolatedH2CallClosesItsConnection(t *testing.T) {
	srv := &fingerprint.Server{}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	resp, err := Do(context.Background(), &Request{URL: srv.URL() + "/api/all", InsecureSkipVerify: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := resp.Bytes(); err != nil || resp.Proto != "HTTP/2.0" {
		t.Fatalf("%s %v", resp.Proto, err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		recs := srv.Records()
		if len(recs) == 1 && !recs[0].Open() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("an isolated HTTP/2 call left its connection open")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestConcurrentFirstRequestsShareOneH2Connection: 16 requests starting
// together on a fresh Session wait for the first connection's ALPN, as a
// browser does, and then share that one HTTP/2 connection.
func TestConcurrentFirstRequestsShareOneH2Connection(t *testing.T) {
	srv := &fingerprint.Server{}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	s := &Session{RootCAs: srv.CertPool()}
	defer s.Close()
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			resp, err := s.Get(context.Background(), srv.URL()+"/api/all")
			if err != nil {
				t.Error(err)
				return
			}
			resp.Bytes()
		}()
	}
	close(start)
	wg.Wait()
	if n := len(srv.Records()); n != 1 {
		t.Fatalf("16 concurrent first requests opened %d connections, want 1", n)
	}
}
