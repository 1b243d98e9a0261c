package guise

import (
	"context"
	"crypto/rand"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/guise-http/guise/cookie"
	"github.com/guise-http/guise/fields"
	"github.com/guise-http/guise/internal/h1"
	"github.com/guise-http/guise/internal/h2"
	"github.com/guise-http/guise/internal/ws"
	"github.com/guise-http/guise/profile"
)

// WebSocketOptions configures a WebSocket handshake and the connection it
// opens. The zero value (or nil) is a browser's new WebSocket(url) from a
// page on the URL's own origin, with permessage-deflate offered as the
// profile's browser offers it.
type WebSocketOptions struct {
	// Header holds the caller's fields, merged into the profile's
	// handshake fields as Request.Header is into a request's.
	Header Header
	// Origin is the page's origin the socket is opened from
	// ("https://example.com"); "" means the URL's own origin (ws becomes
	// http, wss https).
	Origin string
	// Subprotocols are offered in Sec-WebSocket-Protocol, after the
	// profile's fields; the server's choice is WebSocket.Subprotocol.
	Subprotocols []string
	// NoCompression leaves Sec-WebSocket-Extensions out: no
	// permessage-deflate (browsers always offer it).
	NoCompression bool
	// MaxMessageSize caps a received message after inflation; a larger one
	// fails the connection with 1009. 0 means 32 MiB.
	MaxMessageSize int64
	// PingInterval is how long a Read waits on a silent peer before it
	// pings; 0 or negative means never, as Chromium and Firefox send no
	// pings of their own (a Read then waits as long as its context
	// allows). PingTimeout is how long the peer then has to send anything
	// before reads fail with ErrPingTimeout; 0 means 20s.
	PingInterval, PingTimeout time.Duration
	// HandshakeTimeout bounds the dial and handshake; 0 means 30s.
	HandshakeTimeout time.Duration

	// Per-handshake overrides of the Session's settings (for
	// DialWebSocket, the settings themselves); zero values mean "as the
	// Session says". Protocol HTTP1 opens the socket over HTTP/1.1 even
	// where the Session's HTTP/2 connection could carry it.
	Protocol           Protocol
	Profile            string
	Proxy              string
	InsecureSkipVerify bool
	RootCAs            *x509.CertPool
}

// MessageType is a WebSocket message's type: MessageText or MessageBinary.
type MessageType = ws.Opcode

// Message types.
const (
	MessageText   = ws.OpText
	MessageBinary = ws.OpBinary
)

// CloseCode is a WebSocket close status code (RFC 6455 section 7.4).
type CloseCode = ws.StatusCode

// Close codes.
const (
	CloseNormal          = ws.StatusNormal
	CloseGoingAway       = ws.StatusGoingAway
	CloseProtocolError   = ws.StatusProtocolError
	CloseUnsupported     = ws.StatusUnsupported
	CloseNoStatus        = ws.StatusNoStatus
	CloseAbnormal        = ws.StatusAbnormal
	CloseInvalidData     = ws.StatusInvalidData
	ClosePolicyViolation = ws.StatusPolicyViolation
	CloseTooBig          = ws.StatusTooBig
	CloseInternalError   = ws.StatusInternalError
)

// WebSocket is an open WebSocket. One goroutine may Read while another
// Writes; Reads are serialised among themselves and so are Writes, and Ping
// and Close may be called from any goroutine. The peer's pings are answered
// from Read. Once the connection ends every call returns the error that
// ended it: a *CloseError (the peer's close frame, or the code guise failed
// the connection with), an error wrapping ErrWebSocketDropped or
// ErrPingTimeout, or ErrWebSocketClosed after Close.
type WebSocket struct {
	c           *ws.Conn
	proto       string
	subprotocol string
	header      Header
}

// Read returns the next message. Its payload is valid until the next Read.
// When ctx ends the connection is closed and ctx's error returned.
func (w *WebSocket) Read(ctx context.Context) (MessageType, []byte, error) {
	return w.c.ReadMessage(ctx)
}

