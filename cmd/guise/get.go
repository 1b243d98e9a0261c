package main

import (
	"bytes"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/guise-http/guise"
	"github.com/guise-http/guise/cookie"
	"github.com/guise-http/guise/profile"
)

// Exit codes, as curl's where curl has one, so scripts can branch on them.
const (
	exitUsage            = 2
	exitURL              = 3  // CURLE_URL_MALFORMAT
	exitResolve          = 6  // CURLE_COULDNT_RESOLVE_HOST
	exitConnect          = 7  // CURLE_COULDNT_CONNECT
	exitHTTP             = 22 // CURLE_HTTP_RETURNED_ERROR (with --fail)
	exitWrite            = 23 // CURLE_WRITE_ERROR
	exitTimeout          = 28 // CURLE_OPERATION_TIMEDOUT
	exitTLS              = 35 // CURLE_SSL_CONNECT_ERROR
	exitCACert           = 77 // CURLE_SSL_CACERT_BADFILE
	exitPeerVerification = 60 // CURLE_PEER_FAILED_VERIFICATION
	exitRecv             = 56 // CURLE_RECV_ERROR
	exitProtocol         = 8  // CURLE_WEIRD_SERVER_REPLY
	exitTooManyRedirects = 47 // CURLE_TOO_MANY_REDIRECTS
	exitUnsupported      = 1  // CURLE_UNSUPPORTED_PROTOCOL
	exitCancelled        = 130
)

type getFlags struct {
	method    string
	headers   []string
	data      []string
	output    string
	include   bool
	head      bool
	verbose   bool
	insecure  bool
	cacert    string
	fail      bool
	silent    bool
	profile   string
	seed      uint64
	resolve   []string
	timeout   time.Duration
	kind      string
	location  bool
	maxRedirs int
	proxy     string
	referer   string
	cookieIn  []string
	cookieOut string
	raw       bool
	compress  bool
	proto     protocolFlags
}

