package harness

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/guise-http/guise/bench/internal/wreqjs"
)

// turnRunner is a client that runs a whole turn itself, in another
// process, and measures that process's CPU: Round hands such a client the
// turn instead of calling Get.
type turnRunner interface {
	runTurn(ctx context.Context, sc *Scenario, url string, d time.Duration) (Sample, error)
}

// wreqClient is wreq-js driven by bench/node/driver.mjs: one kept Session
// (keep-alive, its own pool), Chrome emulation with its own request head.
type wreqClient struct {
	d *wreqjs.Driver
}

// errTurnsOnly is what wreq-js's Get and Post answer: it runs whole turns.
var errTurnsOnly = errors.New("harness: wreq-js runs whole turns only (Round)")

func newWreq(cfg Config) (*wreqClient, error) {
	if cfg.RootCAs != nil && cfg.RootsPEM == nil {
		return nil, errors.New("harness: wreq-js needs Config.RootsPEM for https")
	}
	d, err := wreqjs.Start(cfg.RootsPEM)
	if err != nil {
		return nil, err
	}
	return &wreqClient{d: d}, nil
}

func (c *wreqClient) Get(context.Context, string, Mode) (int64, error) { return 0, errTurnsOnly }
func (c *wreqClient) Post(context.Context, string, []byte) ([]byte, error) {
	return nil, errTurnsOnly
}
func (c *wreqClient) Close() error { return c.d.Close() }

func (c *wreqClient) runTurn(ctx context.Context, sc *Scenario, url string, d time.Duration) (Sample, error) {
	if sc.Upload > 0 || sc.Mode != ReadAll || sc.Count > 0 {
		return Sample{}, fmt.Errorf("harness: wreq-js: scenario %s not supported (GETs read whole, timed turns only)", sc.Name)
	}
	r, err := c.d.Run(ctx, wreqjs.Turn{URL: url, Conc: sc.Conc, D: d, Want: sc.Want})
	if err != nil {
		return Sample{}, err
	}
	return Sample{Ops: r.Ops, Bytes: r.Bytes, Wall: r.Wall, CPU: r.CPU, External: true}, nil
}
