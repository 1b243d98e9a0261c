package main

import (
	"context"
	"crypto/x509"
	"errors"
	"time"

	"github.com/guise-http/guise/bench/internal/wreqjs"
)

// rootsPEM is the server's certificate as PEM, for wreq-js (set once in
// run before any client is built, then only read).
var rootsPEM []byte

// turnRunner is a client outside Go that runs a whole turn itself and
// measures its own process's CPU; turn hands it the turn.
type turnRunner interface {
	runTurn(ctx context.Context, sc *scenario, url string, d time.Duration) (sample, error)
}

// wreqSpecs returns the wreq-js rows (kept: one Session; isolated: the
// package-level fetch, a new connection each), none when node or the
// package is missing.
func wreqSpecs(isolated bool) []clientSpec {
	if _, _, err := wreqjs.Find(); err != nil {
		return nil
	}
	if isolated {
		return []clientSpec{{"wreq-js fetch", famOther, "wreq-js " + wreqjs.Version + " package-level fetch (browser chrome), run by bench/node/driver.mjs; CPU is the Node process's", newWreq(true)}}
	}
	return []clientSpec{{"wreq-js", famOther, "wreq-js " + wreqjs.Version + " Session (browser chrome), run by bench/node/driver.mjs; CPU is the Node process's", newWreq(false)}}
}

func newWreq(isolated bool) func(*x509.CertPool) (client, error) {
	return func(*x509.CertPool) (client, error) {
		d, err := wreqjs.Start(rootsPEM)
		if err != nil {
			return nil, err
		}
		return &wreqClient{d: d, isolated: isolated}, nil
	}
}

type wreqClient struct {
	d        *wreqjs.Driver
	isolated bool
}

var errTurnsOnly = errors.New("h2compare: wreq-js runs whole turns only")

func (c *wreqClient) get(context.Context, string) (int64, string, error) {
	return 0, "", errTurnsOnly
}
func (c *wreqClient) dials() int64 { return -1 }
func (c *wreqClient) close()       { c.d.Close() }

func (c *wreqClient) runTurn(ctx context.Context, sc *scenario, url string, d time.Duration) (sample, error) {
	r, err := c.d.Run(ctx, wreqjs.Turn{URL: url, Conc: sc.conc, D: d, Isolated: c.isolated, Want: sc.want})
	if err != nil {
		return sample{}, err
	}
	return sample{ops: r.Ops, bytes: r.Bytes, wall: r.Wall, cpu: r.CPU, external: true}, nil
}
