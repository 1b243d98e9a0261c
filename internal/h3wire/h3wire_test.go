package h3wire

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/guise-http/guise/internal/quicwire"
	"github.com/quic-go/qpack"
)

func TestFramesAndSettings(t *testing.T) {
	b := AppendSettings(nil, Setting{SettingQPACKMaxTableCapacity, 0}, Setting{SettingMaxFieldSectionSize, 262144}, Setting{0x1f*3 + 0x21, 7})
	b = AppendFrame(b, 0x1f*2+0x21, []byte("grease"))
	f, err := ParseFrame(b)
	if err != nil || f.Type != FrameSettings {
		t.Fatal(f, err)
	}
	ss, err := ParseSettings(f.Payload)
	if err != nil || len(ss) != 3 || ss[1].Value != 262144 || ss[2].ID.String() != "GREASE" {
		t.Fatalf("%v %v", ss, err)
	}
	g, err := ParseFrame(b[f.Size:])
	if err != nil || g.Type.String() != "GREASE" || string(g.Payload) != "grease" || f.Size+g.Size != len(b) {
		t.Fatalf("%v %v", g, err)
	}
	pu := quicwire.AppendVarint(nil, 4)
	pu = append(pu, "u=0, i"...)
	id, field, err := ParsePriorityUpdate(pu)
	if err != nil || id != 4 || field != "u=0, i" {
		t.Errorf("%d %q %v", id, field, err)
	}
}

// TestFrameBadInput is RELIABILITY Q-06: truncated frames, HTTP/2's frame
// types and bad SETTINGS are typed errors.
func TestFrameBadInput(t *testing.T) {
	full := AppendFrame(nil, FrameHeaders, []byte("abcdef"))
	for n := range len(full) {
		if _, err := ParseFrame(full[:n]); !errors.Is(err, ErrTruncated) {
			t.Errorf("%d bytes: %v, want ErrTruncated", n, err)
		}
	}
	for _, typ := range []FrameType{0x02, 0x06, 0x08, 0x09} {
		if _, err := ParseFrame(AppendFrame(nil, typ, nil)); !errors.Is(err, ErrReservedFrame) {
			t.Errorf("type %#x: %v", uint64(typ), err)
		}
	}
	for name, p := range map[string][]byte{
		"duplicate":       {0x06, 0x01, 0x06, 0x02},
		"http/2 setting":  {0x04, 0x01},
		"truncated value": {0x06, 0x40},
	} {
		if _, err := ParseSettings(p); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: %v, want ErrMalformed", name, err)
		}
	}
}

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
	resp := AppendResponseSection(nil, Field{"content-type", "text/plain"}, Field{"x-long", strings.Repeat("v", 300)})
	fs, err = DecodeFieldSection(resp, 1<<16)
	if err != nil || len(fs.Fields) != 3 || fs.Fields[0] != (Field{":status", "200"}) || len(fs.Fields[2].Value) != 300 {
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
		"empty":         {nil, 1 << 16, ErrQPACK},
		"dynamic table": {[]byte{0x02, 0x00, 0x80}, 1 << 16, ErrQPACK},
		"bad index":     {[]byte{0x00, 0x00, 0xff, 0x7f}, 1 << 16, ErrQPACK},
		"literal cut":   {[]byte{0x00, 0x00, 0x25, 'a'}, 1 << 16, ErrQPACK},
		// 4,000 one-byte references to a static entry of ~60 bytes.
		"bomb": {append([]byte{0, 0}, slices.Repeat([]byte{0xc0 | 72}, 4000)...), 1 << 14, ErrFieldSectionTooLarge},
	} {
		if _, err := DecodeFieldSection(c.in, c.max); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
}

func FuzzParseFrame(f *testing.F) {
	f.Add(AppendSettings(nil, Setting{SettingQPACKMaxTableCapacity, 0}, Setting{0x21, 1}))
	f.Add(AppendFrame(nil, FramePriorityUpdate, []byte{0x00, 'u', '=', '1'}))
	f.Fuzz(func(t *testing.T, b []byte) {
		for len(b) > 0 {
			fr, err := ParseFrame(b)
			if err != nil {
				if !errors.Is(err, ErrTruncated) && !errors.Is(err, ErrReservedFrame) {
					t.Fatalf("untyped %v", err)
				}
				return
			}
			switch fr.Type {
			case FrameSettings:
				if _, err := ParseSettings(fr.Payload); err != nil && !errors.Is(err, ErrMalformed) {
					t.Fatalf("untyped %v", err)
				}
			case FramePriorityUpdate:
				ParsePriorityUpdate(fr.Payload)
			case FrameHeaders:
				DecodeFieldSection(fr.Payload, 1<<12)
			}
			b = b[fr.Size:]
		}
	})
}

func FuzzDecodeFieldSection(f *testing.F) {
	f.Add(AppendResponseSection(nil, Field{"a", "b"}))
	f.Add([]byte{0x00, 0x00, 0xd1, 0xd7, 0x50, 0x01, 'x'})
	f.Fuzz(func(t *testing.T, b []byte) {
		fs, err := DecodeFieldSection(b, 1<<12)
		if err != nil {
			if !errors.Is(err, ErrQPACK) && !errors.Is(err, ErrFieldSectionTooLarge) {
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
