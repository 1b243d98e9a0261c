package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/guise-http/guise"
)

// Exit codes of guise ws beyond get's.
const (
	exitWSHandshake = 8  // the server did not open a WebSocket (CURLE_WEIRD_SERVER_REPLY)
	exitWSClosed    = 56 // the connection ended otherwise than by a normal close (CURLE_RECV_ERROR)
)

type wsFlags struct {
	headers  []string
	insecure bool
	cacert   string
	profile  string
	seed     uint64
	resolve  []string
	origin   string
	proxy    string
	http1    bool
}

func newWSCmd() *cobra.Command {
	var f wsFlags
	cmd := &cobra.Command{
		Use:   "ws [flags] URL",
		Short: "Open a WebSocket as a browser would: stdin lines go out as text messages, messages received are printed one per line",
		Long: `Open a WebSocket with the browser's own handshake (the profile's recorded new WebSocket()),
over the origin's HTTP/2 connection when the server enables RFC 8441, otherwise over HTTP/1.1.
Each line of stdin is sent as a text message; each message received is printed on its own line
(binary messages as "<binary N bytes>"). End of stdin closes with 1000 and waits for the server's
close.

Exit codes: 0 after a normal close (1000 or 1001, by either side); 2 usage; 3 bad URL;
6 resolve; 7 connect; 8 handshake refused; 28 timeout; 35 TLS; 56 the connection ended
otherwise (a close code other than 1000/1001, a dropped connection, a ping timeout);
60 certificate; 77 --cacert; 130 interrupted.`,
		Example: `  echo hello | guise ws wss://echo.example/ws
  guise ws --profile firefox --origin https://app.example wss://app.example/live`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runWS(cmd.Context(), &f, args[0], cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	fl := cmd.Flags()
	fl.StringArrayVarP(&f.headers, "header", "H", nil, "extra handshake header 'Name: value' (repeatable)")
	fl.BoolVarP(&f.insecure, "insecure", "k", false, "do not verify the server certificate")
	fl.StringVar(&f.cacert, "cacert", "", "verify the server certificate against the CA certificates in this PEM FILE")
	fl.StringVar(&f.profile, "profile", "", profileUsage)
	fl.Uint64Var(&f.seed, "seed", 0, seedUsage)
	fl.StringArrayVar(&f.resolve, "resolve", nil, "HOST:PORT:ADDR: connect to ADDR for HOST:PORT (repeatable)")
	fl.StringVar(&f.origin, "origin", "", "the page origin the socket is opened from (default: the URL's own)")
	fl.StringVarP(&f.proxy, "proxy", "x", "", "proxy URL: http://, https://, socks5://, socks5h://, socks4a:// with user:pass@")
	fl.BoolVar(&f.http1, "http1.1", false, "open the WebSocket over HTTP/1.1 only")
	return cmd
}

// wsCloseWait is how long guise ws waits, after the end of its input, for
// the server's close frame before Close cuts the connection off (which
// waits 5 s more).
const wsCloseWait = 5 * time.Second

func runWS(ctx context.Context, f *wsFlags, rawURL string, stdin io.Reader, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	opts := &guise.WebSocketOptions{Origin: f.origin}
	if f.http1 {
		opts.Protocol = guise.HTTP1
	}
	for _, h := range f.headers {
		name, value, ok := strings.Cut(h, ":")
		if !ok {
			return &exitError{exitUsage, fmt.Errorf("header %q: want 'Name: value'", h)}
		}
		opts.Header = append(opts.Header, guise.Field{Name: strings.TrimSpace(name), Value: strings.TrimSpace(value)})
	}
	t := &guise.Transport{}
	defer t.Close()
	if len(f.resolve) > 0 {
		m, err := parseResolve(f.resolve)
		if err != nil {
			return &exitError{exitUsage, err}
		}
		t.Resolve = m // TCP and QUIC alike
	}
	s := &guise.Session{InsecureSkipVerify: f.insecure, Transport: t, Proxy: f.proxy}
	if err := useProfile(s, f.profile, f.seed); err != nil {
		return err
	}
	defer s.Close()
	if f.cacert != "" {
		pool, err := readCACert(f.cacert)
		if err != nil {
			return &exitError{exitCACert, err}
		}
		s.RootCAs = pool
	}
	if !strings.Contains(rawURL, "://") {
		rawURL = "ws://" + rawURL
	}
	c, err := s.WebSocket(ctx, rawURL, opts)
	if err != nil {
		var he *guise.WebSocketHandshakeError
		if errors.As(err, &he) {
			return &exitError{exitWSHandshake, err}
		}
		return requestError(err)
	}
	// Stdin feeds the writer; end of input closes the socket.
	cut := time.AfterFunc(time.Hour, func() { c.Close(guise.CloseNormal, "") })
	cut.Stop()
	defer cut.Stop()
	go func() {
		sc := bufio.NewScanner(stdin)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			if err := c.Write(ctx, guise.MessageText, sc.Bytes()); err != nil {
				return
			}
		}
		// End of input: close our side and keep reading, so the echoes
		// still in flight are printed; the server's close ends the loop.
		// A server that never answers is cut off by Close's timeout.
		if c.SendClose(guise.CloseNormal, "") == nil {
			cut.Reset(wsCloseWait)
		}
	}()
	w := bufio.NewWriter(stdout)
	for {
		typ, b, err := c.Read(ctx)
		if err != nil {
			w.Flush()
			return wsEnd(ctx, err)
		}
		if typ == guise.MessageText {
			w.Write(b)
		} else {
			fmt.Fprintf(w, "<binary %d bytes>", len(b))
		}
		w.WriteByte('\n')
		if err := w.Flush(); err != nil {
			c.Close(guise.CloseGoingAway, "")
			return &exitError{exitWrite, err}
		}
	}
}

// wsEnd maps how the socket ended to an exit code.
func wsEnd(ctx context.Context, err error) error {
	var ce *guise.CloseError
	switch {
	case errors.Is(err, guise.ErrWebSocketClosed):
		return nil // our Close after end of input, answered
	case errors.As(err, &ce) && ce.Remote && (ce.Code == guise.CloseNormal || ce.Code == guise.CloseGoingAway || ce.Code == guise.CloseNoStatus):
		return nil
	case ctx.Err() != nil:
		return &exitError{exitCancelled, err}
	}
	return &exitError{exitWSClosed, err}
}
