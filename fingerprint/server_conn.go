package fingerprint

import (
	"errors"
	"io"
	"net"
	"strconv"
	"sync"
	"time"
)

// Limits on what a client may send before the TLS handshake starts.
const (
	maxHelloRecords = 16       // TLS records carrying one ClientHello
	maxHelloBytes   = 64 << 10 // bytes of those records, headers included
)

// errBadHelloRecord reports that a connection's first TLS records did not
// carry a ClientHello.
var errBadHelloRecord = errors.New("fingerprint: first tls handshake message is not a client hello")

// readClientHello reads, from a connection whose first byte first (0x16)
// was already consumed, the TLS records that carry the complete ClientHello
// handshake message. It returns every byte it read, first included, so
// that they can be replayed to a TLS server.
func readClientHello(r io.Reader, first byte) ([]byte, error) {
	raw := make([]byte, 1, 2048)
	raw[0] = first
	var hs []byte // handshake bytes reassembled from the records
	for i := 0; i < maxHelloRecords; i++ {
		start := len(raw)
		if i == 0 {
			start = 0
			raw = append(raw, 0, 0, 0, 0)
			if _, err := io.ReadFull(r, raw[1:5]); err != nil {
				return raw[:1], err
			}
		} else {
			raw = append(raw, 0, 0, 0, 0, 0)
			if _, err := io.ReadFull(r, raw[start:start+5]); err != nil {
				return raw[:start], err
			}
		}
		hdr := raw[start : start+5]
		if hdr[0] != 0x16 {
			return raw, errBadHelloRecord
		}
		n := int(hdr[3])<<8 | int(hdr[4])
		if n == 0 || n > 16384+2048 || len(raw)+n > maxHelloBytes {
			return raw, errors.New("fingerprint: bad tls record length " + strconv.Itoa(n))
		}
		body := len(raw)
		raw = append(raw, make([]byte, n)...)
		if _, err := io.ReadFull(r, raw[body:]); err != nil {
			return raw[:body], err
		}
		hs = append(hs, raw[body:]...)
		if len(hs) >= 4 {
			if hs[0] != 1 {
				return raw, errBadHelloRecord
			}
			if need := 4 + (int(hs[1])<<16 | int(hs[2])<<8 | int(hs[3])); len(hs) >= need {
				return raw, nil
			}
		}
	}
	return raw, errors.New("fingerprint: client hello spans too many tls records")
}

// prefixConn replays pre before reading from the connection.
type prefixConn struct {
	net.Conn
	pre []byte
}

func (c *prefixConn) Read(p []byte) (int, error) {
	if len(c.pre) > 0 {
		n := copy(p, c.pre)
		c.pre = c.pre[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

// teeConn is the connection handed to net/http: every byte read from it is
// appended (up to the server's limit) to its liveConn's record. It
// deliberately has no ConnectionState method: net/http must treat it as a
// plain connection, so that its unencrypted HTTP/2 support takes HTTP/2
// connections by their preface.
type teeConn struct {
	net.Conn
	lc *liveConn
}

func (c *teeConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.lc.tee(p[:n])
	}
	return n, err
}

func (c *teeConn) Close() error {
	err := c.Conn.Close()
	c.lc.finish("")
	return err
}

// chanListener is the net.Listener the http.Server serves: connections are
// handed to it after sniffing and the TLS handshake.
type chanListener struct {
	ch   chan net.Conn
	done chan struct{}
	once sync.Once
	addr net.Addr
}

func newChanListener(addr net.Addr) *chanListener {
	return &chanListener{ch: make(chan net.Conn), done: make(chan struct{}), addr: addr}
}

func (l *chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ch:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// hand passes c to the server; it reports false when the listener is closed.
func (l *chanListener) hand(c net.Conn) bool {
	select {
	case l.ch <- c:
		return true
	case <-l.done:
		return false
	}
}

func (l *chanListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *chanListener) Addr() net.Addr { return l.addr }

// deadline returns now+d, or the zero time when d <= 0.
func deadline(d time.Duration) time.Time {
	if d <= 0 {
		return time.Time{}
	}
	return time.Now().Add(d)
}