func newGetCmd() *cobra.Command {
	var f getFlags
	cmd := &cobra.Command{
		Use:   "get [flags] URL",
		Short: "Fetch a URL as a browser would (curl-like flags)",
		Example: `  guise get https://example.com/
  guise get -i --profile firefox https://example.com/
  guise get -I --http1.1 https://example.com/
  guise get -X POST -H 'content-type: application/json' -d '{"a":1}' https://example.com/api
  guise get -o big.iso --resolve example.com:443:127.0.0.1 https://example.com/big.iso`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runGet(cmd.Context(), &f, args[0], cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fl := cmd.Flags()
	fl.StringVarP(&f.method, "request", "X", "", "request method")
	fl.StringArrayVarP(&f.headers, "header", "H", nil, "extra header 'Name: value' (repeatable; replaces the profile's field of that name in place)")
	fl.StringArrayVarP(&f.data, "data", "d", nil, "request body; @FILE reads a file; implies POST (repeatable, joined with &)")
	fl.StringVarP(&f.output, "output", "o", "", "write the body to FILE instead of stdout")
	fl.BoolVarP(&f.include, "include", "i", false, "include the response head in the output")
	fl.BoolVarP(&f.head, "head", "I", false, "send HEAD and show only the response head")
	fl.BoolVarP(&f.verbose, "verbose", "v", false, "describe the exchange on stderr")
	fl.BoolVarP(&f.insecure, "insecure", "k", false, "do not verify the server certificate")
	fl.StringVar(&f.cacert, "cacert", "", "verify the server certificate against the CA certificates in this PEM FILE (instead of the embedded Mozilla roots)")
	fl.BoolVarP(&f.fail, "fail", "f", false, "exit 22 on an HTTP status of 400 or more, printing no body")
	fl.BoolVarP(&f.silent, "silent", "s", false, "no progress bar and no error message")
	fl.StringVar(&f.profile, "profile", "", profileUsage)
	fl.Uint64Var(&f.seed, "seed", 0, seedUsage)
	fl.StringArrayVar(&f.resolve, "resolve", nil, "HOST:PORT:ADDR: connect to ADDR for HOST:PORT (repeatable)")
	fl.DurationVarP(&f.timeout, "max-time", "m", 0, "whole-request time limit, e.g. 30s")
	fl.StringVar(&f.kind, "kind", "navigate", "request kind for the default headers: navigate, fetch, subresource")
	fl.BoolVarP(&f.location, "location", "L", false, "follow redirects as a browser does")
	fl.IntVar(&f.maxRedirs, "max-redirs", 0, "most redirects to follow with -L (default 20)")
	fl.StringVarP(&f.proxy, "proxy", "x", "", "proxy URL: http://, https://, socks5://, socks5h://, socks4a:// with user:pass@")
	fl.StringVarP(&f.referer, "referer", "e", "", "the page the request comes from (Referer and Sec-Fetch-Site follow from it)")
	fl.StringArrayVarP(&f.cookieIn, "cookie", "b", nil, "cookies to send: a Netscape cookies.txt or JSON file, or 'name=value; n2=v2'")
	fl.StringVarP(&f.cookieOut, "cookie-jar", "c", "", "write the cookies to FILE (Netscape format; .json for JSON) afterwards")
	fl.BoolVar(&f.compress, "compressed", true, "ask for a compressed body and decode it (the profile's Accept-Encoding; always on)")
	fl.BoolVar(&f.raw, "raw", false, "hand the body over as received, without undoing its Content-Encoding")
	f.proto.register(cmd)
	return cmd
}

func runGet(ctx context.Context, f *getFlags, rawURL string, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()

	req := &guise.Request{Method: f.method, URL: rawURL}
	if !strings.Contains(rawURL, "://") {
		req.URL = "http://" + rawURL // as curl does
	}
	for _, h := range f.headers {
		name, value, ok := strings.Cut(h, ":")
		if !ok {
			return &exitError{exitUsage, fmt.Errorf("header %q: want 'Name: value'", h)}
		}
		req.Header = append(req.Header, guise.Field{Name: strings.TrimSpace(name), Value: strings.TrimSpace(value)})
	}
	if len(f.data) > 0 {
		body, err := readData(f.data)
		if err != nil {
			return &exitError{exitUsage, err}
		}
		req.Body = bytes.NewBuffer(body)
		if req.Method == "" {
			req.Method = "POST"
		}
		if !req.Header.Has("content-type") {
			req.Header = append(req.Header, guise.Field{Name: "content-type", Value: "application/x-www-form-urlencoded"})
		}
	}
	if f.head {
		req.Method = "HEAD"
	}
	kind, err := parseKind(f.kind)
	if err != nil {
		return &exitError{exitUsage, err}
	}
	req.Kind = kind
	req.Referrer = f.referer
	if !f.location {
		req.Redirect = guise.RedirectManual
	}

	t := &guise.Transport{}
	if len(f.resolve) > 0 {
		m, err := parseResolve(f.resolve)
		if err != nil {
			return &exitError{exitUsage, err}
		}
		t.Resolve = m // TCP and QUIC alike
	}
	jar := cookie.New(nil)
	for _, c := range f.cookieIn {
		if err := loadCookies(jar, c, req); err != nil {
			return &exitError{exitUsage, err}
		}
	}
	s := &guise.Session{InsecureSkipVerify: f.insecure, Timeout: f.timeout, Transport: t,
		Proxy: f.proxy, MaxRedirects: f.maxRedirs, Jar: jar, RawBody: f.raw, Protocol: f.proto.protocol()}
	if err := useProfile(s, f.profile, f.seed); err != nil {
		return err
	}
	if f.cacert != "" {
		if s.RootCAs, err = readCACert(f.cacert); err != nil {
			return &exitError{exitCACert, err}
		}
	}
	if f.cookieOut != "" {
		defer saveCookies(jar, f.cookieOut, stderr)
	}
	defer t.Close()
	defer s.Close()

	if f.verbose {
		fmt.Fprintf(stderr, "* %s %s as %s\n", methodOr(req.Method), req.URL, profileName(s))
	}
	start := time.Now()
	resp, err := s.Do(ctx, req)
	if err != nil {
		return requestError(err)
	}
	defer resp.Body.Close()
	if f.verbose {
		fmt.Fprintf(stderr, "* response head after %v\n", time.Since(start).Round(time.Microsecond))
		writeHead(stderr, resp, "< ")
	}
	if f.fail && resp.StatusCode >= 400 {
		return &exitError{exitHTTP, fmt.Errorf("the requested URL returned error: %d", resp.StatusCode)}
	}
	if f.include || f.head {
		writeHead(stdout, resp, "")
	}
	if f.head {
		return nil
	}

	var out io.Writer = stdout
	if f.output != "" && f.output != "-" {
		file, err := os.Create(f.output)
		if err != nil {
			return &exitError{exitWrite, err}
		}
		defer file.Close()
		out = file
		if !f.silent && isTerminal(stderr) && (resp.ContentLength < 0 || resp.ContentLength > 1<<20) {
			bar := progressbar.DefaultBytes(resp.ContentLength, "downloading")
			out = io.MultiWriter(file, bar)
		}
	}
	n, err := io.Copy(errWriter{out}, resp.Body)
	if err != nil {
		var we *writeErr
		if errors.As(err, &we) {
			return &exitError{exitWrite, err}
		}
		return requestError(err)
	}
	if f.verbose {
		fmt.Fprintf(stderr, "* %d body bytes in %v\n", n, time.Since(start).Round(time.Microsecond))
	}
	return nil
}

// loadCookies reads -b: a file (Netscape cookies.txt or JSON), or a literal
// "name=value; n2=v2" sent as the request's Cookie field, as curl does.
func loadCookies(jar *cookie.Jar, arg string, req *guise.Request) error {
	if strings.Contains(arg, "=") && !fileExists(arg) {
		req.Header = append(req.Header, guise.Field{Name: "Cookie", Value: arg})
		return nil
	}
	file, err := os.Open(arg)
	if err != nil {
		return err
	}
	defer file.Close()
	var ie *cookie.ImportError
	if strings.HasSuffix(arg, ".json") {
		err = jar.ReadJSON(file)
	} else {
		err = jar.ReadNetscape(file)
	}
	if errors.As(err, &ie) {
		return nil // the valid cookies were imported
	}
	return err
}

func fileExists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}

// saveCookies writes the jar for -c.
func saveCookies(jar *cookie.Jar, name string, stderr io.Writer) {
	file, err := os.Create(name)
	if err == nil {
		if strings.HasSuffix(name, ".json") {
			err = jar.WriteJSON(file)
		} else {
			err = jar.WriteNetscape(file)
		}
		if cerr := file.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintln(stderr, "guise: writing cookies:", err)
	}
}

// writeErr marks an error of the output, not of the request.
type writeErr struct{ error }

func (e *writeErr) Unwrap() error { return e.error }

type errWriter struct{ w io.Writer }

func (w errWriter) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	if err != nil {
		err = &writeErr{err}
	}
	return n, err
}

