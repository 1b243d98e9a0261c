package profile_test

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/guise-http/guise/fields"
	"github.com/guise-http/guise/fingerprint"
	"github.com/guise-http/guise/internal/quicwire"
	"github.com/guise-http/guise/profile"
)

// TestQUICProfilesMatchRecordings checks the QUIC and HTTP/3 parts of the
// recorded profiles against every h3 recording of their browser, read with
// the fingerprint package's own parsers: the stable parts are equal, the
// per-connection ones are within the profile's rule.
func TestQUICProfilesMatchRecordings(t *testing.T) {
	for _, c := range []struct{ profile, browser string }{
		{"chrome156-linux", "chromium-156"},
		{"firefox153-linux", "firefox-esr-153"},
	} {
		p, err := profile.Lookup(c.profile)
		if err != nil {
			t.Fatal(err)
		}
		q, h := p.QUIC, p.HTTP3
		if q == nil || h == nil {
			t.Fatalf("%s: no quic or http3", c.profile)
		}
		paths, _ := filepath.Glob(filepath.Join("..", "fingerprint", "testdata", "recordings", c.browser+"-h3-[0-9]*.json"))
		if len(paths) < 3 {
			t.Fatalf("%s: %d recordings", c.browser, len(paths))
		}
		for i, path := range paths {
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			r, err := fingerprint.DecodeRecord(b)
			if err != nil {
				t.Fatal(err)
			}
			fl, err := r.QUICFlight()
			if err != nil {
				t.Fatal(err)
			}
			name := filepath.Base(path)
			if i == 0 && !bytes.Equal(q.Hello[5:], fl.ClientHelloMessage) {
				t.Errorf("%s: hello is not the recorded one", name)
			}
			if !slices.Equal(fl.ClientHello.ALPN, []string{"h3"}) || !fl.ClientHello.QUICTransportParams {
				t.Errorf("%s: alpn %q", name, fl.ClientHello.ALPN)
			}
			// Transport parameters: every fixed one with its value, in
			// order unless shuffled; one GREASE per grease entry.
			var want, got []string
			for _, tp := range q.TransportParameters {
				want = append(want, tpKey(tp.ID, tp.Value, tp.Rule))
			}
			for _, tp := range fl.TransportParameters {
				rule := profile.ParamFixed
				switch {
				case tp.ID.IsGREASE() && !slices.ContainsFunc(q.TransportParameters, func(e profile.TransportParameter) bool { return e.ID == uint64(tp.ID) && e.Rule == profile.ParamFixed }):
					rule = profile.ParamGREASE
					if len(tp.Value) >= q.GREASEParamMaxLen {
						t.Errorf("%s: grease value of %d bytes", name, len(tp.Value))
					}
				case tp.ID == quicwire.ParamInitialSourceConnectionID:
					rule = profile.ParamSourceConnID
					if !bytes.Equal(tp.Value, fl.SCID) {
						t.Errorf("%s: initial_source_connection_id is not the scid", name)
					}
				case tp.ID == quicwire.ParamVersionInformation:
					rule = profile.ParamVersionInformation
				}
				got = append(got, tpKey(uint64(tp.ID), tp.Value, rule))
			}
			if q.ShuffleTransportParameters {
				slices.Sort(want)
				slices.Sort(got)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s: transport parameters\n got %q\nwant %q", name, got, want)
			}
			if len(fl.SCID) != q.SCIDLen || q.DCIDRule == profile.ConnIDFixed && len(fl.DCID) != q.DCIDLen {
				t.Errorf("%s: dcid %d scid %d", name, len(fl.DCID), len(fl.SCID))
			}
			pkt := fl.Datagrams[0].Packets[0]
			if q.FirstPacketRule == profile.PacketNumberFixed && pkt.PacketNumber != q.FirstPacketNumber {
				t.Errorf("%s: first packet number %d", name, pkt.PacketNumber)
			}
			if q.PacketNumberLens != nil && pkt.PNLen != q.PacketNumberLens[0] {
				t.Errorf("%s: packet number length %d", name, pkt.PNLen)
			}
			if fl.Datagrams[0].Size != q.DatagramSize || (fl.Datagrams[0].Trailing > 0) != (q.Padding == profile.PaddingAfterPacket) {
				t.Errorf("%s: first datagram %d bytes, %d after the packet", name, fl.Datagrams[0].Size, fl.Datagrams[0].Trailing)
			}
			h3, err := r.HTTP3()
			if err != nil {
				t.Fatal(err)
			}
			var sw, sg []string
			for _, s := range h.Settings {
				sw = append(sw, settingKey(s.ID, s.Value, s.GREASE))
			}
			for _, s := range h3.Settings {
				grease := slices.ContainsFunc(h.Settings, func(e profile.H3Setting) bool { return e.GREASE }) && !slices.ContainsFunc(h.Settings, func(e profile.H3Setting) bool { return e.ID == uint64(s.ID) && !e.GREASE })
				sg = append(sg, settingKey(uint64(s.ID), s.Value, grease))
			}
			if !slices.Equal(sg, sw) {
				t.Errorf("%s: settings\n got %q\nwant %q", name, sg, sw)
			}
			if (len(h3.PriorityUpdates) > 0) != h.PriorityUpdate {
				t.Errorf("%s: %d priority updates", name, len(h3.PriorityUpdates))
			}
			for _, rq := range h3.Requests {
				var pseudo []string
				for _, f := range rq.Fields {
					if strings.HasPrefix(f.Name, ":") {
						pseudo = append(pseudo, f.Name)
					}
				}
				if !slices.Equal(pseudo, h.PseudoOrder) {
					t.Errorf("%s: stream %d: pseudo-headers %q", name, rq.StreamID, pseudo)
				}
			}
			if i == 0 {
				checkH3Sets(t, p, h3)
			}
		}
	}
}

