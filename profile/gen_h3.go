//go:build ignore

package main

import (
	"bytes"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/guise-http/guise/fields"
	"github.com/guise-http/guise/fingerprint"
	"github.com/guise-http/guise/internal/h3wire"
	"github.com/guise-http/guise/internal/quicwire"
	"github.com/guise-http/guise/profile"
	"golang.org/x/net/http2/hpack"
)

// h3Dir holds the HTTP/3 recordings: three QUIC connections per browser,
// made by the fingerprint package's live QUIC tests (its README says how).
const h3Dir = "../fingerprint/testdata/recordings"

// h3Recording is one recorded QUIC connection taken apart by the
// fingerprint package's own parsers.
type h3Recording struct {
	path   string
	flight *fingerprint.QUICFlight
	http3  *fingerprint.HTTP3
	rec    *fingerprint.ConnRecord
}

func readH3(browser string) []h3Recording { return readH3Kind(browser, "h3") }

// readH3Kind reads the recordings <browser>-<kind>-*.json: kind "h3"
// against a server that allowed no dynamic table, "h3dyn" and
// "h3dynnoblock" against one that allowed 65536 bytes and 100 or no
// blocked streams.
func readH3Kind(browser, kind string) []h3Recording {
	paths, err := filepath.Glob(filepath.Join(h3Dir, browser+"-"+kind+"-[0-9]*.json"))
	if err != nil || len(paths) < 2 {
		log.Fatalf("%s: %d h3 recordings (%v), want several", browser, len(paths), err)
	}
	var out []h3Recording
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			log.Fatal(err)
		}
		r, err := fingerprint.DecodeRecord(b)
		if err != nil {
			log.Fatalf("%s: %v", p, err)
		}
		fl, err := r.QUICFlight()
		if err != nil {
			log.Fatalf("%s: %v", p, err)
		}
		h, err := r.HTTP3()
		if err != nil {
			log.Fatalf("%s: http3: %v", p, err)
		}
		out = append(out, h3Recording{path: p, flight: fl, http3: h, rec: r})
	}
	return out
}

// firstFlight returns the Initial packets of the datagrams that carried
// the ClientHello, with their datagrams.
func (r h3Recording) firstFlight() (dgrams []fingerprint.FlightDatagram, pkts []fingerprint.FlightPacket) {
	covered := 0
	for _, d := range r.flight.Datagrams {
		if covered >= len(r.flight.ClientHelloMessage) {
			break
		}
		dgrams = append(dgrams, d)
		for _, p := range d.Packets {
			if p.Type != quicwire.PacketInitial {
				continue
			}
			pkts = append(pkts, p)
			for _, f := range p.Frames {
				if f.Type == quicwire.FrameCrypto {
					covered += len(f.Data)
				}
			}
		}
	}
	return dgrams, pkts
}

// h3Rules are what a browser's QUIC stack does that a recording shows
// only one draw of: named here from the stack's source, and checked
// against every recording by quicFrom.
type h3Rules struct {
	dcid              profile.ConnIDRule
	firstPN           profile.PacketNumberRule
	padding           profile.PaddingRule
	layout            profile.CryptoLayout
	greaseParamMaxLen int // quiche: kMaxGreaseLength 16
	greaseFrameMaxLen int // quiche: payload 0..3; neqo: 0..7
	perRequest        []string
}

var chromiumH3 = h3Rules{
	dcid: profile.ConnIDFixed, firstPN: profile.PacketNumberFixed,
	padding: profile.PaddingFrames, layout: profile.LayoutChaos,
	greaseParamMaxLen: 16, greaseFrameMaxLen: 4,
	perRequest: []string{"referer", "sec-fetch-site"},
}

var firefoxH3 = h3Rules{
	dcid: profile.ConnIDBiased, firstPN: profile.PacketNumberRandom,
	padding: profile.PaddingAfterPacket, layout: profile.LayoutSNISlice,
	greaseFrameMaxLen: 8,
	perRequest:        []string{"alt-used", "referer", "sec-fetch-site"},
}

