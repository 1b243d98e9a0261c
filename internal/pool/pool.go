// Package pool keeps idle client connections per key and caps how many
// connections a key may have open at once.
//
// A key names everything a connection was made for: origin, proxy and its
// credentials, browser profile, TLS options and scope. Two requests share a
// connection only when their keys are equal, so a connection is never used for
// something it was not made for.
package pool

import (
	"context"
	"errors"
	"sync"
	"time"
)

// Key identifies what a connection was made for. Every field takes part in
// equality.
type Key struct {
	Scheme  string // "http" or "https"
	Addr    string // host:port of the origin
	Proxy   string // proxy URL including credentials; "" for a direct connection
	Profile string // browser profile name
	TLS     string // identity of the TLS options (trust store, roots, verification)
}

// ErrClosed is returned by Get after Close.
var ErrClosed = errors.New("pool: closed")

// Conn is what a pool holds. Close must be safe to call once the pool drops it.
type Conn interface{ Close() error }

// Pool holds idle connections of type C per Key, most recently used first.
// The zero value is ready to use with the defaults noted on each field.
// Fields must not change after first use. A Pool is safe for concurrent use.
type Pool[C Conn] struct {
	// MaxPerKey caps the connections a key has open or dialing at once.
	// 0 means 6, what browsers allow per host over HTTP/1.1.
	MaxPerKey int
	// MaxIdlePerKey caps the idle connections kept per key; 0 means MaxPerKey.
	MaxIdlePerKey int
	// IdleTimeout closes a connection idle for longer; 0 means 90s.
	IdleTimeout time.Duration

	mu     sync.Mutex
	keys   map[Key]*entry[C]
	closed bool
	// last and lastKey are the entry looked up last: a program talking to
	// one origin compares its key instead of hashing five strings twice
	// per request. last is nil or in keys.
	last    *entry[C]
	lastKey Key
	timer   *time.Timer // fires at the earliest idle expiry
	due     time.Time   // when timer fires
}

type idleConn[C Conn] struct {
	c     C
	since time.Time
	ttl   time.Duration // 0: the pool's IdleTimeout
}

// expired reports whether ic has been idle too long as of now.
func (p *Pool[C]) expired(ic *idleConn[C], now time.Time) bool {
	limit := p.idleTimeout()
	if ic.ttl > 0 && ic.ttl < limit {
		limit = ic.ttl
	}
	return now.Sub(ic.since) >= limit
}

type entry[C Conn] struct {
	open    int           // connections open or dialing under this key
	idle    []idleConn[C] // most recent last
	waiters []*waiter[C]
}

// waiter is a Get blocked at the per-key cap. It receives either a
// connection handed over by Put, or permission to dial (ok with zero c).
type waiter[C Conn] struct {
	ch chan grant[C]
}

type grant[C Conn] struct {
	c      C
	reuse  bool
	closed bool // the pool closed while the Get waited
}

func (p *Pool[C]) maxPerKey() int {
	if p.MaxPerKey > 0 {
		return p.MaxPerKey
	}
	return 6
}

func (p *Pool[C]) maxIdle() int {
	if p.MaxIdlePerKey > 0 {
		return p.MaxIdlePerKey
	}
	return p.maxPerKey()
}

func (p *Pool[C]) idleTimeout() time.Duration {
	if p.IdleTimeout > 0 {
		return p.IdleTimeout
	}
	return 90 * time.Second
}

// Get returns an idle connection for key with ok true. Otherwise, once key
// is under its cap, it returns ok false and a nil error: the caller now
// holds a slot and must dial, then hand the new connection back with Put
// when done, or call Drop if the dial failed. Get waits for a free slot until
// ctx is done. Every connection from Get (or dialed on its slot) ends with
// exactly one Put (reusable) or Drop (closed, or to be closed by the caller).
func (p *Pool[C]) Get(ctx context.Context, key Key) (c C, ok bool, err error) {
	return p.GetAt(ctx, key, time.Now())
}

