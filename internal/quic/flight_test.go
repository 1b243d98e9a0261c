package quic

import (
	"bytes"
	"flag"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/guise-http/guise/fingerprint"
	"github.com/guise-http/guise/internal/quicwire"
	"github.com/guise-http/guise/internal/tlsfp"
	"github.com/guise-http/guise/profile"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// seeded is a deterministic reader for one connection's draws.
func seeded(seed uint64) *rand.ChaCha8 {
	var s [32]byte
	for i := range 8 {
		s[i] = byte(seed >> (8 * i))
	}
	return rand.NewChaCha8(s)
}

// firstFlight builds one connection's first flight for p: connection IDs,
// transport parameters, the ClientHello from tlsfp's QUIC client, the
// datagrams. It returns them as the recorder would store them.
func firstFlight(t *testing.T, p *profile.Profile, seed uint64) (*Flight, *fingerprint.ConnRecord) {
	t.Helper()
	r := seeded(seed)
	f, err := Start(p.QUIC, r)
	if err != nil {
		t.Fatal(err)
	}
	tp, err := f.TransportParameters(p.QUIC, r)
	if err != nil {
		t.Fatal(err)
	}
	c, err := tlsfp.QUICClient("fp.test", &tlsfp.Config{Profile: p, Rand: r, InsecureSkipVerify: true}, tp)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	var hello []byte
	for e := c.NextEvent(); e.Kind != tlsfp.QUICNoEvent; e = c.NextEvent() {
		if e.Kind == tlsfp.QUICWriteData && e.Level == tlsfp.QUICInitial {
			hello = append(hello, e.Data...)
		}
	}
	if len(hello) == 0 {
		t.Fatal("no ClientHello from the tls handshake")
	}
	if err := f.Build(p.QUIC, hello, r); err != nil {
		t.Fatal(err)
	}
	rec := &fingerprint.ConnRecord{QUIC: &fingerprint.QUICRecord{}}
	for _, d := range f.Datagrams {
		rec.QUIC.Datagrams = append(rec.QUIC.Datagrams, fingerprint.QUICDatagram{Size: len(d), Data: d})
	}
	rec.QUIC.DatagramsTotal = len(f.Datagrams)
	return f, rec
}

// flightFacts are a first flight's facts as the recorder reads them,
// with what the browser draws per connection masked: the facts
// fingerprint's live QUIC tests compare, plus each packet's CRYPTO layout
// reduced to the browser's rule.
func flightFacts(t *testing.T, q *profile.QUIC, rec *fingerprint.ConnRecord) map[string]string {
	t.Helper()
	fl, err := rec.QUICFlight()
	if err != nil {
		t.Fatal(err)
	}
	if fl.ClientHello == nil {
		t.Fatalf("no ClientHello: %d crypto bytes", fl.CryptoBytes)
	}
	f := map[string]string{
		"version":   fmt.Sprint(fl.Version),
		"scid_len":  fmt.Sprint(len(fl.SCID)),
		"token_len": fmt.Sprint(len(fl.Token)),
		"ja4":       fl.JA4(),
		"alpn":      strings.Join(fl.ClientHello.ALPN, ","),
	}
	if q.DCIDRule == profile.ConnIDFixed {
		f["dcid_len"] = fmt.Sprint(len(fl.DCID))
	} else if n := len(fl.DCID); n < 8 || n > 20 {
		f["dcid_len"] = fmt.Sprint(n)
	}
	var sizes, trailing, pns, layout []string
	covered, n := 0, len(fl.ClientHelloMessage)
	for i, d := range fl.Datagrams {
		if covered >= n {
			break
		}
		sizes = append(sizes, fmt.Sprint(d.Size))
		trailing = append(trailing, fmt.Sprint(d.Trailing > 0))
		for _, pk := range d.Packets {
			pn := fmt.Sprint(pk.PacketNumber)
			if q.FirstPacketRule == profile.PacketNumberRandom {
				pn = fmt.Sprint("first+", pk.PacketNumber-fl.Datagrams[0].Packets[0].PacketNumber)
			}
			pnLen := fmt.Sprint(pk.PNLen)
			if q.PacketNumberLens == nil && pk.PNLen == (bits.Len64(pk.PacketNumber+1)+7)/8 {
				pnLen = "min" // neqo: the bytes that hold pn+1, 2 past 254
			}
			pns = append(pns, fmt.Sprint(pn, "/", pnLen, "/", pk.LengthSize))
			var types []string
			var ranges [][2]int
			pings, padding := 0, 0
			for _, fr := range pk.Frames {
				if fr.Type == quicwire.FramePadding {
					padding += fr.Size
				}
				if fr.Type == quicwire.FramePing && q.Layout == profile.LayoutChaos {
					pings++ // 2 to 10 per packet, drawn: counted in chaosCounts
					continue
				}
				if !slices.Contains(types, fr.Type.String()) {
					types = append(types, fr.Type.String())
				}
				if fr.Type == quicwire.FrameCrypto {
					covered += len(fr.Data)
					ranges = append(ranges, [2]int{int(fr.Offset), int(fr.Offset) + len(fr.Data)})
				}
			}
			if q.Layout == profile.LayoutChaos {
				slices.Sort(types) // the frame order is drawn per connection
			}
			shape := strings.Join(types, " ") + " " + cryptoShape(q, i, ranges, fl.ClientHelloMessage)
			if q.Layout == profile.LayoutChaos {
				shape += " " + chaosCounts(len(ranges), len(mergeRanges(ranges)), pings, padding)
			}
			layout = append(layout, shape)
		}
	}
	f["first_flight_datagrams"] = strings.Join(sizes, " ")
	f["first_flight_padding_after"] = strings.Join(trailing, " ")
	f["first_flight_packet_numbers"] = strings.Join(pns, " ")
	f["first_flight_layout"] = strings.Join(layout, " | ")
	var ids, vals []string
	for _, p := range fl.TransportParameters {
		name := p.ID.String()
		if p.ID.IsGREASE() && !slices.ContainsFunc(q.TransportParameters, func(e profile.TransportParameter) bool {
			return e.ID == uint64(p.ID) && e.Rule != profile.ParamGREASE
		}) {
			name = "GREASE"
		} else if p.ID == quicwire.ParamVersionInformation {
			vals = append(vals, fmt.Sprint(name, "/", len(p.Value)))
		} else if p.ID != quicwire.ParamInitialSourceConnectionID {
			vals = append(vals, fmt.Sprintf("%s=%x", name, p.Value))
		}
		ids = append(ids, name)
	}
	if q.ShuffleTransportParameters {
		slices.Sort(ids)
	}
	slices.Sort(vals)
	f["transport_parameters"] = strings.Join(ids, ",")
	f["transport_parameter_values"] = strings.Join(vals, " ")
	return f
}

// cryptoShape reduces packet i's CRYPTO ranges to the layout's rule:
// Chromium's first packet holds [0,a) with 55 <= a <= 86 and the hello's
// end, later ones the middle; Firefox's first packet holds a range
// starting or ending at the middle of the server name.
func cryptoShape(q *profile.QUIC, i int, ranges [][2]int, hello []byte) string {
	merged := mergeRanges(ranges)
	switch {
	case q.Layout == profile.LayoutChaos && i == 0:
		if len(merged) == 2 && merged[0][0] == 0 && merged[0][1] >= 55 && merged[0][1] <= 86 && merged[1][1] == len(hello) {
			return "start+end"
		}
	case q.Layout == profile.LayoutSNISlice && i == 0:
		lo, hi, _ := serverName(hello)
		mid := lo + (hi-lo)/2
		if len(merged) == 2 && merged[0][0] == 0 && merged[1][1] == len(hello) && (merged[0][1] == mid || merged[1][0] == mid) {
			return "start+end cut-at-sni"
		}
	default:
		if len(merged) == 1 {
			return "middle"
		}
	}
	return fmt.Sprint(merged)
}

// mergeRanges returns the byte ranges of CRYPTO frames joined where one
// ends at the next one's start, in order of offset. It sorts ranges.
func mergeRanges(ranges [][2]int) [][2]int {
	slices.SortFunc(ranges, func(a, b [2]int) int { return a[0] - b[0] })
	var merged [][2]int
	for _, r := range ranges {
		if len(merged) > 0 && merged[len(merged)-1][1] == r[0] {
			merged[len(merged)-1][1] = r[1]
		} else {
			merged = append(merged, r)
		}
	}
	return merged
}

// chaosCounts reduces a chaos-protected packet's CRYPTO frames (crypto
// of them, covering spans ranges of the hello), its PINGs and its PADDING
// bytes to QuicChaosProtector's rule, "chaos" when the packet keeps it: 2
// to 10 splits (frames beyond the spans) and 2 to 10 PINGs, fewer splits
// only when the padding left could not pay for another CRYPTO frame, fewer
// PINGs only when they took the last padding byte.
func chaosCounts(crypto, spans, pings, padding int) string {
	splits := crypto - spans
	okSplits := splits >= chaosMinSplits && splits <= chaosMaxSplits || splits < chaosMinSplits && pings+padding < 5
	okPings := pings >= chaosMinPings && pings <= chaosMaxPings || pings < chaosMinPings && padding == 0
	if okSplits && okPings {
		return "chaos"
	}
	return fmt.Sprintf("splits=%d pings=%d", splits, pings)
}

// recordedFacts reads the facts of every h3 recording of browser.
func recordedFacts(t *testing.T, q *profile.QUIC, browser string) []map[string]string {
	paths, _ := filepath.Glob(filepath.Join("..", "..", "fingerprint", "testdata", "recordings", browser+"-h3-[0-9]*.json"))
	if len(paths) < 3 {
		t.Fatalf("%s: %d recordings", browser, len(paths))
	}
	var out []map[string]string
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		r, err := fingerprint.DecodeRecord(b)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, flightFacts(t, q, r))
	}
	return out
}

