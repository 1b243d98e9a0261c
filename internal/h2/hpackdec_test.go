package h2

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"golang.org/x/net/http2/hpack"
)

// xnetDecode decodes blocks in order with x/net's decoder, the reference
// for hdecoder: the fields of each block, and whether each failed. A
// failed block ends the sequence, as it ends the connection.
func xnetDecode(tableSize uint32, maxStr int, blocks [][]byte) ([][]hpack.HeaderField, []bool) {
	var cur []hpack.HeaderField
	dec := hpack.NewDecoder(tableSize, func(f hpack.HeaderField) { cur = append(cur, f) })
	dec.SetMaxStringLength(maxStr)
	var out [][]hpack.HeaderField
	var failed []bool
	for _, b := range blocks {
		cur = nil
		_, err := dec.Write(b)
		if err == nil {
			err = dec.Close()
		}
		out, failed = append(out, cur), append(failed, err != nil)
		if err != nil {
			break
		}
	}
	return out, failed
}

func ourDecode(tableSize uint32, maxStr int, blocks [][]byte) ([][]hpack.HeaderField, []bool) {
	d := newHDecoder(tableSize, maxStr)
	var out [][]hpack.HeaderField
	var failed []bool
	for _, b := range blocks {
		var cur []hpack.HeaderField
		err := d.decode(b, func(f hpack.HeaderField) { cur = append(cur, f) })
		out, failed = append(out, cur), append(failed, err != nil)
		if err != nil {
			break
		}
	}
	return out, failed
}

// encodeBlocks encodes each list of name/value pairs as one block with
// x/net's encoder (indexing and Huffman as it chooses), the table size
// changed to resize before the second block when resize > 0.
func encodeBlocks(resize uint32, lists ...[]string) [][]byte {
	var buf bytes.Buffer
	enc := hpack.NewEncoder(&buf)
	var blocks [][]byte
	for i, l := range lists {
		if i == 1 && resize > 0 {
			enc.SetMaxDynamicTableSize(resize)
		}
		buf.Reset()
		for j := 0; j+1 < len(l); j += 2 {
			enc.WriteField(hpack.HeaderField{Name: l[j], Value: l[j+1], Sensitive: l[j] == "authorization"})
		}
		blocks = append(blocks, bytes.Clone(buf.Bytes()))
	}
	return blocks
}

// rawLiteral is a literal field without indexing, name and value raw (not
// Huffman), both shorter than 127 bytes: how nginx sends its fields when
// they are not Huffman-coded.
func rawLiteral(name, value string) []byte {
	b := []byte{0x00, byte(len(name))}
	b = append(b, name...)
	b = append(b, byte(len(value)))
	return append(b, value...)
}

func TestHPACKDecoderMatchesXNet(t *testing.T) {
	long := strings.Repeat("v", 300)
	for _, tc := range []struct {
		name   string
		blocks [][]byte
	}{
		{"indexed and literals", encodeBlocks(0,
			[]string{":status", "200", "content-type", "text/html", "x-a", "1", "authorization", "secret"},
			[]string{":status", "200", "content-type", "text/html", "x-a", "2", "date", "Mon, 30 Nov 2026 04:00:00 GMT"})},
		{"table size update", encodeBlocks(64,
			[]string{":status", "404", "x-long", long, "server", "nginx/1.22.1"},
			[]string{":status", "404", "x-long", long, "server", "nginx/1.22.1"})},
		{"raw literals", [][]byte{append(append([]byte{0x88}, rawLiteral("server", "nginx/1.22.1")...), rawLiteral("x-empty", "")...)}},
		{"string too long", [][]byte{rawLiteral("x", strings.Repeat("a", 120))}},
		{"index 0", [][]byte{{0x80}}},
		{"index past the tables", [][]byte{{0xbf}}},
		{"truncated literal", [][]byte{{0x00, 0x05, 'a'}}},
		{"truncated varint", [][]byte{{0xff, 0x80}}},
		{"varint overflow", [][]byte{{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}}},
		{"size update too large", [][]byte{{0x3f, 0xe1, 0xff, 0x03}}},
		{"size update after a field", [][]byte{{0x40, 0x01, 'a', 0x01, 'b', 0x20}}},
		{"bad huffman", [][]byte{{0x00, 0x01, 'x', 0x81, 0x00}}},
		{"empty block", [][]byte{{}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, wantFail := xnetDecode(4096, 100, tc.blocks)
			got, gotFail := ourDecode(4096, 100, tc.blocks)
			if !slices.Equal(gotFail, wantFail) || !slices.EqualFunc(got, want, slices.Equal) {
				t.Fatalf("got %q (failed %v), x/net %q (failed %v)", got, gotFail, want, wantFail)
			}
		})
	}
}