// GetAt is Get for a caller that has just read the clock: idle connections
// are judged expired or not as of now.
func (p *Pool[C]) GetAt(ctx context.Context, key Key, now time.Time) (c C, ok bool, err error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return c, false, ErrClosed
	}
	e := p.entry(key)
	c, ok, expired := p.popIdle(e, now)
	if ok {
		p.mu.Unlock()
		closeAll(expired)
		return c, true, nil
	}
	if e.open < p.maxPerKey() {
		e.open++
		p.mu.Unlock()
		closeAll(expired)
		return c, false, nil
	}
	w := &waiter[C]{ch: make(chan grant[C], 1)}
	e.waiters = append(e.waiters, w)
	p.mu.Unlock()
	closeAll(expired)

	select {
	case g := <-w.ch:
		if g.closed {
			return c, false, ErrClosed
		}
		return g.c, g.reuse, nil
	case <-ctx.Done():
		p.mu.Lock()
		removed := e.removeWaiter(w)
		p.mu.Unlock()
		if !removed {
			// A grant raced with the cancellation: pass it on.
			g := <-w.ch
			switch {
			case g.closed:
			case g.reuse:
				p.Put(key, g.c)
			default:
				p.Drop(key)
			}
		}
		return c, false, ctx.Err()
	}
}

func (p *Pool[C]) entry(key Key) *entry[C] {
	if p.keys == nil {
		p.keys = make(map[Key]*entry[C])
	}
	e := p.lookup(key)
	if e == nil {
		e = new(entry[C])
		p.keys[key] = e
		p.last, p.lastKey = e, key
	}
	return e
}

// lookup returns key's entry or nil. p.mu is held.
func (p *Pool[C]) lookup(key Key) *entry[C] {
	if p.last != nil && p.lastKey == key {
		return p.last
	}
	e := p.keys[key]
	if e != nil {
		p.last, p.lastKey = e, key
	}
	return e
}

// popIdle takes the most recent idle connection that has not expired. It
// returns expired ones for the caller to close once p.mu is released.
func (p *Pool[C]) popIdle(e *entry[C], now time.Time) (c C, ok bool, expired []C) {
	for n := len(e.idle); n > 0; n = len(e.idle) {
		ic := e.idle[n-1]
		e.idle[n-1] = idleConn[C]{}
		e.idle = e.idle[:n-1]
		if !p.expired(&ic, now) {
			return ic.c, true, expired
		}
		e.open--
		expired = append(expired, ic.c)
	}
	return c, false, expired
}

func closeAll[C Conn](cs []C) {
	for _, c := range cs {
		c.Close()
	}
}

// Put hands back a reusable connection: to a waiting Get if there is one,
// else to the idle list (closing it if the list is full or the pool closed).
func (p *Pool[C]) Put(key Key, c C) {
	p.PutAt(key, c, time.Now())
}

// PutAt is Put for a caller that has just read the clock: the connection is
// idle since now.
func (p *Pool[C]) PutAt(key Key, c C, now time.Time) { p.PutIdle(key, c, now, 0) }

// PutIdle is PutAt for a connection that may stay idle for at most ttl
// (when shorter than IdleTimeout; 0: IdleTimeout), as an HTTP/1.1 server
// says with Keep-Alive: timeout=N.
func (p *Pool[C]) PutIdle(key Key, c C, now time.Time, ttl time.Duration) {
	p.mu.Lock()
	e := p.lookup(key)
	if p.closed || e == nil {
		p.mu.Unlock()
		c.Close()
		return
	}
	if len(e.waiters) > 0 {
		w := e.waiters[0]
		e.waiters = e.waiters[1:]
		p.mu.Unlock()
		w.ch <- grant[C]{c: c, reuse: true}
		return
	}
	if len(e.idle) >= p.maxIdle() {
		e.open--
		p.cleanup(key, e)
		p.mu.Unlock()
		c.Close()
		return
	}
	e.idle = append(e.idle, idleConn[C]{c: c, since: now, ttl: ttl})
	p.armTimer(now, ttl)
	p.mu.Unlock()
}