func parseKind(s string) (profile.RequestKind, error) {
	var k profile.RequestKind
	err := k.UnmarshalText([]byte(s))
	return k, err
}

func methodOr(m string) string {
	if m == "" {
		return "GET"
	}
	return m
}

func writeHead(w io.Writer, resp *guise.Response, prefix string) {
	fmt.Fprintf(w, "%s%s %d %s\r\n", prefix, resp.Proto, resp.StatusCode, resp.Status)
	for _, f := range resp.Header {
		fmt.Fprintf(w, "%s%s: %s\r\n", prefix, f.Name, f.Value)
	}
	fmt.Fprintf(w, "%s\r\n", prefix)
}

func readData(parts []string) ([]byte, error) {
	var b []byte
	for i, d := range parts {
		if i > 0 {
			b = append(b, '&')
		}
		if name, ok := strings.CutPrefix(d, "@"); ok {
			data, err := os.ReadFile(name)
			if err != nil {
				return nil, err
			}
			b = append(b, data...)
			continue
		}
		b = append(b, d...)
	}
	return b, nil
}

// parseResolve reads --resolve HOST:PORT:ADDR values into a
// Transport.Resolve map.
func parseResolve(rs []string) (map[string]netip.Addr, error) {
	m := make(map[string]netip.Addr, len(rs))
	for _, r := range rs {
		// HOST:PORT:ADDR, where ADDR may be a bracketed IPv6 literal.
		host, rest, ok1 := strings.Cut(r, ":")
		port, addr, ok2 := strings.Cut(rest, ":")
		if !ok1 || !ok2 || host == "" || port == "" || addr == "" {
			return nil, fmt.Errorf("--resolve %q: want HOST:PORT:ADDR", r)
		}
		ip, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(addr, "["), "]"))
		if err != nil {
			return nil, fmt.Errorf("--resolve %q: ADDR is not an IP address", r)
		}
		m[net.JoinHostPort(host, port)] = ip
	}
	return m, nil
}

// requestError maps a request error to curl's exit codes.
func requestError(err error) error {
	var te *guise.TimeoutError
	var dnsErr *net.DNSError
	var opErr *net.OpError
	var pe *guise.ProtocolError
	var ce *guise.CertificateError
	var he *guise.HandshakeError
	switch {
	case errors.Is(err, context.Canceled):
		return &exitError{exitCancelled, err}
	case errors.As(err, &te), errors.Is(err, context.DeadlineExceeded):
		return &exitError{exitTimeout, err}
	case errors.Is(err, guise.ErrProtocolUnsupported):
		return &exitError{exitUnsupported, err}
	case errors.Is(err, guise.ErrRefusedToSend), errors.Is(err, guise.ErrUnsupportedScheme):
		return &exitError{exitURL, err}
	case errors.As(err, &dnsErr):
		return &exitError{exitResolve, err}
	case errors.As(err, &opErr) && opErr.Op == "dial":
		return &exitError{exitConnect, err}
	case errors.As(err, &ce):
		return &exitError{exitPeerVerification, err}
	case errors.As(err, &he):
		return &exitError{exitTLS, err}
	case errors.As(err, &pe):
		return &exitError{exitProtocol, err}
	case errors.Is(err, guise.ErrTooManyRedirects):
		return &exitError{exitTooManyRedirects, err}
	}
	return &exitError{exitRecv, err}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// readCACert reads a PEM file of CA certificates into a pool.
func readCACert(name string) (*x509.CertPool, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("--cacert: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("--cacert %s: no PEM certificate in it", name)
	}
	return pool, nil
}
