// Package guise is an HTTP client whose requests look, on the wire, like a
// real browser's: the TLS ClientHello, the HTTP/2 preface and frames, and the
// header order, case and values are those recorded from the browser a profile
// names (see package profile). It is also built to do less work per request
// than net/http.
//
// # Scopes
//
// Three scopes decide what requests may share:
//
//   - Get and Do are isolated visits: each call dials a connection of its
//     own and closes it after the body, offers no TLS session ticket and
//     keeps no cookies. They do share one thing, as Chrome's profiles
//     share its certificate verifier: a cache of the certificate chains
//     that verified (by chain, host name and roots; 256 entries, 30
//     minutes, never past a certificate's validity), which holds no
//     identity state, so a visit skips re-checking the signatures of a
//     chain another visit verified. Sessions' handshakes use the same
//     cache (it says only that public certificates chain to a root for a
//     name). The server's own signature is checked on every handshake.
//   - A Session is one browser: its connections, TLS session tickets,
//     cookie jar and HSTS hosts last until Close, or until the Session is
//     garbage collected. Its jar is never reset or expired as a whole.
//   - A Transport is a connection pool (with its ticket caches) that
//     Sessions share only when each is given it. Cookies and HSTS are never
//     shared: every Session keeps its own.
//
// Within a pool a connection is used only for requests with the same
// origin, proxy (and proxy credentials), profile, TLS settings and, for
// https, protocol offer (see Protocols). Tickets
// from an HTTPS proxy are kept apart from the origins' tickets.
//
// # Header fields
//
// Header lists are ordered: a field the caller gives replaces the profile's
// field of the same name in its place, in the caller's case; other fields
// follow the profile's, in the caller's order. Cookie, Referer, Origin and
// Content-Length go where the recorded browsers put them.
//
// Request.Kind picks the browser's header set: a top-level navigation (the
// zero value), a fetch(), or a sub-resource. A request with a body goes out as
// the browser sends one: a navigation as a form submission (Content-Type
// application/x-www-form-urlencoded unless given, Origin, and Chrome's
// Cache-Control: max-age=0), a fetch as a fetch() POST (text/plain;charset=UTF-8
// unless given). Origin is the origin of Request.Referrer, else of the
// request itself.
//
// A navigation is taken to be a person's, typed or clicked, and carries
// Sec-Fetch-User where each browser sends it. Request.Scripted marks one a
// page's script started without user activation (a timer setting
// location.href, form.submit(), a meta refresh); the browsers send those, and
// the hops of their redirects, without Sec-Fetch-User.
//
// # Request bodies
//
// A *bytes.Buffer body has a known length and can be sent again, on a retry
// or on a 307/308 redirect. *bytes.Reader and *strings.Reader bodies have a
// known length and are sent again on a 307/308 redirect (by seeking back to
// the start), but not on a retry. An *os.File goes through the kernel's copy
// path where the connection allows. Other readers are sent chunked unless
// Request.ContentLength is set, and are never sent twice.
//
// # Redirects
//
// Redirects are followed as a browser follows them, up to DefaultMaxRedirects
// (20) hops or Session.MaxRedirects: a 301 or 302 after a POST, and any 303,
// become a GET without the body; 307 and 308 keep the method and send the body
// again when it can be sent again, and otherwise hand the 3xx back. Once a
// chain leaves its first origin (scheme, host and port), Authorization, Cookie
// and the other credential fields the caller set are dropped for the rest of
// the chain, even if it comes back. Referer follows strict-origin-when-
// cross-origin from Request.Referrer and is never sent from https to http;
// Sec-Fetch-Site is worked out again for every hop, and the jar's cookies for
// each hop's URL. A Location that is not an http(s) URL ends the chain with
// ErrBadLocation. RedirectManual returns the 3xx; RedirectError fails with
// ErrRedirect.
//
// # HSTS
//
// A Session keeps HTTP Strict Transport Security as a browser profile does
// (RFC 6797): a Strict-Transport-Security field on an https response whose
// certificate was verified makes later http:// requests to that host (and
// to its subdomains with includeSubDomains) go to https:// before anything
// is sent; port 80 becomes 443, another port stays. As in Fetch, the URL is
// rewritten in place: the method, body and fields stay and no redirect hop
// is counted, whatever the redirect policy. Host names are compared in
// lower case, without a trailing dot, IDN labels as A-labels. max-age is
// capped at a year, as Chromium caps it; max-age=0 forgets the host.
// Isolated calls apply what a hop of their own redirect chain said and
// remember nothing after. There is no preload list.
//
// # Cookies
//
// Session.Cookies is the Session's jar (package cookie): Set-Cookie is stored
// from every response, redirects included, and the Cookie field is built for
// every request.
//
// # Proxies
//
// Session.Proxy and Request.Proxy take http://, https://, socks5://,
// socks5h://, socks4:// and socks4a:// URLs, with user:password@ for the
// proxy's credentials, which go to that proxy only. A request's own
// Proxy-Authorization field is sent only on an http:// request through an HTTP
// proxy whose URL carries no credentials; anywhere else it would reach the
// origin or be sent twice, and the request is refused with ErrRefusedToSend.
// With Session.ProxyFromEnvironment, each redirect hop looks up the proxy the
// environment names for its own URL (HTTPS_PROXY after an http to https hop,
// none for a NO_PROXY host).
//
// # Connections, retries and Keep-Alive
//
// An origin has up to Transport.MaxConnsPerHost HTTP/1.1 connections, or one
// HTTP/2 connection, as in a browser: requests past the server's
// MAX_CONCURRENT_STREAMS wait on it for a stream, and a second connection is
// dialed only once the first goes away. The first request to an https origin
// dials alone; the others wait to learn which protocol the server picked
// (unless the requests are HTTP1, which cannot turn out HTTP/2).
//
// # Protocols
//
// Session.Protocol and Request.Protocol (a Request's non-zero value wins)
// choose the HTTP versions. The zero value, AnyProtocol, is the browser's
// choice: the ClientHello offers h2 and http/1.1 and the server's ALPN
// answer picks. HTTP1 offers http/1.1 alone, with the hello the browser
// sends with HTTP/2 disabled (recorded: Chrome's without ALPS, Firefox's
// otherwise unchanged), and the browser's HTTP/1.1 header sets. HTTP2 is
// AnyProtocol without HTTP/3. HTTP3 is HTTP/3 only; it fails with
// ErrProtocolUnsupported until guise's own QUIC client is built in (the
// HTTP/3 engine and the Alt-Svc race are in place: docs/DESIGN.md, "The
// HTTP/3 layer"), and always for http:// and through a proxy. Connections of an HTTP1 request are never shared
// with connections that offered h2, in either direction, so a Transport
// may serve both. A redirect chain keeps its first request's Protocol.
// Plain http:// is HTTP/1.1 whatever the Protocol.
//
// A request is sent a second time, once, only when the server provably did
// not process it (a reused HTTP/1.1 connection closed before any byte of the
// response, an HTTP/2 stream refused with REFUSED_STREAM or left out by
// GOAWAY) and its body can be sent again: over HTTP/1.1 on a new connection,
// over HTTP/2 on the same connection while it takes streams, else a new one.
// A request that only waited for an HTTP/2 stream on a connection that went
// away was never sent, and moves to the next connection as it is. A
// server's Keep-Alive field is honoured: max=0 or timeout=0 retires the
// connection after the response, and timeout=N keeps it idle for less than N
// seconds. A connection in doubt (a timeout, a cancelled context, a write
// error, an early response, bytes after a response) is closed, never reused.
// A body read to its end gives its connection back without Close; Close on an
// unfinished body reads up to Transport.DrainLimit of it to keep the
// connection, and otherwise closes it.
//
// A close-delimited HTTP/1.1 body over TLS that ends with a TCP close but no
// TLS close_notify ends in ErrBodyTruncated: the truncation cannot be told
// apart from the end.
//
// # Timeouts
//
// Transport.DialTimeout bounds the TCP connect and, through a proxy, the
// proxy's handshake; TLSHandshakeTimeout the TLS handshake;
// ResponseHeaderTimeout the wait for the response head; BodyIdleTimeout each
// wait for body bytes; Session.Timeout and Request.Timeout the whole request
// including its body. Each reports a *TimeoutError whose Phase names it. A
// refused connection is not a timeout.
//
// # Decoding
//
// Response bodies are decoded (gzip, deflate, br, zstd, up to 5 codings
// stacked) unless the caller set its own Accept-Encoding or Range, or
// Session.RawBody. A decoded Response has Decoded set and no Content-Encoding
// or Content-Length field. Session.MaxBodySize caps the decoded size
// (ErrDecodeLimit). Codings guise does not know leave the body as sent.
//
// # Certificates
//
// Server certificates are verified against the embedded Mozilla roots unless
// Session.TrustStore picks the system's or both; Session.RootCAs replaces
// them with a pool of the caller's, and Request.RootCAs sets one request's
// pool (an isolated Do included). A connection verified against other roots is
// never used for such a request. Compressed certificate chains (RFC 8879) are
// accepted in every algorithm the profile offers.
//
// # Tracing
//
// A net/http/httptrace.ClientTrace in the request's context receives the
// connection events (GetConn and GotConn with reuse, the TLS handshake,
// WroteHeaders, WroteRequest, GotFirstResponseByte), and Response.Timings
// says where the time went.
//
// # Errors
//
// Every error a request returns is an *Error{Op, URL, Err} with any password
// in the URL masked. Test for causes with errors.Is and errors.As: the
// typed errors and sentinels, of every protocol, are declared in errors.go
// (some as aliases of the internal packages' own): an HTTP/2 stream reset
// (StreamError), GOAWAY (GoAwayError), protocol or flow-control error
// (ConnectionError), refused stream (ErrRefusedStream), a TLS alert
// (AlertError), a proxy's refusal (ProxyStatusError, SOCKSError,
// ErrProxyAuthRequired), timeouts (TimeoutError with its Phase).
package guise