// TestFirstFlightMatchesRecordings builds first flights with guise's own
// QUIC packetizer and uTLS hello for Chromium and Firefox, reads them
// back with the fingerprint recorder's QUIC parser, and compares them with
// the recorded connections, what the browser draws per connection masked.
// The masked facts of seed 1 are also kept as a golden file per profile.
func TestFirstFlightMatchesRecordings(t *testing.T) {
	for _, c := range []struct{ profile, browser string }{
		{"chrome156-linux", "chromium-156"},
		{"firefox153-linux", "firefox-esr-153"},
	} {
		t.Run(c.profile, func(t *testing.T) {
			p, err := profile.Lookup(c.profile)
			if err != nil {
				t.Fatal(err)
			}
			recs := recordedFacts(t, p.QUIC, c.browser)
			for i, rf := range recs[1:] {
				for k, v := range recs[0] {
					if rf[k] != v {
						t.Fatalf("recording %d differs from the first in a masked fact %s:\n  %s\n  %s", i+2, k, rf[k], v)
					}
				}
			}
			want := recs[0]
			for seed := uint64(1); seed <= 20; seed++ {
				_, rec := firstFlight(t, p, seed)
				got := flightFacts(t, p.QUIC, rec)
				for _, k := range slices.Sorted(mapsKeys(want, got)) {
					if got[k] != want[k] {
						t.Errorf("seed %d: %s\n  guise     %s\n  recording %s", seed, k, got[k], want[k])
					}
				}
				if seed == 1 {
					golden(t, filepath.Join("testdata", c.profile+".golden"), got)
				}
			}
		})
	}
}

