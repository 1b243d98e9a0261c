package tlsfp

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"net"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/guise-http/guise/internal/testpeer"
	"github.com/guise-http/guise/profile"
	utls "github.com/refraction-networking/utls"
)

// pki is testpeer's certificate for "fp.test" and 127.0.0.1, set by
// testCerts.
var (
	pkiOnce sync.Once
	pki     *testpeer.Cert
)

func testCerts(t testing.TB) *testpeer.Cert {
	t.Helper()
	pkiOnce.Do(func() { pki = testpeer.NewCert(t, "fp.test", "127.0.0.1") })
	return pki
}

// server is a crypto/tls server on 127.0.0.1 that records the raw first
// record of every connection.
type server struct {
	ln     net.Listener
	cfg    *tls.Config
	hellos chan []byte
	wg     sync.WaitGroup
	// reply, if set, is written after the handshake (so the client reads
	// it and processes session tickets).
	reply []byte
}

func newServer(t testing.TB, cfg *tls.Config) *server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	if cfg == nil {
		cfg = &tls.Config{}
	}
	if len(cfg.Certificates) == 0 {
		cfg.Certificates = []tls.Certificate{testCerts(t).TLS()}
	}
	if cfg.NextProtos == nil {
		cfg.NextProtos = []string{"h2", "http/1.1"}
	}
	s := &server{ln: ln, cfg: cfg, hellos: make(chan []byte, 64), reply: []byte("ok")}
	s.wg.Add(1)
	go s.serve()
	t.Cleanup(func() { ln.Close(); s.wg.Wait() })
	return s
}

func (s *server) addr() string { return s.ln.Addr().String() }

func (s *server) serve() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer c.Close()
			c.SetDeadline(time.Now().Add(10 * time.Second))
			rec, err := readRecord(c)
			if err != nil {
				return
			}
			select {
			case s.hellos <- rec:
			default:
			}
			tc := tls.Server(&prefixConn{Conn: c, r: io.MultiReader(bytes.NewReader(rec), c)}, s.cfg)
			if err := tc.Handshake(); err != nil {
				return
			}
			tc.Write(s.reply)
			io.Copy(io.Discard, tc)
		}()
	}
}

type prefixConn struct {
	net.Conn
	r io.Reader
}

func (c *prefixConn) Read(p []byte) (int, error) { return c.r.Read(p) }

func readRecord(r io.Reader) ([]byte, error) {
	hdr := make([]byte, 5)
	if _, err := io.ReadFull(r, hdr); err != nil {
		return nil, err
	}
	n := int(binary.BigEndian.Uint16(hdr[3:]))
	rec := make([]byte, 5+n)
	copy(rec, hdr)
	_, err := io.ReadFull(r, rec[5:])
	return rec, err
}

// dial connects to s and runs Handshake. It reads the server's reply so
// that session tickets are processed, then closes.
func dial(t testing.TB, s *server, serverName string, cfg *Config) (State, []byte, error) {
	t.Helper()
	nc, err := net.Dial("tcp", s.addr())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, st, err := Handshake(ctx, nc, serverName, cfg)
	var hello []byte
	select {
	case hello = <-s.hellos:
	case <-time.After(10 * time.Second):
		t.Fatal("server saw no hello")
	}
	if err != nil {
		return st, hello, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, len(s.reply))
	if _, err := io.ReadFull(c, buf); err != nil {
		t.Fatalf("reading the server's reply: %v", err)
	}
	return st, hello, nil
}

