package h3

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/guise-http/guise/internal/h3wire"
	"github.com/guise-http/guise/internal/qpackref"
	"github.com/guise-http/guise/internal/quicwire"
	"github.com/quic-go/qpack"
)

// recordedRule is each recorded browser's Huffman rule, as profile/gen_h3.go
// reads it into profile.HTTP3.QPACKHuffman: Chromium codes a string only
// when that is shorter ("?0" goes raw), Firefox unless it is longer
// ("u=4" is coded at the same length).
var recordedRule = map[string]HuffmanRule{"chromium-156": HuffmanShorter, "firefox-esr-153": HuffmanNotLonger}

// recording is the part of a fingerprint recording these tests read: the
// QUIC streams' raw bytes. It is read here rather than with
// fingerprint.DecodeRecord because fingerprint imports this package (its
// echo server decodes with QPACKDecoder).
type recording struct {
	QUIC struct {
		Streams []recStream
		// The QPACK settings the server advertised (0: no dynamic table).
		QPACKMaxTableCapacity uint64 `json:"server_qpack_max_table_capacity"`
		QPACKBlockedStreams   uint64 `json:"server_qpack_blocked_streams"`
	}
}

type recStream struct {
	ID     uint64 `json:"id"`
	RawHex string `json:"raw_hex"`
	Data   []byte `json:"-"`
}

// recordings reads fingerprint/testdata/recordings/<browser>-h3-NN.json,
// first connections made against a server that allowed no dynamic table
// (not the -h3-resumed- ones).
func recordings(t *testing.T, browser string) []*recording {
	return recordingsOf(t, browser+"-h3-[0-9]*.json")
}

// recordingsOf reads the recordings whose names match pattern.
func recordingsOf(t *testing.T, pattern string) []*recording {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("..", "..", "fingerprint", "testdata", "recordings", pattern))
	if err != nil || len(paths) < 3 {
		t.Fatalf("%s: %d recordings (%v)", pattern, len(paths), err)
	}
	var out []*recording
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		r := &recording{}
		if err := json.Unmarshal(b, r); err != nil || len(r.QUIC.Streams) == 0 {
			t.Fatalf("%s: %v", p, err)
		}
		for i := range r.QUIC.Streams {
			s := &r.QUIC.Streams[i]
			if s.Data, err = hex.DecodeString(s.RawHex); err != nil {
				t.Fatalf("%s: %v", p, err)
			}
		}
		out = append(out, r)
	}
	return out
}

// TestEncoderMatchesRecordings re-encodes every recorded request's fields
// with the browser's rule and finds the recorded HEADERS payload, byte
// for byte: the same static references (exact, then name-only with the
// lowest index), literal names, and Huffman choices.
func TestEncoderMatchesRecordings(t *testing.T) {
	for browser, rule := range recordedRule {
		n := 0
		for _, r := range recordings(t, browser) {
			for _, s := range r.QUIC.Streams {
				if s.ID%4 != 0 {
					continue
				}
				f, err := h3wire.ParseFrame(s.Data)
				if err != nil || f.Type != h3wire.FrameHeaders {
					t.Fatalf("%s stream %d: %v", browser, s.ID, err)
				}
				fs, err := qpackref.DecodeFieldSection(f.Payload, 1<<16)
				if err != nil {
					t.Fatal(err)
				}
				e := encoder{huffman: rule}
				b := e.appendPrefix(nil)
				for _, hf := range fs.Fields {
					b = e.appendField(b, hf.Name, hf.Value)
				}
				if !bytes.Equal(b, f.Payload) {
					t.Errorf("%s stream %d:\n got %x\nwant %x", browser, s.ID, b, f.Payload)
				}
				n++
			}
		}
		if n < 9 {
			t.Errorf("%s: only %d requests", browser, n)
		}
		t.Logf("%s: %d recorded HEADERS re-encoded exactly", browser, n)
	}
	// The other rule would not: the recordings tell them apart. Chromium
	// sends "?0" raw (its Huffman form is as long); Firefox codes "u=4"
	// (3 bytes either way).
	for browser, other := range map[string]HuffmanRule{"chromium-156": HuffmanNotLonger, "firefox-esr-153": HuffmanShorter} {
		differs := 0
		for _, r := range recordings(t, browser) {
			for _, s := range r.QUIC.Streams {
				if s.ID%4 != 0 {
					continue
				}
				f, _ := h3wire.ParseFrame(s.Data)
				fs, _ := qpackref.DecodeFieldSection(f.Payload, 1<<16)
				e := encoder{huffman: other}
				b := e.appendPrefix(nil)
				for _, hf := range fs.Fields {
					b = e.appendField(b, hf.Name, hf.Value)
				}
				if !bytes.Equal(b, f.Payload) {
					differs++
				}
			}
		}
		if differs == 0 {
			t.Errorf("%s: rule %d reproduces every recorded HEADERS too: the recordings do not tell the rules apart", browser, other)
		}
	}
}