// Write sends p as one message of type t (MessageText must be UTF-8),
// compressed when permessage-deflate was agreed. When ctx ends during the
// write the connection is closed and ctx's error returned.
func (w *WebSocket) Write(ctx context.Context, t MessageType, p []byte) error {
	return w.c.WriteMessage(ctx, t, p)
}

// Ping sends a ping and waits for its pong, which a concurrent Read
// receives; without one it waits until ctx ends.
func (w *WebSocket) Ping(ctx context.Context) error { return w.c.Ping(ctx) }

// Close sends a close frame with code and reason (code 0: none), waits up to
// 5s for the peer's, and closes the connection. It returns nil when the
// peer answered.
func (w *WebSocket) Close(code CloseCode, reason string) error { return w.c.Close(code, reason) }

// SendClose starts the close handshake and returns at once: Read goes on
// returning the messages the server sent before its close frame, then its
// close as a *CloseError (Remote). Use it to stop sending while reading
// what is still in flight; Close, with no Read waiting, drops such
// messages. Close still ends the connection.
func (w *WebSocket) SendClose(code CloseCode, reason string) error {
	return w.c.SendClose(code, reason)
}

// Done is closed when the connection has ended; Err then says why.
func (w *WebSocket) Done() <-chan struct{} { return w.c.Done() }

// Err returns the error that ended the connection, or nil while it is open.
func (w *WebSocket) Err() error { return w.c.Err() }

// Protocol returns the protocol the handshake went over: "http/1.1" or
// "h2".
func (w *WebSocket) Protocol() string { return w.proto }

// Subprotocol returns the server's Sec-WebSocket-Protocol, or "".
func (w *WebSocket) Subprotocol() string { return w.subprotocol }

// Header returns the handshake response's fields.
func (w *WebSocket) Header() Header { return w.header }

// WebSocket opens a WebSocket to url (ws://, wss://, or http:// and
// https:// for the same) with the browser's own handshake: over an HTTP/2
// connection of the Session to the origin when the server enabled the
// extended CONNECT (RFC 8441), as Chromium and Firefox do, and otherwise
// over a new HTTP/1.1 connection of its own, offering http/1.1 alone (or,
// as Firefox does when the origin's connection was HTTP/1.1, its usual
// h2 and http/1.1). The
// Session's cookies for the URL go in the handshake. Any error is an
// *Error.
func (s *Session) WebSocket(ctx context.Context, url string, opts *WebSocketOptions) (*WebSocket, error) {
	if opts == nil {
		opts = &WebSocketOptions{}
	}
	st := s.init()
	req := opts.request(url)
	w, err := func() (*WebSocket, error) {
		o, err := s.options(req, st.t)
		if err != nil {
			return nil, err
		}
		return dialWebSocket(ctx, st.t.init(), req, &o, opts, &cookieJar{st.jar})
	}()
	if err != nil {
		return nil, &Error{Op: "websocket", URL: redact(url), Err: err}
	}
	return w, nil
}

// DialWebSocket opens a WebSocket as an isolated visit (see Get): a
// connection of its own, no cookies, no TLS resumption; otherwise as
// Session.WebSocket. Any error is an *Error.
func DialWebSocket(ctx context.Context, url string, opts *WebSocketOptions) (*WebSocket, error) {
	if opts == nil {
		opts = &WebSocketOptions{}
	}
	req := opts.request(url)
	w, err := func() (*WebSocket, error) {
		c, err := compile(req.Profile)
		if err != nil {
			return nil, err
		}
		o := options{profile: c, insecure: req.InsecureSkipVerify, isolated: true}
		if o.protocol, err = resolveProtocol(req.Protocol, AnyProtocol); err != nil {
			return nil, err
		}
		if req.RootCAs != nil {
			o.rootCAs, o.rootsID = req.RootCAs, rootsID(req.RootCAs)
		}
		if req.Proxy != "" {
			if o.proxy, err = parseRoute(req.Proxy); err != nil {
				return nil, err
			}
		}
		return dialWebSocket(ctx, isolatedState(), req, &o, opts, nil)
	}()
	if err != nil {
		return nil, &Error{Op: "websocket", URL: redact(url), Err: err}
	}
	return w, nil
}

