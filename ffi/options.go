//go:build cgo

package main

import (
	"bytes"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/guise-http/guise"
	"github.com/guise-http/guise/profile"
)

// transportOptions is the JSON of guise_transport_new, and the transport
// part of guise_session_new's: guise.Transport's fields, durations in
// milliseconds. Absent fields are zero and mean the Go API's default.
type transportOptions struct {
	Profile profileOption `json:"profile"`
	// Seed makes the Sessions' draws from a profile set reproducible; 0
	// means random draws.
	Seed                    uint64 `json:"seed"`
	MaxConnsPerHost         int    `json:"maxConnsPerHost"`
	MaxIdleConnsPerHost     int    `json:"maxIdleConnsPerHost"`
	IdleConnTimeoutMs       int64  `json:"idleConnTimeoutMs"`
	DialTimeoutMs           int64  `json:"dialTimeoutMs"`
	TLSHandshakeTimeoutMs   int64  `json:"tlsHandshakeTimeoutMs"`
	ResponseHeaderTimeoutMs int64  `json:"responseHeaderTimeoutMs"`
	BodyIdleTimeoutMs       int64  `json:"bodyIdleTimeoutMs"`
	MaxResponseHeaderBytes  int    `json:"maxResponseHeaderBytes"`
	DrainLimit              int64  `json:"drainLimit"`
}

// sessionOptions is the JSON of guise_session_new: guise.Session's fields,
// plus a Transport's when the Session gets a pool of its own.
type sessionOptions struct {
	Profile              profileOption `json:"profile"`
	Seed                 uint64        `json:"seed"`
	Proxy                string        `json:"proxy"`
	ProxyFromEnvironment bool          `json:"proxyFromEnvironment"`
	TimeoutMs            int64         `json:"timeoutMs"`
	Insecure             bool          `json:"insecure"`
	CAPEM                string        `json:"caPem"`      // roots (PEM) replacing the trust store
	TrustStore           string        `json:"trustStore"` // "mozilla" (default), "system", "both"
	Redirect             string        `json:"redirect"`   // "follow" (default), "manual", "error"
	MaxRedirects         int           `json:"maxRedirects"`
	RawBody              bool          `json:"rawBody"`
	MaxBodySize          int64         `json:"maxBodySize"`
	Protocol             string        `json:"protocol"` // "" or "any", "http1", "http2", "http3"
	HTTP1Only            bool          `json:"http1Only"`
	Cookies              string        `json:"cookies"`   // a cookie JSON document to import
	Transport            uint64        `json:"transport"` // a guise_transport_new handle to share
	transportOptions
}

// session is a Session handle's object. own is the Transport the ffi made
// for it from transport options, closed with it.
type session struct {
	s        guise.Session
	own      *guise.Transport
	protocol int32 // GUISE_PROTO_*, applied to each request (see applyProtocol)
}

func decodeOptions(data []byte, v any) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("guise ffi: options: %w", err)
	}
	return nil
}

