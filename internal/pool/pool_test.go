package pool

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeConn is an exclusive connection, or a shared one with slots
// requests (0 for exclusive ones).
type fakeConn struct {
	id      int
	closed  atomic.Bool
	retired atomic.Bool
	slots   int
	mu      sync.Mutex
	inUse   int
	gone    bool // going away: no longer usable
	since   time.Time
}

func (c *fakeConn) Close() error { c.closed.Store(true); return nil }

func (c *fakeConn) Reserve() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gone || c.closed.Load() || c.inUse >= c.slots {
		return false
	}
	c.inUse++
	return true
}

// done ends one request on a shared connection.
func (c *fakeConn) done() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.inUse--
	if c.inUse == 0 {
		c.since = time.Now()
	}
}

func (c *fakeConn) Usable() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.gone && !c.closed.Load() && !c.retired.Load()
}

func (c *fakeConn) IdleSince() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.since, c.inUse == 0
}

func (c *fakeConn) Retire() { c.retired.Store(true) }

type dialer struct {
	n atomic.Int32
}

// get is Get plus the dial a caller does when Get grants one, for keys
// whose connections are exclusive.
func (d *dialer) get(ctx context.Context, p *Pool[*fakeConn], k Key) (*fakeConn, bool, error) {
	l, err := p.Get(ctx, k)
	if err != nil {
		return nil, false, err
	}
	if l.How == Idle {
		return l.Conn, true, nil
	}
	if l.How != Dial {
		return nil, false, errors.New("an exclusive key granted " + l.How.String())
	}
	p.Exclusive(k, l)
	return &fakeConn{id: int(d.n.Add(1))}, false, nil
}

var key = Key{Scheme: "http", Addr: "127.0.0.1:80", Profile: "chrome"}

func TestReuseIsLIFOAndPerKey(t *testing.T) {
	var p Pool[*fakeConn]
	defer p.Close()
	var d dialer
	ctx := context.Background()
	a, reused, _ := d.get(ctx, &p, key)
	b, _, _ := d.get(ctx, &p, key)
	if reused || a == b {
		t.Fatalf("first Gets must dial distinct conns")
	}
	p.Put(key, a)
	p.Put(key, b)
	c, reused, _ := d.get(ctx, &p, key)
	if !reused || c != b {
		t.Fatalf("got %v reused=%v, want the most recently put conn", c.id, reused)
	}
	other := key
	other.Proxy = "socks5://u:p@127.0.0.1:1080"
	o, reused, _ := d.get(ctx, &p, other)
	if reused || o == a {
		t.Fatal("a different key must never reuse a connection")
	}
	p.Drop(other)
	p.Put(key, c)
	if open, idle := p.Stats(key); open != 2 || idle != 2 {
		t.Fatalf("stats = %d open %d idle, want 2 2", open, idle)
	}
	if open, _ := p.Stats(other); open != 0 {
		t.Fatalf("dropped key still counts %d open", open)
	}
}

// RELIABILITY L-03.
func TestCapWaitsAndHandsOver(t *testing.T) {
	p := Pool[*fakeConn]{MaxPerKey: 2}
	defer p.Close()
	var d dialer
	ctx := context.Background()
	a, _, _ := d.get(ctx, &p, key)
	b, _, _ := d.get(ctx, &p, key)
	got := make(chan *fakeConn)
	go func() {
		c, reused, err := d.get(ctx, &p, key)
		if err != nil || !reused {
			t.Errorf("waiter: reused=%v err=%v", reused, err)
		}
		got <- c
	}()
	// The waiter must not dial while two conns are out.
	waitFor(t, func() bool { p.mu.Lock(); defer p.mu.Unlock(); return len(p.keys.get(key).waiters) == 1 })
	if d.n.Load() != 2 {
		t.Fatalf("dialed %d times over a cap of 2", d.n.Load())
	}
	p.Put(key, a)
	if c := <-got; c != a {
		t.Fatalf("waiter got conn %d, want the one put back", c.id)
	}
	p.Drop(key) // b is gone: a later Get may dial
	b.Close()
	c, reused, _ := d.get(ctx, &p, key)
	if reused || c.id != 3 {
		t.Fatalf("after Drop, Get should dial conn 3, got %d reused=%v", c.id, reused)
	}
}

