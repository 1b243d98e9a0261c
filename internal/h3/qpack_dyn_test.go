package h3

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/guise-http/guise/internal/h3wire"
)

// recordedDynamic is each recorded browser's dynamic table rule, as
// profile/gen_h3.go reads it into profile.HTTP3.QPACKDynamic.
var recordedDynamic = map[string]DynamicRule{"chromium-156": DynamicInsertAll, "firefox-esr-153": DynamicInsertNewNames}

// dynRecorded is one recorded connection against a server that allowed
// a dynamic table: its encoder stream after the type, and its requests'
// stream ids, HEADERS payloads and decoded fields.
type dynRecorded struct {
	enc      []byte
	ids      []uint64
	sections [][]byte
	fields   [][]field
	maxCap   uint64
	blocked  uint64
}

func readDynRecorded(t *testing.T, r *recording) *dynRecorded {
	t.Helper()
	d := &dynRecorded{maxCap: r.QUIC.QPACKMaxTableCapacity, blocked: r.QUIC.QPACKBlockedStreams}
	for _, s := range r.QUIC.Streams {
		if s.ID%4 == 2 && len(s.Data) > 0 && s.Data[0] == byte(h3wire.StreamQPACKEncoder) {
			d.enc = s.Data[1:]
		}
	}
	dec := NewQPACKDecoder(d.maxCap, int(d.blocked))
	if _, _, err := dec.Feed(d.enc); err != nil {
		t.Fatal(err)
	}
	// Requests in stream id order, the order the browser opened and
	// encoded them (the recorder accepts them as they arrive).
	streams := slices.Clone(r.QUIC.Streams)
	slices.SortStableFunc(streams, func(a, b recStream) int { return cmp.Compare(a.ID, b.ID) })
	for _, s := range streams {
		if s.ID%4 != 0 {
			continue
		}
		f, err := h3wire.ParseFrame(s.Data)
		if err != nil || f.Type != h3wire.FrameHeaders {
			t.Fatalf("stream %d: %v", s.ID, err)
		}
		_, _, lines, err := dec.Decode(f.Payload, 1<<20)
		if err != nil {
			t.Fatalf("stream %d: %v", s.ID, err)
		}
		var fs []field
		for _, l := range lines {
			fs = append(fs, field{l.Name, l.Value})
		}
		d.ids = append(d.ids, s.ID)
		d.sections = append(d.sections, f.Payload)
		d.fields = append(d.fields, fs)
	}
	return d
}

// replay encodes the recorded requests' fields in order with rule: the
// server's SETTINGS taken before the first request whose recorded section
// used the table (Chromium's first request left before they arrived), or
// at once if none did. It returns the encoder stream and the sections.
func (d *dynRecorded) replay(rule DynamicRule, huffman HuffmanRule) ([]byte, [][]byte) {
	e := &dynEncoder{rule: rule, huffman: huffman}
	var enc []byte
	write := func(b []byte) { enc = append(enc, b...) }
	first := len(d.sections)
	for i, s := range d.sections {
		if s[0] != 0 {
			first = i
			break
		}
	}
	if first == len(d.sections) {
		first = 0
	}
	static := encoder{huffman: huffman}
	var out [][]byte
	for i, fs := range d.fields {
		if i == first {
			e.setPeer(true, d.maxCap, d.blocked, write)
		}
		if !e.usable() {
			b := static.appendPrefix(nil)
			for _, f := range fs {
				b = static.appendField(b, f.name, f.value)
			}
			out = append(out, b)
			continue
		}
		se := e.begin()
		for _, f := range fs {
			se.field(f.name, f.value)
		}
		write(se.ins)
		out = append(out, se.finish(nil, d.ids[i]))
	}
	return enc, out
}

