package fingerprint

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/guise-http/guise/internal/h3wire"
	"github.com/guise-http/guise/internal/quicwire"
	"github.com/quic-go/quic-go"
	"golang.org/x/net/http2/hpack"
)

// TestQPACKDynRecorder drives a server that allows a dynamic table with a
// scripted client whose encoder inserts two entries and whose request
// references them (relative, post-base, and a Huffman value): the server
// decodes the :path through the table, acknowledges the inserts and the
// section on its decoder stream, and the record (and its JSON form read
// back) has the instructions and lines as sent.
func TestQPACKDynRecorder(t *testing.T) {
	s := startServer(t, &Server{QPACKMaxTableCapacity: 4096, QPACKBlockedStreams: 10})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := quic.DialAddr(ctx, s.ListenAddr(), &tls.Config{RootCAs: s.CertPool(), ServerName: "localhost", NextProtos: []string{ProtoH3}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseWithError(0, "")
	ctrl, _ := c.OpenUniStream()
	ctrl.Write(h3wire.AppendSettings(quicwire.AppendVarint(nil, uint64(h3wire.StreamControl))))
	enc, _ := c.OpenUniStream()
	e := quicwire.AppendVarint(nil, uint64(h3wire.StreamQPACKEncoder))
	e = append(e, 0x3f, 0xe1, 0x1f) // Set Dynamic Table Capacity 4096 (31 + 4065)
	e = append(e, 0x40|3)           // Insert With Literal Name, raw name of 3 bytes
	e = append(e, "x-a"...)
	e = append(e, 1, '1') // raw value "1"
	e = append(e, 0xc0|0) // Insert With Name Reference, static :authority
	e = append(e, 0x80|byte(hpack.HuffmanEncodeLength("localhost")))
	e = hpack.AppendHuffmanString(e, "localhost")
	enc.Write(e)
	req, err := c.OpenStreamSync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Required Insert Count 2 (encoded 3), Base 1 (sign, delta 0).
	sec := []byte{3, 0x80, 0xc0 | 17, 0xc0 | 23} // :method GET, :scheme https
	sec = append(sec, 0x10)                      // indexed post-base 0: :authority localhost
	sec = append(sec, 0x50|1, 9)                 // :path, static name reference, raw value
	sec = append(sec, "/h3/fetch"...)
	sec = append(sec, 0x80)                                       // indexed relative 0: x-a 1
	sec = append(sec, 0x20|0x10|0x03, 't', 'e', 'e', 2, 'h', 'i') // literal name "tee" with N
	req.Write(h3wire.AppendFrame(nil, h3wire.FrameHeaders, sec))
	req.Close()
	req.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := io.ReadAll(req)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasSuffix(resp, h3wire.AppendFrame(nil, h3wire.FrameData, []byte("ok"))) {
		t.Fatalf("response %x: not /h3/fetch's", resp)
	}
	// The server's decoder stream: Insert Count Increment 2, then the
	// Section Acknowledgment of stream 0.
	var got []byte
	for got == nil {
		u, err := c.AcceptUniStream(ctx)
		if err != nil {
			t.Fatal(err)
		}
		u.SetReadDeadline(time.Now().Add(2 * time.Second))
		b := make([]byte, 16)
		n, _ := io.ReadAtLeast(u, b, 1)
		if n > 0 && b[0] == byte(h3wire.StreamQPACKDecoder) {
			if n < 3 {
				m, _ := io.ReadAtLeast(u, b[n:], 3-n)
				n += m
			}
			got = b[1:n]
		}
	}
	if !bytes.Equal(got, []byte{0x02, 0x80}) {
		t.Errorf("decoder stream %x, want 02 80", got)
	}
	var r *ConnRecord
	for r == nil {
		ch := s.Changed()
		for _, rec := range s.Records() {
			if h, _ := rec.HTTP3(); rec.Transport == TransportQUIC && h != nil && len(h.Requests) == 1 &&
				len(h.Requests[0].Lines) == 6 && len(h.QPACKEncoder) == 3 {
				r = rec
			}
		}
		if r != nil {
			break
		}
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatal("no record with the request and the encoder stream")
		}
	}
	check := func(r *ConnRecord) {
		t.Helper()
		if r.QUIC.QPACKMaxTableCapacity != 4096 || r.QUIC.QPACKBlockedStreams != 10 {
			t.Errorf("settings %d %d", r.QUIC.QPACKMaxTableCapacity, r.QUIC.QPACKBlockedStreams)
		}
		h, err := r.HTTP3()
		if err != nil || h.QPACKEncoderErr != "" {
			t.Fatal(err, h.QPACKEncoderErr)
		}
		var ins []string
		for _, in := range h.QPACKEncoder {
			ins = append(ins, instrString(in))
		}
		want := []string{"set_dynamic_table_capacity 4096", "insert_with_literal_name x-a(raw) value(raw)",
			"insert_with_name_reference static[0] :authority value(H)"}
		if !slices.Equal(ins, want) {
			t.Errorf("encoder stream\n got %q\nwant %q", ins, want)
		}
		q := h.Requests[0]
		var lines []string
		for _, l := range q.Lines {
			lines = append(lines, lineString(l))
		}
		wantLines := []string{"indexed static[17] :method", "indexed static[23] :scheme", "indexed_post_base post-base[0] :authority",
			"literal_name_reference static[1] :path value(raw)", "indexed dynamic[0] x-a", "literal_literal_name tee(raw) value(raw) N"}
		if !slices.Equal(lines, wantLines) {
			t.Errorf("lines\n got %q\nwant %q", lines, wantLines)
		}
		if q.RequiredInsertCount != 2 || q.Base != 1 || q.DeltaBase != 0 || q.Err != "" {
			t.Errorf("ric %d base %d delta %d err %q", q.RequiredInsertCount, q.Base, q.DeltaBase, q.Err)
		}
		if hr := q.HTTPRequest(); hr.Target != "/h3/fetch" || fieldsString(hr) != "x-a: 1, tee: hi" {
			t.Errorf("request %s %s", hr.Target, fieldsString(hr))
		}
	}
	check(r)
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeRecord(b)
	if err != nil {
		t.Fatal(err)
	}
	check(back)
}

func fieldsString(hr *HTTPRequest) string {
	var out []string
	for _, f := range hr.Header {
		out = append(out, f.Name+": "+f.Value)
	}
	return strings.Join(out, ", ")
}

// dynRecordings reads testdata/recordings/<browser>-<kind>-*.json.
func dynRecordings(t *testing.T, browser, kind string) []*ConnRecord {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join("testdata", "recordings", browser+"-"+kind+"-*.json"))
	if len(paths) < 3 {
		t.Fatalf("%s-%s: %d recordings, want 3", browser, kind, len(paths))
	}
	var out []*ConnRecord
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		r, err := DecodeRecord(b)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// TestQPACKDynRecordings reads the recordings made against a server that
// allowed a dynamic table, checks that each browser's agree with one
// another outside qpackDynVaries, and pins what they show:
//   - with blocked streams allowed (h3dyn), Chromium's first request (sent
//     before the server's SETTINGS arrived) uses the static table alone,
//     and every later one inserts each field that is no exact static
//     match and has no exact dynamic match, in field order, then
//     references them all, unacknowledged, in its section (Base = Required
//     Insert Count = the inserts so far);
//   - Firefox inserts, from its first request on, only fields whose name
//     is in neither table, references them post-base in that request, and
//     later sends an exact dynamic match indexed and another value of a
//     dynamic name as a literal with a dynamic name reference;
//   - with no blocked streams allowed (h3dynnoblock), both set the table's
//     capacity and never insert: every section is static-only;
//   - with the SETTINGS sent 300 ms after the handshake (h3dynlate), both
//     send their first request static-only: neither waits for them
//     (Firefox's first request used the table in h3dyn only because the
//     SETTINGS had arrived before it).
func TestQPACKDynRecordings(t *testing.T) {
	for _, browser := range []string{"chromium-156", "firefox-esr-153"} {
		for _, k := range dynKinds {
			if k.capacity == 0 {
				continue // no table: TestQPACKStreamsRecordings
			}
			recs := dynRecordings(t, browser, k.kind)
			first := qpackFacts(t, recs[0])
			for _, r := range recs[1:] {
				f := qpackFacts(t, r)
				for key, v := range first {
					if !qpackFactEqual(key, f[key], v) && !slices.Contains(qpackDynVaries[browser], key) {
						t.Errorf("%s-%s: %s differs\n  %s\n  %s", browser, k.kind, key, f[key], v)
					}
				}
			}
			for _, r := range recs {
				h, _ := r.HTTP3()
				if h.QPACKEncoder[0].Kind != "set_dynamic_table_capacity" || h.QPACKEncoder[0].Index != dynTableCapacity {
					t.Errorf("%s-%s: encoder stream starts %+v", browser, k.kind, h.QPACKEncoder[0])
				}
				inserts := len(h.QPACKEncoder) - 1
				if k.blocked == 0 {
					if inserts != 0 {
						t.Errorf("%s-%s: %d inserts with no blocked streams allowed", browser, k.kind, inserts)
					}
					for _, q := range h.Requests {
						if q.RequiredInsertCount != 0 {
							t.Errorf("%s-%s: stream %d: Required Insert Count %d", browser, k.kind, q.StreamID, q.RequiredInsertCount)
						}
					}
					continue
				}
				if inserts == 0 {
					t.Errorf("%s-%s: no inserts", browser, k.kind)
				}
				for _, q := range h.Requests {
					switch {
					case (browser == "chromium-156" || k.kind == "h3dynlate") && q.StreamID == 0:
						if q.RequiredInsertCount != 0 {
							t.Errorf("%s: first request's Required Insert Count %d", browser, q.RequiredInsertCount)
						}
					case q.RequiredInsertCount == 0:
						t.Errorf("%s-%s: stream %d uses no dynamic table", browser, k.kind, q.StreamID)
					}
				}
			}
		}
	}
}

// FuzzQPACKDynRecord reads a record of a server that allowed a dynamic
// table whose client encoder stream and request HEADERS are arbitrary:
// HTTP3 returns what decoded and errors as strings, never panics.
func FuzzQPACKDynRecord(f *testing.F) {
	f.Add([]byte{0x3f, 0xe1, 0x1f, 0x43, 'x', '-', 'a', 1, '1'}, []byte{2, 0, 0x80, 0xd1})
	f.Add([]byte{0xc0, 0x83, 'a', 'b', 'c', 0x00}, []byte{3, 0x80, 0x10, 0x81})
	f.Add([]byte{0x20, 0x3f}, []byte{0, 0, 0x5f, 0x1d, 0x02, 'h', 'i'})
	f.Fuzz(func(t *testing.T, enc, sec []byte) {
		qr := &QUICRecord{QPACKMaxTableCapacity: 4096, QPACKBlockedStreams: 10, Streams: []QUICStream{
			{ID: 2, Data: append([]byte{byte(h3wire.StreamQPACKEncoder)}, enc...)},
			{ID: 0, Data: h3wire.AppendFrame(nil, h3wire.FrameHeaders, sec)},
		}}
		for i := range qr.Streams {
			qr.Streams[i].Total = int64(len(qr.Streams[i].Data))
		}
		r := &ConnRecord{QUIC: qr}
		h, err := r.HTTP3()
		if err != nil || h == nil || len(h.Requests) != 1 {
			t.Fatalf("%v %+v", err, h)
		}
		q := h.Requests[0]
		if q.Err == "" && len(q.Lines) != len(q.Fields) {
			t.Fatalf("%d lines, %d fields", len(q.Lines), len(q.Fields))
		}
	})
}