// checkH3Sets checks each h3 header set against the first request of its
// kind: the same names in order, the same values but for per-request ones
// and the browser values the desktop profiles replace (Chrome's headless
// user-agent and brand list).
func checkH3Sets(t *testing.T, p *profile.Profile, h3 *fingerprint.HTTP3) {
	t.Helper()
	for _, k := range []profile.RequestKind{profile.Navigate, profile.Fetch, profile.Image} {
		hs := p.HeaderSet(k, profile.H3)
		if hs == nil {
			t.Errorf("%s: no h3 %v set", p.Name, k)
			continue
		}
		dest := map[profile.RequestKind]string{profile.Navigate: "document", profile.Fetch: "empty", profile.Image: "image"}[k]
		for _, rq := range h3.Requests {
			hr := rq.HTTPRequest()
			if fields.Header(hr.Header).Get("sec-fetch-dest") != dest {
				continue
			}
			if len(hr.Header) != len(hs.Header) {
				t.Errorf("%s %v: %d fields, recorded %d", p.Name, k, len(hs.Header), len(hr.Header))
				break
			}
			for j, f := range hs.Header {
				rf := hr.Header[j]
				varies := slices.Contains(hs.PerRequest, f.Name) || f.Name == "user-agent" || f.Name == "sec-ch-ua"
				if rf.Name != f.Name || !varies && rf.Value != f.Value {
					t.Errorf("%s %v: field %d %s: %q, recorded %s: %q", p.Name, k, j, f.Name, f.Value, rf.Name, rf.Value)
				}
			}
			break
		}
	}
}

func tpKey(id uint64, v []byte, rule profile.ParamRule) string {
	switch rule {
	case profile.ParamGREASE:
		return "GREASE"
	case profile.ParamSourceConnID:
		return "scid"
	case profile.ParamVersionInformation:
		return "version_information/" + string(rune('0'+len(v)/4))
	}
	return quicwire.TransportParameterID(id).String() + "=" + string(quicwire.AppendVarint(nil, uint64(len(v)))) + string(v)
}

func settingKey(id, v uint64, grease bool) string {
	if grease {
		return "GREASE"
	}
	return string(quicwire.AppendVarint(quicwire.AppendVarint(nil, id), v))
}

// TestQPACKStreamRules (issue 29) pins the QPACK stream behaviour every
// profile with HTTP/3 takes from its browser's recordings: the Chromium
// ones (chrome on every OS and Android, edge) open the QPACK streams on
// first use and set the table's capacity whenever the server announces
// one, 0 included; the Firefox ones open both at once and set it only
// to a server that allows a table.
func TestQPACKStreamRules(t *testing.T) {
	n := 0
	for _, name := range profile.Names() {
		p, err := profile.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		h := p.HTTP3
		if h == nil {
			continue
		}
		n++
		var wantStreams bool
		var wantCap profile.QPACKCapacityRule
		switch {
		case strings.HasPrefix(name, "chrome"), strings.HasPrefix(name, "edge"):
			wantStreams, wantCap = false, profile.QPACKCapacityAnnounced
		case strings.HasPrefix(name, "firefox"):
			wantStreams, wantCap = true, profile.QPACKCapacityAllowed
		default:
			t.Errorf("%s: HTTP/3 of no recorded browser", name)
			continue
		}
		if h.QPACKStreams != wantStreams || h.QPACKCapacity != wantCap {
			t.Errorf("%s: qpack_streams %v, qpack_capacity %v; want %v, %v", name, h.QPACKStreams, h.QPACKCapacity, wantStreams, wantCap)
		}
	}
	if n < 7 {
		t.Errorf("%d profiles with HTTP/3", n)
	}
}
