package proxy

import (
	"bytes"
	"errors"
	"io"
	"net/netip"
	"testing"
)

// FuzzCONNECTResponse feeds proxy reply bytes to the CONNECT reply reader in
// chunks of a fuzzed size. Invariants: no panic; the result does not depend
// on how the bytes were split; only the documented errors come out; the head
// ends within the cap; on success the returned bytes are exactly the bytes
// read past the head, so they start the tunnel.
func FuzzCONNECTResponse(f *testing.F) {
	for _, s := range []string{
		"HTTP/1.1 200 Connection established\r\n\r\n",
		"HTTP/1.1 200 Connection established\r\n\r\nfoobar=ready",
		"HTTP/1.0 200 OK\r\nVia: 1.1 squid\r\n\r\n\x16\x03\x01",
		"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n\r\nx",
		"HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"x\"\r\nContent-Length: 5\r\n\r\nhello",
		"HTTP/1.1 502 Bad Gateway\r\n\r\n",
		"HTTP/1.1 200 OK\nX: y\n\nrest",
		"HTTP/1.1 200\r\n\r\n",
		"HTTP/1.1 200 OK\r\nX: " + string(bytes.Repeat([]byte{'a'}, 300)) + "\r\n\r\n",
	} {
		f.Add([]byte(s), uint8(0), uint16(0))
		f.Add([]byte(s), uint8(1), uint16(64))
	}
	f.Fuzz(func(t *testing.T, data []byte, chunk uint8, capSel uint16) {
		max := 16 + int(capSel)%2048
		run := func(n int) ([]byte, int, error) {
			r := &chunkReader{b: data, n: n}
			rest, err := readConnectReply(r, nil, max)
			return rest, r.off, err
		}
		rest, off, err := run(int(chunk) + 1)
		rest1, off1, err1 := run(1 << 20)
		if (err == nil) != (err1 == nil) {
			t.Fatalf("split changes the outcome: %v vs %v", err, err1)
		}
		if err != nil {
			var se *StatusError
			for _, e := range []error{err, err1} {
				if !errors.Is(e, ErrHeaderTooLarge) && !errors.Is(e, ErrMalformedReply) && !errors.Is(e, io.ErrUnexpectedEOF) && !errors.As(e, &se) {
					t.Fatalf("unexpected error %v", e)
				}
			}
			if errors.As(err, &se) && (se.StatusCode/100 == 2 || se.StatusCode < 100 || se.StatusCode > 999) {
				t.Fatalf("StatusError for %d", se.StatusCode)
			}
			if errors.Is(err, ErrHeaderTooLarge) != errors.Is(err1, ErrHeaderTooLarge) ||
				errors.Is(err, ErrMalformedReply) != errors.Is(err1, ErrMalformedReply) {
				t.Fatalf("split changes the error: %v vs %v", err, err1)
			}
			return
		}
		headLen, headLen1 := off-len(rest), off1-len(rest1)
		if headLen != headLen1 {
			t.Fatalf("head length %d vs %d", headLen, headLen1)
		}
		if headLen > max {
			t.Fatalf("head of %d bytes passed a cap of %d", headLen, max)
		}
		if !bytes.Equal(rest, data[headLen:off]) || !bytes.Equal(rest1, data[headLen:off1]) {
			t.Fatal("bytes after the head are not the tunnel's first bytes")
		}
		// The head ends with a blank line and its status line is 2xx.
		head := data[:headLen]
		if !bytes.HasSuffix(head, []byte("\n\n")) && !bytes.HasSuffix(head, []byte("\n\r\n")) {
			t.Fatalf("head %q does not end with a blank line", head)
		}
	})
}

// FuzzSOCKS5Reply runs the whole SOCKS5 client handshake against server
// bytes from the fuzzer (method reply, RFC 1929 reply, CONNECT reply).
// Invariants: no panic; only the documented errors; on success exactly the
// bytes the replies declare were consumed, never more.
func FuzzSOCKS5Reply(f *testing.F) {
	f.Add([]byte{5, 0, 5, 0, 0, 1, 127, 0, 0, 1, 0, 80}, false)
	f.Add([]byte{5, 2, 1, 0, 5, 0, 0, 3, 3, 'a', 'b', 'c', 0, 80, 'x'}, true)
	f.Add([]byte{5, 0, 5, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1}, false)
	f.Add([]byte{5, 0xFF}, false)
	f.Add([]byte{5, 2, 1, 1}, true)
	f.Add([]byte{5, 0, 5, 5, 0, 1}, false)
	f.Add([]byte{5, 0, 5, 0, 0, 9}, false)
	f.Add([]byte{5, 0, 5, 0, 0, 3, 200, 'a'}, false)
	f.Fuzz(func(t *testing.T, data []byte, auth bool) {
		c := &config{hasAuth: auth, user: "user", pass: "pass"}
		r := bytes.NewReader(data)
		var w bytes.Buffer
		err := socks5(&memConn{r: r, w: &w}, "origin.example", netip.Addr{}, "443", c)
		consumed := len(data) - r.Len()
		if err != nil {
			var se *SOCKSError
			if !errors.As(err, &se) && !errors.Is(err, ErrMalformedReply) && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		// Recompute what a correct client consumes.
		want := 2
		if data[1] == methodUserPass {
			want += 2
		}
		switch data[want+3] {
		case atypIPv4:
			want += 4 + 4 + 2
		case atypIPv6:
			want += 4 + 16 + 2
		case atypDomain:
			want += 4 + 1 + int(data[want+4]) + 2
		default:
			t.Fatalf("accepted address type %d", data[want+3])
		}
		if consumed != want {
			t.Fatalf("consumed %d bytes, replies declare %d", consumed, want)
		}
		if data[1] == methodUserPass && !auth {
			t.Fatal("did username/password without credentials")
		}
	})
}

// FuzzSOCKS4Reply: the SOCKS4 reply is exactly 8 bytes; only 0x5A succeeds.
func FuzzSOCKS4Reply(f *testing.F) {
	f.Add([]byte{0, 0x5A, 0, 0, 0, 0, 0, 0, 'x'})
	f.Add([]byte{0, 0x5B, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{0, 0x5A, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bytes.NewReader(data)
		var w bytes.Buffer
		err := socks4(&memConn{r: r, w: &w}, "origin.example", netip.Addr{}, "443", &config{user: "u"})
		if err == nil {
			if len(data)-r.Len() != 8 || data[1] != 0x5A {
				t.Fatalf("success after %d bytes with CD %#x", len(data)-r.Len(), data[1])
			}
			return
		}
		var se *SOCKSError
		if !errors.As(err, &se) && !errors.Is(err, ErrMalformedReply) && !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("unexpected error %v", err)
		}
	})
}