func lookup(t testing.TB, name string) *profile.Profile {
	t.Helper()
	p, err := profile.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// seeded returns a deterministic reader.
func seeded(seed uint64) io.Reader {
	var s [32]byte
	binary.LittleEndian.PutUint64(s[:], seed)
	return mrand.NewChaCha8(s)
}

// buildHello returns the ClientHello handshake message cfg would send,
// without a network.
func buildHello(t testing.TB, serverName string, cfg *Config) []byte {
	t.Helper()
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	uc, _, err := newConn(a, serverName, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := uc.BuildHandshakeState(); err != nil {
		t.Fatal(err)
	}
	raw := uc.HandshakeState.Hello.Raw
	rec := append([]byte{0x16, 0x03, 0x01, byte(len(raw) >> 8), byte(len(raw))}, raw...)
	return rec
}

// hello is a minimal ClientHello parse for the tests: enough to compare
// the structure field by field.
type hello struct {
	version   uint16
	random    []byte
	sessionID []byte
	ciphers   []uint16
	comp      []byte
	exts      []ext
}

type ext struct {
	id   uint16
	body []byte
}

func parseHelloRecord(t testing.TB, rec []byte) *hello {
	t.Helper()
	h, err := parseHelloBytes(rec)
	if err != nil {
		t.Fatalf("parsing hello: %v", err)
	}
	return h
}

func parseHelloBytes(rec []byte) (*hello, error) {
	if len(rec) < 9+38 || rec[0] != 0x16 || rec[5] != 1 {
		return nil, errors.New("not a client hello record")
	}
	b := rec[9:]
	h := &hello{version: binary.BigEndian.Uint16(b), random: b[2:34]}
	b = b[34:]
	h.sessionID, b = b[1:1+int(b[0])], b[1+int(b[0]):]
	n := int(binary.BigEndian.Uint16(b))
	for i := 0; i < n; i += 2 {
		h.ciphers = append(h.ciphers, binary.BigEndian.Uint16(b[2+i:]))
	}
	b = b[2+n:]
	h.comp, b = b[1:1+int(b[0])], b[1+int(b[0]):]
	n = int(binary.BigEndian.Uint16(b))
	b = b[2:]
	if len(b) != n {
		return nil, fmt.Errorf("extensions length %d, have %d", n, len(b))
	}
	for len(b) > 0 {
		if len(b) < 4 {
			return nil, errors.New("truncated extension")
		}
		id, l := binary.BigEndian.Uint16(b), int(binary.BigEndian.Uint16(b[2:]))
		if len(b) < 4+l {
			return nil, errors.New("truncated extension body")
		}
		h.exts = append(h.exts, ext{id, b[4 : 4+l]})
		b = b[4+l:]
	}
	return h, nil
}

func (h *hello) ext(id uint16) ([]byte, bool) {
	for _, e := range h.exts {
		if e.id == id {
			return e.body, true
		}
	}
	return nil, false
}

func (h *hello) ids(maskGREASE bool) []uint16 {
	var ids []uint16
	for _, e := range h.exts {
		id := e.id
		if maskGREASE && isGREASE(id) {
			id = 0x0a0a
		}
		ids = append(ids, id)
	}
	return ids
}

func sortedIDs(h *hello) []uint16 {
	ids := h.ids(true)
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// maskU16List replaces GREASE values in a list of uint16s starting at off.
func maskU16(b []byte, off int) []byte {
	b = bytes.Clone(b)
	for i := off; i+1 < len(b); i += 2 {
		if isGREASE(binary.BigEndian.Uint16(b[i:])) {
			b[i], b[i+1] = 0x0a, 0x0a
		}
	}
	return b
}

// keyShares returns "group:len" for each share.
func keyShares(body []byte) []string {
	var out []string
	b := body[2:]
	for len(b) >= 4 {
		g, l := binary.BigEndian.Uint16(b), int(binary.BigEndian.Uint16(b[2:]))
		if isGREASE(g) {
			g = 0x0a0a
		}
		out = append(out, fmt.Sprintf("%04x:%d", g, l))
		b = b[4+l:]
	}
	return out
}

// echShapeOf returns "type kdf aead enc=N payload=M" for a GREASE ECH body.
func echShapeOf(body []byte) (string, int) {
	if len(body) < 10 {
		return "short", 0
	}
	enc := int(binary.BigEndian.Uint16(body[6:]))
	p := int(binary.BigEndian.Uint16(body[8+enc:]))
	return fmt.Sprintf("type=%d kdf=%d aead=%d enc=%d", body[0], binary.BigEndian.Uint16(body[1:]), binary.BigEndian.Uint16(body[3:]), enc), p
}

type utlsClientSessionState = utls.ClientSessionState
