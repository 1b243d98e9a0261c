// Package pool keeps a client's connections per key: HTTP/1.1 connections,
// which serve one request at a time and wait idle between requests, and
// HTTP/2 connections, which serve many at once.
//
// A key names everything a connection was made for: origin, proxy and its
// credentials, browser profile and TLS options. Two requests share a
// connection only when their keys are equal, so a connection is never used for
// something it was not made for; scopes that share nothing use separate
// pools.
//
// An https key does not say which protocol its server picks (unless it
// offers HTTP/1.1 alone: Key.HTTP1Only). The first
// request to such a key dials alone and the others wait, as browsers do, to
// learn whether the connection is shared (then they use it) or exclusive
// (then each takes its own, up to MaxPerKey). A key whose shared connections
// are all full queues its requests on them; a new shared connection is
// dialed, one at a time, only when none can take requests at all.
package pool

import (
	"context"
	"errors"
	"strconv"
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
	// HTTP1Only marks an https key whose connections offer http/1.1 alone
	// in their ClientHello: they are never shared, so the key's first
	// dial does not make the others wait to learn the protocol.
	HTTP1Only bool
	// HTTP3 marks a key whose connections are HTTP/3 over QUIC, kept apart
	// from the origin's TCP ones; they are shared.
	HTTP3 bool
}

// ErrClosed is returned by Get after Close.
var ErrClosed = errors.New("pool: closed")

// Conn is what a pool holds. Close must be safe to call once the pool drops
// it. Reserve, Usable, IdleSince and Retire are asked only of connections
// handed to the pool with Shared; an exclusive connection may implement them
// trivially.
type Conn interface {
	Close() error
	// Reserve takes one request slot on a shared connection, or reports
	// false when the connection is full or no longer takes requests.
	Reserve() bool
	// Usable reports whether the connection may take requests, now or once
	// a slot frees: false once it failed, closed or is going away.
	Usable() bool
	// IdleSince reports since when the connection has had no request in
	// flight; ok is false while it has one.
	IdleSince() (since time.Time, ok bool)
	// Retire closes the connection once its requests in flight are over,
	// and refuses new ones.
	Retire()
}

// How says what a Lease grants.
type How uint8

// What GetAt grants.
const (
	// Dial: the caller dials a new connection, then ends the lease with
	// exactly one of Shared, Exclusive or Failed.
	Dial How = iota + 1
	// Idle: an idle exclusive connection, which ends with Put or Drop.
	Idle
	// Reserved: a shared connection on which a request slot is reserved
	// for the caller.
	Reserved
	// Queued: a shared connection that is full; the request waits on it
	// for a slot.
	Queued
)

var howNames = [...]string{"", "dial", "idle", "reserved", "queued"}

func (h How) String() string {
	if int(h) < len(howNames) && h != 0 {
		return howNames[h]
	}
	return "How(" + strconv.Itoa(int(h)) + ")"
}

// A Lease is what GetAt grants: a connection to use, or the right to dial
// one.
type Lease[C Conn] struct {
	Conn C // zero for Dial
	How  How
	// slot: a Dial that holds one of the key's MaxPerKey places. decides:
	// the Dial other Gets of the key wait for.
	slot, decides bool
}

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
	keys   keyTable[C]
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
	open    int           // exclusive connections open or dialing under this key
	idle    []idleConn[C] // most recent last
	waiters []*waiter[C]
	shared  []C // shared connections, in the order they were dialed
	kind    kind
	// dialing is closed when the Dial that other Gets wait for ends: the
	// first of a key of unknown kind, or a shared key's next connection.
	dialing chan struct{}
}

// kind is what a key's connections turned out to be.
type kind uint8

const (
	kindUnknown kind = iota
	kindExclusive
	kindShared
)

// mayShare reports whether key's server may pick a shared protocol:
// HTTP/2 is negotiated only over TLS, and only when offered.
func mayShare(key Key) bool { return key.Scheme == "https" && !key.HTTP1Only }

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

// Get is GetAt as of now.
func (p *Pool[C]) Get(ctx context.Context, key Key) (Lease[C], error) {
	return p.GetAt(ctx, key, time.Now())
}