// TestHPACKLiteralsShareOneAllocation: the literals of a block that the
// memo does not keep (here never-indexed ones) cost one allocation
// together, where x/net's decoder makes one per string.
func TestHPACKLiteralsShareOneAllocation(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("allocation counts need a normal build")
	}
	var blk []byte
	blk = append(blk, 0x88) // :status 200
	for _, f := range [][2]string{{"server", "nginx/1.22.1"}, {"date", "Mon, 30 Nov 2026 04:00:00 GMT"},
		{"content-type", "application/octet-stream"}, {"content-length", "100"}, {"etag", `"6553a1b2-64"`}} {
		var b bytes.Buffer
		b.WriteByte(0x10) // never indexed
		for _, s := range f {
			b.WriteByte(0x80 | byte(hpack.HuffmanEncodeLength(s)))
			b.Write(hpack.AppendHuffmanString(nil, s))
		}
		blk = append(blk, b.Bytes()...)
	}
	d := newHDecoder(4096, 0)
	var fs [8]hpack.HeaderField
	n := 0
	emit := func(f hpack.HeaderField) { fs[n] = f; n++ }
	allocs := testing.AllocsPerRun(100, func() {
		n = 0
		if err := d.decode(blk, emit); err != nil {
			t.Fatal(err)
		}
	})
	if n != 6 || fs[1].Value != "nginx/1.22.1" || fs[5].Value != `"6553a1b2-64"` {
		t.Fatalf("fields %q", fs[:n])
	}
	if allocs != 1 {
		t.Errorf("%v allocations per block, want 1", allocs)
	}
	for _, m := range d.memo { // made for the second block: AllocsPerRun ran 101
		if m.enc != "" {
			t.Errorf("the memo keeps a never-indexed field: %q: %q", m.name, m.value)
		}
	}
}

// nginxBlock is a response header block as nginx 1.22 encodes it: server
// and date literals with incremental indexing by static name index,
// content-type and content-length without indexing, etag and
// accept-ranges with their names spelled out, all Huffman-coded.
func nginxBlock(date, etag string) []byte {
	blk := []byte{0x88} // :status 200
	huff := func(s string) {
		blk = append(blk, byte(0x80|hpack.HuffmanEncodeLength(s)))
		blk = hpack.AppendHuffmanString(blk, s)
	}
	for _, f := range []struct {
		first byte
		value string
	}{{0x40 | 54, "nginx/1.22.1"}, {0x40 | 33, date}, {0x0f, "text/plain"}, {0x0f, "100"}} {
		blk = append(blk, f.first)
		if f.first == 0x0f { // a 4-bit prefix: 15 plus the rest
			idx := map[string]byte{"text/plain": 31, "100": 28}[f.value]
			blk = append(blk, idx-15)
		}
		huff(f.value)
	}
	for _, f := range [][2]string{{"etag", etag}, {"accept-ranges", "bytes"}} {
		blk = append(blk, 0x00)
		huff(f[0])
		huff(f[1])
	}
	return blk
}

