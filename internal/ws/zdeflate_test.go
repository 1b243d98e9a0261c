package ws

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// zCase is one stream of messages compressed as a browser does.
type zCase struct {
	Name     string   `json:"name"`
	WBits    int      `json:"wbits"`
	Takeover bool     `json:"takeover"`
	Messages []string `json:"messages"` // hex
	Want     []string `json:"want,omitempty"`
}

// zCorpus is the streams zdeflater is checked on: short text, JSON, text
// that repeats, random bytes (stored blocks), long messages past the
// window (slides) and past 16383 symbols (several blocks), with and
// without context takeover, at window bits 9 to 15.
func zCorpus() []zCase {
	r := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields("the quick brown fox jumps over lazy dog hello world message websocket guise chromium firefox deflate zlib {\"id\": 1, \"type\": \"update\", \"value\": [1,2,3]}")
	text := func(n int) []byte {
		var b []byte
		for len(b) < n {
			b = append(b, words[r.IntN(len(words))]...)
			b = append(b, ' ')
			if r.IntN(7) == 0 {
				b = append(b, fmt.Sprint(r.IntN(100000))...)
			}
		}
		return b[:n]
	}
	random := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}
	lowEntropy := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = "aab\x00"[r.IntN(4)]
		}
		return b
	}
	hexs := func(ms ...[]byte) []string {
		var out []string
		for _, m := range ms {
			out = append(out, hex.EncodeToString(m))
		}
		return out
	}
	var cs []zCase
	add := func(name string, bits int, takeover bool, ms ...[]byte) {
		cs = append(cs, zCase{Name: name, WBits: bits, Takeover: takeover, Messages: hexs(ms...)})
	}
	add("hello", 15, true, []byte("hello"), []byte("hello"), []byte("message 1"), []byte("message 2"), []byte("message 3"))
	add("one byte", 15, true, []byte("a"), []byte("a"), []byte("ab"), []byte("abc"))
	for _, n := range []int{3, 10, 50, 100, 200, 500, 1000, 2000, 4096, 8000} {
		add(fmt.Sprint("text ", n), 15, true, text(n), text(n), text(n))
		add(fmt.Sprint("json ", n), 15, false, text(n), text(n))
		add(fmt.Sprint("random ", n), 15, true, random(n), random(n))
		add(fmt.Sprint("low entropy ", n), 15, true, lowEntropy(n))
	}
	for bits := 9; bits <= 15; bits++ {
		add(fmt.Sprint("window ", bits), bits, true, text(300), text(3000), text(700), lowEntropy(2000))
		add(fmt.Sprint("window reset ", bits), bits, false, text(300), text(3000), text(700))
	}
	add("long text", 15, true, text(100000), text(70000))
	add("long low entropy", 15, true, lowEntropy(90000))
	add("long random", 15, true, random(70000), text(40000))
	add("many messages", 15, true, text(5000), text(5000), text(5000), text(5000), text(5000), text(5000), text(5000), text(5000), text(5000), text(5000), text(5000), text(5000), text(5000), text(5000), text(5000))
	add("zeros", 15, true, make([]byte, 1000), make([]byte, 70000))
	add("reset long", 15, false, text(40000), text(40000), random(3000), text(100))
	return cs
}

// zRun compresses c's messages as a Conn does (its deflater).
func zRun(c zCase) []string {
	d := &deflater{takeover: c.Takeover, bits: c.WBits}
	var out []string
	for _, m := range c.Messages {
		p, _ := hex.DecodeString(m)
		b, err := d.compress(nil, p)
		if err != nil {
			return nil
		}
		out = append(out, hex.EncodeToString(b))
	}
	return out
}

var zlibRef = flag.Bool("zlib", false, "compare zdeflater with C zlib through python3 (testdata/zlibref.py); with -update, rewrite testdata/zlib-golden.json from it")

var update = flag.Bool("update", false, "rewrite golden files")

// zGolden is what C zlib produced for zCorpus: per stream, each message's
// compressed length and SHA-256 (the corpus itself is regenerated from its
// seed).
type zGolden map[string][]string

func zDigest(h string) string {
	b, _ := hex.DecodeString(h)
	sum := sha256.Sum256(b)
	return fmt.Sprintf("%d %x", len(b), sum[:8])
}

