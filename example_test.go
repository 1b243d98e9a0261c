package guise_test

import (
	"context"
	"crypto/x509"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"

	"github.com/guise-http/guise"
)

// The examples talk to servers they start on 127.0.0.1; nothing reaches
// the network.

func ExampleGet() {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "hello")
	}))
	defer ts.Close()

	resp, err := guise.Get(context.Background(), ts.URL)
	if err != nil {
		log.Fatal(err)
	}
	body, err := resp.Bytes()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.StatusCode, string(body))
	// Output: 200 hello
}

// A POST with a header of the caller's: the header goes out with the
// profile's, and the body as given.
func ExampleSession_Do() {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %s %s %s", r.Method, r.Header.Get("Content-Type"), r.Header.Get("X-Request-Id"), b)
	}))
	defer ts.Close()

	var s guise.Session // the zero Session uses profile.Default
	defer s.Close()
	resp, err := s.Do(context.Background(), &guise.Request{
		Method: "POST",
		URL:    ts.URL + "/items",
		Header: guise.Header{
			{Name: "Content-Type", Value: "application/json"},
			{Name: "X-Request-Id", Value: "42"},
		},
		Body: strings.NewReader(`{"name":"guise"}`),
	})
	if err != nil {
		log.Fatal(err)
	}
	body, err := resp.Bytes()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(body))
	// Output: POST application/json 42 {"name":"guise"}
}

// A Session keeps its connections: over HTTPS with HTTP/2 the second
// request reuses the first one's connection. RootCAs trusts the test
// server's certificate.
func ExampleSession_Get() {
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, r.Proto)
	}))
	ts.EnableHTTP2 = true
	var conns atomic.Int32
	ts.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	ts.StartTLS()
	defer ts.Close()
	roots := x509.NewCertPool()
	roots.AddCert(ts.Certificate())

	s := &guise.Session{RootCAs: roots}
	defer s.Close()
	for range 2 {
		resp, err := s.Get(context.Background(), ts.URL)
		if err != nil {
			log.Fatal(err)
		}
		body, err := resp.Bytes()
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(resp.Proto, string(body))
	}
	fmt.Println("connections:", conns.Load())
	// Output:
	// HTTP/2.0 HTTP/2.0
	// HTTP/2.0 HTTP/2.0
	// connections: 1
}

// Two Sessions with the same Transport share its connection pool, while
// each keeps its own cookies.
func ExampleTransport() {
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c, err := r.Cookie("user"); err == nil {
			fmt.Fprint(w, "welcome back, "+c.Value)
			return
		}
		user := r.URL.Query().Get("user")
		http.SetCookie(w, &http.Cookie{Name: "user", Value: user})
		fmt.Fprint(w, "hello, "+user)
	}))
	var conns atomic.Int32
	ts.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			conns.Add(1)
		}
	}
	ts.Start()
	defer ts.Close()

	tr := &guise.Transport{}
	defer tr.Close()
	alice := &guise.Session{Transport: tr}
	bob := &guise.Session{Transport: tr}
	defer alice.Close()
	defer bob.Close()
	for _, v := range []struct {
		s    *guise.Session
		path string
	}{{alice, "/?user=alice"}, {bob, "/?user=bob"}, {alice, "/"}, {bob, "/"}} {
		resp, err := v.s.Get(context.Background(), ts.URL+v.path)
		if err != nil {
			log.Fatal(err)
		}
		body, err := resp.Bytes()
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(string(body))
	}
	fmt.Println("connections:", conns.Load())
	// Output:
	// hello, alice
	// hello, bob
	// welcome back, alice
	// welcome back, bob
	// connections: 1
}