// GetAt grants a connection for key, judging idle ones expired or not as of
// now (the caller's clock reading). In order, it grants: a shared
// connection with a slot reserved (Reserved); an idle exclusive connection
// (Idle); the right to dial (Dial) while the key is under MaxPerKey, or for
// a shared key none of whose connections is usable; a full shared
// connection to queue on (Queued). Otherwise it waits, until ctx is done:
// for a slot, or for the dial that decides what the key's connections are.
//
// Every Dial ends with exactly one of Shared, Exclusive or Failed; every
// exclusive connection (Idle, or dialed and then Exclusive) with exactly
// one Put or Drop. Shared connections need nothing of the caller.
func (p *Pool[C]) GetAt(ctx context.Context, key Key, now time.Time) (Lease[C], error) {
	var expired, retired []C
	p.mu.Lock()
	for {
		if p.closed {
			p.mu.Unlock()
			closeAll(expired)
			return Lease[C]{}, ErrClosed
		}
		if len(retired) > 0 {
			p.mu.Unlock()
			retireAll(retired)
			retired = retired[:0]
			p.mu.Lock()
			continue
		}
		e := p.entry(key)
		var queue C
		canQueue := false
		if len(e.shared) > 0 {
			var c C
			var ok bool
			c, ok, queue, canQueue, retired = p.reserveShared(e, retired)
			if ok {
				p.mu.Unlock()
				closeAll(expired)
				retireAll(retired)
				return Lease[C]{Conn: c, How: Reserved}, nil
			}
			if len(retired) > 0 {
				continue // retire them outside p.mu, then look again
			}
		}
		c, ok, exp := p.popIdle(e, now)
		expired = append(expired, exp...)
		if ok {
			p.mu.Unlock()
			closeAll(expired)
			return Lease[C]{Conn: c, How: Idle}, nil
		}
		switch {
		case canQueue:
			p.mu.Unlock()
			closeAll(expired)
			return Lease[C]{Conn: queue, How: Queued}, nil
		case e.dialing != nil:
			// What this key's next connection is, or whether it comes
			// up at all, decides what this Get grants: wait for it.
			ch := e.dialing
			p.mu.Unlock()
			closeAll(expired)
			expired = nil
			select {
			case <-ch:
			case <-ctx.Done():
				return Lease[C]{}, ctx.Err()
			}
			p.mu.Lock()
			continue
		case e.kind == kindShared:
			e.dialing = make(chan struct{})
			p.mu.Unlock()
			closeAll(expired)
			return Lease[C]{How: Dial, decides: true}, nil
		case e.open < p.maxPerKey():
			e.open++
			l := Lease[C]{How: Dial, slot: true}
			if e.kind == kindUnknown && mayShare(key) {
				e.dialing, l.decides = make(chan struct{}), true
			}
			p.mu.Unlock()
			closeAll(expired)
			return l, nil
		}
		w := &waiter[C]{ch: make(chan grant[C], 1)}
		e.waiters = append(e.waiters, w)
		p.mu.Unlock()
		closeAll(expired)

		select {
		case g := <-w.ch:
			switch {
			case g.closed:
				return Lease[C]{}, ErrClosed
			case g.reuse:
				return Lease[C]{Conn: g.c, How: Idle}, nil
			}
			return Lease[C]{How: Dial, slot: true}, nil
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
			return Lease[C]{}, ctx.Err()
		}
	}
}

// reserveShared reserves a slot on the first of e's shared connections
// that has one. Otherwise it returns the first usable one to queue on, as a
// browser queues on its one connection to an origin. Connections no longer
// usable leave e and are appended to retired, for the caller to retire once
// p.mu is released. p.mu is held.
func (p *Pool[C]) reserveShared(e *entry[C], retired []C) (c C, ok bool, queue C, canQueue bool, _ []C) {
	kept := e.shared[:0]
	for _, sc := range e.shared {
		if !sc.Usable() {
			retired = append(retired, sc) // its requests in flight finish
			continue
		}
		kept = append(kept, sc)
		if !ok && sc.Reserve() {
			c, ok = sc, true
		}
	}
	clear(e.shared[len(kept):])
	e.shared = kept
	if !ok && len(kept) > 0 {
		queue, canQueue = kept[0], true
	}
	return c, ok, queue, canQueue, retired
}

