package nethttp_test

import (
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/guise-http/guise"
	"github.com/guise-http/guise/nethttp"
)

// The examples talk to servers they start on 127.0.0.1; nothing reaches
// the network.

// RoundTripper puts a Session under an http.Client of one's own: the
// client's redirect policy applies, and redirects come back to it one at
// a time.
func ExampleRoundTripper() {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/old" {
			http.Redirect(w, r, "/new", http.StatusFound)
			return
		}
		fmt.Fprintf(w, "%s %s", r.Method, r.URL.Path)
	}))
	defer ts.Close()

	s := &guise.Session{}
	defer s.Close()
	c := &http.Client{Transport: nethttp.RoundTripper(s)}
	resp, err := c.Get(ts.URL + "/old")
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.StatusCode, string(body))
	// Output: 200 GET /new
}

// Client is an http.Client on a Session, with guise following redirects
// as the browser would; WithHeaderOrder places the caller's fields.
func ExampleClient() {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, r.Header.Get("X-Token"))
	}))
	defer ts.Close()

	s := &guise.Session{}
	defer s.Close()
	req, err := http.NewRequest("GET", ts.URL, nil)
	if err != nil {
		log.Fatal(err)
	}
	req.Header.Set("X-Token", "t0ken")
	resp, err := nethttp.Client(s).Do(nethttp.WithHeaderOrder(req, "X-Token"))
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.Proto, string(body))
	// Output: HTTP/1.1 t0ken
}
