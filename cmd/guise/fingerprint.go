package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/guise-http/guise"
	"github.com/guise-http/guise/fields"
	"github.com/guise-http/guise/fingerprint"
	"github.com/guise-http/guise/profile"
)

func newFingerprintCmd() *cobra.Command {
	var names []string
	var all bool
	cmd := &cobra.Command{
		Use:   "fingerprint",
		Short: "Visit the built-in echo server as a browser profile and check the fingerprints against its recording",
		Long: `fingerprint starts the echo server on loopback, visits it with guise as the
profile, and prints what the server saw (JA3, JA3N, JA4, the Akamai HTTP/2
string, pseudo-header and header order) next to what the profile's
recording of the real browser says, and whether each matches. It then
visits it again over HTTP/3 (the server's UDP side, on the same port) and
prints the QUIC and HTTP/3 fingerprints the same way: the QUIC JA4, the
first flight's datagram sizes, the transport parameters in order, the
SETTINGS in order, and the request's pseudo-header and header order. Where
UDP is unavailable it says HTTP/3 was not reached and checks TCP alone. It
needs no network. The exit status is 1 when anything differs.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if all {
				names = nil
				for _, n := range profile.Names() {
					p, err := profile.Lookup(n)
					if err == nil && p.Name == n {
						names = append(names, n)
					}
				}
			}
			for _, n := range names {
				if err := checkProfile(n); err != nil {
					return err
				}
			}
			ok := true
			for _, n := range names {
				good, err := runFingerprint(cmd.Context(), n, cmd.OutOrStdout())
				if err != nil {
					return err
				}
				ok = ok && good
			}
			if !ok {
				return &exitError{1, errors.New("fingerprints differ from the recording")}
			}
			return nil
		},
	}
	cmd.Flags().StringSliceVar(&names, "profile", []string{profile.Default}, "profile name(s) to check")
	cmd.Flags().BoolVar(&all, "all", false, "check every profile")
	return cmd
}

// echoNoUDP starts the echo server without its UDP side (a test's
// stand-in for a machine without UDP).
var echoNoUDP bool

// startEcho starts the echo server on loopback, TCP and UDP on one port;
// where UDP cannot be had, TCP alone (the HTTP/3 visit then reports that
// it did not reach the server).
func startEcho() (*fingerprint.Server, error) {
	if !echoNoUDP {
		srv := &fingerprint.Server{}
		if err := srv.Start(); err == nil {
			return srv, nil
		}
	}
	srv := &fingerprint.Server{DisableQUIC: true}
	if err := srv.Start(); err != nil {
		return nil, err
	}
	return srv, nil
}

// seen is what the echo server recorded of one visit.
type seen struct {
	ja3, ja3n, ja4 string
	akamai         string
	pseudo         []string
	order          []string
	proto          string
	resumed        bool
}

func runFingerprint(ctx context.Context, name string, out io.Writer) (bool, error) {
	p, err := profile.Lookup(name)
	if err != nil {
		return false, err
	}
	srv, err := startEcho()
	if err != nil {
		return false, err
	}
	defer srv.Close()

	// Browsers send no SNI to an IP address: visit fp.test, as the
	// recordings did, and dial the server for it.
	addr := srv.ListenAddr()
	_, port, _ := net.SplitHostPort(addr)
	var d net.Dialer
	t := &guise.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return d.DialContext(ctx, network, addr)
	}}
	s := &guise.Session{Profile: name, RootCAs: srv.CertPool(), Transport: t, Timeout: 10 * time.Second}
	url := "https://fp.test:" + port + "/api/all"
	resp, err := s.Get(ctx, url)
	if err != nil {
		t.Close()
		return false, fmt.Errorf("visiting the echo server: %w", err)
	}
	if _, err := resp.Bytes(); err != nil {
		t.Close()
		return false, err
	}
	t.Close()
	var h3url string
	var h3err error
	if p.QUIC != nil {
		h3url, h3err = visitH3(ctx, name, srv)
	}
	srv.Close()

	var tcp, udp *fingerprint.ConnRecord
	for _, r := range srv.Records() {
		switch {
		case r.Transport != fingerprint.TransportQUIC && tcp == nil:
			tcp = r
		case r.Transport == fingerprint.TransportQUIC && r.Requests > 0 && udp == nil:
			udp = r
		}
	}
	if tcp == nil {
		return false, errors.New("the echo server recorded no connection")
	}
	got, err := observe(tcp)
	if err != nil {
		return false, err
	}
	want, err := expected(p)
	if err != nil {
		return false, err
	}

	fmt.Fprintf(out, "profile %s (%s %d on %s; %s)\n", p.Name, p.Browser, p.Version, p.OS, recordedWord(p))
	fmt.Fprintf(out, "visited %s over %s\n\n", url, got.proto)
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\tguise sent\trecording\t")
	ok := true
	row := func(what, g, w string, match bool) {
		mark := "match"
		if !match {
			mark = "DIFFERS"
			ok = false
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", what, g, w, mark)
	}
	row("JA4", got.ja4, want.ja4, got.ja4 == want.ja4)
	row("JA3N (md5)", got.ja3n, want.ja3n, got.ja3n == want.ja3n)
	ja3note := "stable"
	if p.TLS.ShuffleExtensions {
		ja3note = "varies per connection (extension shuffle), as the browser's"
	}
	fmt.Fprintf(tw, "JA3 (md5)\t%s\t%s\t\n", got.ja3, ja3note)
	row("Akamai h2", got.akamai, want.akamai, got.akamai == want.akamai)
	row("pseudo-headers", strings.Join(got.pseudo, ","), strings.Join(want.pseudo, ","), slices.Equal(got.pseudo, want.pseudo))
	tw.Flush()
	fmt.Fprintln(out)
	match := slices.Equal(got.order, want.order)
	if !match {
		ok = false
	}
	fmt.Fprintf(out, "header order (navigation, h2): %s\n", map[bool]string{true: "match", false: "DIFFERS"}[match])
	for i := 0; i < max(len(got.order), len(want.order)); i++ {
		g, w := at(got.order, i), at(want.order, i)
		mark := ""
		if g != w {
			mark = "   <- recording: " + w
		}
		fmt.Fprintf(out, "  %2d %s%s\n", i+1, g, mark)
	}
	if h3err == nil && udp == nil {
		h3err = errors.New("the echo server recorded no QUIC connection with a request")
	}
	switch {
	case p.QUIC == nil:
		fmt.Fprintf(out, "\nHTTP/3: profile %s has no QUIC recording; not visited\n", p.Name)
	case h3err != nil:
		fmt.Fprintf(out, "\nHTTP/3: not reached (%v); the QUIC and HTTP/3 rows are not checked\n", h3err)
	default:
		good, err := printH3(out, p, h3url, udp)
		if err != nil {
			return false, err
		}
		ok = ok && good
	}
	verdict := "all match"
	if !ok {
		verdict = "DIFFERENCES FOUND"
	}
	fmt.Fprintf(out, "\n%s: %s\n\n", p.Name, verdict)
	return ok, nil
}

func observe(rec *fingerprint.ConnRecord) (*seen, error) {
	ch, err := rec.ClientHello()
	if err != nil {
		return nil, fmt.Errorf("the echo server could not parse our ClientHello: %w", err)
	}
	s := &seen{ja3: ch.JA3Hash(), ja3n: ch.JA3NHash(), ja4: ch.JA4(), proto: rec.Protocol}
	if rec.Negotiated != nil {
		s.resumed = rec.Negotiated.Resumed
	}
	h, err := rec.HTTP2()
	if err != nil {
		return nil, fmt.Errorf("the echo server could not parse our HTTP/2 stream: %w", err)
	}
	s.akamai = h.Akamai()
	if len(h.Requests) > 0 {
		s.pseudo = h.Requests[0].PseudoOrder
		s.order = h.Requests[0].HeaderOrder()
	}
	return s, nil
}

// expected is what the profile's recording says the browser sends.
func expected(p *profile.Profile) (*seen, error) {
	ch, err := fingerprint.ParseClientHello(p.TLS.Hello)
	if err != nil {
		return nil, fmt.Errorf("profile %s: recorded hello: %w", p.Name, err)
	}
	h := &fingerprint.HTTP2{ConnWindowUpdate: p.HTTP2.ConnWindowUpdate}
	for _, s := range p.HTTP2.Settings {
		h.Settings = append(h.Settings, fingerprint.Setting{ID: uint16(s.ID), Value: s.Value})
	}
	for _, pf := range p.HTTP2.Priorities {
		h.Priorities = append(h.Priorities, fingerprint.PriorityFrame{StreamID: pf.StreamID,
			Priority: fingerprint.Priority{Exclusive: pf.Exclusive, StreamDep: pf.DependsOn, Weight: pf.Weight}})
	}
	h.Requests = []fingerprint.HTTP2Request{{PseudoOrder: p.HTTP2.PseudoOrder}}
	s := &seen{ja3: ch.JA3Hash(), ja3n: ch.JA3NHash(), ja4: ch.JA4(), akamai: h.Akamai(), pseudo: p.HTTP2.PseudoOrder}
	if hs := p.HeaderSet(profile.Navigate, profile.H2); hs != nil {
		for _, f := range hs.Header {
			if f.Value == "" && slices.ContainsFunc(hs.PerRequest, func(n string) bool { return fields.EqualFold(n, f.Name) }) {
				continue // a per-request field a plain navigation does not send
			}
			s.order = append(s.order, f.Name)
		}
	}
	return s, nil
}

func recordedWord(p *profile.Profile) string {
	if p.Recorded {
		return "recorded from the real browser"
	}
	if from := derivedFrom(p); from != "" {
		return "wire format of " + from + ", header values derived, not recorded"
	}
	return "built from public facts, not recorded here"
}

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return "(none)"
}
