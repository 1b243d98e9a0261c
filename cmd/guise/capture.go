package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/guise-http/guise/fingerprint"
	"github.com/spf13/cobra"
)

func newCaptureCmd() *cobra.Command {
	var (
		out, addr, caOut, name, recordsDir string
		timeout                            time.Duration
		http1, body                        bool
	)
	cmd := &cobra.Command{
		Use:   "capture --out FILE",
		Short: "Record a real browser's visit to the echo server as a profile file",
		Long: `Run the echo server, wait for a real browser to visit https://fp.test:PORT/
(the page makes it send a navigation, a script, images, fetch() calls and a
second connection that resumes the TLS session), then to visit
https://fp.test:PORT/flow/start (a page whose script sends a fetch() POST and
submits a form, for the header sets of requests with a body), then write one
profile file in guise's profile format.

With --http1, also wait for a visit with HTTP/2 disabled in the browser, so
that the profile's HTTP/1.1 header sets are recorded rather than absent.
When --timeout passes first, the profile is written if what was recorded
makes a valid one, and what is missing is reported.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return errors.New("--out is required")
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			s := &fingerprint.Server{Addr: addr}
			if err := s.Start(); err != nil {
				return err
			}
			defer s.Close()
			w := cmd.OutOrStdout()
			if err := announce(w, s, caOut); err != nil {
				return err
			}
			_, port, _ := cutPort(s.ListenAddr())
			if body {
				fmt.Fprintf(w, "  then visit https://fp.test:%s%s (a fetch() POST and a form submission)\n", port, fingerprint.FlowStart)
			}
			want := fingerprint.Want{HTTP1: http1, Resumed: true, Body: body}
			fmt.Fprintf(w, "waiting up to %v for: %v\n", timeout, want.Missing(nil))
			wctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			go logConnections(wctx, w, s)
			recs, werr := s.WaitCapture(wctx, want)
			if werr == nil {
				// Let requests in flight (the browser finishing its page) land.
				recs = settle(ctx, s, time.Second, 5*time.Second)
			}
			cancel()
			if recordsDir != "" {
				if err := writeRecords(recordsDir, recs); err != nil {
					return err
				}
			}
			p, err := fingerprint.BuildProfile(recs, name)
			if err != nil {
				if werr != nil {
					return fmt.Errorf("%w; %w", werr, err)
				}
				return err
			}
			b, err := p.Marshal()
			if err != nil {
				return err
			}
			if err := os.WriteFile(out, b, 0o644); err != nil {
				return err
			}
			fmt.Fprintf(w, "wrote profile %s to %s\n", p.Name, out)
			if werr != nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "guise: warning: %v\n", werr)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&out, "out", "", "profile file to write (required)")
	f.StringVar(&addr, "addr", "127.0.0.1:8443", "address to listen on")
	f.StringVar(&caOut, "ca-out", "", "write the server's CA certificate (PEM) to this file")
	f.DurationVar(&timeout, "timeout", 2*time.Minute, "how long to wait for the visits")
	f.StringVar(&name, "name", "", "profile name, <browser><version>-<os> (default: from the user-agent)")
	f.BoolVar(&http1, "http1", false, "also wait for an HTTP/1.1 visit (browser with HTTP/2 disabled)")
	f.BoolVar(&body, "body", true, "also wait for the visit of /flow/start (requests with a body); --body=false makes a profile whose requests with a body use the plain header sets")
	f.StringVar(&recordsDir, "records", "", "also write every connection record (JSON) into this directory")
	return cmd
}

// writeRecords writes one JSON file per connection record.
func writeRecords(dir string, recs []*fingerprint.ConnRecord) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, r := range recs {
		b, err := json.MarshalIndent(r, "", "  ")
		if err != nil {
			return err
		}
		name := fmt.Sprintf("%04d-%s-%s.json", r.ID, r.Transport, protoSlug(r.Protocol))
		if err := os.WriteFile(filepath.Join(dir, name), append(b, '\n'), 0o644); err != nil {
			return err
		}
	}
	return nil
}

func protoSlug(p string) string {
	switch p {
	case fingerprint.ProtoH2:
		return "h2"
	case fingerprint.ProtoHTTP1:
		return "h1"
	case fingerprint.ProtoH3:
		return "h3"
	}
	return "none"
}

// settle waits until the server saw no change for quiet (at most max) and
// returns its records.
func settle(ctx context.Context, s *fingerprint.Server, quiet, max time.Duration) []*fingerprint.ConnRecord {
	limit := time.NewTimer(max)
	defer limit.Stop()
	for {
		ch := s.Changed()
		t := time.NewTimer(quiet)
		select {
		case <-ch:
			t.Stop()
			continue
		case <-t.C:
		case <-limit.C:
			t.Stop()
		case <-ctx.Done():
			t.Stop()
		}
		return s.Records()
	}
}
