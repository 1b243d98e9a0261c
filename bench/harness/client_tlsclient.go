package harness

import (
	"bytes"
	"context"
	"io"
	"strings"

	http "github.com/bogdanfinn/fhttp"
	tls_client "github.com/bogdanfinn/tls-client"
	"github.com/bogdanfinn/tls-client/profiles"
)

// tlsClient is a bogdanfinn/tls-client HttpClient with the Chrome profile.
// For http:// URLs it uses a plain fhttp Transport with the limits below.
type tlsClient struct {
	c     tls_client.HttpClient
	hdr   []Field
	val   [][]string // hdr's values as the header map holds them, shared read-only
	order []string   // fhttp's HeaderOrderKey: the names in order
}

func newTLSClient(cfg Config) (*tlsClient, error) {
	opts := []tls_client.HttpClientOption{
		tls_client.WithTimeoutSeconds(120),
		tls_client.WithClientProfile(profiles.Chrome_133),
		tls_client.WithNotFollowRedirects(),
		tls_client.WithTransportOptions(&tls_client.TransportOptions{
			MaxConnsPerHost:     cfg.Conns,
			MaxIdleConnsPerHost: cfg.Conns,
			MaxIdleConns:        cfg.Conns,
			DisableCompression:  true,
			RootCAs:             cfg.RootCAs,
		}),
	}
	c, err := tls_client.NewHttpClient(tls_client.NewNoopLogger(), opts...)
	if err != nil {
		return nil, err
	}
	tc := &tlsClient{c: c, hdr: cfg.Header}
	for _, f := range cfg.Header {
		tc.val = append(tc.val, []string{f.Value})
		tc.order = append(tc.order, strings.ToLower(f.Name))
	}
	return tc, nil
}

// setHeader puts the configured fields in req's header, in order, as
// tls-client's documentation shows (the header map plus HeaderOrderKey).
func (c *tlsClient) setHeader(req *http.Request) {
	if len(c.hdr) == 0 {
		return
	}
	for i, f := range c.hdr {
		req.Header[f.Name] = c.val[i]
	}
	req.Header[http.HeaderOrderKey] = c.order
}

func (c *tlsClient) Get(ctx context.Context, url string, mode Mode) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return 0, err
	}
	c.setHeader(req)
	resp, err := c.c.Do(req)
	if err != nil {
		return 0, err
	}
	return consume(resp.Body, resp.StatusCode, mode, "tls-client")
}

func (c *tlsClient) Post(ctx context.Context, url string, body []byte) ([]byte, error) {
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
		err = &statusError{"tls-client", resp.StatusCode}
	}
	return b, err
}

func (c *tlsClient) Close() error {
	c.c.CloseIdleConnections()
	return nil
}