// addH3 gives p the QUIC first flight, HTTP/3 behaviour and h3 header
// sets of browser's recordings.
func addH3(p *profile.Profile, browser string, rules h3Rules) {
	recs := readH3(browser)
	p.QUIC = quicFrom(browser, recs, rules)
	p.HTTP3 = http3From(browser, recs, rules)
	p.Headers = append(p.Headers, h3Sets(browser, recs[0], rules)...)
}

func quicFrom(browser string, recs []h3Recording, rules h3Rules) *profile.QUIC {
	fail := func(format string, args ...any) {
		log.Fatalf("%s h3: "+format, append([]any{browser}, args...)...)
	}
	first := recs[0].flight
	msg := first.ClientHelloMessage
	q := &profile.QUIC{
		Hello:    append([]byte{0x16, 0x03, 0x01, byte(len(msg) >> 8), byte(len(msg))}, msg...),
		DCIDRule: rules.dcid, SCIDLen: len(first.SCID),
		FirstPacketRule: rules.firstPN, Padding: rules.padding, Layout: rules.layout,
		GREASEParamMaxLen: rules.greaseParamMaxLen,
	}
	// Extension order: shuffled if it differs between recordings; the
	// tail every recording shares stays in place.
	orders := make([][]uint16, len(recs))
	for i, r := range recs {
		for _, e := range r.flight.ClientHello.Extensions {
			orders[i] = append(orders[i], e.Type)
		}
	}
	tail := len(orders[0])
	for _, o := range orders[1:] {
		if !slices.Equal(o, orders[0]) {
			q.ShuffleExtensions = true
		}
		n := 0
		for n < len(o) && n < len(orders[0]) && o[len(o)-1-n] == orders[0][len(orders[0])-1-n] {
			n++
		}
		tail = min(tail, n)
	}
	if q.ShuffleExtensions {
		q.FixedTailExtensions = tail
	}
	// Transport parameters: a reserved id that changes between
	// recordings is GREASE; initial_source_connection_id is the SCID;
	// version_information's reserved versions are redrawn.
	ids := func(r h3Recording) (out []uint64) {
		for _, tp := range r.flight.TransportParameters {
			if !tp.ID.IsGREASE() || !greaseVaries(recs, tp.ID) {
				out = append(out, uint64(tp.ID))
			}
		}
		return out
	}
	for _, r := range recs[1:] {
		if !slices.Equal(ids(r), ids(recs[0])) {
			q.ShuffleTransportParameters = true
		}
	}
	for _, tp := range first.TransportParameters {
		e := profile.TransportParameter{ID: uint64(tp.ID), Value: bytes.Clone(tp.Value), Rule: profile.ParamFixed}
		if len(e.Value) == 0 {
			e.Value = nil
		}
		switch {
		case tp.ID.IsGREASE() && greaseVaries(recs, tp.ID):
			e.Rule = profile.ParamGREASE
			for _, r := range recs {
				for _, o := range r.flight.TransportParameters {
					if o.ID.IsGREASE() && greaseVaries(recs, o.ID) && len(o.Value) >= rules.greaseParamMaxLen {
						fail("grease parameter of %d bytes, the rule allows fewer than %d", len(o.Value), rules.greaseParamMaxLen)
					}
				}
			}
		case tp.ID == quicwire.ParamInitialSourceConnectionID:
			e.Rule = profile.ParamSourceConnID
		case tp.ID == quicwire.ParamVersionInformation:
			e.Rule = profile.ParamVersionInformation
		default:
			for _, r := range recs[1:] {
				i := slices.IndexFunc(r.flight.TransportParameters, func(o quicwire.TransportParameter) bool { return o.ID == tp.ID })
				if i < 0 || !bytes.Equal(r.flight.TransportParameters[i].Value, tp.Value) {
					fail("transport parameter %v differs between recordings", tp.ID)
				}
			}
		}
		q.TransportParameters = append(q.TransportParameters, e)
	}
	// Connection IDs, packet numbers, datagrams.
	var pnLens [][]int
	minimal := true
	for _, r := range recs {
		fl := r.flight
		if len(fl.SCID) != q.SCIDLen {
			fail("scid length %d and %d", len(fl.SCID), q.SCIDLen)
		}
		switch rules.dcid {
		case profile.ConnIDFixed:
			if q.DCIDLen == 0 {
				q.DCIDLen = len(fl.DCID)
			}
			if len(fl.DCID) != q.DCIDLen {
				fail("dcid length %d and %d under a fixed rule", len(fl.DCID), q.DCIDLen)
			}
		case profile.ConnIDBiased:
			if len(fl.DCID) < 8 || len(fl.DCID) > 20 {
				fail("dcid length %d outside 8..20", len(fl.DCID))
			}
		}
		dgrams, pkts := r.firstFlight()
		if len(pkts) == 0 {
			fail("%s: no first flight", r.path)
		}
		switch rules.firstPN {
		case profile.PacketNumberFixed:
			if q.FirstPacketNumber == 0 {
				q.FirstPacketNumber = pkts[0].PacketNumber
			}
			if pkts[0].PacketNumber != q.FirstPacketNumber {
				fail("first packet number %d and %d under a fixed rule", pkts[0].PacketNumber, q.FirstPacketNumber)
			}
		case profile.PacketNumberRandom:
			if pkts[0].PacketNumber < 1 || pkts[0].PacketNumber > 1024 {
				fail("first packet number %d outside 1..1024", pkts[0].PacketNumber)
			}
		}
		var lens []int
		for i, pk := range pkts {
			if pk.PacketNumber != pkts[0].PacketNumber+uint64(i) {
				fail("%s: packet numbers not consecutive", r.path)
			}
			lens = append(lens, pk.PNLen)
			if pk.PNLen != (pnBits(pk.PacketNumber+1)+7)/8 {
				minimal = false
			}
		}
		pnLens = append(pnLens, lens)
		for _, d := range dgrams {
			if q.DatagramSize == 0 {
				q.DatagramSize = d.Size
			}
			if d.Size != q.DatagramSize {
				fail("first flight datagrams of %d and %d bytes", d.Size, q.DatagramSize)
			}
			if (d.Trailing > 0) != (rules.padding == profile.PaddingAfterPacket) {
				fail("%s: %d bytes after the packet under padding %v", r.path, d.Trailing, rules.padding)
			}
		}
		pings := 0
		for _, pk := range pkts {
			for _, f := range pk.Frames {
				if f.Type == quicwire.FramePing {
					pings++
				}
			}
		}
		if (rules.layout == profile.LayoutSNISlice) != (pings == 0) {
			fail("%s: %d PING frames under layout %v", r.path, pings, rules.layout)
		}
	}
	if !minimal {
		q.PacketNumberLens = pnLens[0]
		for _, l := range pnLens[1:] {
			if !slices.Equal(l, q.PacketNumberLens) {
				fail("packet number lengths %v and %v", l, q.PacketNumberLens)
			}
		}
	}
	return q
}

