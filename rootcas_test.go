package guise

import (
	"context"
	"crypto/x509"
	"errors"
	"strings"
	"testing"

	"github.com/guise-http/guise/fingerprint"
)

// TestRequestRootCAs: a request's RootCAs verifies an isolated call and
// overrides a Session's roots, and a connection verified against one pool
// is never used for a request naming another.
func TestRequestRootCAs(t *testing.T) {
	srv := &fingerprint.Server{}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	url := srv.URL() + "/api/all"
	ctx := context.Background()
	roots := srv.CertPool() // a new pool per call: keep one

	// Isolated: the embedded Mozilla roots do not know the echo server's
	// certificate; its own pool does.
	if _, err := Get(ctx, url); !isUnknownAuthority(err) {
		t.Fatalf("isolated call without RootCAs: %v, want an unknown-authority error", err)
	}
	resp, err := Do(ctx, &Request{URL: url, RootCAs: roots})
	if err != nil {
		t.Fatalf("isolated call with RootCAs: %v", err)
	}
	resp.Bytes()

	// A Session whose own roots are wrong: the request's pool wins.
	s := &Session{RootCAs: x509.NewCertPool()}
	defer s.Close()
	if _, err := s.Get(ctx, url); !isUnknownAuthority(err) {
		t.Fatalf("session with empty roots: %v, want an unknown-authority error", err)
	}
	before := len(srv.Records())
	for range 2 {
		resp, err := s.Do(ctx, &Request{URL: url, RootCAs: roots})
		if err != nil {
			t.Fatalf("session request with RootCAs: %v", err)
		}
		resp.Bytes()
	}
	if n := len(srv.Records()) - before; n != 1 {
		t.Fatalf("two requests with the same RootCAs opened %d connections, want 1 (reused)", n)
	}
	// Another pool with the same certificate is another verification: a
	// new connection, not the one verified against the first pool.
	other := x509.NewCertPool()
	if !other.AppendCertsFromPEM(srv.CAPEM()) {
		t.Fatal("CA PEM does not parse")
	}
	before = len(srv.Records())
	resp, err = s.Do(ctx, &Request{URL: url, RootCAs: other})
	if err != nil {
		t.Fatal(err)
	}
	resp.Bytes()
	if n := len(srv.Records()) - before; n != 1 {
		t.Fatalf("a request with other roots opened %d connections, want its own", n)
	}
}

func isUnknownAuthority(err error) bool {
	var ua x509.UnknownAuthorityError
	return errors.As(err, &ua)
}

// TestRequestRootCAsFollowRedirects: the hop after a redirect is verified
// against the request's roots too (the flow's start page redirects).
func TestRequestRootCAsFollowRedirects(t *testing.T) {
	srv := &fingerprint.Server{}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	roots := srv.CertPool()
	for _, do := range []func(*Request) (*Response, error){
		func(r *Request) (*Response, error) { return Do(context.Background(), r) },
		func(r *Request) (*Response, error) {
			s := &Session{}
			defer s.Close()
			return s.Do(context.Background(), r)
		},
	} {
		resp, err := do(&Request{URL: srv.URL() + fingerprint.FlowStart, RootCAs: roots})
		if err != nil {
			t.Fatalf("redirected request with RootCAs: %v", err)
		}
		resp.Bytes()
		if resp.StatusCode != 200 || !strings.HasSuffix(resp.URL, "/flow/") {
			t.Fatalf("status %d at %s, want 200 at the redirect's target", resp.StatusCode, resp.URL)
		}
	}
}
