// Package harness drives HTTP clients through benchmark scenarios against the
// benchmark server (internal/peer) and measures each client's throughput, CPU
// time and allocations per request.
package harness

import (
	"context"
	"crypto/x509"
	"fmt"
)

// Mode says how a request's response body is consumed.
type Mode int

const (
	// ReadAll reads the body to the end in the client's usual way, then
	// closes it.
	ReadAll Mode = iota
	// Stream copies the body to io.Discard as it arrives, without the
	// client buffering it whole where the client can avoid that.
	Stream
	// FirstByte reads one byte of the body, then closes it.
	FirstByte
)

// String returns the mode's name.
func (m Mode) String() string {
	switch m {
	case ReadAll:
		return "read-all"
	case Stream:
		return "stream"
	case FirstByte:
		return "first-byte"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// Client is one HTTP client under test. Implementations are safe for
// concurrent use; Close releases the client's connections.
type Client interface {
	// Get requests url and consumes the body as mode says. It returns
	// the number of body bytes read, and an error for a transport failure
	// or a status other than 200.
	Get(ctx context.Context, url string, mode Mode) (int64, error)
	// Post sends body to url and reads the whole answer, returning it.
	// body is shared between calls and must not be changed.
	Post(ctx context.Context, url string, body []byte) ([]byte, error)
	// Close closes the client's connections.
	Close() error
}

// Config is what every client is built with, so that they compete under the
// same rules.
type Config struct {
	// Conns is the per-host connection limit, also the number of idle
	// connections kept. It must be at least 1.
	Conns int
	// RootCAs verifies https servers (the benchmark server's self-signed
	// certificate); nil means plain HTTP only.
	RootCAs *x509.CertPool
	// Header, when not nil, is sent by net/http, fasthttp and tls-client
	// on every request besides Host, in this order where the client keeps
	// an order: the fields guise's profile sends (see BrowserHeader), so
	// that every client puts the same head on the wire. guise sends its
	// profile's head in any case. nil means each client's own defaults.
	Header []Field
	// RootsPEM is RootCAs as PEM, for clients outside Go (wreq-js).
	RootsPEM []byte
}

// Field is one request header field.
type Field struct{ Name, Value string }

// Names lists the clients in the order the harness alternates them.
var Names = []string{"guise", "net/http", "fasthttp", "tls-client"}

// Extra lists the clients New also builds that are not run by default:
// raw, a hand-written HTTP/1.1 client (the practical limit; Content-Length
// bodies only), and wreq-js (needs node and bench/node's npm install;
// timed GET scenarios only).
var Extra = []string{"raw", "wreq-js"}

// New builds the client called name.
func New(name string, cfg Config) (Client, error) {
	if cfg.Conns < 1 {
		return nil, fmt.Errorf("harness: Conns %d < 1", cfg.Conns)
	}
	switch name {
	case "guise":
		return newGuise(cfg), nil
	case "net/http":
		return newNetHTTP(cfg), nil
	case "fasthttp":
		return newFastHTTP(cfg), nil
	case "tls-client":
		return newTLSClient(cfg)
	case "raw":
		return newRaw(cfg), nil
	case "wreq-js":
		return newWreq(cfg)
	}
	return nil, fmt.Errorf("harness: unknown client %q", name)
}

// statusError is a response with a status other than 200.
type statusError struct {
	client string
	code   int
}

func (e *statusError) Error() string {
	return fmt.Sprintf("harness: %s: status %d", e.client, e.code)
}
