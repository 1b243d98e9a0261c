package quic

import (
	"context"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// lossyRelay forwards datagrams between one client and a server on
// loopback, dropping, reordering and duplicating them by a seeded
// generator: the network of the loss recovery tests.
type lossyRelay struct {
	front, back *net.UDPConn
	server      *net.UDPAddr
	mu          sync.Mutex
	client      *net.UDPAddr
	r           *rand.Rand
	drop, dup   float64
	reorder     float64
	held        [2][]byte
	dropped     atomic.Int64
	passed      atomic.Int64
	// blackhole drops everything while set (a server gone silent).
	blackhole atomic.Bool
	wg        sync.WaitGroup
}

func newLossyRelay(t *testing.T, server *net.UDPAddr, seed uint64, drop, dup, reorder float64) *lossyRelay {
	t.Helper()
	front, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	back, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	r := &lossyRelay{front: front, back: back, server: server, r: rand.New(rand.NewPCG(seed, 7)), drop: drop, dup: dup, reorder: reorder}
	r.wg.Add(2)
	go r.pump(front, true)
	go r.pump(back, false)
	t.Cleanup(func() {
		front.Close()
		back.Close()
		r.wg.Wait()
	})
	return r
}

func (r *lossyRelay) addr() *net.UDPAddr { return r.front.LocalAddr().(*net.UDPAddr) }

// pump forwards one direction: from the client when up.
func (r *lossyRelay) pump(from *net.UDPConn, up bool) {
	defer r.wg.Done()
	buf := make([]byte, 65536)
	dir := 0
	if !up {
		dir = 1
	}
	for {
		n, a, err := from.ReadFromUDP(buf)
		if err != nil {
			return
		}
		r.mu.Lock()
		if up {
			r.client = a
		}
		dst, out := r.server, r.back
		if !up {
			dst, out = r.client, r.front
		}
		if dst == nil || r.blackhole.Load() {
			r.mu.Unlock()
			continue
		}
		d := append([]byte(nil), buf[:n]...)
		var send [][]byte
		switch x := r.r.Float64(); {
		case x < r.drop:
			r.dropped.Add(1)
		case x < r.drop+r.dup:
			send = append(send, d, d)
		case x < r.drop+r.dup+r.reorder && r.held[dir] == nil:
			r.held[dir] = d
		default:
			send = append(send, d)
			if h := r.held[dir]; h != nil {
				send = append(send, h)
				r.held[dir] = nil
			}
		}
		r.mu.Unlock()
		for _, d := range send {
			out.WriteToUDP(d, dst)
			r.passed.Add(1)
		}
	}
}

// TestLossyTransfers is RELIABILITY Q-13: through a relay that drops 5%
// of the datagrams each way, duplicates 2% and reorders 5% (seeded),
// the handshake completes and echoes of up to 2 MiB, also 8 at once,
// come back byte-exact.
func TestLossyTransfers(t *testing.T) {
	srv := newEchoServer(t, nil)
	for i, name := range profiles {
		t.Run(name, func(t *testing.T) {
			relay := newLossyRelay(t, srv.addr(), uint64(i+1), 0.05, 0.02, 0.05)
			c, err := dial(t, name, relay.addr(), srv.cert, func(c *Config) { c.HandshakeTimeout = 20 * time.Second; c.MaxIdleTimeout = 5 * time.Second })
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
			defer cancel()
			for j, n := range []int{1, 3000, 100000, 2 << 20} {
				if err := echo(ctx, c, randomBytes(n, uint64(j))); err != nil {
					t.Fatalf("%d bytes: %v", n, err)
				}
			}
			var wg sync.WaitGroup
			errs := make(chan error, 8)
			for j := range 8 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if err := echo(ctx, c, randomBytes(50000+j*20000, uint64(50+j))); err != nil {
						errs <- err
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			t.Logf("relay: %d datagrams passed, %d dropped", relay.passed.Load(), relay.dropped.Load())
		})
	}
}
