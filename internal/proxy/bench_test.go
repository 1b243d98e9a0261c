package proxy

import (
	"context"
	"io"
	"net"
	"net/url"
	"strings"
	"testing"

	"github.com/guise-http/guise/fields"
)

// replayConn is a reusable in-memory proxy: every dial rewinds its reply.
type replayConn struct {
	memConn
	reply string
	sr    strings.Reader
}

func (c *replayConn) dial(context.Context, string, string) (net.Conn, error) {
	c.sr.Reset(c.reply)
	c.r, c.w = &c.sr, io.Discard
	return c, nil
}

func benchDialer(scheme, reply string) *Dialer {
	rc := &replayConn{reply: reply}
	return &Dialer{
		URL:           &url.URL{Scheme: scheme, Host: "proxy.example:3128", User: url.UserPassword("user", "pass")},
		Dial:          rc.dial,
		ConnectHeader: fields.Header{{Name: "User-Agent", Value: "Mozilla/5.0 (X11; Linux x86_64) bench"}},
	}
}

const (
	benchCONNECTReply = "HTTP/1.1 200 Connection established\r\n\r\n"
	benchTarget       = "www.example.com:443"
)

var benchSOCKS5Reply = string([]byte{5, 2, 1, 0, 5, 0, 0, 1, 127, 0, 0, 1, 0, 80})

func benchDial(b *testing.B, d *Dialer, ctx context.Context) {
	b.ReportAllocs()
	for b.Loop() {
		c, err := d.DialContext(ctx, benchTarget)
		if err != nil {
			b.Fatal(err)
		}
		c.Close()
	}
}

func BenchmarkDialCONNECT(b *testing.B) {
	benchDial(b, benchDialer("http", benchCONNECTReply), context.Background())
}

func BenchmarkDialCONNECTCancellable(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	benchDial(b, benchDialer("http", benchCONNECTReply), ctx)
}

func BenchmarkDialSOCKS5Auth(b *testing.B) {
	benchDial(b, benchDialer("socks5h", benchSOCKS5Reply), context.Background())
}

// The handshake's allocation budget: one buffer for the CONNECT request and
// then its reply (plus the replaying wrapper when tunnel bytes came with the
// reply); for SOCKS5 one scratch buffer; a cancellable context adds
// context.AfterFunc's bookkeeping (3).
func TestDialAllocs(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, tc := range []struct {
		name   string
		d      *Dialer
		ctx    context.Context
		budget float64
	}{
		{"CONNECT", benchDialer("http", benchCONNECTReply), context.Background(), 1},
		{"CONNECT cancellable ctx", benchDialer("http", benchCONNECTReply), ctx, 4},
		{"CONNECT with tunnel bytes", benchDialer("http", benchCONNECTReply+"early"), context.Background(), 2},
		{"SOCKS5 auth", benchDialer("socks5h", benchSOCKS5Reply), context.Background(), 1},
	} {
		tc.d.DialContext(tc.ctx, benchTarget) // first use prepares the Dialer
		got := testing.AllocsPerRun(100, func() {
			c, err := tc.d.DialContext(tc.ctx, benchTarget)
			if err != nil {
				t.Fatal(err)
			}
			c.Close()
		})
		if got > tc.budget {
			t.Errorf("%s: %.1f allocs per dial, budget %.0f", tc.name, got, tc.budget)
		}
	}
}
