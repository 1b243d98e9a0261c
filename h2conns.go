package guise

import (
	"context"
	"errors"
	"fmt"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"time"

	"github.com/guise-http/guise/internal/h2"
	"github.com/guise-http/guise/internal/pool"
	"golang.org/x/sync/singleflight"
)

// h2Conns holds a Transport's HTTP/2 connections per key. Browsers keep one
// connection per origin and open another only when it is full or going
// away; so does this.
type h2Conns struct {
	mu    sync.Mutex
	conns map[pool.Key][]*conn // HTTP/2 conns only
	known map[pool.Key]bool    // the origin negotiated h2 before
	// h1 marks origins whose first connection chose HTTP/1.1; probes
	// holds the first dial to an origin not known either way, which
	// concurrent requests wait for (as browsers do) rather than each
	// opening a connection that may turn out to be HTTP/2.
	h1     map[pool.Key]bool
	probes map[pool.Key]chan struct{}
	closed bool
	dials  singleflight.Group
	// idle closes connections without streams for longer than this.
	idle  time.Duration
	timer *time.Timer // the next sweep, while there are connections
}

// h2Get returns a connection of key with a stream reserved, or nil.
func (st *transportState) h2Get(key pool.Key) *conn {
	hc := &st.h2s
	hc.mu.Lock()
	defer hc.mu.Unlock()
	list := hc.conns[key]
	for i := 0; i < len(list); i++ {
		c := list[i]
		cc := c.h2
		if cc.Err() != nil {
			list = append(list[:i], list[i+1:]...)
			i--
			continue
		}
		if cc.ReserveNewRequest() {
			hc.conns[key] = list
			return c
		}
	}
	if len(list) == 0 {
		delete(hc.conns, key)
	} else {
		hc.conns[key] = list
	}
	return nil
}

// probe decides, for an https origin, whether this request may dial the
// first connection (lead), must wait for the one being dialed (wait), or
// neither because the origin's protocol is known.
func (hc *h2Conns) probe(key pool.Key) (wait <-chan struct{}, lead bool) {
	hc.mu.Lock()
	defer hc.mu.Unlock()
	if hc.known[key] || hc.h1[key] || hc.closed {
		return nil, false
	}
	if ch := hc.probes[key]; ch != nil {
		return ch, false
	}
	if hc.probes == nil {
		hc.probes = make(map[pool.Key]chan struct{})
	}
	hc.probes[key] = make(chan struct{})
	return nil, true
}

// endProbe ends the leader's first dial; h1 records that the origin chose
// HTTP/1.1 (h2 is recorded by h2Add).
func (hc *h2Conns) endProbe(key pool.Key, h1 bool) {
	hc.mu.Lock()
	defer hc.mu.Unlock()
	if h1 {
		if hc.h1 == nil {
			hc.h1 = make(map[pool.Key]bool)
		}
		hc.forgetIfFull()
		hc.h1[key] = true
	}
	if ch := hc.probes[key]; ch != nil {
		close(ch)
		delete(hc.probes, key)
	}
}

// maxKnownOrigins bounds what a long-lived Transport remembers about
// origins' protocols; past it the memory starts over (a crawler visits
// millions of origins). hc.mu is held.
const maxKnownOrigins = 4096

func (hc *h2Conns) forgetIfFull() {
	if len(hc.known)+len(hc.h1) >= maxKnownOrigins {
		clear(hc.known)
		clear(hc.h1)
	}
}

func (st *transportState) h2Known(key pool.Key) bool {
	st.h2s.mu.Lock()
	defer st.h2s.mu.Unlock()
	return st.h2s.known[key]
}

// h2Add keeps c, an HTTP/2 connection, for later requests of key.
func (st *transportState) h2Add(key pool.Key, c *conn) {
	hc := &st.h2s
	hc.mu.Lock()
	if hc.closed {
		hc.mu.Unlock()
		c.h2.Close()
		return
	}
	if hc.conns == nil {
		hc.conns = make(map[pool.Key][]*conn)
		hc.known = make(map[pool.Key]bool)
	}
	hc.conns[key] = append(hc.conns[key], c)
	hc.forgetIfFull()
	hc.known[key] = true
	if hc.timer == nil {
		hc.timer = time.AfterFunc(hc.idle, hc.sweep)
	}
	hc.mu.Unlock()
	c.h2.OnIdle(func(*h2.ClientConn) { c.idleSince.Store(time.Now().UnixNano()) })
}