// greaseVaries reports whether a reserved transport parameter id is drawn
// per connection: absent from some other recording. A reserved id every
// recording sends with the same value (Firefox's 0xff02de1a, the
// min_ack_delay of the ack-frequency draft) is a fixed parameter.
func greaseVaries(recs []h3Recording, id quicwire.TransportParameterID) bool {
	for _, r := range recs {
		if !slices.ContainsFunc(r.flight.TransportParameters, func(o quicwire.TransportParameter) bool { return o.ID == id }) {
			return true
		}
	}
	return false
}

func pnBits(v uint64) int {
	n := 0
	for ; v > 0; v >>= 1 {
		n++
	}
	return n
}

func http3From(browser string, recs []h3Recording, rules h3Rules) *profile.HTTP3 {
	fail := func(format string, args ...any) {
		log.Fatalf("%s h3: "+format, append([]any{browser}, args...)...)
	}
	first := recs[0].http3
	h := &profile.HTTP3{GREASEFrameMaxLen: rules.greaseFrameMaxLen}
	isGREASE := func(id uint64) bool {
		for _, r := range recs {
			if !slices.ContainsFunc(r.http3.Settings, func(s h3wire.Setting) bool { return uint64(s.ID) == id }) {
				return true
			}
		}
		return false
	}
	for _, s := range first.Settings {
		h.Settings = append(h.Settings, profile.H3Setting{ID: uint64(s.ID), Value: s.Value, GREASE: isGREASE(uint64(s.ID))})
	}
	for _, r := range recs {
		var got []string
		for _, s := range r.http3.Settings {
			if isGREASE(uint64(s.ID)) {
				got = append(got, "GREASE")
			} else {
				got = append(got, fmt.Sprint(uint64(s.ID), "=", s.Value))
			}
		}
		var want []string
		for _, s := range h.Settings {
			if s.GREASE {
				want = append(want, "GREASE")
			} else {
				want = append(want, fmt.Sprint(s.ID, "=", s.Value))
			}
		}
		if !slices.Equal(got, want) {
			fail("%s: settings %v, first recording %v", r.path, got, want)
		}
		cf := r.http3.ControlFrames
		if len(cf) < 2 || cf[0].Type.String() != "SETTINGS" || cf[1].Type.String() != "GREASE" || cf[1].Length >= rules.greaseFrameMaxLen {
			fail("%s: control stream does not start SETTINGS, GREASE of fewer than %d bytes", r.path, rules.greaseFrameMaxLen)
		}
		var uni []string
		for _, u := range r.http3.UniStreams {
			uni = append(uni, u.Type.String())
		}
		slices.Sort(uni)
		qpack := slices.Contains(uni, "qpack_encoder") && slices.Contains(uni, "qpack_decoder")
		if r.path == recs[0].path {
			h.QPACKStreams = qpack
		} else if qpack != h.QPACKStreams {
			fail("%s: qpack streams %v and %v", r.path, qpack, h.QPACKStreams)
		}
		updates := len(r.http3.PriorityUpdates) > 0
		if r.path == recs[0].path {
			h.PriorityUpdate = updates
		}
		if updates != h.PriorityUpdate || updates && len(r.http3.PriorityUpdates) != len(r.http3.Requests) {
			fail("%s: %d priority updates for %d requests", r.path, len(r.http3.PriorityUpdates), len(r.http3.Requests))
		}
		for _, pu := range r.http3.PriorityUpdates {
			for _, q := range r.http3.Requests {
				if q.StreamID == pu.Element && q.Priority() != pu.Field {
					fail("%s: stream %d: PRIORITY_UPDATE %q, priority header %q", r.path, q.StreamID, pu.Field, q.Priority())
				}
			}
		}
	}
	for _, f := range first.Requests[0].Fields {
		if strings.HasPrefix(f.Name, ":") {
			h.PseudoOrder = append(h.PseudoOrder, f.Name)
		}
	}
	h.QPACKHuffman = qpackHuffman(browser, recs)
	h.QPACKDynamic = qpackDynamic(browser)
	h.QPACKCapacity = qpackCapacity(browser, h.QPACKStreams)
	h.GREASEWideIDs = greaseWide(browser, recs)
	return h
}

