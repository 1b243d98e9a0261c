package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/guise-http/guise/fingerprint"
	"github.com/spf13/cobra"
)

func newServeCmd() *cobra.Command {
	var addr, caOut string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the fingerprint echo server (shows what a client sent)",
		Long: `Run the fingerprint echo server on loopback until interrupted.

It answers https:// and http:// on one port. Visit / with a browser, or
/api/all with any client, to see its TLS ClientHello (JA3, JA4), HTTP/2
settings and frames (Akamai) and its headers in wire order and case. One
line per connection is logged to stdout.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			s := &fingerprint.Server{Addr: addr}
			if err := s.Start(); err != nil {
				return err
			}
			defer s.Close()
			out := cmd.OutOrStdout()
			if err := announce(out, s, caOut); err != nil {
				return err
			}
			logConnections(ctx, out, s)
			return nil
		},
	}
	cmd.Flags().StringVar(&addr, "addr", "127.0.0.1:8443", "address to listen on")
	cmd.Flags().StringVar(&caOut, "ca-out", "", "write the server's CA certificate (PEM) to this file")
	return cmd
}

// announce prints where the server is and how to make a browser trust it.
func announce(w io.Writer, s *fingerprint.Server, caOut string) error {
	_, port, _ := cutPort(s.ListenAddr())
	fmt.Fprintf(w, "guise echo server: %s (also http://%s)\n", s.URL(), s.ListenAddr())
	fmt.Fprintf(w, "  visit https://fp.test:%s/ (fp.test and sub.fp.test must resolve to 127.0.0.1)\n", port)
	fmt.Fprintf(w, "  chromium: --host-resolver-rules=\"MAP fp.test 127.0.0.1, MAP sub.fp.test 127.0.0.1\" --ignore-certificate-errors\n")
	if spki := s.SPKIHash(); spki != "" {
		fmt.Fprintf(w, "  http/3 (udp %s): chromium --origin-to-force-quic-on=fp.test:%s --ignore-certificate-errors-spki-list=%s\n", port, port, spki)
		fmt.Fprintf(w, "    firefox prefs: network.http.http3.alt-svc-mapping-for-testing=\"fp.test;h3=:%s\", network.http.http3.disable_when_third_party_roots_found=false\n", port)
	}
	if caOut != "" {
		if err := os.WriteFile(caOut, s.CAPEM(), 0o644); err != nil {
			return fmt.Errorf("writing CA: %w", err)
		}
		fmt.Fprintf(w, "  CA certificate written to %s; trust it with:\n", caOut)
		fmt.Fprintf(w, "    firefox: certutil -A -n guise-echo -t C,, -i %s -d sql:PROFILE_DIR\n", caOut)
		fmt.Fprintf(w, "    curl:    curl --cacert %s https://localhost:%s/api/all\n", caOut, port)
	} else {
		fmt.Fprintf(w, "  (pass --ca-out FILE to write the CA certificate a browser must trust)\n")
	}
	return nil
}

// cutPort splits "host:port".
func cutPort(hostport string) (host, port string, ok bool) {
	for i := len(hostport) - 1; i >= 0; i-- {
		if hostport[i] == ':' {
			return hostport[:i], hostport[i+1:], true
		}
	}
	return hostport, "", false
}

// logConnections prints one line per connection once it has answered a
// request (or failed), until ctx ends.
func logConnections(ctx context.Context, w io.Writer, s *fingerprint.Server) {
	logged := make(map[uint64]bool)
	for {
		ch := s.Changed()
		for _, r := range s.Records() {
			if logged[r.ID] || (r.Requests == 0 && r.Err == "" && r.Open()) {
				continue
			}
			logged[r.ID] = true
			fmt.Fprintln(w, connLine(r))
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return
		}
	}
}

// connLine summarises a connection: transport, protocol, JA4, Akamai, UA.
func connLine(r *fingerprint.ConnRecord) string {
	line := fmt.Sprintf("#%d %s %s %s", r.ID, r.RemoteAddr, r.Transport, r.Protocol)
	if r.Negotiated != nil {
		line += fmt.Sprintf(" sni=%q resumed=%v", r.Negotiated.ServerName, r.Negotiated.Resumed)
	}
	if ch, err := r.ClientHello(); err == nil {
		line += " ja4=" + ch.JA4()
	}
	if h, _ := r.HTTP2(); h != nil && len(h.Settings) > 0 {
		line += " akamai=" + h.Akamai()
	}
	if ua := r.UserAgent(); ua != "" {
		line += fmt.Sprintf(" ua=%q", ua)
	}
	if r.Err != "" {
		line += fmt.Sprintf(" error=%q", r.Err)
	}
	return line
}