// sweep closes HTTP/2 connections idle for longer than hc.idle, and
// connections that ended, then runs again while any remain.
func (hc *h2Conns) sweep() {
	var out []*h2.ClientConn
	hc.mu.Lock()
	hc.timer = nil
	now := time.Now().UnixNano()
	for key, list := range hc.conns {
		kept := list[:0]
		for _, c := range list {
			since := c.idleSince.Load()
			if c.h2.Err() != nil || c.h2.Idle() && since != 0 && time.Duration(now-since) >= hc.idle {
				out = append(out, c.h2)
				continue
			}
			kept = append(kept, c)
		}
		clear(list[len(kept):])
		if len(kept) == 0 {
			delete(hc.conns, key)
		} else {
			hc.conns[key] = kept
		}
	}
	if len(hc.conns) > 0 && !hc.closed {
		hc.timer = time.AfterFunc(hc.idle/2, hc.sweep)
	}
	hc.mu.Unlock()
	for _, cc := range out {
		cc.Close()
	}
}

// h2Dial opens one more HTTP/2 connection for key, coalescing concurrent
// callers onto one dial, and reserves a stream on it.
func (st *transportState) h2Dial(ctx context.Context, key pool.Key, o *options, trace *httptrace.ClientTrace) (*conn, bool, error) {
	st.h2s.mu.Lock()
	closed := st.h2s.closed
	st.h2s.mu.Unlock()
	if closed {
		return nil, false, ErrClosed
	}
	oc := *o // a copy, so that o itself does not escape on the hot path
	for try := 0; try < 3; try++ {
		ch := st.h2s.dials.DoChan(fmt.Sprint(key), func() (any, error) {
			c, err := st.dialConn(context.WithoutCancel(ctx), key, &oc, trace)
			if err != nil {
				return nil, err
			}
			if c.h2 != nil {
				st.h2Add(key, c)
			}
			// An origin that stopped offering h2 gives an HTTP/1.1
			// connection, used once outside the pool's count.
			return &dialResult{c: c}, nil
		})
		var res singleflight.Result
		select {
		case res = <-ch:
		case <-ctx.Done():
			// The dial goes on for others; if none of its callers is
			// left to claim it, its reserved stream (or its HTTP/1.1
			// connection) must not be kept for nobody.
			go func() {
				if r := <-ch; r.Err == nil {
					r.Val.(*dialResult).abandon()
				}
			}()
			return nil, false, ctx.Err()
		}
		if res.Err != nil {
			return nil, false, res.Err
		}
		dr := res.Val.(*dialResult)
		if dr.claimed.CompareAndSwap(false, true) {
			// The first caller to look takes the stream the dial reserved.
			return dr.c, false, nil
		}
		if c := st.h2Get(key); c != nil {
			return c, true, nil
		}
	}
	return nil, false, errors.New("guise: no HTTP/2 connection could take the request")
}

// dialResult is a coalesced dial's connection; exactly one of the callers
// that waited for it claims the stream the dial reserved.
type dialResult struct {
	c       *conn
	claimed atomic.Bool
}

// abandon gives up a dial result that a caller whose context ended will
// not use: unless another caller claimed it, the HTTP/2 stream it reserved
// is given back, and an HTTP/1.1 connection (used outside the pool) is
// closed.
func (dr *dialResult) abandon() {
	if !dr.claimed.CompareAndSwap(false, true) {
		return
	}
	if dr.c.h2 != nil {
		dr.c.h2.CancelReservation()
	} else {
		dr.c.Close()
	}
}

func (hc *h2Conns) take(all bool) []*h2.ClientConn {
	hc.mu.Lock()
	defer hc.mu.Unlock()
	var out []*h2.ClientConn
	for key, list := range hc.conns {
		kept := list[:0]
		for _, c := range list {
			if all || c.h2.Idle() {
				out = append(out, c.h2)
			} else {
				kept = append(kept, c)
			}
		}
		if len(kept) == 0 {
			delete(hc.conns, key)
		} else {
			hc.conns[key] = kept
		}
	}
	if all {
		hc.closed = true
		if hc.timer != nil {
			hc.timer.Stop()
			hc.timer = nil
		}
	}
	return out
}

// close closes every HTTP/2 connection, each once its streams in flight
// are over, and refuses new ones (h2Dial).
func (hc *h2Conns) close() {
	// Responses being read finish; each connection closes after its
	// last stream (Transport.Close).
	for _, cc := range hc.take(true) {
		cc.CloseWhenIdle()
	}
}

// closeIdle closes the connections with no stream open.
func (hc *h2Conns) closeIdle() {
	for _, cc := range hc.take(false) {
		cc.Close()
	}
}