// TestDynamicEncoderMatchesRecordings re-encodes every request recorded
// against a server allowing a 65536-byte table, with 100 blocked streams
// (h3dyn) and with none (h3dynnoblock), with the browser's rules, and
// finds the recorded encoder stream and HEADERS payloads byte for byte:
// the same inserts in the same order with the same name references and
// Huffman choices, the same Required Insert Count, Base, and line
// representations. The other rule does not reproduce them.
func TestDynamicEncoderMatchesRecordings(t *testing.T) {
	for browser, rule := range recordedDynamic {
		n := 0
		for _, kind := range []string{"h3dyn", "h3dynnoblock", "h3dynlate"} {
			for _, r := range recordingsOf(t, browser+"-"+kind+"-*.json") {
				d := readDynRecorded(t, r)
				enc, secs := d.replay(rule, recordedRule[browser])
				if !bytes.Equal(enc, d.enc) {
					t.Errorf("%s %s: encoder stream\n got %x\nwant %x", browser, kind, enc, d.enc)
				}
				for i := range secs {
					if !bytes.Equal(secs[i], d.sections[i]) {
						t.Errorf("%s %s: stream %d:\n got %x\nwant %x", browser, kind, d.ids[i], secs[i], d.sections[i])
					}
					n++
				}
			}
		}
		t.Logf("%s: %d recorded HEADERS and their encoder streams re-encoded exactly", browser, n)
	}
	for browser, other := range map[string]DynamicRule{"chromium-156": DynamicInsertNewNames, "firefox-esr-153": DynamicInsertAll} {
		for _, r := range recordingsOf(t, browser+"-h3dyn-*.json") {
			d := readDynRecorded(t, r)
			if enc, _ := d.replay(other, recordedRule[browser]); bytes.Equal(enc, d.enc) {
				t.Errorf("%s: rule %d reproduces the recorded encoder stream too", browser, other)
			}
		}
	}
}

// TestDynamicEncoderAcks: entries the decoder has not acknowledged are
// referenced only while a blocked stream is allowed; acknowledgements
// raise the Known Received Count; an entry referenced by an
// unacknowledged section is never evicted (the insert is given up and
// the field sent as a literal).
func TestDynamicEncoderAcks(t *testing.T) {
	e := &dynEncoder{rule: DynamicInsertAll, huffman: HuffmanShorter}
	e.setPeer(true, 200, 1, func([]byte) {})
	e.mu.Lock()
	se := e.begin()
	se.field("x-a", "1") // inserted (36 bytes), referenced: stream 0 blocks
	se.finish(nil, 0)
	if e.inserted != 1 || e.blocking() != 1 {
		t.Fatalf("inserted %d blocking %d", e.inserted, e.blocking())
	}
	se = e.begin() // the one blocked stream is used: no insert, no unacknowledged reference
	se.field("x-a", "1")
	se.field("x-b", "2")
	b := se.finish(nil, 4)
	e.mu.Unlock()
	if b[0] != 0 || e.inserted != 1 {
		t.Fatalf("section %x with %d inserts while blocking is exhausted", b, e.inserted)
	}
	if err := e.decoderInstruction('a', 0); err != nil {
		t.Fatal(err)
	}
	if e.known != 1 || e.blocking() != 0 {
		t.Fatalf("known %d blocking %d after the acknowledgement", e.known, e.blocking())
	}
	e.mu.Lock()
	se = e.begin()
	se.field("x-a", "1") // acknowledged: referenced
	// 200 bytes hold 5 entries of 36: the next five inserts would evict
	// x-a, which this section references.
	for _, v := range []string{"a", "b", "c", "d", "e"} {
		se.field("x-c", v)
	}
	se.finish(nil, 8)
	inserted, dropped := e.inserted, e.dropped
	e.mu.Unlock()
	if dropped != 0 || inserted != 5 {
		t.Errorf("inserted %d dropped %d: an entry referenced by an unacknowledged section was evicted", inserted, dropped)
	}
}

