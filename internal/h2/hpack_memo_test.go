package h2

import (
	"bytes"
	"testing"
)

// TestEncoderMemo encodes a run of header blocks, some repeating the one
// before, with block (which reuses the bytes of an unchanged repeat) and
// with a second encoder that always encodes: the bytes must be the same
// every time, and repeats after the table settled must come from the memo.
func TestEncoderMemo(t *testing.T) {
	nav := []tableEntry{{":method", "GET"}, {":authority", "a.test"}, {":scheme", "https"}, {":path", "/"}}
	for _, f := range chromeNav {
		nav = append(nav, tableEntry{f.Name, f.Value})
	}
	other := append([]tableEntry(nil), nav...)
	other[3] = tableEntry{":path", "/other"}
	cookie := append(append([]tableEntry(nil), nav...), tableEntry{"cookie", "a=1; bb=22; c=3"})
	run := [][]tableEntry{nav, nav, nav, other, other, nav, cookie, cookie, nav, nav}
	for name, style := range map[string]HPACKStyle{"chromium": ChromiumHPACK(), "firefox": FirefoxHPACK()} {
		t.Run(name, func(t *testing.T) {
			st := style
			memo, plain := newEncoder(&st), newEncoder(&st)
			hits := 0
			for i, fs := range run {
				if i == 5 {
					memo.setPeerTableSize(8192)
					plain.setPeerTableSize(8192)
				}
				_, hit := memo.cached(nil, fs)
				got := memo.block(nil, fs)
				want := plain.begin(nil)
				for _, f := range fs {
					want = plain.field(want, f.name, f.value)
				}
				if !bytes.Equal(got, want) {
					t.Fatalf("block %d: memo encoder wrote %x, want %x", i, got, want)
				}
				if hit {
					hits++
				}
			}
			if hits < 3 {
				t.Fatalf("%d blocks came from the memo, want at least 3", hits)
			}
		})
	}
}
