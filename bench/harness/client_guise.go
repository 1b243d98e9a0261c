package harness

import (
	"bytes"
	"context"
	"io"

	"github.com/guise-http/guise"
)

// guiseClient is a guise Session on a Transport of its own.
type guiseClient struct {
	s *guise.Session
}

func newGuise(cfg Config) *guiseClient {
	t := &guise.Transport{MaxConnsPerHost: cfg.Conns, MaxIdleConnsPerHost: cfg.Conns}
	return &guiseClient{s: &guise.Session{Transport: t, RootCAs: cfg.RootCAs}}
}

func (c *guiseClient) Get(ctx context.Context, url string, mode Mode) (int64, error) {
	resp, err := c.s.Do(ctx, &guise.Request{Method: "GET", URL: url})
	if err != nil {
		return 0, err
	}
	return consume(resp.Body, resp.StatusCode, mode, "guise")
}

func (c *guiseClient) Post(ctx context.Context, url string, body []byte) ([]byte, error) {
	resp, err := c.s.Do(ctx, &guise.Request{Method: "POST", URL: url, Body: bytes.NewReader(body)})
	if err != nil {
		return nil, err
	}
	b, err := resp.Bytes()
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != 200 {
		return nil, &statusError{"guise", resp.StatusCode}
	}
	return b, nil
}

func (c *guiseClient) Close() error {
	err := c.s.Close()
	if t := c.s.Transport; t != nil {
		if err2 := t.Close(); err == nil {
			err = err2
		}
	}
	return err
}

// consume reads body as mode says and closes it. io.Copy uses the body's
// WriteTo where it has one.
func consume(body io.ReadCloser, code int, mode Mode, client string) (int64, error) {
	var n int64
	var err error
	if mode == FirstByte {
		var one [1]byte
		var k int
		k, err = io.ReadFull(body, one[:])
		n = int64(k)
	} else {
		n, err = io.Copy(io.Discard, body)
	}
	if cerr := body.Close(); err == nil {
		err = cerr
	}
	if err == nil && code != 200 {
		err = &statusError{client, code}
	}
	return n, err
}