// RELIABILITY L-03, S-8.
func TestWaiterHonoursContext(t *testing.T) {
	p := Pool[*fakeConn]{MaxPerKey: 1}
	defer p.Close()
	var d dialer
	a, _, _ := d.get(context.Background(), &p, key)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, _, err := d.get(ctx, &p, key)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want deadline exceeded", err)
	}
	p.Put(key, a)
	if open, idle := p.Stats(key); open != 1 || idle != 1 {
		t.Fatalf("stats = %d %d after a cancelled waiter", open, idle)
	}
}

// RELIABILITY L-03, S-8.
func TestConcurrentNeverOverCap(t *testing.T) {
	p := Pool[*fakeConn]{MaxPerKey: 4}
	defer p.Close()
	var d dialer
	var inUse, peak atomic.Int32
	var wg sync.WaitGroup
	for g := 0; g < 32; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				c, _, err := d.get(context.Background(), &p, key)
				if err != nil {
					t.Error(err)
					return
				}
				n := inUse.Add(1)
				for {
					old := peak.Load()
					if n <= old || peak.CompareAndSwap(old, n) {
						break
					}
				}
				inUse.Add(-1)
				if i%7 == 0 {
					c.Close()
					p.Drop(key)
				} else {
					p.Put(key, c)
				}
			}
		}()
	}
	wg.Wait()
	if peak.Load() > 4 {
		t.Fatalf("%d connections in use at once over a cap of 4", peak.Load())
	}
	if open, idle := p.Stats(key); open != idle || open > 4 {
		t.Fatalf("after the storm: %d open, %d idle", open, idle)
	}
}

// RELIABILITY L-04.
func TestIdleTimeoutEvicts(t *testing.T) {
	p := Pool[*fakeConn]{IdleTimeout: 20 * time.Millisecond}
	defer p.Close()
	var d dialer
	a, _, _ := d.get(context.Background(), &p, key)
	p.Put(key, a)
	waitFor(t, a.closed.Load)
	if open, idle := p.Stats(key); open != 0 || idle != 0 {
		t.Fatalf("stats after eviction = %d %d", open, idle)
	}
	if p.keys.len() != 0 {
		t.Fatal("an emptied key stays in the map")
	}
}

// TestPutIdleTTL: a connection put back with a ttl shorter than the pool's
// IdleTimeout is reused within it and closed, not handed out, past it.
func TestPutIdleTTL(t *testing.T) {
	p := Pool[*fakeConn]{IdleTimeout: time.Hour}
	defer p.Close()
	var d dialer
	t0 := time.Now()
	a, _, _ := d.get(context.Background(), &p, key)
	p.PutIdle(key, a, t0, time.Second)
	if l, err := p.GetAt(context.Background(), key, t0.Add(900*time.Millisecond)); err != nil || l.How != Idle || l.Conn != a {
		t.Fatalf("within the ttl: %v %v, want the idle connection", l, err)
	}
	p.PutIdle(key, a, t0, time.Second)
	l, err := p.GetAt(context.Background(), key, t0.Add(time.Second))
	if err != nil || l.How != Dial || !a.closed.Load() {
		t.Fatalf("past the ttl: %v %v (closed %v), want a slot to dial and the old one closed", l, err, a.closed.Load())
	}
	p.Drop(key)
	// A ttl longer than IdleTimeout does not extend it.
	q := Pool[*fakeConn]{IdleTimeout: time.Second}
	defer q.Close()
	b, _, _ := d.get(context.Background(), &q, key)
	q.PutIdle(key, b, t0, time.Hour)
	if l, _ := q.GetAt(context.Background(), key, t0.Add(2*time.Second)); l.How != Dial || !b.closed.Load() {
		t.Fatalf("past IdleTimeout: granted %v, closed %v", l.How, b.closed.Load())
	}
	q.Drop(key)
	// The sweep closes a connection when its ttl runs out, not at the
	// pool's IdleTimeout.
	r := Pool[*fakeConn]{IdleTimeout: time.Hour}
	defer r.Close()
	long, _, _ := d.get(context.Background(), &r, key)
	r.Put(key, long)
	k2 := key
	k2.Addr = "127.0.0.1:81"
	short, _, _ := d.get(context.Background(), &r, k2)
	r.PutIdle(k2, short, time.Now(), 30*time.Millisecond)
	waitFor(t, short.closed.Load)
	if long.closed.Load() {
		t.Fatal("the sweep closed a connection within IdleTimeout")
	}
}