// greaseWide reports whether the recorded reserved ids (GREASE settings
// and frame types) need an N wider than 32 bits: all of them or none
// must, or the generator fails.
func greaseWide(browser string, recs []h3Recording) bool {
	const narrowMax = 0x1f*(1<<32-1) + 0x21
	wide, narrow := 0, 0
	count := func(id uint64) {
		if id > narrowMax {
			wide++
		} else {
			narrow++
		}
	}
	for _, r := range recs {
		for _, s := range r.http3.Settings {
			if h3wire.IsGREASE(uint64(s.ID)) && slices.ContainsFunc(recs, func(o h3Recording) bool {
				return !slices.ContainsFunc(o.http3.Settings, func(x h3wire.Setting) bool { return x.ID == s.ID })
			}) {
				count(uint64(s.ID)) // drawn per connection, not a fixed reserved id
			}
		}
		for _, f := range r.http3.ControlFrames {
			if h3wire.IsGREASE(uint64(f.Type)) {
				count(uint64(f.Type))
			}
		}
	}
	if wide > 0 && narrow > 0 || wide+narrow < 3 {
		log.Fatalf("%s: reserved ids: %d wide, %d narrow: no rule fits", browser, wide, narrow)
	}
	return wide > 0
}

// qpackHuffman reads the Huffman rule of the browser's QPACK encoder from
// every recorded HEADERS literal: a string sent raw although Huffman
// would be as long says "shorter"; one Huffman-coded at the same length
// says "not longer"; a string sent raw that Huffman would shorten, or
// coded longer, fits neither rule and fails.
func qpackHuffman(browser string, recs []h3Recording) profile.HuffmanRule {
	var rule profile.HuffmanRule
	for _, r := range recs {
		for _, s := range r.rec.QUIC.Streams {
			if s.ID%4 != 0 {
				continue
			}
			f, err := h3wire.ParseFrame(s.Data)
			if err != nil || f.Type != h3wire.FrameHeaders {
				log.Fatalf("%s: stream %d: no HEADERS (%v)", r.path, s.ID, err)
			}
			for _, l := range qpackLiterals(f.Payload) {
				var plain string
				if l.huffman {
					d, err := hpack.HuffmanDecodeToString(l.raw)
					if err != nil {
						log.Fatalf("%s: stream %d: %v", r.path, s.ID, err)
					}
					plain = d
				} else {
					plain = string(l.raw)
				}
				hl := int(hpack.HuffmanEncodeLength(plain))
				var saw profile.HuffmanRule
				switch {
				case !l.huffman && hl < len(plain), l.huffman && hl > len(plain):
					log.Fatalf("%s: stream %d: %q coded huffman=%v at %d bytes against %d: no rule fits", r.path, s.ID, plain, l.huffman, hl, len(plain))
				case !l.huffman && hl == len(plain):
					saw = profile.HuffmanShorter
				case l.huffman && hl == len(plain):
					saw = profile.HuffmanNotLonger
				default:
					continue // both rules agree
				}
				if rule != 0 && rule != saw {
					log.Fatalf("%s: stream %d: %q says %v, earlier strings %v", r.path, s.ID, plain, saw, rule)
				}
				rule = saw
			}
		}
	}
	if rule == 0 {
		log.Fatalf("%s: no recorded string tells the QPACK Huffman rule", browser)
	}
	return rule
}