// TestHPACKMemo: a block whose literals repeat the last block's (nginx's
// responses) decodes without allocating or decoding them again; a changed
// literal is decoded anew; strings handed out before do not change; and
// the fields are x/net's for the same blocks.
func TestHPACKMemo(t *testing.T) {
	d := newHDecoder(4096, 0)
	var fs []hpack.HeaderField
	emit := func(f hpack.HeaderField) { fs = append(fs, f) }
	blk := nginxBlock("Mon, 30 Nov 2026 05:00:00 GMT", `"6553a1b2-64"`)
	for range 200 { // fill the table and evict from it
		fs = fs[:0]
		if err := d.decode(blk, emit); err != nil {
			t.Fatal(err)
		}
	}
	first := slices.Clone(fs)
	want := []hpack.HeaderField{{Name: ":status", Value: "200"}, {Name: "server", Value: "nginx/1.22.1"},
		{Name: "date", Value: "Mon, 30 Nov 2026 05:00:00 GMT"}, {Name: "content-type", Value: "text/plain"},
		{Name: "content-length", Value: "100"}, {Name: "etag", Value: `"6553a1b2-64"`}, {Name: "accept-ranges", Value: "bytes"}}
	if !slices.Equal(first, want) {
		t.Fatalf("fields %q", first)
	}
	if !testing.Short() && !raceEnabled {
		allocs := testing.AllocsPerRun(1000, func() {
			fs = fs[:0]
			if err := d.decode(blk, emit); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("%v allocations per repeated block, want 0", allocs)
		}
	}
	next := nginxBlock("Mon, 30 Nov 2026 05:00:01 GMT", `"6553a1b2-65"`)
	fs = fs[:0]
	if err := d.decode(next, emit); err != nil {
		t.Fatal(err)
	}
	if fs[2].Value != "Mon, 30 Nov 2026 05:00:01 GMT" || fs[5].Value != `"6553a1b2-65"` || fs[1].Value != "nginx/1.22.1" {
		t.Errorf("changed block decoded as %q", fs)
	}
	if !slices.Equal(first, want) {
		t.Errorf("the first block's fields changed to %q", first)
	}
	seq := [][]byte{blk, blk, next, blk, next, next}
	x, xf := xnetDecode(4096, 0, seq)
	o, of := ourDecode(4096, 0, seq)
	if !slices.Equal(of, xf) || !slices.EqualFunc(o, x, slices.Equal) {
		t.Errorf("got %q (failed %v), x/net %q (failed %v)", o, of, x, xf)
	}
}

// TestHPACKMemoDynamicName: a literal whose name is a dynamic table index
// means another name once the table has changed, though its bytes are the
// same; it is decoded each time, not taken from the memo.
func TestHPACKMemoDynamicName(t *testing.T) {
	// Block 1: x-a: 1 with indexing (index 62), then a literal without
	// indexing named by index 62 (4-bit prefix: 15, then 47).
	b1 := append([]byte{0x40, 0x03}, "x-a"...)
	b1 = append(b1, 0x01, '1', 0x0f, 62-15, 0x01, 'v')
	// Block 2: x-b: 2 with indexing (now index 62), then the same bytes.
	b2 := append([]byte{0x40, 0x03}, "x-b"...)
	b2 = append(b2, 0x01, '2', 0x0f, 62-15, 0x01, 'v')
	// Block 3: the same literal at the same place as in block 1.
	b3 := slices.Clone(b1)
	seq := [][]byte{b1, b2, b3}
	got, gotFail := ourDecode(4096, 0, seq)
	want, wantFail := xnetDecode(4096, 0, seq)
	if !slices.Equal(gotFail, wantFail) || !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("got %q (failed %v), x/net %q (failed %v)", got, gotFail, want, wantFail)
	}
	if got[1][1].Name != "x-b" {
		t.Fatalf("block 2's second field %q, want x-b", got[1][1])
	}
}

