package h3

import (
	"bytes"
	"context"
	"errors"
	"io"
	"testing"
	"time"

	"github.com/guise-http/guise/internal/h3wire"
)

var decodeErrs = []error{errQPACKTruncated, errQPACKInteger, errQPACKHuffman, errQPACKIndex, errQPACKPrefix,
	errQPACKCapacity, errQPACKEntry, errQPACKBlocked, errQPACKLongInstr, ErrDynamicTableRefused, ErrFieldSectionTooLarge}

func typedDecodeErr(err error) bool {
	for _, e := range decodeErrs {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// FuzzDecoder feeds arbitrary encoder stream bytes (in two pieces, as a
// stream may cut them) and then decodes an arbitrary field section
// against the table they built: typed errors only, no panic, the decoded
// size within the limit, the table within its capacity.
func FuzzDecoder(f *testing.F) {
	ins := append(appendPrefixInt(nil, 0x20, 5, 4096), 0x43, 'a', 'b', 'c', 0x03, 'x', 'y', 'z')
	f.Add(ins, 3, []byte{0x02, 0x00, 0xd9, 0x80}, uint16(4096))
	f.Add([]byte{}, 0, []byte{0x00, 0x00, 0xd9, 0x5f, 0x1d, 0x03, 'a', 'b', 'c'}, uint16(0))
	f.Add(ins, 1, []byte{0x02, 0x80, 0xd9, 0x10}, uint16(4096))
	f.Fuzz(func(t *testing.T, enc []byte, cut int, sec []byte, maxCap uint16) {
		d := newDecoder(uint64(maxCap), 4)
		if cut < 0 || cut > len(enc) {
			cut = len(enc)
		}
		for _, piece := range [][]byte{enc[:cut], enc[cut:]} {
			if _, err := d.feed(piece); err != nil {
				if !typedDecodeErr(err) {
					t.Fatalf("feed: untyped %v", err)
				}
				break
			}
		}
		if d.size > d.cap || d.cap > d.maxCap {
			t.Fatalf("table %d bytes, capacity %d, max %d", d.size, d.cap, d.maxCap)
		}
		ric, base, n, err := d.sectionPrefix(sec)
		if err != nil {
			if !typedDecodeErr(err) {
				t.Fatalf("prefix: untyped %v", err)
			}
			return
		}
		if _, ok := d.waitInsert(ric); !ok {
			return // blocked: it would wait for inserts
		}
		const max = 4096
		size := 0
		var first []field
		err = d.decodeLines(sec[n:], ric, base, max, func(name, value string) {
			size += len(name) + len(value) + 32
			first = append(first, field{name, value})
		})
		if err != nil && !typedDecodeErr(err) {
			t.Fatalf("lines: untyped %v", err)
		}
		if size > max {
			t.Fatalf("decoded %d bytes past the limit %d", size, max)
		}
		// again, the strings now from the decoder's cache: the same
		// fields and the same error
		var again []field
		err2 := d.decodeLines(sec[n:], ric, base, max, func(name, value string) { again = append(again, field{name, value}) })
		if !errors.Is(err2, err) || len(again) != len(first) {
			t.Fatalf("decoded again: %d fields, %v; first %d, %v", len(again), err2, len(first), err)
		}
		for i := range first {
			if again[i] != first[i] {
				t.Fatalf("field %d decoded again: %q, first %q", i, again[i], first[i])
			}
		}
	})
}

// FuzzEncoder encodes an arbitrary field with each rule and decodes it
// back unchanged.
func FuzzEncoder(f *testing.F) {
	f.Add("accept", "*/*")
	f.Add("x-custom", "?0")
	f.Add(":path", "/a/b?c")
	f.Fuzz(func(t *testing.T, name, value string) {
		for _, rule := range []HuffmanRule{HuffmanShorter, HuffmanNotLonger, HuffmanNever} {
			e := encoder{huffman: rule}
			b := e.appendField(e.appendPrefix(nil), name, value)
			// coded again, from the encoder's cache, then without it: the
			// same bytes
			if again := e.appendField(e.appendPrefix(nil), name, value); !bytes.Equal(again, b) {
				t.Fatalf("rule %d: %x from the cache, %x coded", rule, again, b)
			}
			if raw := e.appendFieldCache(e.appendPrefix(nil), name, value, false); !bytes.Equal(raw, b) {
				t.Fatalf("rule %d: %x uncached, %x cached", rule, raw, b)
			}
			d := newDecoder(0, 0)
			ric, base, n, err := d.sectionPrefix(b)
			if err != nil {
				t.Fatal(err)
			}
			var got []field
			if err := d.decodeLines(b[n:], ric, base, 1<<30, func(n, v string) { got = append(got, field{n, v}) }); err != nil {
				t.Fatalf("rule %d: %v", rule, err)
			}
			if len(got) != 1 || got[0] != (field{name, value}) {
				t.Fatalf("rule %d: %q, want %q %q", rule, got, name, value)
			}
		}
	})
}

// FuzzClientConn runs a request against arbitrary server bytes: a control
// stream, a QPACK encoder stream and the request stream's response, over
// an in-memory connection. Every failure is typed, nothing panics, the
// body ends, and Close returns (its goroutines done).
func FuzzClientConn(f *testing.F) {
	ctrl := append([]byte{0x00}, h3wire.AppendSettings(nil, h3wire.Setting{ID: h3wire.SettingMaxFieldSectionSize, Value: 1 << 16})...)
	resp := h3wire.AppendFrame(nil, h3wire.FrameHeaders, h3wire.AppendResponseSection(nil, h3wire.Field{Name: "content-length", Value: "2"}))
	resp = h3wire.AppendFrame(resp, h3wire.FrameData, []byte("ok"))
	enc := append([]byte{0x02}, appendPrefixInt(nil, 0x20, 5, 4096)...)
	enc = append(enc, 0x43, 'a', 'b', 'c', 0x01, 'x')
	dyn := h3wire.AppendFrame(nil, h3wire.FrameHeaders, []byte{0x02, 0x00, 0xd9, 0x80})
	f.Add(ctrl, enc, resp)
	f.Add(ctrl, enc, append(dyn, h3wire.AppendFrame(nil, h3wire.FrameData, []byte("x"))...))
	f.Add(ctrl, []byte{}, append(resp, h3wire.AppendFrame(nil, h3wire.FrameHeaders, h3wire.AppendResponseSection(nil)[1:])...))
	f.Add([]byte{0x00, 0x07, 0x01, 0x00}, []byte{}, []byte{0x01, 0x40})
	f.Fuzz(func(t *testing.T, ctrl, enc, resp []byte) {
		cfg := &Config{Settings: []Setting{{ID: 1, Value: 4096}, {ID: 7, Value: 4}}, MaxFieldSectionSize: 4096}
		qc := newFakeConn(resp, ctrl, enc)
		cc, err := NewClientConn(qc, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer cc.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		r, err := cc.RoundTrip(ctx, &Request{Method: "GET", Scheme: "https", Authority: "a", Path: "/"})
		if err == nil {
			_, err = io.Copy(io.Discard, io.LimitReader(r.Body, 1<<20))
			r.Body.Close()
		}
		if err != nil && !typedConnErr(err) {
			t.Fatalf("untyped %T %v", err, err)
		}
	})
}

func typedConnErr(err error) bool {
	var ce *ConnectionError
	var se *StreamError
	var ge *GoAwayError
	var te *TimeoutError
	return errors.As(err, &ce) || errors.As(err, &se) || errors.As(err, &ge) || errors.As(err, &te) ||
		errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrClosed) || errors.Is(err, ErrBodyClosed) ||
		errors.Is(err, ErrTooMany1xx) || errors.Is(err, ErrFieldSectionTooLarge)
}