func TestCloseReleasesWaitersAndIdle(t *testing.T) {
	p := Pool[*fakeConn]{MaxPerKey: 1}
	var d dialer
	a, _, _ := d.get(context.Background(), &p, key)
	errc := make(chan error)
	go func() {
		_, _, err := d.get(context.Background(), &p, key)
		errc <- err
	}()
	waitFor(t, func() bool { p.mu.Lock(); defer p.mu.Unlock(); return len(p.keys.get(key).waiters) == 1 })
	p.Close()
	if err := <-errc; !errors.Is(err, ErrClosed) {
		t.Fatalf("waiter err = %v, want ErrClosed", err)
	}
	p.Put(key, a) // put after close closes
	if !a.closed.Load() {
		t.Fatal("a conn put back after Close stays open")
	}
	if _, _, err := d.get(context.Background(), &p, key); !errors.Is(err, ErrClosed) {
		t.Fatalf("Get after Close: %v", err)
	}
}

// RELIABILITY L-04.
func TestMaxIdleClosesExtra(t *testing.T) {
	p := Pool[*fakeConn]{MaxPerKey: 3, MaxIdlePerKey: 1}
	defer p.Close()
	var d dialer
	a, _, _ := d.get(context.Background(), &p, key)
	b, _, _ := d.get(context.Background(), &p, key)
	p.Put(key, a)
	p.Put(key, b)
	if !b.closed.Load() || a.closed.Load() {
		t.Fatal("the conn over MaxIdlePerKey must be closed, the first kept")
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5s")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestLastEntryFollowsKeys alternates keys and lets an entry be forgotten
// and made again, so that the remembered last entry is checked against the
// map: counts stay per key, and a forgotten entry is never used again.
func TestLastEntryFollowsKeys(t *testing.T) {
	var p Pool[*fakeConn]
	defer p.Close()
	var d dialer
	ctx := context.Background()
	other := key
	other.Addr = "127.0.0.1:81"
	for i := range 3 {
		a, _, _ := d.get(ctx, &p, key)
		b, _, _ := d.get(ctx, &p, other)
		p.Put(key, a)
		p.Drop(other) // other's entry is forgotten: nothing open or idle
		if open, idle := p.Stats(other); open != 0 || idle != 0 {
			t.Fatalf("round %d: other has %d open %d idle after Drop", i, open, idle)
		}
		b.Close()
		c, _, _ := d.get(ctx, &p, other) // a new entry for other
		if open, _ := p.Stats(other); open != 1 {
			t.Fatalf("round %d: other has %d open, want 1", i, open)
		}
		p.Put(other, c)
		got, reused, _ := d.get(ctx, &p, key)
		if !reused || got != a {
			t.Fatalf("round %d: key's idle connection not reused", i)
		}
		p.Put(key, got)
		got, reused, _ = d.get(ctx, &p, other)
		if !reused || got != c {
			t.Fatalf("round %d: other's idle connection not reused", i)
		}
		p.Drop(other)
		got.Close()
	}
	if open, idle := p.Stats(key); open != 1 || idle != 1 {
		t.Fatalf("key: %d open %d idle, want 1 1", open, idle)
	}
}

// TestKeyTable checks the key table's inline first key and its map: every
// key found after puts and deletes in any order, deletes during all, and
// len.
func TestKeyTable(t *testing.T) {
	var tab keyTable[*fakeConn]
	keys := []Key{{Addr: "a:1"}, {Addr: "b:1"}, {Addr: "c:1"}, {Addr: "a:1", HTTP1Only: true}}
	ents := make([]*entry[*fakeConn], len(keys))
	for i, k := range keys {
		if tab.get(k) != nil {
			t.Fatalf("%v found before put", k)
		}
		ents[i] = new(entry[*fakeConn])
		tab.put(k, ents[i])
	}
	check := func(present ...int) {
		t.Helper()
		if tab.len() != len(present) {
			t.Fatalf("len %d, want %d", tab.len(), len(present))
		}
		seen := map[Key]bool{}
		for k, e := range tab.all {
			seen[k] = true
			if tab.get(k) != e {
				t.Fatalf("all gave %v an entry get does not", k)
			}
		}
		for _, i := range present {
			if tab.get(keys[i]) != ents[i] || !seen[keys[i]] {
				t.Fatalf("%v lost", keys[i])
			}
		}
	}
	check(0, 1, 2, 3)
	tab.del(keys[0]) // the inline one
	check(1, 2, 3)
	tab.put(keys[0], ents[0]) // inline again
	check(0, 1, 2, 3)
	for k := range tab.all {
		if k != keys[2] {
			tab.del(k)
		}
	}
	check(2)
	tab.del(keys[2])
	check()
}