// TestDecoderStreamErrors is RELIABILITY at the encoder:
// an acknowledgement of a section never sent (or sent and acknowledged
// already), an Insert Count Increment of 0 or beyond the inserts, and an
// integer too long fail; a Stream Cancellation of any stream does not.
func TestDecoderStreamErrors(t *testing.T) {
	e := &dynEncoder{rule: DynamicInsertAll, huffman: HuffmanShorter}
	e.setPeer(true, 4096, 10, func([]byte) {})
	e.mu.Lock()
	se := e.begin()
	se.field("x-a", "1")
	se.finish(nil, 0)
	e.mu.Unlock()
	for _, c := range []struct {
		kind byte
		v    uint64
		want error
	}{
		{'a', 4, errAckNoSection},
		{'i', 0, errIncrementZero},
		{'i', 2, errIncrementAhead},
		{'c', 99, nil},
		{'a', 0, nil},
		{'a', 0, errAckNoSection},
		{'i', 1, errIncrementAhead}, // the acknowledgement made it known already
	} {
		if err := e.decoderInstruction(c.kind, c.v); !errors.Is(err, c.want) {
			t.Errorf("%c %d: %v, want %v", c.kind, c.v, err, c.want)
		}
	}
	long := append([]byte{0xff}, bytes.Repeat([]byte{0xff}, 10)...)
	if _, _, _, err := parseDecoderInstruction(append(long, 0)); !errors.Is(err, errQPACKInteger) {
		t.Errorf("long integer: %v", err)
	}
}

// FuzzDecoderStream feeds arbitrary decoder stream bytes to an encoder
// that has inserted and sent a section: every instruction parses or
// fails with a typed error, and the state stays consistent.
func FuzzDecoderStream(f *testing.F) {
	f.Add([]byte{0x80, 0x01, 0x41})
	f.Add([]byte{0x02, 0xff, 0xff, 0xff})
	f.Add([]byte{0x7f, 0x80, 0x01, 0x81})
	f.Fuzz(func(t *testing.T, b []byte) {
		e := &dynEncoder{rule: DynamicInsertNewNames, huffman: HuffmanNotLonger}
		e.setPeer(true, 4096, 4, func([]byte) {})
		e.mu.Lock()
		for id := range uint64(3) {
			se := e.begin()
			se.field("x-a", string(rune('a'+id)))
			se.field("x-b", "1")
			se.finish(nil, 4*id)
		}
		e.mu.Unlock()
		for len(b) > 0 {
			kind, v, n, err := parseDecoderInstruction(b)
			if err != nil {
				if !errors.Is(err, errQPACKTruncated) && !errors.Is(err, errQPACKInteger) {
					t.Fatalf("untyped %v", err)
				}
				return
			}
			b = b[n:]
			if err := e.decoderInstruction(kind, v); err != nil {
				if !errors.Is(err, errAckNoSection) && !errors.Is(err, errIncrementZero) && !errors.Is(err, errIncrementAhead) {
					t.Fatalf("untyped %v", err)
				}
				return
			}
			if e.known > e.inserted {
				t.Fatalf("known %d above inserted %d", e.known, e.inserted)
			}
		}
	})
}

// chromeHead is a navigation's fields as Chromium sends them.
var chromeHead = []field{{":method", "GET"}, {":authority", "example.com"}, {":scheme", "https"}, {":path", "/"},
	{"sec-ch-ua", `"Chromium";v="156", "Google Chrome";v="156", "Not:A-Brand";v="99"`}, {"sec-ch-ua-mobile", "?0"},
	{"sec-ch-ua-platform", `"Linux"`}, {"upgrade-insecure-requests", "1"},
	{"user-agent", "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36"},
	{"accept", "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"},
	{"sec-fetch-site", "none"}, {"sec-fetch-mode", "navigate"}, {"sec-fetch-user", "?1"}, {"sec-fetch-dest", "document"},
	{"accept-encoding", "gzip, deflate, br, zstd"}, {"accept-language", "en-US,en;q=0.9"}, {"priority", "u=0, i"}}

// encodeAcked encodes chromeHead on stream id and acknowledges it.
func encodeAcked(e *dynEncoder, id uint64, buf []byte) []byte {
	e.mu.Lock()
	se := e.begin()
	for _, f := range chromeHead {
		se.field(f.name, f.value)
	}
	b := se.finish(buf[:0], id)
	e.mu.Unlock()
	e.decoderInstruction('a', id)
	return b
}