// TestHPACKIndexedLiteralsAllocateNothing: nginx sends some of its fields
// as literals with incremental indexing in every response and never
// refers to them; adding them to the table costs no allocation per block
// beyond the block's one buffer (the table's own buffers are shared by
// many blocks).
func TestHPACKIndexedLiteralsAllocateNothing(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("allocation counts need a normal build")
	}
	var blk []byte
	blk = append(blk, 0x88)
	for _, f := range []struct {
		index byte
		value string
	}{{54, "nginx/1.22.1"}, {33, "Mon, 30 Nov 2026 04:00:00 GMT"}, {31, "text/plain"}} {
		blk = append(blk, 0x40|f.index, byte(0x80|hpack.HuffmanEncodeLength(f.value)))
		blk = hpack.AppendHuffmanString(blk, f.value)
	}
	d := newHDecoder(65536, 0)
	var fs []hpack.HeaderField
	emit := func(f hpack.HeaderField) { fs = append(fs, f) }
	for range 3000 { // fill the table and evict from it
		fs = fs[:0]
		if err := d.decode(blk, emit); err != nil {
			t.Fatal(err)
		}
	}
	allocs := testing.AllocsPerRun(1000, func() {
		fs = fs[:0]
		if err := d.decode(blk, emit); err != nil {
			t.Fatal(err)
		}
	})
	if len(fs) != 4 || fs[1].Value != "nginx/1.22.1" || fs[3].Value != "text/plain" {
		t.Fatalf("fields %q", fs)
	}
	if hf, ok := d.at(62); !ok || hf.Name != "content-type" || hf.Value != "text/plain" {
		t.Fatalf("newest table entry %q", hf)
	}
	if allocs > 1.1 {
		t.Errorf("%.2f allocations per block, want 1 (and a share of a table buffer)", allocs)
	}
}

// FuzzHPACKDecoder compares hdecoder with x/net's decoder on arbitrary
// blocks: the same fields, and failure on the same block.
func FuzzHPACKDecoder(f *testing.F) {
	for _, b := range encodeBlocks(32, []string{":status", "200", "x-a", "1", "authorization", "z"}, []string{"x-a", "1", "x-b", strings.Repeat("q", 40)}) {
		f.Add(b, []byte{0x88, 0xbe}, uint16(4096), uint8(50))
	}
	f.Add([]byte{0x3f, 0xe1, 0x1f, 0x40, 0x01, 'a', 0x01, 'b'}, []byte{0xbe, 0x20, 0xbe}, uint16(100), uint8(0))
	f.Add(rawLiteral("server", "nginx"), []byte{0x00, 0x81, 0xff, 0x00}, uint16(0), uint8(3))
	f.Add(nginxBlock("Mon, 30 Nov 2026 05:00:00 GMT", "a"), nginxBlock("Mon, 30 Nov 2026 05:00:01 GMT", "a"), uint16(4096), uint8(0))
	f.Add(nginxBlock("d", "a"), nginxBlock("d", "a"), uint16(60), uint8(20))
	f.Fuzz(func(t *testing.T, a, b []byte, table uint16, maxStr uint8) {
		blocks := [][]byte{a, b}
		want, wantFail := xnetDecode(uint32(table), int(maxStr), blocks)
		got, gotFail := ourDecode(uint32(table), int(maxStr), blocks)
		if !slices.Equal(gotFail, wantFail) {
			t.Fatalf("failed %v, x/net %v (fields %q, x/net %q)", gotFail, wantFail, got, want)
		}
		for i := range want {
			if wantFail[i] {
				continue // the fields before an error may differ in number
			}
			if !slices.Equal(got[i], want[i]) {
				t.Fatalf("block %d: %q, x/net %q", i, got[i], want[i])
			}
		}
	})
}

