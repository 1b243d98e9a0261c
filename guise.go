// Package guise is an HTTP client whose requests look, on the wire, like a
// real browser's: the TLS ClientHello, the HTTP/2 preface and frames, and the
// header order, case and values are those recorded from the browser named by
// a profile. It is also built to do less work per request than net/http.
//
// Three scopes decide what requests share:
//
//   - Get and Do are isolated visits: a new connection per call, no TLS
//     session resumption, no cookies kept.
//   - A Session keeps its connections (and cookies) until Close.
//   - A Transport is a connection pool that Sessions share when told to.
//
// Every error returned by a request is an *Error.
package guise

import (
	"context"
	"sync"
)

// isolated serves the package-level Get and Do: it dials a new connection
// for every request and never pools it.
var isolated struct {
	once sync.Once
	t    Transport
}

func isolatedState() *transportState {
	isolated.once.Do(func() { isolated.t.init() })
	return isolated.t.state
}

// Get fetches url as a top-level navigation with profile.Default, as an
// isolated visit: a connection of its own, closed after the body, no TLS
// resumption, no cookies.
func Get(ctx context.Context, url string) (*Response, error) {
	return Do(ctx, &Request{URL: url})
}

// Do sends req as an isolated visit (see Get). The server's certificate is
// verified against the embedded Mozilla roots, or req.RootCAs when set.
func Do(ctx context.Context, req *Request) (*Response, error) {
	c, err := compile(req.Profile)
	if err != nil {
		return nil, &Error{Op: opName(req.method()), URL: redact(req.URL), Err: err}
	}
	o := options{profile: c, insecure: req.InsecureSkipVerify, isolated: true}
	if req.RootCAs != nil {
		o.rootCAs, o.rootsID = req.RootCAs, rootsID(req.RootCAs)
	}
	if req.Proxy != "" {
		if o.proxy, err = parseRoute(req.Proxy); err != nil {
			return nil, &Error{Op: opName(req.method()), URL: redact(req.URL), Err: err}
		}
	}
	ch, err := newChain(req, req.Redirect, 0, nil)
	ch.ephemeral = true
	if err != nil {
		return nil, &Error{Op: opName(req.method()), URL: redact(req.URL), Err: err}
	}
	return do(ctx, isolatedState(), req, &o, req.Timeout, &ch)
}
