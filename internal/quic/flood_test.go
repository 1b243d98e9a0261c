package quic

import (
	"context"
	"errors"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/guise-http/guise/internal/quicwire"
)

// floodRelay forwards datagrams between one client and a quic-go server
// and, once the client's first Initial shows its connection IDs, floods
// the client from the server's address with packets an attacker can
// make: garbage, long headers of the client's connection ID that do not
// decrypt, Initials sealed with another connection's keys and, when
// onPath, valid Initials carrying PING (an on-path attacker knows the
// Initial keys, RFC 9001 §5.2) with the server's connection ID. hold
// delays the server's datagrams after its first one, so that the flood
// arrives while the client still has Initial keys.
type floodRelay struct {
	front, back *net.UDPConn
	server      *net.UDPAddr
	onPath      bool
	// late holds the flood until startLate, after the handshake.
	late bool
	hold time.Duration
	// count is the number of flood datagrams, written in bursts of 16,
	// pace apart.
	count int
	pace  time.Duration
	// done is closed when the flood is over.
	done chan struct{}

	mu         sync.Mutex
	client     *net.UDPAddr
	odcid      []byte // the client's first Destination Connection ID
	clientSCID []byte
	serverSCID []byte
	started    chan struct{} // closed when the flood may start
	firstDown  time.Time

	sent   atomic.Int64 // datagrams from the client
	flood  atomic.Int64 // flood datagrams written
	wg     sync.WaitGroup
	closed chan struct{}
}