// TestControlPrefaceMatchesRecordings builds the control stream's first
// bytes from each profile's recorded Config and compares their shape with
// the recordings: the SETTINGS ids and values in order with GREASE ones
// masked, then one reserved frame shorter than the bound.
func TestControlPrefaceMatchesRecordings(t *testing.T) {
	configs := map[string]*Config{
		"chromium-156": {Settings: []Setting{{ID: 1, Value: 65536}, {ID: 6, Value: 262144}, {ID: 7, Value: 100}, {ID: 0x33, Value: 1}, {ID: 0x21, GREASE: true}}, GREASEFrameMaxLen: 4},
		"firefox-esr-153": {Settings: []Setting{{ID: 1, Value: 65536}, {ID: 7, Value: 20}, {ID: 0x2b603742, Value: 0}, {ID: 0xffd277, Value: 1}, {ID: 0x33, Value: 1}, {ID: 8, Value: 1}},
			GREASEFrameMaxLen: 8},
	}
	shape := func(b []byte) []string {
		t.Helper()
		typ, n := quicwire.Varint(b)
		if n == 0 || typ != 0 {
			t.Fatalf("not a control stream: %x", b)
		}
		b = b[n:]
		var out []string
		for len(b) > 0 {
			f, err := h3wire.ParseFrame(b)
			if err != nil {
				break
			}
			switch {
			case f.Type == h3wire.FrameSettings:
				ss, _ := h3wire.ParseSettings(f.Payload)
				for _, s := range ss {
					if h3wire.IsGREASE(uint64(s.ID)) && s.ID != 0x2b603742 {
						out = append(out, "GREASE setting")
					} else {
						out = append(out, fmt.Sprint(uint64(s.ID), "=", s.Value))
					}
				}
			case h3wire.IsGREASE(uint64(f.Type)):
				out = append(out, "GREASE frame")
			default:
				return out // PRIORITY_UPDATEs follow in the recordings
			}
			b = b[f.Size:]
		}
		return out
	}
	for browser, cfg := range configs {
		got := shape(cfg.appendControlPreface(nil))
		for _, r := range recordings(t, browser) {
			for _, s := range r.QUIC.Streams {
				if s.ID%4 == 2 && len(s.Data) > 0 && s.Data[0] == 0 {
					if want := shape(s.Data); !slices.Equal(got, want) {
						t.Errorf("%s:\n got %q\nwant %q", browser, got, want)
					}
					f, _ := h3wire.ParseFrame(s.Data[1:])
					g, _ := h3wire.ParseFrame(s.Data[1+f.Size:])
					if len(g.Payload) >= cfg.GREASEFrameMaxLen {
						t.Errorf("%s: recorded GREASE frame of %d bytes, bound %d", browser, len(g.Payload), cfg.GREASEFrameMaxLen)
					}
				}
			}
		}
	}
}

// TestStaticTable checks the static table against quic-go/qpack's
// decoder, entry by entry.
func TestStaticTable(t *testing.T) {
	for i := range staticTable {
		block := appendPrefixInt([]byte{0, 0}, 0xc0, 6, uint64(i))
		next := qpack.NewDecoder().Decode(block)
		f, err := next()
		if err != nil || f.Name != staticTable[i].name || f.Value != staticTable[i].value {
			t.Errorf("entry %d: ours %q, qpack's %q %v", i, staticTable[i], f, err)
		}
	}
}

// TestGREASEDraws: reserved ids are 0x1f*N+0x21 within the varint range;
// with a 32-bit N (Chromium, every recorded id below 0x1f*2^32) none is
// larger, and with a wide N (Firefox, recorded frame types near 2^60)
// nearly all are.
func TestGREASEDraws(t *testing.T) {
	const narrowMax = 0x1f*(1<<32-1) + 0x21
	for _, wide := range []bool{false, true} {
		above := 0
		for range 1000 {
			id := greaseID(rand.Reader, wide)
			if !h3wire.IsGREASE(id) || id > quicwire.MaxVarint {
				t.Fatalf("wide %v: %#x", wide, id)
			}
			if id > narrowMax {
				above++
			}
		}
		if wide && above < 990 || !wide && above != 0 {
			t.Errorf("wide %v: %d of 1000 above 0x1f*2^32", wide, above)
		}
	}
}
