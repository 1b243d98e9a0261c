package tls13

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
	"github.com/klauspost/compress/zlib"
	"github.com/klauspost/compress/zstd"
)

func identity(t *testing.T, names ...string) *Identity {
	t.Helper()
	id, err := NewIdentity(names...)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func start(t *testing.T, cfg Config) *Server {
	t.Helper()
	s, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func waitOne(t *testing.T, s *Server) Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rs, err := s.Wait(ctx, 1)
	if err != nil {
		t.Fatalf("server: %v", err)
	}
	return rs[0]
}

// get runs one request with Go's crypto/tls client, an implementation
// independent of this package, and returns the response.
func get(t *testing.T, s *Server, cfg *tls.Config) (string, error) {
	t.Helper()
	d := &tls.Dialer{Config: cfg}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	nc, err := d.DialContext(ctx, "tcp", s.Addr())
	if err != nil {
		return "", err
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	if st := nc.(*tls.Conn).ConnectionState(); st.Version != tls.VersionTLS13 || st.CipherSuite != tls.TLS_AES_128_GCM_SHA256 {
		t.Errorf("negotiated version %x suite %x", st.Version, st.CipherSuite)
	}
	if _, err := io.WriteString(nc, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		return "", err
	}
	b, err := io.ReadAll(nc)
	return string(b), err
}

// TestAgainstCryptoTLS checks the handshake, record layer and close_notify
// against Go's TLS 1.3 client (which does not offer certificate
// compression, so the certificate goes uncompressed): with an x25519 share,
// and with only a P-256 share, which needs a HelloRetryRequest.
func TestAgainstCryptoTLS(t *testing.T) {
	id := identity(t, "127.0.0.1")
	for _, tc := range []struct {
		name   string
		curves []tls.CurveID
		retry  bool
	}{
		{"x25519", []tls.CurveID{tls.X25519}, false},
		{"hybrid and x25519", nil, false},
		// Go 1.26 ranks SecP256r1MLKEM768 above X25519 and sends only its
		// share: the server must ask for x25519.
		{"retry for x25519", []tls.CurveID{tls.SecP256r1MLKEM768, tls.X25519}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := start(t, Config{Identity: id})
			resp, err := get(t, s, &tls.Config{RootCAs: id.Roots, CurvePreferences: tc.curves, NextProtos: []string{"h2", "http/1.1"}})
			if err != nil {
				t.Fatal(err)
			}
			if resp != DefaultResponse {
				t.Errorf("response %q", resp)
			}
			r := waitOne(t, s)
			if r.Err != nil || r.RetryRequest != tc.retry || r.Sent != 0 || r.Offered != nil {
				t.Errorf("result %+v", r)
			}
			if !strings.HasPrefix(string(r.Request), "GET / HTTP/1.1\r\n") {
				t.Errorf("request %q", r.Request)
			}
			if s.CompressedCertificates() != 0 {
				t.Errorf("%d compressed certificates sent to a client that offered none", s.CompressedCertificates())
			}
		})
	}
}

// TestForcedCompressionToCryptoTLS: a client that offered no compression
// gets a CompressedCertificate when one is forced, and fails.
func TestForcedCompressionToCryptoTLS(t *testing.T) {
	id := identity(t, "127.0.0.1")
	s := start(t, Config{Identity: id, Algorithm: Brotli})
	if _, err := get(t, s, &tls.Config{RootCAs: id.Roots}); err == nil {
		t.Fatal("crypto/tls accepted a compressed certificate it never asked for")
	}
	r := waitOne(t, s)
	var ae *AlertError
	if !errors.As(r.Err, &ae) || ae.Description != AlertUnexpectedMessage {
		t.Errorf("server result %v; want the client's unexpected_message alert", r.Err)
	}
	if s.CompressedCertificates() != 1 {
		t.Errorf("CompressedCertificates = %d", s.CompressedCertificates())
	}
}

// TestUnknownAuthority: the client's verification failure reaches
// the server as an alert, and the handshake fails on the client.
func TestUnknownAuthority(t *testing.T) {
	s := start(t, Config{Identity: identity(t, "127.0.0.1")})
	other := identity(t, "127.0.0.1")
	if _, err := get(t, s, &tls.Config{RootCAs: other.Roots}); err == nil {
		t.Fatal("handshake with an unknown CA succeeded")
	}
	r := waitOne(t, s)
	var ae *AlertError
	if !errors.As(r.Err, &ae) || ae.Description != AlertBadCertificate {
		t.Errorf("server result %v; want the client's bad_certificate alert", r.Err)
	}
}

// decompress undoes compress with the standard readers, reading to EOF.
func decompress(t *testing.T, a Algorithm, p []byte) []byte {
	t.Helper()
	var r io.Reader
	switch a {
	case Zlib:
		zr, err := zlib.NewReader(bytes.NewReader(p))
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		r = zr
	case Brotli:
		r = brotli.NewReader(bytes.NewReader(p))
	case Zstd:
		d, err := zstd.NewReader(bytes.NewReader(p))
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		r = d
	}
	out, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("%v: %v", a, err)
	}
	return out
}

