//go:build cgo

package main

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzParseHeader reads arbitrary header blocks as the bindings pass them
// (name NUL value NUL, repeated): a block is refused with an invalidError
// or read into fields that, written back, give the same bytes.
func FuzzParseHeader(f *testing.F) {
	for _, s := range []string{"", "a\x00b\x00", "a\x00", "a\x00b", "\x00\x00\x00\x00", "x-k\x00v v\x00cookie\x00a=b\x00"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := parseHeader(b)
		if err != nil {
			var ie invalidError
			if !errors.As(err, &ie) {
				t.Fatalf("%q: %v (%T), want an invalidError", b, err, err)
			}
			return
		}
		var back []byte
		for _, f := range h {
			back = append(append(append(append(back, f.Name...), 0), f.Value...), 0)
		}
		if !bytes.Equal(back, b) {
			t.Fatalf("%q read as %q, written back as %q", b, h, back)
		}
	})
}