func retireAll[C Conn](cs []C) {
	for _, c := range cs {
		c.Retire()
	}
}

// Shared ends a Dial lease whose connection c is shared (HTTP/2): the pool
// keeps it for the key's later requests, and Gets waiting to learn what the
// key's connections are go on. The caller reserves its own request's slot
// on c before handing it over.
func (p *Pool[C]) Shared(key Key, l Lease[C], c C) {
	p.mu.Lock()
	e := p.lookup(key)
	if p.closed || e == nil {
		p.mu.Unlock()
		c.Retire()
		return
	}
	e.kind = kindShared
	e.shared = append(e.shared, c)
	if l.slot {
		e.open-- // a shared connection takes no exclusive place
	}
	p.endDial(e, l)
	p.armTimer(time.Now(), 0)
	p.mu.Unlock()
}

// Exclusive ends a Dial lease whose connection serves one request at a
// time (HTTP/1.1). The connection now ends with Put or Drop, and Gets
// waiting to learn what the key's connections are each take a place of
// their own.
func (p *Pool[C]) Exclusive(key Key, l Lease[C]) {
	p.mu.Lock()
	e := p.lookup(key)
	if e == nil {
		e = p.entry(key) // the key was forgotten (Close): Put or Drop still come
	}
	if !l.slot {
		// A shared key's server stopped offering a shared protocol: this
		// connection takes a place after all.
		e.open++
	}
	if e.kind == kindUnknown || !l.slot {
		e.kind = kindExclusive
	}
	p.endDial(e, l)
	p.mu.Unlock()
}

// Failed ends a Dial lease whose dial failed: its place, if it held one,
// goes to a waiting Get, and Gets waiting for the dial go on (one of them
// dials next).
func (p *Pool[C]) Failed(key Key, l Lease[C]) {
	p.mu.Lock()
	e := p.lookup(key)
	if e == nil {
		p.mu.Unlock()
		return
	}
	p.endDial(e, l)
	p.mu.Unlock()
	if l.slot {
		p.Drop(key)
		return
	}
	p.mu.Lock()
	p.cleanup(key, e)
	p.mu.Unlock()
}

// endDial wakes the Gets waiting for l's dial, if l is the dial they wait
// for. p.mu is held.
func (p *Pool[C]) endDial(e *entry[C], l Lease[C]) {
	if l.decides && e.dialing != nil {
		close(e.dialing)
		e.dialing = nil
	}
}

func (p *Pool[C]) entry(key Key) *entry[C] {
	e := p.lookup(key)
	if e == nil {
		e = new(entry[C])
		p.keys.put(key, e)
		p.last, p.lastKey = e, key
	}
	return e
}

