package h2

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"golang.org/x/net/http2/hpack"
)

// B6 rows HP-01 .. HP-07 of RELIABILITY.md: a bad response header block is
// a connection error (COMPRESSION, or PROTOCOL for the size caps).

func TestHPACKErrors(t *testing.T) {
	huge := appendVarInt([]byte{0x40, 0x01, 'x'}, 7, 0, 100<<20) // 100 MB value, prefix only
	cases := []struct {
		name  string
		block []byte
		code  ErrCode
	}{
		{"HP-01-index", appendVarInt(nil, 7, 0x80, 300), ErrCodeCompression},
		{"HP-02-size-update-too-large", appendVarInt(nil, 5, 0x20, 1<<20), ErrCodeCompression},
		{"HP-02-size-update-late", append([]byte{0x88, 0x40, 0x01, 'x', 0x01, 'y'}, appendVarInt(nil, 5, 0x20, 100)...), ErrCodeCompression},
		{"HP-03-huffman-eos", []byte{0x88, 0x40, 0x01, 'x', 0x84, 0xff, 0xff, 0xff, 0xff}, ErrCodeCompression},
		{"HP-03-huffman-padding", []byte{0x88, 0x40, 0x01, 'x', 0x82, 0x1f, 0xff}, ErrCodeCompression},
		{"HP-03-huffman-padding-zero", []byte{0x88, 0x40, 0x01, 'x', 0x81, 0x00}, ErrCodeCompression},
		{"HP-04-varint", []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, ErrCodeCompression},
		{"HP-05-huge-string", append([]byte{0x88}, huge...), ErrCodeCompression},
		{"HP-07-truncated", []byte{0x88, 0x40, 0x05, 'x', '-', 'a'}, ErrCodeCompression},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cc, p := ready(t, chromeConfig())
				ch := goRoundTrip(context.Background(), cc, get("/"))
				h := p.nextOf(FrameHeaders)
				p.write(appendHeaders(nil, h.StreamID, true, nil, c.block, 16384))
				wantConnError(t, (<-ch).err, c.code)
				if code, sent := p.closedWith(); !sent || code != c.code {
					t.Fatalf("GOAWAY %v sent=%v", code, sent)
				}
			})
		})
	}
}

// TestHPACKManyHuffmanStrings is HP-06: 10k small Huffman strings decode
// in linear time (well under a second of real time).
func TestHPACKManyHuffmanStrings(t *testing.T) {
	cfg := plainConfig()
	cfg.MaxHeaderListSize = 1 << 20
	var blk []byte
	blk = append(blk, 0x88)
	for range 10000 {
		blk = append(blk, 0x40, 0x82)
		blk = hpack.AppendHuffmanString(blk, "ab")
		blk = append(blk, 0x83)
		blk = hpack.AppendHuffmanString(blk, "xyz")
	}
	start := time.Now()
	synctest.Test(t, func(t *testing.T) {
		cc, p := ready(t, cfg)
		ch := goRoundTrip(context.Background(), cc, get("/"))
		h := p.nextOf(FrameHeaders)
		p.write(appendHeaders(nil, h.StreamID, true, nil, blk, 16384))
		r := <-ch
		if r.err != nil {
			t.Fatal(r.err)
		}
		if n := len(r.resp.Header); n != 10000 {
			t.Fatalf("%d fields", n)
		}
		r.resp.Body.Close()
	})
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("took %v", d)
	}
}

func TestEncoderSizeUpdate(t *testing.T) {
	for _, c := range []struct {
		style HPACKStyle
		sets  []uint32
		want  string
	}{
		{ChromiumHPACK(), []uint32{4096}, ""},
		{ChromiumHPACK(), []uint32{0, 8192}, "\x20\x3f\xe1\x3f"},
		{FirefoxHPACK(), []uint32{4096}, "\x3f\xe1\x1f"},
		{FirefoxHPACK(), []uint32{1 << 20}, "\x3f\xe1\xff\x03"},
	} {
		e := newEncoder(&c.style)
		for _, v := range c.sets {
			e.setPeerTableSize(v)
		}
		if got := string(e.begin(nil)); got != c.want {
			t.Errorf("%v: got %q want %q", c.sets, got, c.want)
		}
		if got := e.begin(nil); len(got) != 0 {
			t.Errorf("second block repeats the update %q", got)
		}
	}
}

// TestEncoderRoundTrip decodes what each style encodes with x/net's decoder,
// over many blocks, so the dynamic table stays in step.
func TestEncoderRoundTrip(t *testing.T) {
	for _, style := range []HPACKStyle{ChromiumHPACK(), FirefoxHPACK(), {}} {
		e := newEncoder(&style)
		d := hpack.NewDecoder(4096, nil)
		for i := range 200 {
			kv := [][2]string{
				{":method", "GET"}, {":path", "/" + strings.Repeat("p", i%7)},
				{"cookie", "a=1; bb=" + strings.Repeat("c", i%40) + "; d=4"},
				{"authorization", "secret"}, {"x-n", strings.Repeat("v", i*13%3000)},
			}
			var blk []byte
			blk = e.begin(blk)
			for _, f := range kv {
				blk = e.field(blk, f[0], f[1])
			}
			fs, err := d.DecodeFull(blk)
			if err != nil {
				t.Fatalf("block %d: %v", i, err)
			}
			var cookies []string
			for _, f := range fs {
				if f.Name == "cookie" {
					cookies = append(cookies, f.Value)
				}
			}
			if got := strings.Join(cookies, "; "); got != kv[2][1] {
				t.Fatalf("cookie %q", got)
			}
			if fs[len(fs)-1].Value != kv[4][1] {
				t.Fatalf("block %d: last field %q", i, fs[len(fs)-1].Value)
			}
		}
	}
}