// TestChaosCounts holds guise's chaos protection to every recorded
// Chromium first flight over QUIC (full, resumed and the QPACK runs): in
// each Initial of those and of 300 flights of guise's, the CRYPTO frames
// are split 2 to 10 times and 2 to 10 PINGs are added. quiche's first
// protector drew 0 splits and 0 PINGs as often as 2, which no recorded
// packet shows.
func TestChaosCounts(t *testing.T) {
	p, err := profile.Lookup("chrome156-linux")
	if err != nil {
		t.Fatal(err)
	}
	paths, _ := filepath.Glob(filepath.Join("..", "..", "fingerprint", "testdata", "recordings", "chromium-156-h3*.json"))
	if len(paths) < 9 {
		t.Fatalf("%d chromium h3 recordings, want 9 or more", len(paths))
	}
	packets := 0
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		r, err := fingerprint.DecodeRecord(b)
		if err != nil {
			t.Fatal(err)
		}
		layout := flightFacts(t, p.QUIC, r)["first_flight_layout"]
		packets += strings.Count(layout, "|") + 1
		if strings.Contains(layout, "splits=") {
			t.Errorf("%s: %s", filepath.Base(path), layout)
		}
	}
	t.Logf("%d recorded Initial packets keep the rule", packets)
	for seed := uint64(1); seed <= 300; seed++ {
		_, rec := firstFlight(t, p, seed)
		if layout := flightFacts(t, p.QUIC, rec)["first_flight_layout"]; strings.Contains(layout, "splits=") {
			t.Errorf("seed %d: %s", seed, layout)
		}
	}
}

// TestFirstFlightVaries checks that what the browser draws per connection
// is drawn: two seeds give different connection IDs, and Chromium's frame
// order and transport parameter order differ.
func TestFirstFlightVaries(t *testing.T) {
	p, err := profile.Lookup("chrome156-linux")
	if err != nil {
		t.Fatal(err)
	}
	a, ra := firstFlight(t, p, 1)
	b, rb := firstFlight(t, p, 2)
	if slices.Equal(a.DCID, b.DCID) {
		t.Error("same dcid for two seeds")
	}
	fa, _ := ra.QUICFlight()
	fb, _ := rb.QUICFlight()
	order := func(fl *fingerprint.QUICFlight) (s []string) {
		for _, pk := range fl.Datagrams[0].Packets {
			for _, fr := range pk.Frames {
				s = append(s, fmt.Sprint(fr.Type, fr.Offset, fr.Size))
			}
		}
		return s
	}
	if slices.Equal(order(fa), order(fb)) {
		t.Error("same first packet layout for two seeds")
	}
	var ia, ib []quicwire.TransportParameterID
	for _, x := range fa.TransportParameters {
		ia = append(ia, x.ID)
	}
	for _, x := range fb.TransportParameters {
		ib = append(ib, x.ID)
	}
	if slices.Equal(ia, ib) {
		t.Error("same transport parameter order for two seeds")
	}
}

