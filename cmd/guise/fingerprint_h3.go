package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/guise-http/guise"
	"github.com/guise-http/guise/fields"
	"github.com/guise-http/guise/fingerprint"
	"github.com/guise-http/guise/profile"
)

// h3Timeout bounds the HTTP/3 visit: where UDP is blocked, the QUIC
// handshake would otherwise run to its own timeout.
const h3Timeout = 5 * time.Second

// visitH3 visits the echo server's UDP side (the same port as its TCP
// one) over HTTP/3 alone, as the profile, and returns the URL. It visits
// localhost rather than fp.test: guise's QUIC dial resolves the name
// itself (a Transport.DialContext carries TCP only), and none of the
// facts printH3 shows depends on the name.
func visitH3(ctx context.Context, p *profile.Profile, srv *fingerprint.Server) (string, error) {
	_, port, _ := net.SplitHostPort(srv.ListenAddr())
	url := "https://localhost:" + port + "/"
	t := &guise.Transport{}
	defer t.Close()
	s := &guise.Session{Browser: p, RootCAs: srv.CertPool(), Transport: t, Protocol: guise.HTTP3, Timeout: h3Timeout}
	defer s.Close()
	resp, err := s.Get(ctx, url)
	if err != nil {
		return url, err
	}
	if _, err := resp.Bytes(); err != nil {
		return url, err
	}
	// The recorder reads the control stream apart from the request: give
	// it until h3Timeout to have the SETTINGS before the connection
	// closes (a close first leaves them unread).
	for deadline := time.Now().Add(h3Timeout); time.Now().Before(deadline) && !sawSettings(srv); {
		time.Sleep(5 * time.Millisecond)
	}
	return url, nil
}

// sawSettings reports whether the server has recorded a QUIC connection
// whose control stream's SETTINGS it read.
func sawSettings(srv *fingerprint.Server) bool {
	for _, r := range srv.Records() {
		if r.Transport != fingerprint.TransportQUIC {
			continue
		}
		if h, err := r.HTTP3(); err == nil && len(h.Settings) > 0 {
			return true
		}
	}
	return false
}

// h3Seen is the QUIC and HTTP/3 part of one visit, or of a profile's
// recording.
type h3Seen struct {
	ja4      string
	params   []string // transport parameter ids in order, GREASE masked
	sizes    []int    // the first flight's datagram sizes
	settings []string // SETTINGS in order, GREASE masked
	pseudo   []string
	order    []string
}

func observeH3(rec *fingerprint.ConnRecord) (*h3Seen, error) {
	fl, err := rec.QUICFlight()
	if err != nil {
		return nil, fmt.Errorf("the echo server could not read our QUIC Initials: %w", err)
	}
	h, err := rec.HTTP3()
	if err != nil {
		return nil, fmt.Errorf("the echo server could not parse our HTTP/3 streams: %w", err)
	}
	s := &h3Seen{ja4: fl.JA4()}
	for _, tp := range fl.TransportParameters {
		if tp.ID.IsGREASE() {
			s.params = append(s.params, "GREASE")
		} else {
			s.params = append(s.params, tp.ID.String())
		}
	}
	// the datagrams up to the one that completes the hello
	covered := 0
	for _, d := range fl.Datagrams {
		if covered >= len(fl.ClientHelloMessage) {
			break
		}
		s.sizes = append(s.sizes, d.Size)
		for _, pk := range d.Packets {
			for _, f := range pk.Frames {
				covered += len(f.Data) // CRYPTO data; a first flight resends nothing
			}
		}
	}
	for _, st := range h.Settings {
		s.settings = append(s.settings, settingString(uint64(st.ID), st.Value, isGREASE(uint64(st.ID))))
	}
	if len(h.Requests) == 0 {
		return nil, fmt.Errorf("the echo server saw no HTTP/3 request")
	}
	for _, f := range h.Requests[0].Fields {
		if strings.HasPrefix(f.Name, ":") {
			s.pseudo = append(s.pseudo, f.Name)
		} else {
			s.order = append(s.order, f.Name)
		}
	}
	return s, nil
}