// TestDynamicEncodeAllocs: a section whose fields are all in the table
// already (every request after the first on a connection) allocates
// nothing: the section encoder and its buffers are reused.
func TestDynamicEncodeAllocs(t *testing.T) {
	e := &dynEncoder{rule: DynamicInsertAll, huffman: HuffmanShorter}
	e.setPeer(true, 65536, 100, func([]byte) {})
	buf := make([]byte, 0, 512)
	encodeAcked(e, 0, buf)
	id := uint64(4)
	n := testing.AllocsPerRun(100, func() {
		encodeAcked(e, id, buf)
		id += 4
	})
	if n > 0 {
		t.Errorf("%.1f allocations per section, want none", n)
	}
}

// BenchmarkDynamicEncode encodes Chromium's navigation fields with a
// warm table, each section acknowledged.
func BenchmarkDynamicEncode(b *testing.B) {
	e := &dynEncoder{rule: DynamicInsertAll, huffman: HuffmanShorter}
	e.setPeer(true, 65536, 100, func([]byte) {})
	buf := make([]byte, 0, 512)
	encodeAcked(e, 0, buf)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		encodeAcked(e, uint64(4*i+4), buf)
	}
}

// BenchmarkStaticEncode is the same fields static-only, for comparison.
func BenchmarkStaticEncode(b *testing.B) {
	e := encoder{huffman: HuffmanShorter}
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		p := e.appendPrefix(buf[:0])
		for _, f := range chromeHead {
			p = e.appendField(p, f.name, f.value)
		}
	}
}

// TestDynamicEncoderRoundTrip encodes 300 requests with varying paths,
// a cookie and varying new names on one connection whose table holds a few entries (so
// entries are evicted all along), with both rules, acknowledging every
// second section late, and decodes each section with the decoder fed
// the encoder stream: the fields come back as sent (no section refers to
// an evicted entry), and insert-all evicts along the way.
func TestDynamicEncoderRoundTrip(t *testing.T) {
	for _, rule := range []DynamicRule{DynamicInsertAll, DynamicInsertNewNames} {
		e := &dynEncoder{rule: rule, huffman: HuffmanShorter}
		dec := NewQPACKDecoder(400, 100)
		var enc []byte
		e.setPeer(true, 400, 100, func(b []byte) { enc = append(enc, b...) })
		var late []uint64
		for i := range 300 {
			fs := []field{{":method", "GET"}, {":path", fmt.Sprintf("/p/%d", i%37)}, {"x-id", fmt.Sprint(i % 5)},
				{"cookie", "a=" + fmt.Sprint(i%3)}, {"user-agent", "guise"}, {fmt.Sprintf("x-n%d", i%23), "v"}}
			id := uint64(4 * i)
			e.mu.Lock()
			se := e.begin()
			for _, f := range fs {
				se.field(f.name, f.value)
			}
			enc = append(enc, se.ins...)
			sec := se.finish(nil, id)
			e.mu.Unlock()
			if _, _, err := dec.Feed(enc); err != nil {
				t.Fatalf("rule %d request %d: encoder stream: %v", rule, i, err)
			}
			enc = enc[:0]
			ric, _, lines, err := dec.Decode(sec, 1<<16)
			if err != nil {
				t.Fatalf("rule %d request %d: %v", rule, i, err)
			}
			for j, l := range lines {
				if l.Name != fs[j].name || l.Value != fs[j].value {
					t.Fatalf("rule %d request %d line %d: %q: %q, want %q", rule, i, j, l.Name, l.Value, fs[j])
				}
			}
			if ric == 0 {
				continue
			}
			late = append(late, id)
			if i%2 == 0 {
				for _, l := range late {
					if err := e.decoderInstruction('a', l); err != nil {
						t.Fatal(err)
					}
				}
				late = late[:0]
			}
		}
		// Under insert-new-names every section refers to x-id's entry (the
		// oldest) by name, so it is never evictable and the table fills:
		// later new names go as literals.
		if rule == DynamicInsertAll && e.dropped == 0 || rule == DynamicInsertNewNames && e.inserted < 5 {
			t.Errorf("rule %d: %d inserted, %d evicted", rule, e.inserted, e.dropped)
		}
	}
}