// request is the Request a handshake resolves its options and URL from:
// ws and wss become http and https.
func (o *WebSocketOptions) request(raw string) *Request {
	switch {
	case len(raw) >= 5 && strings.EqualFold(raw[:5], "ws://"):
		raw = "http://" + raw[5:]
	case len(raw) >= 6 && strings.EqualFold(raw[:6], "wss://"):
		raw = "https://" + raw[6:]
	}
	return &Request{URL: raw, Kind: profile.WebSocket, Protocol: o.Protocol, Profile: o.Profile, Proxy: o.Proxy,
		InsecureSkipVerify: o.InsecureSkipVerify, RootCAs: o.RootCAs}
}

// errNoWebSocketSet is a profile without a recorded handshake.
var errNoWebSocketSet = fmt.Errorf("%w: the profile has no recorded WebSocket handshake", ErrRefusedToSend)

// dialWebSocket runs the handshake; jar is nil for an isolated one.
func dialWebSocket(ctx context.Context, st *transportState, req *Request, o *options, opts *WebSocketOptions, jar *cookieJar) (*WebSocket, error) {
	u, err := req.parse()
	if err != nil {
		return nil, err
	}
	if err := validHeader(opts.Header, false); err != nil {
		return nil, err
	}
	hctx, cancel := context.WithTimeout(ctx, orDefault(opts.HandshakeTimeout, 30*time.Second))
	defer cancel()
	hs := wsHandshake{u: u, p: o.profile.p, opts: opts, prio: o.profile.prio[profile.WebSocket]}
	if opts.Origin != "" {
		hs.origin = opts.Origin
	} else {
		hs.origin = u.origin
	}
	if jar != nil {
		site := cookie.SameSiteRequest
		if ou, err := url.Parse(hs.origin); err == nil && !sameSite(ou, u.url()) {
			site = cookie.CrossSite
		}
		hs.cookie = jar.cookieHeader(u.url(), site)
	}
	key := o.poolKey(u)
	originH1 := false // the origin's own connection turned out HTTP/1.1
	if u.scheme == "https" && o.protocol != HTTP1 && hs.p.HeaderSet(profile.WebSocket, profile.H2) != nil && hs.p.HTTP2.WebSocketPseudoOrder != nil {
		c, g, err := st.getConn(hctx, key, o, nil, time.Now(), false)
		if err != nil {
			return nil, err
		}
		if c.h2 != nil {
			ok, err := c.h2.ExtendedConnect(hctx)
			if err == nil && ok {
				return hs.overH2(ctx, hctx, c)
			}
			if g.reserved {
				c.h2.CancelReservation()
			}
			if o.isolated {
				c.h2.Close()
			}
		} else {
			originH1 = true
			if o.isolated {
				c.h1.Close()
			} else {
				c.release(true)
			}
		}
	}
	if hs.p.HeaderSet(profile.WebSocket, profile.HTTP1) == nil {
		return nil, errNoWebSocketSet
	}
	// A connection of its own, as both browsers open for a WebSocket over
	// HTTP/1.1: it never enters the pool. It offers http/1.1 alone (the
	// profile's recorded hello for that), but for a browser that keeps its
	// usual ALPN when the origin's connection was HTTP/1.1 already
	// (HTTP1Options.WebSocketFullALPN: Firefox), which then takes the
	// http/1.1 the server chooses.
	key.HTTP1Only = u.scheme == "https" && !(originH1 && hs.p.HTTP1.WebSocketFullALPN)
	// Through an HTTP proxy a ws:// socket goes through a CONNECT tunnel
	// too, not in absolute form: both browsers tunnel every WebSocket.
	to := *o
	to.tunnel = true
	c, err := st.dialConn(hctx, key, &to, nil)
	if err != nil {
		return nil, err
	}
	if c.h1 == nil {
		c.Close()
		if key.HTTP1Only {
			return nil, errors.New("guise: websocket: the server chose HTTP/2 though only http/1.1 was offered")
		}
		return nil, errors.New("guise: websocket: the server chose HTTP/2 on a new connection, without the extended CONNECT, after HTTP/1.1 on the origin's own")
	}
	return hs.overH1(hctx, c)
}

