package fingerprint

import (
	"bytes"
	"encoding/hex"
	"slices"
	"testing"
)

func TestRecordingsHTTP2(t *testing.T) {
	for _, r := range loadRecordings(t) {
		t.Run(r.name, func(t *testing.T) {
			want := r.rec.HTTP2
			if len(r.stream) != r.rec.ClientBytesRecorded {
				t.Fatalf("stream is %d bytes, recording says %d", len(r.stream), r.rec.ClientBytesRecorded)
			}
			h, err := ParseHTTP2(r.stream)
			if err != nil {
				t.Fatal(err)
			}
			if got := h.Akamai(); got != want.Akamai {
				t.Errorf("akamai: got %s, want %s", got, want.Akamai)
			}
			if got := h.AkamaiHash(); got != want.AkamaiHash {
				t.Errorf("akamai_hash: got %s, want %s", got, want.AkamaiHash)
			}
			if h.Consumed != len(r.stream) {
				t.Errorf("consumed %d of %d bytes", h.Consumed, len(r.stream))
			}
			if len(h.Settings) != len(want.Settings) {
				t.Fatalf("settings: got %v, want %v", h.Settings, want.Settings)
			}
			for i, s := range want.Settings {
				if h.Settings[i] != (Setting{ID: s.ID, Value: s.Value}) {
					t.Errorf("setting %d: got %v, want %v", i, h.Settings[i], s)
				}
			}
			if h.ConnWindowUpdate != want.ConnectionWindowUpdate {
				t.Errorf("conn window update: got %d, want %d", h.ConnWindowUpdate, want.ConnectionWindowUpdate)
			}
			if len(h.Frames) != len(want.Frames) {
				t.Fatalf("got %d frames, want %d", len(h.Frames), len(want.Frames))
			}
			for i, wf := range want.Frames {
				f := h.Frames[i]
				if uint8(f.Type) != wf.Type || f.Flags != wf.Flags || f.StreamID != wf.StreamID ||
					f.Length != wf.Length || hex.EncodeToString(f.Raw) != wf.RawHex {
					t.Errorf("frame %d: got %v %#x stream %d len %d, want type %d %#x stream %d len %d (or raw bytes differ)",
						i, f.Type, f.Flags, f.StreamID, f.Length, wf.Type, wf.Flags, wf.StreamID, wf.Length)
				}
			}
			// Firefox sends a WINDOW_UPDATE of 12451840 on every stream after its HEADERS.
			for i, f := range h.Frames {
				inc, ok := f.WindowIncrement()
				if ok != (f.Type == FrameWindowUpdate) || ok && f.StreamID == 0 && inc != want.ConnectionWindowUpdate ||
					ok && f.StreamID != 0 && (inc != 12451840 || h.Frames[i-1].Type != FrameHeaders) {
					t.Errorf("frame %d: WindowIncrement %d, %v", i, inc, ok)
				}
			}
			if len(h.Requests) != len(want.Requests) {
				t.Fatalf("got %d requests, want %d", len(h.Requests), len(want.Requests))
			}
			for i, wr := range want.Requests {
				req := &h.Requests[i]
				if req.StreamID != wr.StreamID || req.EndStream != wr.EndStream || req.Trailer {
					t.Errorf("request %d: stream %d end_stream %v trailer %v, want stream %d end_stream %v",
						i, req.StreamID, req.EndStream, req.Trailer, wr.StreamID, wr.EndStream)
				}
				if !slices.Equal(req.PseudoOrder, wr.PseudoHeaderOrder) {
					t.Errorf("request %d pseudo order: got %q, want %q", i, req.PseudoOrder, wr.PseudoHeaderOrder)
				}
				if got := req.HeaderOrder(); !slices.Equal(got, wr.HeaderOrder) {
					t.Errorf("request %d header order: got %q, want %q", i, got, wr.HeaderOrder)
				}
				if len(req.Header) != len(wr.Headers) {
					t.Fatalf("request %d: %d fields, want %d", i, len(req.Header), len(wr.Headers))
				}
				for j, f := range wr.Headers {
					if req.Header[j].Name != f.Name || req.Header[j].Value != f.Value {
						t.Errorf("request %d field %d: got %q: %q, want %q: %q", i, j,
							req.Header[j].Name, req.Header[j].Value, f.Name, f.Value)
					}
				}
				if req.Method() != wr.Method || req.Path() != wr.Path || req.Authority() != wr.Authority {
					t.Errorf("request %d: %s %s %s, want %s %s %s", i, req.Method(), req.Path(), req.Authority(),
						wr.Method, wr.Path, wr.Authority)
				}
				switch {
				case wr.Priority == nil && req.Priority != nil, wr.Priority != nil && req.Priority == nil:
					t.Errorf("request %d priority: got %v, want %v", i, req.Priority, wr.Priority)
				case wr.Priority != nil && *req.Priority != (Priority{wr.Priority.Exclusive, wr.Priority.StreamDependency, wr.Priority.Weight}):
					t.Errorf("request %d priority: got %+v, want %+v", i, *req.Priority, *wr.Priority)
				}
				// The header block is the HEADERS payload minus the 5 priority bytes.
				raw := h.Frames[slices.IndexFunc(h.Frames, func(f Frame) bool {
					return f.Type == FrameHeaders && f.StreamID == req.StreamID
				})].Raw
				if !bytes.HasSuffix(raw, req.HeaderBlock) || len(raw)-len(req.HeaderBlock) != 9+5 {
					t.Errorf("request %d: header block is not the HEADERS payload", i)
				}
			}
		})
	}
}

// Every prefix of a recorded stream parses without error into the frames
// that are complete, which is how the echo server reads a growing stream.
func TestRecordingsHTTP2Prefixes(t *testing.T) {
	for _, r := range loadRecordings(t) {
		full, err := ParseHTTP2(r.stream)
		if err != nil {
			t.Fatal(err)
		}
		for n := len(http2ClientPreface); n <= len(r.stream); n++ {
			h, err := ParseHTTP2(r.stream[:n])
			if err != nil {
				t.Fatalf("%s: prefix %d: %v", r.name, n, err)
			}
			if len(h.Frames) > len(full.Frames) || h.Consumed > n {
				t.Fatalf("%s: prefix %d: %d frames, consumed %d", r.name, n, len(h.Frames), h.Consumed)
			}
			end := len(http2ClientPreface)
			for _, f := range full.Frames[:len(h.Frames)] {
				end += len(f.Raw)
			}
			if h.Consumed != end || n-end >= 9 && n-end >= 9+full.Frames[len(h.Frames)].Length {
				t.Fatalf("%s: prefix %d: consumed %d, frames end at %d", r.name, n, h.Consumed, end)
			}
		}
	}
}
