package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/guise-http/guise/fingerprint"
	"github.com/guise-http/guise/profile"
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
that the profile's HTTP/1.1 header sets are recorded. What the visits did
not show (the HTTP/1.1 sets without --http1, the sets of requests with a
body with --body=false) is taken from the embedded profile of the same
browser, which the file names as its fallback, with the browser's own
User-Agent and client hints; capture lists those sets. The file also keeps
what the browser sent (JA4, JA3N, Akamai, header order), which
'guise fingerprint --profile FILE' compares guise's visit with.

It prints the steps for Chrome, Edge, Firefox and Safari, on this machine
or another one that reaches it (--addr 0.0.0.0:8443 there).
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
			captureSteps(w, port, caOut, body, http1)
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
			reportProfile(w, p)
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

// captureSteps prints how to make each desktop browser visit the capture:
// the name to resolve, the CA to trust, the pages, and how to turn HTTP/2
// off for the HTTP/1.1 sets.
func captureSteps(w io.Writer, port, caOut string, body, http1 bool) {
	ca := caOut
	if ca == "" {
		ca = "CA.pem (write it with --ca-out CA.pem)"
	}
	page := "https://fp.test:" + port + "/"
	if body {
		page += " then https://fp.test:" + port + fingerprint.FlowStart
	}
	fmt.Fprintf(w, `steps, in the browser you use every day (this machine, or another one: map fp.test and
sub.fp.test to this machine's address in its hosts file, and run capture with --addr 0.0.0.0:%[1]s):
  1. trust the CA %[2]s, in a browser profile kept for this:
     Chrome, Edge: Windows: certutil -addstore -user Root %[2]s; macOS: open it in Keychain Access,
       Trust: Always Trust; Linux: certutil -d sql:$HOME/.pki/nssdb -A -t C,, -n guise-echo -i %[2]s
       (or start a throwaway profile with --user-data-dir=DIR --ignore-certificate-errors)
     Firefox: Settings > Privacy & Security > Certificates > View Certificates > Authorities > Import,
       "Trust this CA to identify websites" (remove it afterwards)
     Safari: macOS: open it in Keychain Access (login keychain), Trust: Always Trust; iOS: install
       the file, then Settings > General > About > Certificate Trust Settings: turn it on
  2. visit %[3]s, and wait for the page to finish
`, port, ca, page)
	if http1 {
		fmt.Fprintf(w, `  3. for the HTTP/1.1 sets, visit the same pages again with HTTP/2 turned off:
     Chrome, Edge: quit it, start it with --disable-http2 (same profile), visit, quit, start it as usual
     Firefox: about:config, network.http.http2.enabled = false; visit; set it back to true
     Safari: HTTP/2 cannot be turned off; stop the capture after step 2 (the HTTP/1.1 sets
       then come from the embedded Safari profile)
`)
	} else {
		fmt.Fprintf(w, "  (the HTTP/1.1 sets come from the embedded profile of the browser; --http1 records them)\n")
	}
}

// reportProfile prints what the written profile holds that the visits did
// not show, and the reference fingerprint it keeps.
func reportProfile(w io.Writer, p *profile.Profile) {
	if r := p.Reference; r != nil {
		fmt.Fprintf(w, "recorded reference: ja4 %s, akamai %s\n", r.JA4, r.Akamai)
	}
	filled := p.Filled()
	switch {
	case len(filled) > 0:
		fmt.Fprintf(w, "not recorded, from the embedded %s (the file names it as its fallback):\n", p.Fallback)
		for _, f := range filled {
			fmt.Fprintf(w, "  %s\n", f)
		}
	case p.Fallback == "":
		fmt.Fprintf(w, "no embedded profile of %s to fall back to: requests without a recorded set fail\n", p.Browser)
	default:
		fmt.Fprintf(w, "every header set recorded\n")
	}
	if p.QUIC == nil {
		fmt.Fprintf(w, "no HTTP/3 recorded: the profile speaks h2 and HTTP/1.1 only\n")
	}
}