// wsHandshake is one handshake's inputs.
type wsHandshake struct {
	u      *parsedURL
	p      *profile.Profile
	opts   *WebSocketOptions
	origin string
	cookie string
	// prio is the extended CONNECT's HEADERS priority, as the browser
	// recorded sends it.
	prio h2.Priority
}

// fields returns the handshake's header list over proto: the profile's set
// with its per-request fields filled (or left out), the subprotocols, then
// the caller's fields merged in.
func (hs *wsHandshake) fields(proto profile.Proto, key string) fields.Header {
	set := hs.p.HeaderSet(profile.WebSocket, proto)
	var h fields.Header
	for _, f := range set.Header {
		per := false
		for _, n := range set.PerRequest {
			per = per || fields.EqualFold(n, f.Name)
		}
		name := strings.ToLower(f.Name)
		switch {
		case name == "sec-websocket-extensions" && hs.opts.NoCompression:
			continue
		case !per:
		case name == "host":
			f.Value = hs.u.authority
		case name == "origin":
			f.Value = hs.origin
		case name == "sec-websocket-key":
			f.Value = key
		case name == "cookie":
			f.Value = hs.cookie
		case name == "sec-fetch-site":
			f.Value = hs.fetchSite()
		}
		if f.Value == "" {
			continue
		}
		h = append(h, f)
	}
	if len(hs.opts.Subprotocols) > 0 {
		name := "Sec-WebSocket-Protocol"
		if proto == profile.H2 {
			name = "sec-websocket-protocol"
		}
		h = append(h, fields.Field{Name: name, Value: strings.Join(hs.opts.Subprotocols, ", ")})
	}
	user := hs.opts.Header
	if proto == profile.H2 && len(user) > 0 {
		user = user.Clone()
		for i := range user {
			user[i].Name = strings.ToLower(user[i].Name)
		}
	}
	return fields.Merge(nil, h, user)
}

func (hs *wsHandshake) fetchSite() string {
	ou, err := url.Parse(hs.origin)
	switch {
	case err != nil || !sameSite(ou, hs.u.url()):
		return "cross-site"
	case !sameOrigin(ou, hs.u.url()):
		return "same-site"
	}
	return "same-origin"
}

// extensionOffer is what the handshake offered in Sec-WebSocket-Extensions.
func extensionOffer(h fields.Header) string {
	v := h.Get("sec-websocket-extensions")
	return v
}

// overH1 sends the Upgrade request on c, a new HTTP/1.1 connection, and
// checks the 101.
func (hs *wsHandshake) overH1(ctx context.Context, c *conn) (*WebSocket, error) {
	key, err := ws.NewKey(rand.Reader)
	if err != nil {
		c.Close()
		return nil, err
	}
	// Through an HTTP proxy c is a CONNECT tunnel (options.tunnel): the
	// target is in origin form and carries no proxy credentials.
	target := hs.u.target
	h := hs.fields(profile.HTTP1, key)
	c.h1.SetRelease(nil)
	c.h1.SetAlloc(nil)
	resp, err := c.h1.RoundTripNew(ctx, &h1.Request{Method: "GET", Target: target, Header: h, Upgrade: true, ContentLength: -1})
	if err != nil {
		return nil, classify(ctx, err)
	}
	if resp.StatusCode != 101 {
		c.Close()
		return nil, &WebSocketHandshakeError{Reason: fmt.Sprintf("status %d, not 101", resp.StatusCode)}
	}
	up := resp.Header.Get("upgrade")
	conn := resp.Header.Get("connection")
	accept := resp.Header.Get("sec-websocket-accept")
	switch {
	case !strings.EqualFold(up, "websocket"):
		err = &WebSocketHandshakeError{Reason: fmt.Sprintf("Upgrade %q", up)}
	case !hasToken(conn, "upgrade"):
		err = &WebSocketHandshakeError{Reason: fmt.Sprintf("Connection %q", conn)}
	case accept != ws.Accept(key):
		err = &WebSocketHandshakeError{Reason: "Sec-WebSocket-Accept does not match the key"}
	}
	if err != nil {
		c.Close()
		return nil, err
	}
	w, cfg, err := hs.accept(resp.Header, h)
	if err != nil {
		c.Close()
		return nil, err
	}
	nc, rest := c.h1.Detach()
	cfg.Buffered = rest
	w.c = ws.NewConn(nc, cfg)
	w.proto = "http/1.1"
	return w, nil
}