func ms(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

func (o *transportOptions) set() bool { return *o != transportOptions{} }

func (o *transportOptions) transport() (*guise.Transport, error) {
	c, err := o.Profile.resolve(o.Seed)
	if err != nil {
		return nil, err
	}
	return &guise.Transport{
		Profile:                c.name,
		Browser:                c.browser,
		Profiles:               c.set,
		Rand:                   c.rand,
		MaxConnsPerHost:        o.MaxConnsPerHost,
		MaxIdleConnsPerHost:    o.MaxIdleConnsPerHost,
		IdleConnTimeout:        ms(o.IdleConnTimeoutMs),
		DialTimeout:            ms(o.DialTimeoutMs),
		TLSHandshakeTimeout:    ms(o.TLSHandshakeTimeoutMs),
		ResponseHeaderTimeout:  ms(o.ResponseHeaderTimeoutMs),
		BodyIdleTimeout:        ms(o.BodyIdleTimeoutMs),
		MaxResponseHeaderBytes: o.MaxResponseHeaderBytes,
		DrainLimit:             o.DrainLimit,
	}, nil
}

func newTransport(data []byte) (*guise.Transport, error) {
	var o transportOptions
	if err := decodeOptions(data, &o); err != nil {
		return nil, err
	}
	return o.transport()
}

func newSession(data []byte) (*session, error) {
	var o sessionOptions
	if err := decodeOptions(data, &o); err != nil {
		return nil, err
	}
	c, err := o.Profile.resolve(o.Seed)
	if err != nil {
		return nil, err
	}
	ss := &session{}
	s := &ss.s
	s.Profile, s.Browser, s.Profiles, s.Rand = c.name, c.browser, c.set, c.rand
	s.Proxy, s.ProxyFromEnvironment = o.Proxy, o.ProxyFromEnvironment
	s.Timeout, s.InsecureSkipVerify = ms(o.TimeoutMs), o.Insecure
	s.RawBody, s.MaxBodySize, s.MaxRedirects = o.RawBody, o.MaxBodySize, o.MaxRedirects
	if s.TrustStore, err = trustStore(o.TrustStore); err != nil {
		return nil, err
	}
	if s.Redirect, err = redirectPolicy(o.Redirect); err != nil {
		return nil, err
	}
	if o.CAPEM != "" {
		if s.RootCAs, err = certPool(o.CAPEM); err != nil {
			return nil, err
		}
	}
	if ss.protocol, err = protocolOption(o.Protocol, o.HTTP1Only); err != nil {
		return nil, err
	}
	switch {
	case o.Transport != 0 && o.transportOptions.set():
		return nil, errors.New("guise ffi: options: a shared transport and transport options together")
	case o.Transport != 0:
		t, ok := lookup[*guise.Transport](o.Transport)
		if !ok {
			return nil, errBadHandle
		}
		s.Transport = t
	case o.transportOptions.set():
		t, err := o.transport()
		if err != nil {
			return nil, err
		}
		s.Transport, ss.own = t, t
	}
	if o.Cookies != "" {
		if err := s.Cookies().ReadJSON(strings.NewReader(o.Cookies)); err != nil {
			return nil, err
		}
	}
	liveSessions.Add(1)
	return ss, nil
}

var liveSessions atomic.Int64

func (ss *session) close() error {
	liveSessions.Add(-1)
	err := ss.s.Close()
	if ss.own != nil {
		err = errors.Join(err, ss.own.Close())
	}
	return err
}

func trustStore(name string) (guise.TrustStore, error) {
	switch strings.ToLower(name) {
	case "", "mozilla":
		return guise.TrustMozilla, nil
	case "system":
		return guise.TrustSystem, nil
	case "both":
		return guise.TrustBoth, nil
	}
	return 0, fmt.Errorf("guise ffi: options: unknown trustStore %q (mozilla, system, both)", name)
}

func redirectPolicy(name string) (guise.RedirectPolicy, error) {
	switch strings.ToLower(name) {
	case "", "follow":
		return guise.RedirectDefault, nil
	case "manual":
		return guise.RedirectManual, nil
	case "error":
		return guise.RedirectError, nil
	}
	return 0, fmt.Errorf("guise ffi: options: unknown redirect %q (follow, manual, error)", name)
}

// Protocols, as GUISE_PROTO_*.
const (
	protoAny int32 = iota
	protoHTTP1
	protoHTTP2
	protoHTTP3
)

func protocolOption(name string, http1Only bool) (int32, error) {
	p := protoAny
	switch strings.ToLower(name) {
	case "", "any":
	case "http1", "http/1.1", "h1":
		p = protoHTTP1
	case "http2", "h2":
		p = protoHTTP2
	case "http3", "h3":
		p = protoHTTP3
	default:
		return 0, fmt.Errorf("guise ffi: options: unknown protocol %q (any, http1, http2, http3)", name)
	}
	if http1Only {
		if p != protoAny && p != protoHTTP1 {
			return 0, fmt.Errorf("guise ffi: options: http1Only with protocol %q", name)
		}
		p = protoHTTP1
	}
	return p, nil
}

// applyProtocol is the one place the bindings' protocol option (a
// GUISE_PROTO_* value) reaches the Go API.
func applyProtocol(req *guise.Request, p int32) error {
	if p < protoAny || p > protoHTTP3 {
		return fmt.Errorf("guise ffi: protocol %d out of range", p)
	}
	req.Protocol = [...]guise.Protocol{guise.AnyProtocol, guise.HTTP1, guise.HTTP2, guise.HTTP3}[p-protoAny]
	return nil
}

// pools caches certificate pools by their PEM: guise keys connections by the
// pool's identity, so a request that gives the same roots again must get the
// same pool to reuse its connections.
var pools struct {
	sync.Mutex
	m map[string]*x509.CertPool
}

// maxPools bounds the cache; past it the cache starts again.
const maxPools = 64

func certPool(pem string) (*x509.CertPool, error) {
	pools.Lock()
	defer pools.Unlock()
	if p := pools.m[pem]; p != nil {
		return p, nil
	}
	p := x509.NewCertPool()
	if !p.AppendCertsFromPEM([]byte(pem)) {
		return nil, errors.New("guise ffi: no certificate in the CA PEM")
	}
	if pools.m == nil || len(pools.m) >= maxPools {
		pools.m = map[string]*x509.CertPool{}
	}
	pools.m[pem] = p
	return p, nil
}

// guiseTransport names the Transport in the handle table.
type guiseTransport = guise.Transport

func requestKind(k int32) profile.RequestKind { return profile.RequestKind(k) }

func redirectOf(p int32) guise.RedirectPolicy { return guise.RedirectPolicy(p) }
