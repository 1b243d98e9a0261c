package fingerprint_test

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/guise-http/guise/fingerprint"
)

// A Go client visits the echo server over HTTP/2 and reads back what it
// sent.
func ExampleServer() {
	s := &fingerprint.Server{} // 127.0.0.1 on a free port
	if err := s.Start(); err != nil {
		panic(err)
	}
	defer s.Close()

	tr := &http.Transport{
		TLSClientConfig:   &tls.Config{RootCAs: s.CertPool()},
		ForceAttemptHTTP2: true,
	}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get(s.URL() + "/api/all")
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	var rep struct {
		HTTPVersion string `json:"http_version"`
		TLS         struct {
			Negotiated struct {
				Version string `json:"version"`
				ALPN    string `json:"alpn"`
			} `json:"negotiated"`
		} `json:"tls"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&rep); err != nil {
		panic(err)
	}
	fmt.Println(rep.HTTPVersion, rep.TLS.Negotiated.Version, rep.TLS.Negotiated.ALPN)
	// Output: h2 TLS 1.3 h2
}
