package fingerprint

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/guise-http/guise/internal/h3wire"
	"github.com/guise-http/guise/internal/quicwire"
	"github.com/quic-go/quic-go/http3"
)

// TestQUICRecordsGoClient drives the echo server's UDP side with
// quic-go's HTTP/3 client and checks the record end to end: the Initial
// decrypts and carries the whole ClientHello with ALPN h3 and transport
// parameters, the control stream's SETTINGS and the request's fields are
// read back, and the JSON form decodes to a record that derives the same.
func TestQUICRecordsGoClient(t *testing.T) {
	s := startServer(t, nil)
	tr := &http3.Transport{TLSClientConfig: &tls.Config{RootCAs: s.CertPool(), ServerName: "localhost"}}
	defer tr.Close()
	c := &http.Client{Transport: tr, Timeout: 10 * time.Second}
	resp, err := c.Get("https://" + s.ListenAddr() + "/h3/fetch")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || string(body) != "ok" || resp.Proto != "HTTP/3.0" {
		t.Fatalf("%s %d %q", resp.Proto, resp.StatusCode, body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var r *ConnRecord
	for r == nil {
		ch := s.Changed()
		for _, rec := range s.Records() {
			if rec.Transport == TransportQUIC && rec.Requests > 0 {
				if h, _ := rec.HTTP3(); h != nil && len(h.Settings) > 0 && len(h.Requests) > 0 {
					r = rec
				}
			}
		}
		if r != nil {
			break
		}
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatal("no quic record with settings and a request")
		}
	}
	check := func(r *ConnRecord) {
		t.Helper()
		fl, err := r.QUICFlight()
		if err != nil {
			t.Fatal(err)
		}
		if fl.Version != quicwire.Version1 || len(fl.Datagrams) == 0 || fl.Datagrams[0].Size < 1200 {
			t.Errorf("flight %+v", fl)
		}
		if !slices.Equal(fl.ClientHello.ALPN, []string{"h3"}) || !strings.HasPrefix(fl.JA4(), "q13") {
			t.Errorf("alpn %v ja4 %s", fl.ClientHello.ALPN, fl.JA4())
		}
		if !slices.ContainsFunc(fl.TransportParameters, func(p quicwire.TransportParameter) bool {
			return p.ID == quicwire.ParamInitialSourceConnectionID && string(p.Value) == string(fl.SCID)
		}) {
			t.Errorf("initial_source_connection_id is not the SCID: %v", fl.TransportParameters)
		}
		h, err := r.HTTP3()
		if err != nil {
			t.Fatal(err)
		}
		if h.UniStreams[0].Type != h3wire.StreamControl && !slices.ContainsFunc(h.UniStreams, func(u H3UniStream) bool { return u.Type == h3wire.StreamControl }) {
			t.Errorf("no control stream: %+v", h.UniStreams)
		}
		q := h.Requests[0].HTTPRequest()
		if q.Method != "GET" || q.Target != "/h3/fetch" || q.Proto != "HTTP/3" {
			t.Errorf("request %+v", q)
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
	if back.Transport != TransportQUIC || back.Protocol != ProtoH3 || len(back.QUIC.Datagrams) != len(r.QUIC.Datagrams) {
		t.Fatalf("decoded %s %s", back.Transport, back.Protocol)
	}
	check(back)
	if got := back.HTTPRequests(); len(got) == 0 || got[0].Target != "/h3/fetch" {
		t.Errorf("HTTPRequests %v", got)
	}
}

// TestQUICGarbageDatagrams is RELIABILITY Q-08: datagrams that are not
// QUIC, Initials that do not decrypt and packets of unknown connections
// leave the server serving, and a record whose handshake never completes
// ends with an error.
func TestQUICGarbageDatagrams(t *testing.T) {
	s := startServer(t, &Server{HandshakeTimeout: 300 * time.Millisecond})
	conn, err := (&net.Dialer{}).Dial("udp", s.ListenAddr())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	bogus := []byte{0xc0, 0, 0, 0, 1, 8, 1, 2, 3, 4, 5, 6, 7, 8, 1, 9, 0, 0x44, 0xb0}
	bogus = append(bogus, make([]byte, 1200)...)
	for _, d := range [][]byte{{0x40, 1, 2, 3}, []byte("GET / HTTP/1.1\r\n\r\n"), bogus} {
		conn.Write(d)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for {
		ch := s.Changed()
		recs := s.Records()
		if len(recs) == 1 && !recs[0].Open() {
			if recs[0].Err == "" || recs[0].Transport != TransportQUIC {
				t.Fatalf("record %+v", recs[0])
			}
			if _, err := recs[0].QUICFlight(); err == nil {
				t.Error("a garbage Initial gave a flight without error")
			}
			break
		}
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("records %d, want one ended", len(recs))
		}
	}
	// The TCP side still answers.
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: s.CertPool(), ServerName: "localhost"}}, Timeout: 5 * time.Second}
	defer hc.CloseIdleConnections()
	resp, err := hc.Get(s.URL() + "/api/all")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}
