package h3wire

import (
	"errors"
	"testing"

	"github.com/guise-http/guise/internal/quicwire"
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
			}
			b = b[fr.Size:]
		}
	})
}