func newFloodRelay(t *testing.T, server *net.UDPAddr, onPath, late bool, count int, pace, hold time.Duration) *floodRelay {
	t.Helper()
	listen := func() *net.UDPConn {
		c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	r := &floodRelay{front: listen(), back: listen(), server: server, onPath: onPath, late: late, count: count, pace: pace, hold: hold,
		started: make(chan struct{}), closed: make(chan struct{}), done: make(chan struct{})}
	r.wg.Add(3)
	go r.up()
	go r.down()
	go r.flooder()
	t.Cleanup(func() {
		close(r.closed)
		r.front.Close()
		r.back.Close()
		r.wg.Wait()
	})
	return r
}

func (r *floodRelay) addr() *net.UDPAddr { return r.front.LocalAddr().(*net.UDPAddr) }

// startLate starts a late relay's flood.
func (r *floodRelay) startLate() { close(r.started) }

func (r *floodRelay) up() {
	defer r.wg.Done()
	buf := make([]byte, 65536)
	for {
		n, a, err := r.front.ReadFromUDP(buf)
		if err != nil {
			return
		}
		r.sent.Add(1)
		r.mu.Lock()
		if r.client == nil {
			if h, err := quicwire.ParseHeader(buf[:n]); err == nil && h.Type == quicwire.PacketInitial {
				r.client = a
				r.odcid = append([]byte(nil), h.DCID...)
				r.clientSCID = append([]byte(nil), h.SCID...)
				if !r.onPath && !r.late {
					close(r.started)
				}
			}
		}
		r.mu.Unlock()
		r.back.WriteToUDP(buf[:n], r.server)
	}
}

func (r *floodRelay) down() {
	defer r.wg.Done()
	buf := make([]byte, 65536)
	for {
		n, _, err := r.back.ReadFromUDP(buf)
		if err != nil {
			return
		}
		r.mu.Lock()
		client := r.client
		first := r.serverSCID == nil
		if first {
			if h, err := quicwire.ParseHeader(buf[:n]); err == nil && h.Type == quicwire.PacketInitial {
				r.serverSCID = append([]byte(nil), h.SCID...)
				r.firstDown = time.Now()
				if r.onPath && !r.late {
					close(r.started)
				}
			}
		}
		wait := time.Until(r.firstDown.Add(r.hold))
		r.mu.Unlock()
		if client == nil {
			continue
		}
		if !first && wait > 0 {
			select {
			case <-time.After(wait):
			case <-r.closed:
				return
			}
		}
		r.front.WriteToUDP(buf[:n], client)
	}
}

// flooder writes r.count datagrams to the client, r.pace apart, cycling
// through the kinds of packet it can make.
func (r *floodRelay) flooder() {
	defer r.wg.Done()
	defer close(r.done)
	select {
	case <-r.started:
	case <-r.closed:
		return
	}
	r.mu.Lock()
	client, odcid, dcid, scid := r.client, r.odcid, r.clientSCID, r.serverSCID
	r.mu.Unlock()
	rng := rand.New(rand.NewPCG(70, 70))
	junk := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	if scid == nil {
		scid = junk(8)
	}
	real := quicwire.ServerInitialKeys(odcid)
	other := quicwire.ServerInitialKeys(junk(8))
	for i := range r.count {
		var d []byte
		switch k := i % 4; {
		case r.onPath && k != 0:
			d = serverInitial(real, dcid, scid, uint64(1000+i))
		case k == 0:
			d = junk(20 + rng.IntN(1300)) // any bytes, short header or long
		case k == 1:
			d = serverInitial(other, dcid, scid, uint64(i))
		default:
			d = serverInitial(real, dcid, scid, uint64(i))
			d[len(d)-1] ^= 1 // the tag no longer verifies
		}
		if _, err := r.front.WriteToUDP(d, client); err != nil {
			return
		}
		if r.flood.Add(1)%16 != 0 {
			continue
		}
		select {
		case <-time.After(r.pace):
		case <-r.closed:
			return
		}
	}
}

// serverInitial is an Initial packet from the server, sealed with k,
// carrying PING and PADDING: ACK-eliciting if it decrypts.
func serverInitial(k *quicwire.Keys, dcid, scid []byte, pn uint64) []byte {
	payload := make([]byte, 40)
	payload[0] = byte(quicwire.FramePing)
	hdr := []byte{0xc0 | 3, 0, 0, 0, 1, byte(len(dcid))}
	hdr = append(hdr, dcid...)
	hdr = append(hdr, byte(len(scid)))
	hdr = append(hdr, scid...)
	hdr = append(hdr, 0) // no token
	hdr = quicwire.AppendVarintLen(hdr, uint64(4+len(payload)+quicwire.TagLen), 2)
	hdr = append(hdr, byte(pn>>24), byte(pn>>16), byte(pn>>8), byte(pn))
	return k.Seal(nil, hdr, pn, 4, payload)
}

// TestInitialFlood is RELIABILITY Q-70: a flood of packets an attacker
// can make, sent from the server's address during and after the
// handshake. Off the path (garbage, Initials that do not decrypt or are
// another connection's), the client completes the handshake and echoes
// and answers none of them: it sends about as many datagrams as without
// the flood. On the path (valid Initials carrying PING, which anyone who
// sees the client's first datagram can seal, 2,000 while the server's
// flight is held 300 ms), no client can tell them from the server's: the
// handshake may complete or end in a typed error (quic-go closes when it
// sees ACKs of packets it never sent), within the handshake timeout, but
// the client's answers are bounded: a few dozen datagrams, not one per
// packet. Valid Initials after the handshake find the Initial keys gone
// and are dropped unanswered.
func TestInitialFlood(t *testing.T) {
	srv := newEchoServer(t, nil)
	const timeout = 3 * time.Second
	run := func(t *testing.T, name string, onPath, late bool, count int, hold time.Duration) (sent, flood int64, err error) {
		relay := newFloodRelay(t, srv.addr(), onPath, late, count, time.Millisecond, hold)
		start := time.Now()
		c, err := dial(t, name, relay.addr(), srv.cert, func(c *Config) { c.HandshakeTimeout = timeout })
		if err == nil && late {
			relay.startLate()
		}
		if err == nil {
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			err = echo(ctx, c, randomBytes(20000, 3))
			// the flood goes on after the handshake: the connection serves on
			select {
			case <-relay.done:
			case <-time.After(5 * time.Second):
				t.Fatal("the flood did not end in 5 s")
			}
			if err == nil {
				err = echo(ctx, c, randomBytes(3000, 4))
			}
			if err == nil {
				err = c.Err()
			}
		}
		if el := time.Since(start); err != nil && el > timeout+2*time.Second {
			t.Errorf("failed after %v, past the handshake timeout: %v", el, err)
		}
		if err != nil && !errors.Is(err, ErrHandshakeTimeout) && !errors.As(err, new(*ConnectionError)) {
			t.Errorf("untyped error %T: %v", err, err)
		}
		return relay.sent.Load(), relay.flood.Load(), err
	}
	for _, name := range profiles {
		t.Run(name, func(t *testing.T) {
			base, _, err := run(t, name, false, false, 0, 0)
			if err != nil {
				t.Fatalf("without a flood: %v", err)
			}
			sent, flood, err := run(t, name, false, false, 3000, 0)
			t.Logf("off path: %d datagrams sent without a flood, %d under a flood of %d", base, sent, flood)
			if err != nil {
				t.Fatalf("off path: %v", err)
			}
			if flood < 3000 {
				t.Fatalf("only %d flood datagrams written", flood)
			}
			if sent > base+20 {
				t.Errorf("off path: the client sent %d datagrams under the flood, %d without", sent, base)
			}
			sent, flood, err = run(t, name, true, false, 2000, 300*time.Millisecond)
			t.Logf("on path: %d datagrams sent under a flood of %d valid Initials; the connection: %v", sent, flood, err)
			if flood < 2000 {
				t.Fatalf("only %d flood datagrams written", flood)
			}
			if sent > base+40 {
				t.Errorf("on path: the client sent %d datagrams under a flood of %d, %d without", sent, flood, base)
			}
			// valid Initials once the handshake is done: the Initial keys
			// are gone, they are dropped, and the connection serves on
			sent, flood, err = run(t, name, true, true, 2000, 0)
			t.Logf("on path, after the handshake: %d datagrams sent under a flood of %d valid Initials", sent, flood)
			if err != nil {
				t.Fatalf("on path, after the handshake: %v", err)
			}
			if flood < 2000 {
				t.Fatalf("only %d flood datagrams written", flood)
			}
			if sent > base+20 {
				t.Errorf("on path, after the handshake: the client sent %d datagrams under the flood, %d without", sent, base)
			}
		})
	}
}
