package harness

import (
	"context"
	"crypto/tls"
	"io"
	"time"

	"github.com/valyala/fasthttp"
)

// fastHTTPClient is a fasthttp Client. fasthttp takes no context: requests
// run with the client's timeouts only.
type fastHTTPClient struct {
	c   *fasthttp.Client
	hdr []Field
}

func newFastHTTP(cfg Config) *fastHTTPClient {
	return &fastHTTPClient{hdr: cfg.Header, c: &fasthttp.Client{
		MaxConnsPerHost:     cfg.Conns,
		MaxConnWaitTimeout:  30 * time.Second,
		MaxIdleConnDuration: 5 * time.Minute,
		TLSConfig:           &tls.Config{RootCAs: cfg.RootCAs},
	}}
}

// setHeader adds the configured fields to req in order (fasthttp keeps the
// order fields were set in, and writes names in canonical case).
func (c *fastHTTPClient) setHeader(req *fasthttp.Request) {
	for _, f := range c.hdr {
		req.Header.Set(f.Name, f.Value)
	}
}

func (c *fastHTTPClient) Get(_ context.Context, url string, mode Mode) (int64, error) {
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(url)
	c.setHeader(req)
	// ReadAll lets fasthttp read the body into its pooled buffer, its
	// usual way; the other modes stream it.
	resp.StreamBody = mode != ReadAll
	if err := c.c.Do(req, resp); err != nil {
		return 0, err
	}
	var n int64
	var err error
	switch mode {
	case ReadAll:
		n = int64(len(resp.Body()))
	case Stream:
		n, err = io.Copy(io.Discard, resp.BodyStream())
	case FirstByte:
		var one [1]byte
		var k int
		k, err = io.ReadFull(resp.BodyStream(), one[:])
		n = int64(k)
	}
	if mode != ReadAll {
		if cerr := resp.CloseBodyStream(); err == nil {
			err = cerr
		}
	}
	if code := resp.StatusCode(); err == nil && code != 200 {
		err = &statusError{"fasthttp", code}
	}
	return n, err
}

func (c *fastHTTPClient) Post(_ context.Context, url string, body []byte) ([]byte, error) {
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(url)
	c.setHeader(req)
	req.Header.SetMethod("POST")
	req.SetBodyRaw(body)
	if err := c.c.Do(req, resp); err != nil {
		return nil, err
	}
	if code := resp.StatusCode(); code != 200 {
		return nil, &statusError{"fasthttp", code}
	}
	return append([]byte(nil), resp.Body()...), nil
}

func (c *fastHTTPClient) Close() error {
	c.c.CloseIdleConnections()
	return nil
}
