package qpackref

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/guise-http/guise/internal/h3wire"
	"github.com/quic-go/qpack"
)

func encodeSection(t *testing.T, fields ...qpack.HeaderField) []byte {
	t.Helper()
	var sb strings.Builder
	enc := qpack.NewEncoder(&sb)
	for _, f := range fields {
		if err := enc.WriteField(f); err != nil {
			t.Fatal(err)
		}
	}
	return []byte(sb.String())
}

func TestDecodeFieldSection(t *testing.T) {
	block := encodeSection(t,
		qpack.HeaderField{Name: ":method", Value: "GET"},
		qpack.HeaderField{Name: ":authority", Value: "fp.test:8443"},
		qpack.HeaderField{Name: ":scheme", Value: "https"},
		qpack.HeaderField{Name: ":path", Value: "/"},
		qpack.HeaderField{Name: "priority", Value: "u=0, i"},
	)
	fs, err := DecodeFieldSection(block, 1<<16)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range fs.Fields {
		names = append(names, f.Name)
	}
	if want := []string{":method", ":authority", ":scheme", ":path", "priority"}; !slices.Equal(names, want) {
		t.Errorf("names %q", names)
	}
	resp := h3wire.AppendResponseSection(nil, h3wire.Field{Name: "content-type", Value: "text/plain"}, h3wire.Field{Name: "x-long", Value: strings.Repeat("v", 300)})
	fs, err = DecodeFieldSection(resp, 1<<16)
	if err != nil || len(fs.Fields) != 3 || fs.Fields[0] != (h3wire.Field{Name: ":status", Value: "200"}) || len(fs.Fields[2].Value) != 300 {
		t.Fatalf("%+v %v", fs, err)
	}
}

// TestDecodeFieldSectionBadInput is RELIABILITY Q-07: a dynamic-table
// reference, garbage and a section past the size limit (a QPACK bomb of
// repeated static references) are typed errors.
func TestDecodeFieldSectionBadInput(t *testing.T) {
	for name, c := range map[string]struct {
		in   []byte
		max  int
		want error
	}{
		"empty":         {nil, 1 << 16, h3wire.ErrQPACK},
		"dynamic table": {[]byte{0x02, 0x00, 0x80}, 1 << 16, h3wire.ErrQPACK},
		"bad index":     {[]byte{0x00, 0x00, 0xff, 0x7f}, 1 << 16, h3wire.ErrQPACK},
		"literal cut":   {[]byte{0x00, 0x00, 0x25, 'a'}, 1 << 16, h3wire.ErrQPACK},
		// 4,000 one-byte references to a static entry of ~60 bytes.
		"bomb": {append([]byte{0, 0}, slices.Repeat([]byte{0xc0 | 72}, 4000)...), 1 << 14, h3wire.ErrFieldSectionTooLarge},
	} {
		if _, err := DecodeFieldSection(c.in, c.max); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
}

func FuzzDecodeFieldSection(f *testing.F) {
	f.Add(h3wire.AppendResponseSection(nil, h3wire.Field{Name: "a", Value: "b"}))
	f.Add([]byte{0x00, 0x00, 0xd1, 0xd7, 0x50, 0x01, 'x'})
	f.Fuzz(func(t *testing.T, b []byte) {
		fs, err := DecodeFieldSection(b, 1<<12)
		if err != nil {
			if !errors.Is(err, h3wire.ErrQPACK) && !errors.Is(err, h3wire.ErrFieldSectionTooLarge) {
				t.Fatalf("untyped %v", err)
			}
			return
		}
		size := 0
		for _, f := range fs.Fields {
			size += len(f.Name) + len(f.Value) + 32
		}
		if size > 1<<12 {
			t.Fatalf("size %d past the limit", size)
		}
	})
}