// lookup returns key's entry or nil. p.mu is held.
func (p *Pool[C]) lookup(key Key) *entry[C] {
	if p.last != nil && p.lastKey == key {
		return p.last
	}
	e := p.keys.get(key)
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
	if e.open <= 0 && len(e.idle) == 0 && len(e.waiters) == 0 && len(e.shared) == 0 && e.dialing == nil {
		p.keys.del(key)
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

// evict closes expired idle connections, exclusive and shared, retires
// shared ones that are no longer usable, and re-arms the timer while any
// connection remains.
func (p *Pool[C]) evict() {
	var toClose, toRetire []C
	p.mu.Lock()
	p.timer = nil
	now := time.Now()
	remain := false
	next := p.idleTimeout() / 4 // the next sweep, sooner for a short ttl
	for key, e := range p.keys.all {
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
		shared := e.shared[:0]
		for _, c := range e.shared {
			switch since, idle := c.IdleSince(); {
			case !c.Usable():
				toRetire = append(toRetire, c)
			case idle && now.Sub(since) >= p.idleTimeout():
				toClose = append(toClose, c)
			default:
				shared = append(shared, c)
			}
		}
		clear(e.shared[len(shared):])
		e.shared = shared
		remain = remain || len(kept) > 0 || len(shared) > 0
		p.cleanup(key, e)
	}
	if remain && !p.closed {
		d := next + time.Millisecond
		p.timer, p.due = time.AfterFunc(d, p.evict), now.Add(d)
	}
	p.mu.Unlock()
	closeAll(toClose)
	retireAll(toRetire)
}

// CloseIdle closes every idle connection, exclusive and shared. Connections
// in use are not affected and may be put back afterwards.
func (p *Pool[C]) CloseIdle() {
	closeAll(p.take(false))
}

// Close closes every idle connection and makes waiting and later Gets fail
// with ErrClosed. Exclusive connections in use are closed when they are put
// back; shared ones close once their requests in flight are over.
func (p *Pool[C]) Close() error {
	closeAll(p.take(true))
	return nil
}

// take removes the connections CloseIdle or Close (closing) closes and
// returns them; closing retires the shared connections in use.
func (p *Pool[C]) take(closing bool) []C {
	var out, busy []C
	p.mu.Lock()
	if closing {
		p.closed = true
		if p.timer != nil {
			p.timer.Stop()
			p.timer = nil
		}
	}
	for key, e := range p.keys.all {
		for _, ic := range e.idle {
			out = append(out, ic.c)
			e.open--
		}
		clear(e.idle)
		e.idle = e.idle[:0]
		kept := e.shared[:0]
		for _, c := range e.shared {
			switch _, idle := c.IdleSince(); {
			case idle:
				out = append(out, c)
			case closing:
				busy = append(busy, c)
			default:
				kept = append(kept, c)
			}
		}
		clear(e.shared[len(kept):])
		e.shared = kept
		if closing {
			for _, w := range e.waiters {
				w.ch <- grant[C]{closed: true}
			}
			e.waiters = nil
			if e.dialing != nil {
				close(e.dialing) // its waiters see the pool closed
				e.dialing = nil
			}
		}
		p.cleanup(key, e)
	}
	p.mu.Unlock()
	retireAll(busy)
	return out
}

// Keys returns how many keys the pool tracks: keys with connections open,
// idle or awaited. A key whose last connection is gone is forgotten.
func (p *Pool[C]) Keys() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.keys.len()
}

// Stats reports, for tests and tracing, how many exclusive connections key
// has open (in use, idle or dialing) and idle.
func (p *Pool[C]) Stats(key Key) (open, idle int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if e := p.keys.get(key); e != nil {
		return e.open, len(e.idle)
	}
	return 0, 0
}

// Shares returns, for tests and tracing, the shared connections the pool
// holds now, over every key.
func (p *Pool[C]) Shares() []C {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []C
	for _, e := range p.keys.all {
		out = append(out, e.shared...)
	}
	return out
}

// keyTable maps keys to their entries: the first key inline, the others
// in a map made for the second. A Session mostly talks to one origin, and
// a map of one entry costs a group of 8 slots of Key and pointer, about
// 900 bytes per idle Session.
type keyTable[C Conn] struct {
	oneKey Key
	one    *entry[C]
	more   map[Key]*entry[C]
}

func (t *keyTable[C]) get(key Key) *entry[C] {
	if t.one != nil && t.oneKey == key {
		return t.one
	}
	return t.more[key]
}

// put adds key, which the table does not hold.
func (t *keyTable[C]) put(key Key, e *entry[C]) {
	if t.one == nil {
		t.oneKey, t.one = key, e
		return
	}
	if t.more == nil {
		t.more = make(map[Key]*entry[C])
	}
	t.more[key] = e
}

func (t *keyTable[C]) del(key Key) {
	if t.one != nil && t.oneKey == key {
		t.oneKey, t.one = Key{}, nil
		return
	}
	delete(t.more, key)
}

func (t *keyTable[C]) len() int {
	n := len(t.more)
	if t.one != nil {
		n++
	}
	return n
}

// all yields every key and entry; yield may delete the key it is given.
func (t *keyTable[C]) all(yield func(Key, *entry[C]) bool) {
	if e := t.one; e != nil && !yield(t.oneKey, e) {
		return
	}
	for k, e := range t.more {
		if !yield(k, e) {
			return
		}
	}
}