// qpackLiteral is one string literal of a field section, as sent.
type qpackLiteral struct {
	huffman bool
	raw     []byte
}

// qpackLiterals returns the string literals of a static-only field
// section (RFC 9204 §4.5), names and values.
func qpackLiterals(b []byte) []qpackLiteral {
	var out []qpackLiteral
	str := func(bits uint) bool {
		if len(b) == 0 {
			return false
		}
		h := b[0]&(1<<bits) != 0
		n, k := qpackInt(b, bits)
		if k == 0 || k+n > len(b) {
			return false
		}
		out = append(out, qpackLiteral{h, b[k : k+n]})
		b = b[k+n:]
		return true
	}
	_, k := qpackInt(b, 8)
	if k == 0 || k >= len(b) {
		return nil
	}
	b = b[k:]
	_, k = qpackInt(b, 7)
	b = b[k:]
	for len(b) > 0 && k > 0 {
		c := b[0]
		switch {
		case c&0x80 != 0: // indexed
			_, k = qpackInt(b, 6)
			b = b[k:]
		case c&0x40 != 0: // literal with name reference
			_, k = qpackInt(b, 4)
			b = b[k:]
			if !str(7) {
				return out
			}
		case c&0x20 != 0: // literal with literal name
			if !str(3) || !str(7) {
				return out
			}
		default:
			log.Fatalf("qpack: a dynamic-table line (%#x) in a recorded section", c)
		}
	}
	return out
}

