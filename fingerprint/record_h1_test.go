package fingerprint

import (
	"bytes"
	"strings"
	"testing"
)

func TestSplitHTTP1(t *testing.T) {
	get := "GET / HTTP/1.1\r\nHost: a\r\n\r\n"
	post := "POST /p HTTP/1.1\r\nHost: a\r\nContent-Length: 7\r\n\r\n"
	chunked := "POST /c HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
	for _, c := range []struct {
		name, in string
		want     []string
	}{
		{"empty", "", nil},
		{"one", get, []string{get}},
		{"partial head", get[:10], nil},
		{"two", get + get, []string{get, get}},
		{"leading crlf", "\r\n" + get, []string{get}},
		{"content-length", post + "GET / H" + get, []string{post, get}},
		{"body incomplete", post + "GET", []string{post}},
		{"chunked", chunked + "3\r\nabc\r\n0\r\nX-T: 1\r\n\r\n" + get, []string{chunked, get}},
		{"chunked ext", chunked + "3;x=y\r\nabc\r\n0\r\n\r\n" + get, []string{chunked, get}},
		{"chunked incomplete", chunked + "3\r\nab", []string{chunked}},
		{"bad chunk size", chunked + "zz\r\n" + get, []string{chunked}},
		{"conflicting lengths", "POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab" + get, []string{"POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"}},
		{"cl and chunked", "POST / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n" + get, []string{"POST / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n"}},
	} {
		got := splitHTTP1([]byte(c.in))
		if len(got) != len(c.want) {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
			continue
		}
		for i := range got {
			if string(got[i]) != c.want[i] {
				t.Errorf("%s: head %d %q, want %q", c.name, i, got[i], c.want[i])
			}
		}
	}
}

func FuzzSplitHTTP1(f *testing.F) {
	f.Add([]byte("GET / HTTP/1.1\r\nHost: a\r\n\r\nGET / HTTP/1.1\r\n\r\n"))
	f.Add([]byte("POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\nabcGET / HTTP/1.1\r\n\r\n"))
	f.Add([]byte("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		heads := splitHTTP1(b)
		if len(heads) > maxH1Heads {
			t.Fatalf("%d heads", len(heads))
		}
		// Heads are disjoint, in order, each ends with a blank line and
		// lies inside b.
		rest := b
		for _, h := range heads {
			if !bytes.HasSuffix(h, []byte("\r\n\r\n")) {
				t.Fatalf("head %q does not end with a blank line", h)
			}
			i := bytes.Index(rest, h)
			if i < 0 {
				t.Fatalf("head %q not found in order", h)
			}
			rest = rest[i+len(h):]
		}
	})
}

func TestReadClientHelloFragmented(t *testing.T) {
	// A ClientHello of 300 bytes of body split over three records.
	body := make([]byte, 300)
	msg := append([]byte{1, 0, 1, 44}, body...)
	var wire []byte
	for _, part := range [][]byte{msg[:2], msg[2:100], msg[100:]} {
		wire = append(wire, 0x16, 3, 1, byte(len(part)>>8), byte(len(part)))
		wire = append(wire, part...)
	}
	wire = append(wire, "trailing application bytes"...)
	r := bytes.NewReader(wire[1:])
	raw, err := readClientHello(r, wire[0])
	if err != nil {
		t.Fatal(err)
	}
	if want := len(wire) - len("trailing application bytes"); len(raw) != want || !bytes.Equal(raw, wire[:want]) {
		t.Fatalf("read %d bytes, want the %d of the three records", len(raw), want)
	}
	if r.Len() != len("trailing application bytes") {
		t.Fatalf("read past the hello: %d left", r.Len())
	}
}

func TestReadClientHelloErrors(t *testing.T) {
	for _, c := range []struct{ name, in string }{
		{"eof in header", "\x16\x03"},
		{"zero length", "\x16\x03\x01\x00\x00"},
		{"too long", "\x16\x03\x01\xff\xff"},
		{"eof in body", "\x16\x03\x01\x00\x10\x01"},
		{"not a hello", "\x16\x03\x01\x00\x04\x02\x00\x00\x00"},
		{"alert record next", "\x16\x03\x01\x00\x02\x01\x00\x15\x03\x01\x00\x02\x01\x00"},
		{"never complete", "\x16\x03\x01\x00\x04\x01\xff\xff\xff" + strings.Repeat("\x16\x03\x01\x00\x01\x00", 20)},
	} {
		if _, err := readClientHello(strings.NewReader(c.in[1:]), c.in[0]); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}

func FuzzReadClientHello(f *testing.F) {
	f.Add([]byte("\x03\x01\x00\x08\x01\x00\x00\x04abcd"))
	f.Add([]byte("\x03\x01\x00\x02\x01\x00\x16\x03\x01\x00\x04\x00\x02ab"))
	f.Fuzz(func(t *testing.T, b []byte) {
		raw, err := readClientHello(bytes.NewReader(b), 0x16)
		if len(raw) > maxHelloBytes+5 {
			t.Fatalf("read %d bytes", len(raw))
		}
		if len(raw) == 0 || raw[0] != 0x16 || !bytes.HasPrefix(b, raw[1:]) {
			t.Fatalf("raw %q is not the bytes read", raw)
		}
		if err == nil {
			if _, perr := ParseClientHello(raw); perr != nil && !strings.Contains(perr.Error(), "fingerprint:") {
				t.Fatalf("parse error %v", perr)
			}
		}
	})
}

func FuzzDecodeRecord(f *testing.F) {
	f.Add([]byte(`{"id":1,"transport":"tls","tls":{"client_hello_record_hex":"16030100"},"protocol":"h2","raw_client_stream_head_hex":"505249"}`))
	f.Add([]byte(`{"transport":"tcp","raw_client_stream_head_hex":"474554202f20485454502f312e310d0a0d0a"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := DecodeRecord(b)
		if err != nil {
			return
		}
		// Whatever decodes must encode (derivations never panic).
		if _, err := r.MarshalJSON(); err != nil {
			t.Fatal(err)
		}
	})
}