func mapsKeys(ms ...map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		seen := map[string]bool{}
		for _, m := range ms {
			for k := range m {
				if !seen[k] {
					seen[k] = true
					if !yield(k) {
						return
					}
				}
			}
		}
	}
}

// golden compares facts with the file at path, or rewrites it with
// -update.
func golden(t *testing.T, path string, facts map[string]string) {
	t.Helper()
	var b strings.Builder
	for _, k := range slices.Sorted(mapsKeys(facts)) {
		fmt.Fprintf(&b, "%s: %s\n", k, facts[k])
	}
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update)", err)
	}
	if string(want) != b.String() {
		t.Errorf("%s differs:\n%s\nwant\n%s", path, b.String(), want)
	}
}

// FuzzServerName is RELIABILITY Q-10: the server_name finder the SNI slicing uses stays
// inside its input on any bytes. Seeds: the profiles' QUIC hellos.
func FuzzServerName(f *testing.F) {
	for _, name := range []string{"chrome156-linux", "firefox153-linux"} {
		p, err := profile.Lookup(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(p.QUIC.Hello[5:])
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if lo, hi, ok := serverName(b); ok && (lo < 0 || lo > hi || hi > len(b)) {
			t.Fatalf("range %d..%d of %d bytes", lo, hi, len(b))
		}
	})
}

// TestSliceLayoutResumedRecordings lays out each hello Firefox sent on a
// resumed connection (fingerprint/testdata/recordings/firefox-esr-153-
// h3-resumed-*.json), with the recorded connection IDs, token and first
// packet number, and compares every Initial's CRYPTO frames and size with
// the recording's. The 90-byte token leaves less room in each packet, so
// the hello takes three; neqo counts the packets it needs without the
// headers, so the first still carries the whole right part.
func TestSliceLayoutResumedRecordings(t *testing.T) {
	p, err := profile.Lookup("firefox153-linux")
	if err != nil {
		t.Fatal(err)
	}
	paths, _ := filepath.Glob(filepath.Join("..", "..", "fingerprint", "testdata", "recordings", "firefox-esr-153-h3-resumed-*.json"))
	if len(paths) < 3 {
		t.Fatalf("%d resumed recordings", len(paths))
	}
	type pkt struct {
		size   int
		crypto [][2]uint64
	}
	initials := func(fl *fingerprint.QUICFlight) (out []pkt) {
		for _, d := range fl.Datagrams {
			for _, p := range d.Packets {
				if p.Type != quicwire.PacketInitial || d.Index >= 3 {
					continue
				}
				k := pkt{size: p.Size}
				for _, f := range p.Frames {
					if f.Type == quicwire.FrameCrypto {
						k.crypto = append(k.crypto, [2]uint64{f.Offset, uint64(len(f.Data))})
					}
				}
				out = append(out, k)
			}
		}
		return out
	}
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		r, err := fingerprint.DecodeRecord(b)
		if err != nil {
			t.Fatal(err)
		}
		want, err := r.QUICFlight()
		if err != nil {
			t.Fatal(err)
		}
		first := want.Datagrams[0].Packets[0]
		f := &Flight{DCID: want.DCID, SCID: want.SCID, Token: want.Token, FirstPacketNumber: first.PacketNumber}
		if err := f.Build(p.QUIC, want.ClientHelloMessage, seeded(1)); err != nil {
			t.Fatal(err)
		}
		rec := &fingerprint.ConnRecord{QUIC: &fingerprint.QUICRecord{DatagramsTotal: len(f.Datagrams)}}
		for _, d := range f.Datagrams {
			rec.QUIC.Datagrams = append(rec.QUIC.Datagrams, fingerprint.QUICDatagram{Size: len(d), Data: d})
		}
		got, err := rec.QUICFlight()
		if err != nil {
			t.Fatal(err)
		}
		g, w := initials(got), initials(want)
		if len(w) != 3 {
			t.Fatalf("%s: %d Initials in the first three datagrams, want 3", filepath.Base(path), len(w))
		}
		if fmt.Sprint(g) != fmt.Sprint(w) {
			t.Errorf("%s: Initials (size, [offset length]...)\n  guise     %v\n  recording %v", filepath.Base(path), g, w)
		}
		if !bytes.Equal(got.ClientHelloMessage, want.ClientHelloMessage) {
			t.Errorf("%s: the hello does not reassemble", filepath.Base(path))
		}
	}
}