// qpackInt reads a prefixed integer; k is 0 when b is too short.
func qpackInt(b []byte, bits uint) (v, k int) {
	if len(b) == 0 {
		return 0, 0
	}
	mask := 1<<bits - 1
	v = int(b[0]) & mask
	if v < mask {
		return v, 1
	}
	shift := 0
	for i := 1; i < len(b) && shift < 28; i++ {
		v += int(b[i]&0x7f) << shift
		shift += 7
		if b[i]&0x80 == 0 {
			return v, i + 1
		}
	}
	return 0, 0
}

// h3Sets turns one recording's requests into h3 header sets, the first of
// each kind winning; rules.perRequest fields keep their place, referer and
// alt-used with an empty value.
func h3Sets(browser string, r h3Recording, rules h3Rules) []profile.HeaderSet {
	var sets []profile.HeaderSet
	for _, q := range r.http3.Requests {
		var h fields.Header
		for _, f := range q.Fields {
			if !strings.HasPrefix(f.Name, ":") {
				h = append(h, f)
			}
		}
		kind := kindOf(h)
		if kind == 0 || slices.ContainsFunc(sets, func(s profile.HeaderSet) bool { return s.Kind == kind }) {
			continue
		}
		hs := profile.HeaderSet{Kind: kind, Proto: profile.H3}
		for _, f := range h {
			if slices.Contains(rules.perRequest, f.Name) {
				hs.PerRequest = append(hs.PerRequest, f.Name)
				if f.Name != "sec-fetch-site" {
					f.Value = ""
				}
			}
			hs.Header = append(hs.Header, f)
		}
		sets = append(sets, hs)
	}
	for _, k := range []profile.RequestKind{profile.Navigate, profile.Fetch, profile.Image} {
		if !slices.ContainsFunc(sets, func(s profile.HeaderSet) bool { return s.Kind == k }) {
			log.Fatalf("%s: no h3 %v request recorded", browser, k)
		}
	}
	return sets
}

// qpackDynamic reads how the browser's QPACK encoder uses a dynamic table
// from the recordings against servers that allowed one. With no blocked
// streams allowed every recording must show no insert (the rule then
// leaves the table unused). With blocked streams, an insert with a
// static name reference says insert-all (quiche inserts fields the
// static table names); inserts with literal names only, while fields
// with a static name go as literals with a static name reference in
// sections that use the table, say insert-new-names (neqo); anything
// else fits no rule and fails.
func qpackDynamic(browser string) profile.QPACKDynamicRule {
	for _, r := range readH3Kind(browser, "h3dynnoblock") {
		if n := len(r.http3.QPACKEncoder); n != 1 || r.http3.QPACKEncoder[0].Kind != "set_dynamic_table_capacity" {
			log.Fatalf("%s: %d encoder instructions with no blocked streams allowed: no rule fits", r.path, n)
		}
	}
	staticIns, literalIns, staticLiteral := 0, 0, 0
	for _, r := range readH3Kind(browser, "h3dyn") {
		if r.http3.QPACKEncoderErr != "" {
			log.Fatalf("%s: encoder stream: %s", r.path, r.http3.QPACKEncoderErr)
		}
		for _, in := range r.http3.QPACKEncoder {
			switch {
			case in.Kind == "insert_with_name_reference" && in.Static:
				staticIns++
			case in.Kind == "insert_with_literal_name":
				literalIns++
			}
		}
		for _, q := range r.http3.Requests {
			if q.RequiredInsertCount == 0 {
				continue
			}
			for _, l := range q.Lines {
				if l.Kind == "literal_name_reference" && l.Static {
					staticLiteral++
				}
			}
		}
	}
	switch {
	case staticIns > 0 && staticLiteral == 0:
		return profile.QPACKInsertAll
	case staticIns == 0 && literalIns > 0 && staticLiteral > 0:
		return profile.QPACKInsertNewNames
	}
	log.Fatalf("%s: %d static-name inserts, %d literal-name inserts, %d static-name literals in dynamic sections: no rule fits",
		browser, staticIns, literalIns, staticLiteral)
	return 0
}