func hasToken(list, tok string) bool {
	for part := range strings.SplitSeq(list, ",") {
		if strings.EqualFold(strings.TrimSpace(part), tok) {
			return true
		}
	}
	return false
}

// accept checks the response's extensions and subprotocol against the
// offer in sent and returns the WebSocket's settings.
func (hs *wsHandshake) accept(resp, sent fields.Header) (*WebSocket, *ws.Config, error) {
	ext := resp.Get("sec-websocket-extensions")
	d, err := ws.Negotiate(extensionOffer(sent), ext)
	if err != nil {
		return nil, nil, err
	}
	sub := resp.Get("sec-websocket-protocol")
	if sub != "" {
		ok := false
		for _, p := range hs.opts.Subprotocols {
			ok = ok || p == sub
		}
		if !ok {
			return nil, nil, &WebSocketHandshakeError{Reason: fmt.Sprintf("subprotocol %q was not offered", sub)}
		}
	}
	cfg := &ws.Config{Deflate: d, DeflateEmptyUncompressed: hs.p.WebSocket.EmptyUncompressed, DeflateKeepSmaller: hs.p.WebSocket.KeepSmaller,
		MaxMessageSize: hs.opts.MaxMessageSize, PingInterval: hs.opts.PingInterval, PingTimeout: hs.opts.PingTimeout}
	return &WebSocket{subprotocol: sub, header: resp.Clone()}, cfg, nil
}

// overH2 sends the extended CONNECT on c, an HTTP/2 connection whose peer
// enabled it. The stream outlives hctx: it lives until the WebSocket ends.
func (hs *wsHandshake) overH2(ctx, hctx context.Context, c *conn) (*WebSocket, error) {
	life, end := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(hctx, end)
	pr, pw := io.Pipe()
	h := hs.fields(profile.H2, "")
	req := &h2.Request{Method: "CONNECT", Scheme: "https", Authority: hs.u.authority,
		Path: hs.u.target, Header: h, Body: pr, ContentLength: -1, Priority: hs.prio}
	resp, err := c.h2.RoundTripExtended(life, req, &h2.Extended{Protocol: "websocket", PseudoOrder: hs.p.HTTP2.WebSocketPseudoOrder})
	if !stop() {
		// The handshake's time ran out as it ended: the stream is reset.
		if err == nil {
			resp.Body.Close()
		}
		end()
		pw.Close()
		return nil, classify(hctx, hctx.Err())
	}
	if err != nil {
		end()
		pw.Close()
		return nil, classify(hctx, err)
	}
	fail := func(err error) (*WebSocket, error) {
		resp.Body.Close()
		pw.Close()
		end()
		return nil, err
	}
	if resp.StatusCode/100 != 2 {
		return fail(&WebSocketHandshakeError{Reason: fmt.Sprintf("status %d to the extended CONNECT", resp.StatusCode)})
	}
	w, cfg, err := hs.accept(resp.Header, h)
	if err != nil {
		return fail(err)
	}
	w.c = ws.NewConn(&h2Stream{body: resp.Body, w: pw, end: end, cc: c}, cfg)
	w.proto = "h2"
	return w, nil
}

// h2Stream is a WebSocket's HTTP/2 stream: reads from the response body,
// writes through the request body's pipe.
type h2Stream struct {
	body io.ReadCloser
	w    *io.PipeWriter
	end  context.CancelFunc
	cc   *conn // keeps the connection's owner reachable
}

func (s *h2Stream) Read(p []byte) (int, error)  { return s.body.Read(p) }
func (s *h2Stream) Write(p []byte) (int, error) { return s.w.Write(p) }

// Close ends the stream: END_STREAM after what was written, then a reset
// if the peer's side is still open.
func (s *h2Stream) Close() error {
	s.w.Close()
	s.body.Close()
	s.end()
	return nil
}
