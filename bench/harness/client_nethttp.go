package harness

import (
	"bytes"
	"context"
	"crypto/tls"
	"io"
	"net/http"
)

// netHTTPClient is a net/http Client on a Transport of its own.
type netHTTPClient struct {
	c   *http.Client
	t   *http.Transport
	hdr []Field
	val [][]string // hdr's values as the header map holds them, shared read-only
}

func newNetHTTP(cfg Config) *netHTTPClient {
	t := &http.Transport{
		MaxConnsPerHost:     cfg.Conns,
		MaxIdleConnsPerHost: cfg.Conns,
		MaxIdleConns:        cfg.Conns,
		DisableCompression:  true,
		TLSClientConfig:     &tls.Config{RootCAs: cfg.RootCAs},
	}
	c := &netHTTPClient{c: &http.Client{Transport: t}, t: t, hdr: cfg.Header}
	for _, f := range cfg.Header {
		c.val = append(c.val, []string{f.Value})
	}
	return c
}

// setHeader puts the configured fields in req's header map as a caller
// does who wants them sent as given: by direct assignment, which keeps the
// names' case (net/http writes the map sorted by name).
func (c *netHTTPClient) setHeader(req *http.Request) {
	for i, f := range c.hdr {
		req.Header[f.Name] = c.val[i]
	}
}

func (c *netHTTPClient) Get(ctx context.Context, url string, mode Mode) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return 0, err
	}
	c.setHeader(req)
	resp, err := c.c.Do(req)
	if err != nil {
		return 0, err
	}
	return consume(resp.Body, resp.StatusCode, mode, "net/http")
}

func (c *netHTTPClient) Post(ctx context.Context, url string, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, "POST", url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	c.setHeader(req)
	resp, err := c.c.Do(req)
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(resp.Body)
	if cerr := resp.Body.Close(); err == nil {
		err = cerr
	}
	if err == nil && resp.StatusCode != 200 {
		err = &statusError{"net/http", resp.StatusCode}
	}
	return b, err
}

func (c *netHTTPClient) Close() error {
	c.t.CloseIdleConnections()
	return nil
}