// TestHPACKStringsOutliveTheirBlock: decoded strings share memory neither
// with the block (the connection reuses its buffer for the next frame) nor
// with the next block's strings.
func TestHPACKStringsOutliveTheirBlock(t *testing.T) {
	d := newHDecoder(4096, 0)
	blk := append(rawLiteral("x-raw", "first value"), 0x00, byte(0x80|hpack.HuffmanEncodeLength("x-huf")))
	blk = append(blk, hpack.AppendHuffmanString(nil, "x-huf")...)
	blk = append(blk, byte(0x80|hpack.HuffmanEncodeLength("huffman one")))
	blk = append(blk, hpack.AppendHuffmanString(nil, "huffman one")...)
	blk = append(blk, 0x40, 0x05) // with indexing
	blk = append(blk, "x-idx"...)
	blk = append(blk, 0x07)
	blk = append(blk, "indexed"...)
	var first []hpack.HeaderField
	if err := d.decode(blk, func(f hpack.HeaderField) { first = append(first, f) }); err != nil {
		t.Fatal(err)
	}
	want := []hpack.HeaderField{{Name: "x-raw", Value: "first value"}, {Name: "x-huf", Value: "huffman one"}, {Name: "x-idx", Value: "indexed"}}
	if !slices.Equal(first, want) {
		t.Fatalf("fields %q", first)
	}
	for i := range blk {
		blk[i] = 'Z'
	}
	second := append(rawLiteral("x-raw", "other value"), 0xbe) // and the indexed entry
	var got []hpack.HeaderField
	if err := d.decode(second, func(f hpack.HeaderField) { got = append(got, f) }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(first, want) {
		t.Errorf("the first block's fields changed to %q", first)
	}
	if w := []hpack.HeaderField{{Name: "x-raw", Value: "other value"}, {Name: "x-idx", Value: "indexed"}}; !slices.Equal(got, w) {
		t.Errorf("second block %q, want %q", got, w)
	}
}

// TestHuffmanTables: the code read off x/net's encoder is canonical, so
// decodeHuffman uses its tables, and every byte round-trips alone, in
// pairs with a long code, and in a long string.
func TestHuffmanTables(t *testing.T) {
	if !hpackHuffman().ok {
		t.Fatal("the Huffman code read off x/net's encoder is not canonical")
	}
	var all []byte
	for s := range 256 {
		all = append(all, byte(s))
		for _, in := range []string{string([]byte{byte(s)}), string([]byte{byte(s), 0xff, byte(s)}), "a" + string([]byte{byte(s)})} {
			got, err := decodeHuffman(nil, hpack.AppendHuffmanString(nil, in))
			if err != nil || string(got) != in {
				t.Fatalf("%q: decoded %q, %v", in, got, err)
			}
		}
	}
	in := strings.Repeat(string(all), 3)
	got, err := decodeHuffman([]byte("prefix"), hpack.AppendHuffmanString(nil, in))
	if err != nil || string(got) != "prefix"+in {
		t.Fatalf("all bytes: %v", err)
	}
}

// TestHuffmanBadInput: what x/net's decoder refuses, decodeHuffman refuses.
func TestHuffmanBadInput(t *testing.T) {
	for _, in := range [][]byte{
		{0xff, 0xff, 0xff, 0xff}, // EOS (30 ones) then padding
		{0x00},                   // '0' (00000) then padding of zeros
		{0x1f, 0xff},             // '0', then 11 bits of ones: padding over 7 bits
		{0xfe},                   // no code: 7 ones then 0 (prefix of an 8+ bit code)
	} {
		_, ref := hpack.HuffmanDecodeToString(in)
		_, err := decodeHuffman(nil, in)
		if (err == nil) != (ref == nil) || err != nil && err != hpack.ErrInvalidHuffman {
			t.Errorf("%x: %v, x/net %v", in, err, ref)
		}
	}
}

func BenchmarkHuffmanDecode(b *testing.B) {
	enc := hpack.AppendHuffmanString(nil, "Mon, 30 Nov 2026 04:00:00 GMT")
	buf := make([]byte, 0, 64)
	b.Run("guise", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			buf, _ = decodeHuffman(buf[:0], enc)
		}
	})
	b.Run("x-net", func(b *testing.B) {
		b.ReportAllocs()
		var w bytes.Buffer
		for b.Loop() {
			w.Reset()
			hpack.HuffmanDecode(&w, enc)
		}
	})
}

// BenchmarkHPACKDecodeNginx decodes nginx's response header block again
// and again, as a connection does for every response (its date changes
// once a second, so it is the same block here).
func BenchmarkHPACKDecodeNginx(b *testing.B) {
	blk := nginxBlock("Mon, 30 Nov 2026 05:00:00 GMT", `"6553a1b2-64"`)
	d := newHDecoder(4096, 0)
	n := 0
	emit := func(hpack.HeaderField) { n++ }
	b.ReportAllocs()
	for b.Loop() {
		if err := d.decode(blk, emit); err != nil {
			b.Fatal(err)
		}
	}
}