// expectedH3 is what the profile's QUIC and HTTP/3 parts, taken from the
// browser's recording, say it sends; nil for a profile without them.
func expectedH3(p *profile.Profile) (*h3Seen, error) {
	if p.QUIC == nil || p.HTTP3 == nil {
		return nil, nil
	}
	ch, err := fingerprint.ParseClientHello(p.QUIC.Hello)
	if err != nil {
		return nil, fmt.Errorf("profile %s: recorded QUIC hello: %w", p.Name, err)
	}
	s := &h3Seen{ja4: ch.JA4WithTransport('q'), pseudo: p.HTTP3.PseudoOrder}
	for _, tp := range p.QUIC.TransportParameters {
		if tp.Rule == profile.ParamGREASE {
			s.params = append(s.params, "GREASE")
		} else {
			s.params = append(s.params, fingerprint.QUICParamName(tp.ID))
		}
	}
	for _, st := range p.HTTP3.Settings {
		s.settings = append(s.settings, settingString(st.ID, st.Value, st.GREASE))
	}
	if hs := p.HeaderSet(profile.Navigate, profile.H3); hs != nil {
		for _, f := range hs.Header {
			// A per-request field a plain navigation does not send, but
			// Alt-Used, which a browser sends on every request to an
			// alternative (Firefox), as guise does over HTTP/3.
			if f.Value == "" && !fields.EqualFold(f.Name, "alt-used") &&
				slices.ContainsFunc(hs.PerRequest, func(n string) bool { return fields.EqualFold(n, f.Name) }) {
				continue
			}
			s.order = append(s.order, strings.ToLower(f.Name))
		}
	}
	return s, nil
}

// isGREASE reports a reserved HTTP/3 id, 0x1f*N+0x21 (RFC 9114 §7.2.4.1).
func isGREASE(id uint64) bool { return id >= 0x21 && (id-0x21)%0x1f == 0 }

func settingString(id, v uint64, grease bool) string {
	if grease {
		return "GREASE"
	}
	return fingerprint.H3SettingName(id) + "=" + strconv.FormatUint(v, 10)
}

// printH3 prints the HTTP/3 visit's rows next to the profile's, as
// runFingerprint does the TCP ones, and reports whether all match.
func printH3(out io.Writer, p *profile.Profile, url string, rec *fingerprint.ConnRecord) (bool, error) {
	want, err := expectedH3(p)
	if err != nil {
		return false, err
	}
	if want == nil {
		fmt.Fprintf(out, "\nHTTP/3: profile %s has no QUIC recording; not checked\n", p.Name)
		return true, nil
	}
	got, err := observeH3(rec)
	if err != nil {
		return false, err
	}
	fmt.Fprintf(out, "\nvisited %s over h3\n\n", url)
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\tguise sent\trecording\t")
	ok := true
	mark := func(match bool) string {
		if !match {
			ok = false
			return "DIFFERS"
		}
		return "match"
	}
	fmt.Fprintf(tw, "QUIC JA4\t%s\t%s\t%s\n", got.ja4, want.ja4, mark(got.ja4 == want.ja4))
	var sizes []string
	sized := len(got.sizes) > 0
	for _, n := range got.sizes {
		sizes = append(sizes, strconv.Itoa(n))
		sized = sized && n == p.QUIC.DatagramSize
	}
	fmt.Fprintf(tw, "first flight datagrams\t%s\teach %d\t%s\n", strings.Join(sizes, " "), p.QUIC.DatagramSize, mark(sized))
	fmt.Fprintf(tw, "h3 pseudo-headers\t%s\t%s\t%s\n", strings.Join(got.pseudo, ","), strings.Join(want.pseudo, ","), mark(slices.Equal(got.pseudo, want.pseudo)))
	tw.Flush()

	shuffled := p.QUIC.ShuffleTransportParameters
	match := slices.Equal(got.params, want.params)
	if shuffled {
		match = slices.Equal(slices.Sorted(slices.Values(got.params)), slices.Sorted(slices.Values(want.params)))
	}
	what := "transport parameters (in order)"
	if shuffled {
		what = "transport parameters (the set; their order varies per connection, as the browser's)"
	}
	list(out, what, got.params, want.params, mark(match), !shuffled)
	list(out, "h3 SETTINGS (in order)", got.settings, want.settings, mark(slices.Equal(got.settings, want.settings)), true)
	list(out, "header order (navigation, h3)", got.order, want.order, mark(slices.Equal(got.order, want.order)), true)
	return ok, nil
}

// list prints a numbered list of got, each line that differs from want
// (when ordered) marked with want's entry.
func list(out io.Writer, what string, got, want []string, mark string, ordered bool) {
	fmt.Fprintf(out, "\n%s: %s\n", what, mark)
	for i := range max(len(got), len(want)) {
		g, w := at(got, i), at(want, i)
		note := ""
		if ordered && g != w {
			note = "   <- recording: " + w
		}
		fmt.Fprintf(out, "  %2d %s%s\n", i+1, g, note)
	}
}
