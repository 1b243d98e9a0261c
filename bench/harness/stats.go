package harness

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// ConnCounter reads the benchmark server's /stats over one kept-alive
// connection of its own, opened at the first call (and so counted before
// any measurement starts).
type ConnCounter struct {
	url string
	t   *http.Transport
	c   *http.Client
}

// NewConnCounter returns a ConnCounter for the server at base.
func NewConnCounter(base string) *ConnCounter {
	t := &http.Transport{MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1, DisableCompression: true}
	return &ConnCounter{url: base + "/stats", t: t, c: &http.Client{Transport: t, Timeout: 10 * time.Second}}
}

// Accepted returns how many connections the server has accepted.
func (cc *ConnCounter) Accepted() (int64, error) {
	req, err := http.NewRequestWithContext(context.Background(), "GET", cc.url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := cc.c.Do(req)
	if err != nil {
		return 0, err
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64))
	resp.Body.Close()
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("harness: /stats answered %q", b)
	}
	return n, nil
}

// Close closes the counter's connection.
func (cc *ConnCounter) Close() { cc.t.CloseIdleConnections() }
