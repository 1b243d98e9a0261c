package h3_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"testing"
	"time"

	"github.com/guise-http/guise/internal/h3"
	"github.com/guise-http/guise/internal/h3wire"
	"github.com/guise-http/guise/internal/quicwire"
	"github.com/guise-http/guise/internal/testpeer/quicgo"
	"github.com/quic-go/quic-go"
)

// peer is a scripted HTTP/3 server over quic-go's QUIC: the test writes
// its frames byte by byte, to misbehave on purpose.
type peer struct {
	t    *testing.T
	conn *quic.Conn
	ctrl *quic.SendStream
}

// scripted dials a scripted peer with cfg and runs script on the server
// side of the connection (in its own goroutine, ended before the test
// returns). It returns the client connection.
func scripted(t *testing.T, cfg *h3.Config, script func(p *peer)) *h3.ClientConn {
	t.Helper()
	l, cert := quicgo.Listen(t)
	done := make(chan struct{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	go func() {
		defer close(done)
		c, err := l.Accept(ctx)
		if err != nil {
			return
		}
		p := &peer{t: t, conn: c}
		script(p)
		<-ctx.Done()
		c.CloseWithError(0, "")
	}()
	qc, err := quicgo.Dial(ctx, nil, l.Addr(), cert.Roots, "localhost")
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	cc, err := h3.NewClientConn(qc, cfg)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cc.Close()
		cancel()
		<-done
	})
	return cc
}

// control opens the server's control stream and writes b after its type.
func (p *peer) control(b ...[]byte) {
	s, err := p.conn.OpenUniStream()
	if err != nil {
		p.t.Error(err)
		return
	}
	p.ctrl = s
	s.Write(quicwire.AppendVarint(nil, uint64(h3wire.StreamControl)))
	for _, x := range b {
		s.Write(x)
	}
}

// settings is an empty SETTINGS frame.
func settings(ss ...h3wire.Setting) []byte { return h3wire.AppendSettings(nil, ss...) }

// uni opens a server unidirectional stream of type typ and writes b.
func (p *peer) uni(typ uint64, b []byte) *quic.SendStream {
	s, err := p.conn.OpenUniStream()
	if err != nil {
		p.t.Error(err)
		return nil
	}
	s.Write(append(quicwire.AppendVarint(nil, typ), b...))
	return s
}

// request accepts the next request stream and reads its HEADERS frame.
func (p *peer) request() *quic.Stream {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := p.conn.AcceptStream(ctx)
	if err != nil {
		return nil
	}
	var buf []byte
	tmp := make([]byte, 4096)
	for {
		if f, err := h3wire.ParseFrame(buf); err == nil && f.Type == h3wire.FrameHeaders {
			return s
		}
		n, err := s.Read(tmp)
		buf = append(buf, tmp[:n]...)
		if err != nil {
			return s
		}
	}
}

// headers is a HEADERS frame with :status status and fields, static-table
// only.
func headers(fs ...h3wire.Field) []byte {
	return h3wire.AppendFrame(nil, h3wire.FrameHeaders, h3wire.AppendResponseSection(nil, fs...))
}

func data(s string) []byte { return h3wire.AppendFrame(nil, h3wire.FrameData, []byte(s)) }

// roundTrip sends a GET and reads the whole body.
func roundTrip(cc *h3.ClientConn, timeout time.Duration) (*h3.Response, []byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	resp, err := cc.RoundTrip(ctx, get("/"))
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

func wantConnErr(t *testing.T, err error, code h3.ErrCode) {
	t.Helper()
	var ce *h3.ConnectionError
	if !errors.As(err, &ce) || ce.Code != code || ce.Remote {
		t.Fatalf("error %v, want a ConnectionError %v", err, code)
	}
}

func wantStreamErr(t *testing.T, err error, code h3.ErrCode) *h3.StreamError {
	t.Helper()
	var se *h3.StreamError
	if !errors.As(err, &se) || se.Code != code {
		t.Fatalf("error %v, want a StreamError %v", err, code)
	}
	return se
}

// readAllTimeout reads r until EOF or the deadline.
func readUntil(r io.Reader, want []byte, d time.Duration) bool {
	deadline := time.Now().Add(d)
	var got []byte
	tmp := make([]byte, 512)
	for time.Now().Before(deadline) {
		n, err := r.Read(tmp)
		got = append(got, tmp[:n]...)
		if bytes.Contains(got, want) {
			return true
		}
		if err != nil {
			return false
		}
	}
	return false
}

// TestStreamsAsRecorded reads, at the server, the unidirectional streams
// the client opens and their bytes: Chromium's control stream alone
// (SETTINGS, a GREASE frame, then a PRIORITY_UPDATE before each request
// carrying its priority field), Firefox's control, QPACK encoder and
// decoder streams in that order, the QPACK ones holding their type byte
// only, and no PRIORITY_UPDATE. The recordings show the same
// (fingerprint/testdata/recordings/*-h3-*.json, quic.http3.uni_streams).
func TestStreamsAsRecorded(t *testing.T) {
	for name, c := range map[string]struct {
		cfg   *h3.Config
		types []uint64
		prio  bool
	}{
		"chromium": {chromeConfig(), []uint64{0}, true},
		"firefox":  {firefoxConfig(), []uint64{0, 2, 3}, false},
	} {
		t.Run(name, func(t *testing.T) {
			type uniData struct {
				id   uint64
				data []byte
			}
			got := make(chan []uniData, 1)
			cc := scripted(t, c.cfg, func(p *peer) {
				p.control(settings())
				for range 2 {
					if s := p.request(); s != nil {
						respond(s, headers(), data("x"))
					}
				}
				ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
				defer cancel()
				var us []uniData
				for {
					rs, err := p.conn.AcceptUniStream(ctx)
					if err != nil {
						break
					}
					rs.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
					b, _ := io.ReadAll(rs)
					us = append(us, uniData{uint64(rs.StreamID()), b})
				}
				got <- us
			})
			for range 2 {
				if _, _, err := roundTrip(cc, 5*time.Second); err != nil {
					t.Fatal(err)
				}
			}
			us := <-got
			var types []uint64
			for i, u := range us {
				if u.id != uint64(4*i+2) {
					t.Errorf("stream %d is the %d-th", u.id, i)
				}
				types = append(types, uint64(u.data[0]))
				if u.data[0] != 0 && len(u.data) != 1 {
					t.Errorf("qpack stream %d carries %x", u.id, u.data)
				}
			}
			if !slices.Equal(types, c.types) {
				t.Fatalf("uni stream types %v, want %v", types, c.types)
			}
			var frames []string
			b := us[0].data[1:]
			for len(b) > 0 {
				f, err := h3wire.ParseFrame(b)
				if err != nil {
					t.Fatal(err)
				}
				frames = append(frames, f.Type.String())
				if f.Type == h3wire.FramePriorityUpdate {
					id, v, _ := h3wire.ParsePriorityUpdate(f.Payload)
					frames[len(frames)-1] += fmt.Sprintf("(%d %s)", id, v)
				}
				b = b[f.Size:]
			}
			want := []string{"SETTINGS", "GREASE"}
			if c.prio {
				want = append(want, "PRIORITY_UPDATE(0 u=1, i)", "PRIORITY_UPDATE(4 u=1, i)")
			}
			if !slices.Equal(frames, want) {
				t.Errorf("control frames %q, want %q", frames, want)
			}
		})
	}
}