// Drop tells the pool that a connection of key is gone (closed, failed to
// dial, or not reusable): its slot goes to a waiting Get, which then dials.
// The caller closes the connection itself.
func (p *Pool[C]) Drop(key Key) {
	p.mu.Lock()
	e := p.lookup(key)
	if e == nil {
		p.mu.Unlock()
		return
	}
	if len(e.waiters) > 0 && !p.closed {
		w := e.waiters[0]
		e.waiters = e.waiters[1:]
		p.mu.Unlock()
		w.ch <- grant[C]{} // the slot passes on; open stays counted
		return
	}
	e.open--
	p.cleanup(key, e)
	p.mu.Unlock()
}

// cleanup forgets an entry with nothing in it, so keys seen once do not
// grow the map. p.mu is held.
func (p *Pool[C]) cleanup(key Key, e *entry[C]) {
	if e.open <= 0 && len(e.idle) == 0 && len(e.waiters) == 0 {
		delete(p.keys, key)
		if p.last == e {
			p.last, p.lastKey = nil, Key{}
		}
	}
}

func (e *entry[C]) removeWaiter(w *waiter[C]) bool {
	for i, x := range e.waiters {
		if x == w {
			e.waiters = append(e.waiters[:i], e.waiters[i+1:]...)
			return true
		}
	}
	return false
}

// armTimer makes sure a timer will evict idle connections once they expire.
// p.mu is held.
func (p *Pool[C]) armTimer(now time.Time, within time.Duration) {
	d := p.idleTimeout()
	if within > 0 && within < d {
		d = within
	}
	due := now.Add(d) // now: the caller's clock reading, not another
	switch {
	case p.timer == nil:
		p.timer = time.AfterFunc(d, p.evict)
	case due.Before(p.due):
		// A connection with a shorter ttl: evict it when it expires,
		// not at the next sweep.
		p.timer.Reset(d)
	default:
		return
	}
	p.due = due
}

// evict closes expired idle connections and re-arms the timer while any
// idle connection remains.
func (p *Pool[C]) evict() {
	var toClose []C
	p.mu.Lock()
	p.timer = nil
	now := time.Now()
	remain := false
	next := p.idleTimeout() / 4 // the next sweep, sooner for a short ttl
	for key, e := range p.keys {
		kept := e.idle[:0]
		for _, ic := range e.idle {
			if p.expired(&ic, now) {
				toClose = append(toClose, ic.c)
				e.open--
				continue
			}
			if ic.ttl > 0 {
				next = min(next, ic.since.Add(ic.ttl).Sub(now))
			}
			kept = append(kept, ic)
		}
		clear(e.idle[len(kept):])
		e.idle = kept
		remain = remain || len(kept) > 0
		p.cleanup(key, e)
	}
	if remain && !p.closed {
		d := next + time.Millisecond
		p.timer, p.due = time.AfterFunc(d, p.evict), now.Add(d)
	}
	p.mu.Unlock()
	closeAll(toClose)
}

// CloseIdle closes every idle connection. Connections in use are not
// affected and may be put back afterwards.
func (p *Pool[C]) CloseIdle() {
	closeAll(p.takeIdle(false))
}

// Close closes every idle connection and makes waiting and later Gets fail
// with ErrClosed. Connections in use are closed when they are put back.
func (p *Pool[C]) Close() error {
	closeAll(p.takeIdle(true))
	return nil
}

func (p *Pool[C]) takeIdle(closing bool) []C {
	var out []C
	p.mu.Lock()
	defer p.mu.Unlock()
	if closing {
		p.closed = true
		if p.timer != nil {
			p.timer.Stop()
			p.timer = nil
		}
	}
	for key, e := range p.keys {
		for _, ic := range e.idle {
			out = append(out, ic.c)
			e.open--
		}
		clear(e.idle)
		e.idle = e.idle[:0]
		if closing {
			for _, w := range e.waiters {
				w.ch <- grant[C]{closed: true}
			}
			e.waiters = nil
		}
		p.cleanup(key, e)
	}
	return out
}

// Keys returns how many keys the pool tracks: keys with connections open,
// idle or awaited. A key whose last connection is gone is forgotten.
func (p *Pool[C]) Keys() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.keys)
}

// Stats reports, for tests and tracing, how many connections key has open
// (in use, idle or dialing) and idle.
func (p *Pool[C]) Stats(key Key) (open, idle int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e := p.keys[key]; e != nil {
		return e.open, len(e.idle)
	}
	return 0, 0
}
