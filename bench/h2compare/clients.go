package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"

	fhttp "github.com/bogdanfinn/fhttp"
	tls_client "github.com/bogdanfinn/tls-client"
	"github.com/bogdanfinn/tls-client/profiles"

	"github.com/guise-http/guise"
	"github.com/guise-http/guise/bench/harness"
)

// client is one HTTP client under test, safe for concurrent use.
type client interface {
	// get requests url, reads the body to the end and closes it. It
	// returns the body length and the response's protocol.
	get(ctx context.Context, url string) (int64, string, error)
	// dials returns the TCP connections the client opened so far, or -1
	// when the client offers no way to count them.
	dials() int64
	close()
}

// family says which reference a client is, for the ratio columns.
type family int

const (
	famGuise family = iota
	famNetHTTP
	famTLSClient
	famOther // compared, but no reference
)

// clientSpec names a client and builds it.
type clientSpec struct {
	name  string
	fam   family
	about string
	make  func(roots *x509.CertPool) (client, error)
}

// counter is a net.Dialer whose Control hook counts the sockets it
// connects. Control runs once per connect attempt; on 127.0.0.1 there is
// one attempt per dial.
type counter struct {
	n atomic.Int64
}

func (c *counter) dialer() net.Dialer {
	return net.Dialer{Control: func(string, string, syscall.RawConn) error {
		c.n.Add(1)
		return nil
	}}
}

// Pooled clients (one h2 connection, kept).

func keptSpecs() []clientSpec {
	return append([]clientSpec{
		{"guise", famGuise, "guise.Session{RootCAs} on a Transport with a counting DialContext", newGuiseSession},
		{"net/http", famNetHTTP, "http.Transport{ForceAttemptHTTP2, TLSClientConfig.RootCAs}", func(r *x509.CertPool) (client, error) { return newNetHTTP(r, false), nil }},
		{"tls-client", famTLSClient, "tls-client Chrome_133, TransportOptions.RootCAs", func(r *x509.CertPool) (client, error) { return newTLSClient(r, false) }},
	}, wreqSpecs(false)...)
}

// Isolated clients (a new TCP+TLS connection per request). tls-client gets
// a new client per request: its TransportOptions.DisableKeepAlives still
// reuses one HTTP/2 connection (one dial for thousands of requests against
// nghttpd), so it is not an isolated request.

func isolatedSpecs() []clientSpec {
	return append([]clientSpec{
		{"guise.Do", famGuise, "package-level guise.Do, the certificate verified with Request.RootCAs", func(roots *x509.CertPool) (client, error) { return guiseIsolated{roots: roots}, nil }},
		{"guise new Session", famGuise, "a new guise.Session{RootCAs} + Transport per request, closed after", func(r *x509.CertPool) (client, error) { return &guiseFresh{roots: r}, nil }},
		{"net/http", famNetHTTP, "http.Transport{DisableKeepAlives, ForceAttemptHTTP2, RootCAs}", func(r *x509.CertPool) (client, error) { return newNetHTTP(r, true), nil }},
		{"tls-client new client", famTLSClient, "a new tls-client (Chrome_133, RootCAs) per request", func(r *x509.CertPool) (client, error) { return &tlsFresh{roots: r}, nil }},
	}, wreqSpecs(true)...)
}

// The request head net/http and tls-client send besides their own fields
// (setHead): guise's profile's h2 navigation fields with -head browser.
// Set once before any client runs, then only read.
var (
	headFields []harness.Field
	headValues [][]string // headFields' values as header maps hold them, shared read-only
	headOrder  []string   // tls-client's HeaderOrderKey
)

func setHead(fs []harness.Field) {
	headFields, headValues, headOrder = fs, nil, nil
	for _, f := range fs {
		headValues = append(headValues, []string{f.Value})
		headOrder = append(headOrder, strings.ToLower(f.Name))
	}
}

// drain reads body to the end and closes it; a status other than 200 is an
// error.
func drain(body io.ReadCloser, code int, who string) (int64, error) {
	n, err := io.Copy(io.Discard, body)
	if cerr := body.Close(); err == nil {
		err = cerr
	}
	if err == nil && code != 200 {
		err = fmt.Errorf("%s: status %d", who, code)
	}
	return n, err
}

type guiseSession struct {
	s  *guise.Session
	t  *guise.Transport
	cn *counter
}

func newGuiseSession(roots *x509.CertPool) (client, error) {
	cn := &counter{}
	d := cn.dialer()
	t := &guise.Transport{DialContext: d.DialContext}
	return &guiseSession{s: &guise.Session{RootCAs: roots, Transport: t}, t: t, cn: cn}, nil
}

func (c *guiseSession) get(ctx context.Context, url string) (int64, string, error) {
	return guiseGet(ctx, c.s.Do, &guise.Request{URL: url})
}

func guiseGet(ctx context.Context, do func(context.Context, *guise.Request) (*guise.Response, error), req *guise.Request) (int64, string, error) {
	resp, err := do(ctx, req)
	if err != nil {
		return 0, "", err
	}
	n, err := drain(resp.Body, resp.StatusCode, "guise")
	return n, resp.Proto, err
}

