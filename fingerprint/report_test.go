package fingerprint

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"encoding/binary"
	"encoding/json"
	"io"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/http2/hpack"
)

// h2Setting is one SETTINGS parameter for h2Raw.
type h2Setting struct {
	ID  uint16
	Val uint32
}

// h2Frame appends an HTTP/2 frame to b.
func h2Frame(b []byte, typ, flags byte, stream uint32, payload []byte) []byte {
	n := len(payload)
	b = append(b, byte(n>>16), byte(n>>8), byte(n), typ, flags)
	b = binary.BigEndian.AppendUint32(b, stream)
	return append(b, payload...)
}

// h2Raw sends one GET with exactly the given fields (pseudo-headers
// included, in order) on a fresh TLS connection, after SETTINGS and a
// connection WINDOW_UPDATE, and returns the response body. HEADERS carries
// priority exclusive, depends on 0, weight 256.
func h2Raw(t *testing.T, s *Server, settings []h2Setting, wu uint32, hdr [][2]string) []byte {
	t.Helper()
	return h2RawBody(t, s, settings, wu, hdr, nil)
}

// h2RawBody is h2Raw for a request with a body: HEADERS without
// END_STREAM, then body in one DATA frame that ends the stream.
func h2RawBody(t *testing.T, s *Server, settings []h2Setting, wu uint32, hdr [][2]string, reqBody []byte) []byte {
	t.Helper()
	c, err := net.DialTimeout("tcp", s.ListenAddr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	conf := clientTLS(s)
	conf.NextProtos = []string{"h2"}
	tc := tls.Client(c, conf)
	if err := tc.Handshake(); err != nil {
		t.Fatal(err)
	}
	out := []byte(h2Preface)
	var sp []byte
	for _, st := range settings {
		sp = binary.BigEndian.AppendUint16(sp, st.ID)
		sp = binary.BigEndian.AppendUint32(sp, st.Val)
	}
	out = h2Frame(out, 4, 0, 0, sp)
	if wu > 0 {
		out = h2Frame(out, 8, 0, 0, binary.BigEndian.AppendUint32(nil, wu))
	}
	var block bytes.Buffer
	enc := hpack.NewEncoder(&block)
	for _, f := range hdr {
		enc.WriteField(hpack.HeaderField{Name: f[0], Value: f[1]})
	}
	payload := append([]byte{0x80, 0, 0, 0, 255}, block.Bytes()...)
	if reqBody == nil {
		out = h2Frame(out, 1, 0x1|0x4|0x20, 1, payload) // END_STREAM|END_HEADERS|PRIORITY
	} else {
		out = h2Frame(out, 1, 0x4|0x20, 1, payload) // END_HEADERS|PRIORITY
		out = h2Frame(out, 0, 0x1, 1, reqBody)      // END_STREAM
	}
	if _, err := tc.Write(out); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(tc)
	var body []byte
	for i := 0; i < 100; i++ {
		var fh [9]byte
		if _, err := io.ReadFull(br, fh[:]); err != nil {
			t.Fatalf("reading frames: %v", err)
		}
		n := int(fh[0])<<16 | int(fh[1])<<8 | int(fh[2])
		p := make([]byte, n)
		if _, err := io.ReadFull(br, p); err != nil {
			t.Fatalf("reading frames: %v", err)
		}
		typ, flags, stream := fh[3], fh[4], binary.BigEndian.Uint32(fh[5:])&0x7fffffff
		switch {
		case typ == 4 && flags&1 == 0: // SETTINGS: ack it
			if _, err := tc.Write(h2Frame(nil, 4, 1, 0, nil)); err != nil {
				t.Fatal(err)
			}
		case typ == 7:
			t.Fatalf("GOAWAY % x", p)
		case typ == 0 && stream == 1: // DATA
			if flags&0x8 != 0 { // PADDED
				p = p[1 : len(p)-int(p[0])]
			}
			body = append(body, p...)
			if flags&1 != 0 {
				return body
			}
		}
	}
	t.Fatal("no response in 100 frames")
	return nil
}

func decodeReport(t *testing.T, body []byte) *reportJSON {
	t.Helper()
	var rep reportJSON
	if err := json.Unmarshal(body, &rep); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	return &rep
}

func TestAPIAllHTTP1HeaderOrderAndCase(t *testing.T) {
	s := startServer(t, nil)
	for _, useTLS := range []bool{true, false} {
		// Two requests on one connection: the report must find the second head.
		c, err := net.DialTimeout("tcp", s.ListenAddr(), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		var conn net.Conn = c
		if useTLS {
			conf := clientTLS(s)
			conf.NextProtos = []string{"http/1.1"}
			conn = tls.Client(c, conf)
		}
		heads := []string{
			"POST /api/fetch HTTP/1.1\r\nHost: fp.test\r\nContent-Length: 5\r\n\r\nhello",
			"GET /api/all?x=1 HTTP/1.1\r\nHost: fp.test\r\nuser-AGENT: UA/1\r\nX-B: 2\r\nx-a: 1\r\nAccept-Language: de-CH,de;q=0.9\r\nCookie: b=2; a=1\r\n\r\n",
		}
		br := newResponseReader(conn)
		var body []byte
		for _, h := range heads {
			io.WriteString(conn, h)
			body = br.next(t)
		}
		rep := decodeReport(t, body)
		wantOrder := []string{"Host", "user-AGENT", "X-B", "x-a", "Accept-Language", "Cookie"}
		if !slices.Equal(rep.HeaderOrder, wantOrder) {
			t.Errorf("tls=%v header order %q, want %q", useTLS, rep.HeaderOrder, wantOrder)
		}
		if rep.HeadersSource != "wire" || rep.HTTPVersion != ProtoHTTP1 || rep.Method != "GET" || rep.Path != "/api/all?x=1" || rep.UserAgent != "UA/1" {
			t.Errorf("tls=%v report %+v", useTLS, rep)
		}
		if !strings.HasSuffix(heads[1], rep.RawHead) || rep.RawHead == "" {
			t.Errorf("raw head %q", rep.RawHead)
		}
		q, err := ParseHTTP1Request([]byte(heads[1]))
		if err != nil {
			t.Fatal(err)
		}
		if rep.JA4H != q.JA4H() || !strings.HasPrefix(rep.JA4H, "ge11cn05dech_") {
			t.Errorf("ja4h %q, want %q", rep.JA4H, q.JA4H())
		}
		if (rep.TLS != nil) != useTLS || (useTLS && (rep.TLS.JA4 == "" || rep.TLS.Negotiated.ALPN != "http/1.1")) {
			t.Errorf("tls=%v: tls report %+v", useTLS, rep.TLS)
		}
		if rep.HTTP2 != nil {
			t.Error("http2 report on an HTTP/1 connection")
		}
	}
}

func TestAPIAllHTTP2(t *testing.T) {
	s := startServer(t, nil)
	settings := []h2Setting{{ID: 1, Val: 65536}, {ID: 2, Val: 0}, {ID: 4, Val: 6291456}, {ID: 6, Val: 262144}}
	hdr := [][2]string{
		{":method", "GET"}, {":authority", "fp.test"}, {":scheme", "https"}, {":path", "/api/all"},
		{"sec-ch-ua", `"X";v="1"`}, {"user-agent", "UA/2"}, {"accept", "*/*"}, {"zz-last", "1"},
	}
	body := h2Raw(t, s, settings, 15663105, hdr)
	rep := decodeReport(t, body)
	if rep.HTTPVersion != ProtoH2 || rep.UserAgent != "UA/2" || rep.HeadersSource != "wire" {
		t.Fatalf("report %+v", rep)
	}
	if want := "1:65536;2:0;4:6291456;6:262144|15663105|0|m,a,s,p"; rep.HTTP2 == nil || rep.HTTP2.Akamai != want {
		t.Fatalf("akamai %+v, want %s", rep.HTTP2, want)
	}
	if want := []string{"sec-ch-ua", "user-agent", "accept", "zz-last"}; !slices.Equal(rep.HeaderOrder, want) {
		t.Errorf("header order %q, want %q", rep.HeaderOrder, want)
	}
	if want := []string{":method", ":authority", ":scheme", ":path"}; !slices.Equal(rep.PseudoOrder, want) {
		t.Errorf("pseudo order %q", rep.PseudoOrder)
	}
	if rep.StreamID != 1 || rep.Priority == nil || !rep.Priority.Exclusive || rep.Priority.Weight != 256 {
		t.Errorf("stream %d priority %+v", rep.StreamID, rep.Priority)
	}
	if rep.TLS == nil || rep.TLS.Negotiated.ALPN != "h2" || !strings.HasPrefix(rep.TLS.JA4, "t13d") || rep.TLS.ClientHello == nil || rep.TLS.ClientHello.ServerName != "fp.test" {
		t.Errorf("tls %+v", rep.TLS)
	}
	if n := len(rep.HTTP2.Frames); n < 3 || rep.HTTP2.Frames[1].WindowIncrement != 15663105 {
		t.Errorf("frames %+v", rep.HTTP2.Frames)
	}
}

func TestAPIAllNetHTTPClients(t *testing.T) {
	s := startServer(t, nil)
	for _, h2 := range []bool{false, true} {
		tr := transport(t, s, h2, nil)
		_, body := get(t, tr, "https://fp.test/api/all", map[string][]string{"X-Custom": {"v"}})
		rep := decodeReport(t, body)
		want := map[bool]string{false: ProtoHTTP1, true: ProtoH2}[h2]
		// net/http offers ALPN only when it may speak h2.
		wantALPN := map[bool]string{false: "", true: ProtoH2}[h2]
		if rep.HTTPVersion != want || rep.TLS.Negotiated.ALPN != wantALPN || rep.HeadersSource != "wire" {
			t.Errorf("h2=%v: version %q alpn %q source %q", h2, rep.HTTPVersion, rep.TLS.Negotiated.ALPN, rep.HeadersSource)
		}
		if !slices.ContainsFunc(rep.Headers, func(f fieldJSON) bool { return strings.EqualFold(f.Name, "x-custom") && f.Value == "v" }) {
			t.Errorf("h2=%v: headers %v lack X-Custom", h2, rep.Headers)
		}
	}
}

func TestAPIConnsRoundTrip(t *testing.T) {
	s := startServer(t, nil)
	tr := transport(t, s, true, nil)
	get(t, tr, "https://fp.test/api/fetch", nil)
	tr1 := transport(t, s, false, nil)
	get(t, tr1, "https://fp.test/api/fetch", nil)
	_, body := get(t, tr, "https://fp.test/api/conns", nil)
	var decoded []*ConnRecord
	if err := json.Unmarshal(body, &decoded); err != nil {
		t.Fatal(err)
	}
	if len(decoded) != 2 {
		t.Fatalf("%d conns", len(decoded))
	}
	live := s.Records()
	for i, r := range decoded {
		if !bytes.Equal(r.ClientHelloRecord, live[i].ClientHelloRecord) || r.Protocol != live[i].Protocol || *r.Negotiated != *live[i].Negotiated {
			t.Errorf("conn %d does not round-trip", i)
		}
		if !bytes.HasPrefix(live[i].ClientBytes, r.ClientBytes) {
			t.Errorf("conn %d client bytes differ", i)
		}
	}
}