// qpackCapacity reads when the browser's QPACK encoder sets the table's
// capacity from its recordings against a server that announced a
// capacity of 0 (h3notable): Set Dynamic Table Capacity 0 as the encoder
// stream's first instruction in every one says announced; the stream's
// type alone, or no encoder stream, in every one says allowed; anything
// else fits no rule. It checks there and against QUICHE's table (h3dyn)
// the stream ids QPACKStreams (upFront) stands for: the encoder stream on
// the id after the control stream's and the decoder stream on the next;
// or, opened on first use, the encoder stream two ids after the control
// stream's and nothing on the one between (the decoder stream's, with
// nothing to say as the server inserts nothing).
func qpackCapacity(browser string, upFront bool) profile.QPACKCapacityRule {
	announced, allowed := 0, 0
	for _, kind := range []string{"h3notable", "h3dyn"} {
		for _, r := range readH3Kind(browser, kind) {
			ids := map[h3wire.StreamType]uint64{}
			for _, u := range r.http3.UniStreams {
				ids[u.Type] = u.ID
			}
			ctrl, ok := ids[h3wire.StreamControl]
			enc, hasEnc := ids[h3wire.StreamQPACKEncoder]
			dec, hasDec := ids[h3wire.StreamQPACKDecoder]
			switch {
			case !ok:
				log.Fatalf("%s: no control stream", r.path)
			case upFront && (!hasEnc || enc != ctrl+4 || !hasDec || dec != ctrl+8):
				log.Fatalf("%s: QPACK streams opened at once, but not encoder on %d and decoder on %d: %+v", r.path, ctrl+4, ctrl+8, r.http3.UniStreams)
			case !upFront && (hasEnc && enc != ctrl+8 || hasDec):
				log.Fatalf("%s: QPACK streams opened on first use, but not only the encoder, on %d: %+v", r.path, ctrl+8, r.http3.UniStreams)
			}
			if kind != "h3notable" {
				continue
			}
			var rest []byte
			for _, st := range r.rec.QUIC.Streams {
				if hasEnc && st.ID == enc {
					_, n := quicwire.Varint(st.Data)
					rest = st.Data[n:]
				}
			}
			switch {
			case len(rest) == 0:
				allowed++
			case len(rest) == 1 && rest[0] == 0x20:
				announced++
			default:
				log.Fatalf("%s: encoder stream %x against a server announcing capacity 0: no rule fits", r.path, rest)
			}
		}
	}
	switch {
	case announced > 0 && allowed == 0:
		return profile.QPACKCapacityAnnounced
	case allowed > 0 && announced == 0:
		return profile.QPACKCapacityAllowed
	}
	log.Fatalf("%s: %d connections set capacity 0, %d did not: no rule fits", browser, announced, allowed)
	return 0
}

// h3Source says where the QUIC and HTTP/3 parts come from.
func h3Source(browser string, rules h3Rules) string {
	return fmt.Sprintf("; the QUIC first flight (ClientHello with ALPN h3, transport parameters, connection ID lengths, packet numbers, datagram size), the HTTP/3 SETTINGS, stream use, pseudo-header order and the h3 header sets of kinds navigate, fetch and image recorded from the same browser over QUIC v1 (fingerprint/testdata/recordings/%s-h3-*.json, three connections); the per-connection rules (connection ID length %v, first packet number %v, padding %v, CRYPTO layout %v, GREASE bounds) named from the browser's QUIC stack and checked against those recordings by profile/gen_h3.go; the QPACK dynamic table rule read by profile/gen_h3.go from the same browser against servers allowing a 65536-byte table with 100 and with no blocked streams (fingerprint/testdata/recordings/%s-h3dyn-*.json, %s-h3dynnoblock-*.json); the QPACK capacity rule and stream ids read by profile/gen_h3.go from the same browser against a server announcing capacity 0 (fingerprint/testdata/recordings/%s-h3notable-*.json) and against the 65536-byte table",
		browser, rules.dcid, rules.firstPN, rules.padding, rules.layout, browser, browser, browser)
}