// TestCompressedCertificateMessage checks the message layout of RFC 8879 4
// and every fault's effect on it.
func TestCompressedCertificateMessage(t *testing.T) {
	body := bytes.Repeat([]byte("certificate body "), 100)
	for _, a := range []Algorithm{Zlib, Brotli, Zstd} {
		for _, f := range []Fault{FaultNone, FaultCorrupt, FaultLengthLong, FaultLengthShort, FaultLengthHuge, FaultTrailingData} {
			m, err := compressedCertificate(a, body, f)
			if err != nil {
				t.Fatal(err)
			}
			if m[0] != msgCompressedCertificate || u24(m[1:]) != len(m)-4 {
				t.Fatalf("%v %v: header % x", a, f, m[:4])
			}
			if got := Algorithm(m[4])<<8 | Algorithm(m[5]); got != a {
				t.Errorf("%v %v: algorithm %v", a, f, got)
			}
			length, payload := u24(m[6:]), m[12:]
			if u24(m[9:]) != len(payload) {
				t.Fatalf("%v %v: payload length %d of %d", a, f, u24(m[9:]), len(payload))
			}
			want := map[Fault]int{FaultNone: len(body), FaultCorrupt: len(body), FaultLengthLong: len(body) + 1,
				FaultLengthShort: len(body) - 1, FaultLengthHuge: 1<<24 - 1, FaultTrailingData: len(body)}[f]
			if length != want {
				t.Errorf("%v %v: uncompressed_length %d, want %d", a, f, length, want)
			}
			wantPlain := body
			if f == FaultTrailingData {
				wantPlain = append(bytes.Clone(body), "sixteen bytes..."...)
			}
			if f != FaultCorrupt && !bytes.Equal(decompress(t, a, payload), wantPlain) {
				t.Errorf("%v %v: payload does not decompress to what it should", a, f)
			}
			if f == FaultCorrupt {
				good, _ := compress(a, body)
				if bytes.Equal(good, payload) || len(good) != len(payload) {
					t.Errorf("%v: corrupt payload equals the good one", a)
				}
			}
		}
	}
}

// TestMalformedHello: garbage and a truncated hello end the connection
// with an error on the server, not a hang.
func TestMalformedHello(t *testing.T) {
	s := start(t, Config{Identity: identity(t, "127.0.0.1")})
	for i, in := range [][]byte{
		{22, 3, 1, 0, 4, 1, 0, 0, 0},                                    // empty hello body
		{22, 3, 1, 0, 6, 1, 0, 0, 2, 3, 3},                              // hello cut short
		{22, 3, 1, 0, 4, 2, 0, 0, 0},                                    // a server hello
		{23, 3, 3, 0, 1, 0},                                             // application data first
		{22, 3, 1, 0x40, 0x01, 1, 0, 0, 0},                              // oversized record
		append([]byte{22, 3, 1, 0, 4, 1, 1, 0, 0}, make([]byte, 60)...), // announced 64 KiB, then EOF
	} {
		nc, err := net.Dial("tcp", s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		nc.Write(in)
		nc.(*net.TCPConn).CloseWrite()
		nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		io.Copy(io.Discard, nc)
		nc.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		rs, err := s.Wait(ctx, i+1)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		if rs[i].Err == nil {
			t.Errorf("input %d: no error", i)
		}
	}
}

// splitConn re-frames the client's first handshake record as three
// records, the first holding only two bytes of the message header.
type splitConn struct {
	net.Conn
	done bool
}

func (c *splitConn) Write(p []byte) (int, error) {
	if c.done || len(p) < 5 || p[0] != recordHandshake {
		return c.Conn.Write(p)
	}
	c.done = true
	n := int(p[3])<<8 | int(p[4])
	if len(p) < 5+n || n < 8 {
		return c.Conn.Write(p)
	}
	body := p[5 : 5+n]
	var out []byte
	for _, part := range [][]byte{body[:2], body[2 : n/2], body[n/2:]} {
		out = append(out, recordHandshake, p[1], p[2], byte(len(part)>>8), byte(len(part)))
		out = append(out, part...)
	}
	if _, err := c.Conn.Write(append(out, p[5+n:]...)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// TestHelloOverSeveralRecords: a ClientHello split over records, its
// header split too, is reassembled.
func TestHelloOverSeveralRecords(t *testing.T) {
	id := identity(t, "127.0.0.1")
	s := start(t, Config{Identity: id})
	raw, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	sc := &splitConn{Conn: raw}
	c := tls.Client(sc, &tls.Config{RootCAs: id.Roots, ServerName: "127.0.0.1"})
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(c)
	if err != nil || string(b) != DefaultResponse {
		t.Fatalf("response %q, %v", b, err)
	}
	if !sc.done {
		t.Fatal("the hello was not split")
	}
	if r := waitOne(t, s); r.Err != nil {
		t.Fatal(r.Err)
	}
}