// TestZDeflateMatchesZlib compresses the corpus with zdeflater and wants
// every message's bytes equal to C zlib's (zlib 1.2.13, Debian's libz, as
// testdata/zlibref.py calls it the browsers' way): against
// testdata/zlib-golden.json, or with -zlib against zlib itself, fed in one
// call as Firefox does and in 1000-byte pieces as Chromium does.
func TestZDeflateMatchesZlib(t *testing.T) {
	golden := zGolden{}
	if !*zlibRef {
		b, err := os.ReadFile("testdata/zlib-golden.json")
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &golden); err != nil {
			t.Fatal(err)
		}
	}
	total, msgs := 0, 0
	for _, c := range zCorpus() {
		got := zRun(c)
		if len(got) != len(c.Messages) {
			t.Fatalf("%s: compress failed", c.Name)
		}
		var want []string
		if *zlibRef {
			for _, chunk := range []int{0, 1000} {
				ref := zlibCompress(t, c, chunk)
				for i := range ref {
					if ref[i] != got[i] {
						t.Errorf("%s (pieces of %d): message %d (%d bytes): %d bytes, zlib %d\n guise %.80s\n zlib  %.80s",
							c.Name, chunk, i, len(c.Messages[i])/2, len(got[i])/2, len(ref[i])/2, got[i], ref[i])
					}
					want = append(want, zDigest(ref[i]))
				}
			}
			golden[c.Name] = want[:len(c.Messages)]
			want = want[:len(c.Messages)]
		} else {
			want = golden[c.Name]
			if len(want) != len(c.Messages) {
				t.Fatalf("%s: %d golden messages, want %d (rerun with -zlib -update)", c.Name, len(want), len(c.Messages))
			}
		}
		for i := range want {
			msgs++
			total += len(c.Messages[i]) / 2
			if d := zDigest(got[i]); d != want[i] {
				t.Errorf("%s: message %d (%d bytes): %s, zlib %s", c.Name, i, len(c.Messages[i])/2, d, want[i])
			}
		}
	}
	t.Logf("%d messages, %d bytes, equal to zlib's", msgs, total)
	if *zlibRef && *update {
		b, _ := json.MarshalIndent(golden, "", " ")
		if err := os.WriteFile("testdata/zlib-golden.json", append(b, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func zlibCompress(t *testing.T, c zCase, chunk int) []string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("-zlib needs python3")
	}
	req, _ := json.Marshal(struct {
		zCase
		Chunk int `json:"chunk"`
	}{c, chunk})
	cmd := exec.Command(py, "testdata/zlibref.py")
	cmd.Stdin = bytes.NewReader(req)
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: zlibref.py: %v", c.Name, err)
	}
	var out []string
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDeflateMatchesBrowsers compresses the messages Chromium 156 and
// Firefox ESR 153 sent the echo server (fingerprint's
// TestLiveWebSocketDeflate*, 15-bit windows, context takeover both ways
// and none for the client's) and wants the payloads they sent, byte for
// byte. Firefox's empty message went uncompressed
// (Config.DeflateEmptyUncompressed), and so did, without takeover, the
// messages whose compressed form is longer (Config.DeflateKeepSmaller).
func TestDeflateMatchesBrowsers(t *testing.T) {
	for _, browser := range []string{"chromium-156", "firefox-esr-153", "chromium-156-no-takeover", "firefox-esr-153-no-takeover"} {
		takeover := !strings.HasSuffix(browser, "-no-takeover")
		b, err := os.ReadFile("../../fingerprint/testdata/ws-deflate/" + browser + ".json")
		if err != nil {
			t.Fatal(err)
		}
		var rec struct {
			Messages []struct {
				Text       string `json:"text"`
				Compressed bool   `json:"compressed"`
				Payload    string `json:"payload_hex"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(b, &rec); err != nil {
			t.Fatal(err)
		}
		if len(rec.Messages) < 10 {
			t.Fatalf("%s: %d messages", browser, len(rec.Messages))
		}
		d := &deflater{takeover: takeover}
		for i, m := range rec.Messages {
			if m.Text == "" && !m.Compressed {
				continue
			}
			got, err := d.compress(nil, []byte(m.Text))
			if err != nil {
				t.Fatal(err)
			}
			if !m.Compressed {
				if takeover || len(got) <= len(m.Text) {
					t.Errorf("%s: message %d (%d bytes, %d compressed) went uncompressed", browser, i, len(m.Text), len(got))
				}
				continue
			}
			if hex.EncodeToString(got) != m.Payload {
				t.Errorf("%s: message %d (%d bytes): %x, the browser's %s", browser, i, len(m.Text), got, m.Payload)
			}
		}
	}
}

// frameStream keeps what a Conn writes.
type frameStream struct{ out []byte }

func (s *frameStream) Write(p []byte) (int, error) { s.out = append(s.out, p...); return len(p), nil }
func (s *frameStream) Read(p []byte) (int, error)  { select {} }
func (s *frameStream) Close() error                { return nil }

// TestDeflateEmptyMessage: under permessage-deflate an empty message is
// the compressed byte 00 (RSV1), as Chromium sends it, or with
// DeflateEmptyUncompressed an uncompressed empty frame, as Firefox does
// (fingerprint/testdata/ws-deflate/*.json).
func TestDeflateEmptyMessage(t *testing.T) {
	for _, tc := range []struct {
		uncompressed bool
		rsv          uint8
		payload      string
	}{{false, 4, "00"}, {true, 0, ""}} {
		s := &frameStream{}
		c := NewConn(s, &Config{Deflate: Deflate{Enabled: true}, DeflateEmptyUncompressed: tc.uncompressed, PingInterval: -1})
		if err := c.WriteMessage(bg, OpText, nil); err != nil {
			t.Fatal(err)
		}
		h, n, err := ParseHeader(s.out)
		if err != nil {
			t.Fatal(err)
		}
		p := s.out[n:]
		Mask(h.Mask, 0, p)
		if h.RSV != tc.rsv || hex.EncodeToString(p) != tc.payload {
			t.Errorf("DeflateEmptyUncompressed %v: RSV %d payload %x, want %d %s", tc.uncompressed, h.RSV, p, tc.rsv, tc.payload)
		}
		c.fail(ErrClosed)
	}
}

// BenchmarkDeflate1K compresses a 1 KiB text message under context
// takeover, as a Conn does.
func BenchmarkDeflate1K(b *testing.B) {
	msg := []byte(strings.Repeat("hello world message websocket 12345 ", 30)[:1024])
	d := &deflater{takeover: true}
	var buf []byte
	b.ReportAllocs()
	b.SetBytes(int64(len(msg)))
	for b.Loop() {
		buf, _ = d.compress(buf[:0], msg)
	}
}

// TestDeflateKeepSmaller: with DeflateKeepSmaller and no context takeover
// of this side's, "hello" (7 bytes compressed) goes as it is, as Firefox
// sends it (fingerprint/testdata/ws-deflate/firefox-esr-153-no-takeover.json);
// under takeover, or without the option (Chromium), it is compressed.
func TestDeflateKeepSmaller(t *testing.T) {
	for _, tc := range []struct {
		keep, noTakeover bool
		rsv              uint8
		payload          string
	}{
		{true, true, 0, "68656c6c6f"},
		{true, false, 4, "ca48cdc9c90700"},
		{false, true, 4, "ca48cdc9c90700"},
	} {
		s := &frameStream{}
		c := NewConn(s, &Config{Deflate: Deflate{Enabled: true, ClientNoContextTakeover: tc.noTakeover}, DeflateKeepSmaller: tc.keep, PingInterval: -1})
		if err := c.WriteMessage(bg, OpText, []byte("hello")); err != nil {
			t.Fatal(err)
		}
		h, n, err := ParseHeader(s.out)
		if err != nil {
			t.Fatal(err)
		}
		p := s.out[n:]
		Mask(h.Mask, 0, p)
		if h.RSV != tc.rsv || hex.EncodeToString(p) != tc.payload {
			t.Errorf("keep %v, no takeover %v: RSV %d payload %x, want %d %s", tc.keep, tc.noTakeover, h.RSV, p, tc.rsv, tc.payload)
		}
		c.fail(ErrClosed)
	}
}