func (c *guiseSession) dials() int64 { return c.cn.n.Load() }

func (c *guiseSession) close() {
	c.s.Close()
	c.t.Close()
}

// guiseIsolated is package-level guise.Do: a connection per call, which
// cannot be counted (no dialer can be given); it verifies the certificate
// with Request.RootCAs, as the other clients do with theirs.
type guiseIsolated struct{ roots *x509.CertPool }

func (g guiseIsolated) get(ctx context.Context, url string) (int64, string, error) {
	return guiseGet(ctx, guise.Do, &guise.Request{URL: url, RootCAs: g.roots})
}

func (guiseIsolated) dials() int64 { return -1 }
func (guiseIsolated) close()       {}

// guiseFresh builds a Session and Transport per request.
type guiseFresh struct {
	roots *x509.CertPool
	cn    counter
}

func (c *guiseFresh) get(ctx context.Context, url string) (int64, string, error) {
	d := c.cn.dialer()
	t := &guise.Transport{DialContext: d.DialContext}
	s := &guise.Session{RootCAs: c.roots, Transport: t}
	defer t.Close()
	defer s.Close()
	return guiseGet(ctx, s.Do, &guise.Request{URL: url})
}

func (c *guiseFresh) dials() int64 { return c.cn.n.Load() }
func (c *guiseFresh) close()       {}

type netHTTP struct {
	c  *http.Client
	t  *http.Transport
	cn *counter
}

func newNetHTTP(roots *x509.CertPool, noKeepAlive bool) *netHTTP {
	cn := &counter{}
	d := cn.dialer()
	t := &http.Transport{
		DialContext:        d.DialContext,
		TLSClientConfig:    &tls.Config{RootCAs: roots},
		ForceAttemptHTTP2:  true,
		DisableKeepAlives:  noKeepAlive,
		DisableCompression: true,
	}
	return &netHTTP{c: &http.Client{Transport: t}, t: t, cn: cn}
}

func (c *netHTTP) get(ctx context.Context, url string) (int64, string, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return 0, "", err
	}
	for i, f := range headFields {
		req.Header[f.Name] = headValues[i]
	}
	resp, err := c.c.Do(req)
	if err != nil {
		return 0, "", err
	}
	n, err := drain(resp.Body, resp.StatusCode, "net/http")
	return n, resp.Proto, err
}

func (c *netHTTP) dials() int64 { return c.cn.n.Load() }
func (c *netHTTP) close()       { c.t.CloseIdleConnections() }

type tlsClient struct {
	c  tls_client.HttpClient
	cn *counter
}

func newTLSClient(roots *x509.CertPool, noKeepAlive bool) (*tlsClient, error) {
	cn := &counter{}
	c, err := buildTLSClient(roots, noKeepAlive, cn)
	if err != nil {
		return nil, err
	}
	return &tlsClient{c: c, cn: cn}, nil
}

// buildTLSClient returns a tls-client with the Chrome profile that trusts
// roots (TransportOptions.RootCAs) and dials through cn.
func buildTLSClient(roots *x509.CertPool, noKeepAlive bool, cn *counter) (tls_client.HttpClient, error) {
	return tls_client.NewHttpClient(tls_client.NewNoopLogger(),
		tls_client.WithTimeoutSeconds(60),
		tls_client.WithClientProfile(profiles.Chrome_133),
		tls_client.WithNotFollowRedirects(),
		tls_client.WithDialer(cn.dialer()),
		tls_client.WithTransportOptions(&tls_client.TransportOptions{
			RootCAs:            roots,
			DisableKeepAlives:  noKeepAlive,
			DisableCompression: true,
		}),
	)
}

func tlsGet(ctx context.Context, c tls_client.HttpClient, url string) (int64, string, error) {
	req, err := fhttp.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return 0, "", err
	}
	if len(headFields) > 0 {
		for i, f := range headFields {
			req.Header[f.Name] = headValues[i]
		}
		req.Header[fhttp.HeaderOrderKey] = headOrder
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	n, err := drain(resp.Body, resp.StatusCode, "tls-client")
	return n, resp.Proto, err
}

func (c *tlsClient) get(ctx context.Context, url string) (int64, string, error) {
	return tlsGet(ctx, c.c, url)
}

func (c *tlsClient) dials() int64 { return c.cn.n.Load() }
func (c *tlsClient) close()       { c.c.CloseIdleConnections() }

// tlsFresh builds a tls-client per request.
type tlsFresh struct {
	roots *x509.CertPool
	cn    counter
}

func (c *tlsFresh) get(ctx context.Context, url string) (int64, string, error) {
	tc, err := buildTLSClient(c.roots, false, &c.cn)
	if err != nil {
		return 0, "", err
	}
	defer tc.CloseIdleConnections()
	return tlsGet(ctx, tc, url)
}

func (c *tlsFresh) dials() int64 { return c.cn.n.Load() }
func (c *tlsFresh) close()       {}
