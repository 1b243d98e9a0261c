package pool

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

var tlsKey = Key{Scheme: "https", Addr: "127.0.0.1:443", Profile: "chrome"}

// TestFirstDialDecides: the Gets of an https key wait for the first dial;
// when it is shared they reserve slots on it, then queue on it once it is
// full, and nothing dials a second connection.
func TestFirstDialDecides(t *testing.T) {
	var p Pool[*fakeConn]
	defer p.Close()
	ctx := context.Background()
	first, err := p.Get(ctx, tlsKey)
	if err != nil || first.How != Dial {
		t.Fatalf("first Get: %v %v, want Dial", first.How, err)
	}
	const n = 8
	got := make(chan Lease[*fakeConn], n)
	for range n {
		go func() {
			l, err := p.Get(ctx, tlsKey)
			if err != nil {
				t.Error(err)
			}
			got <- l
		}()
	}
	select {
	case l := <-got:
		t.Fatalf("a Get returned %v while the first dial was under way", l.How)
	case <-time.After(20 * time.Millisecond):
	}
	c := &fakeConn{id: 1, slots: 4}
	c.inUse = 1 // the dialer's own request
	p.Shared(tlsKey, first, c)
	counts := map[How]int{}
	for range n {
		l := <-got
		if l.Conn != c {
			t.Fatalf("granted %v on another connection", l.How)
		}
		counts[l.How]++
	}
	if counts[Reserved] != 3 || counts[Queued] != 5 {
		t.Fatalf("grants %v, want 3 reserved and 5 queued", counts)
	}
	if open, _ := p.Stats(tlsKey); open != 0 {
		t.Fatalf("a shared connection holds %d exclusive places", open)
	}
}

// TestFirstDialExclusive: when the first connection is exclusive, the
// waiting Gets each dial their own, up to MaxPerKey.
func TestFirstDialExclusive(t *testing.T) {
	p := Pool[*fakeConn]{MaxPerKey: 3}
	defer p.Close()
	ctx := context.Background()
	first, _ := p.Get(ctx, tlsKey)
	got := make(chan How, 4)
	for range 4 {
		go func() {
			l, err := p.Get(ctx, tlsKey)
			if err != nil {
				return
			}
			got <- l.How
		}()
	}
	time.Sleep(10 * time.Millisecond)
	p.Exclusive(tlsKey, first)
	for range 2 {
		if h := <-got; h != Dial {
			t.Fatalf("granted %v, want Dial", h)
		}
	}
	select {
	case h := <-got:
		t.Fatalf("a fourth connection over MaxPerKey 3: %v", h)
	case <-time.After(20 * time.Millisecond):
	}
	p.Put(tlsKey, &fakeConn{id: 1})
	if h := <-got; h != Idle {
		t.Fatalf("the last waiter got %v, want the idle connection", h)
	}
}

// TestFailedFirstDialPassesOn: a failed first dial lets one waiter dial
// next, and leaves no state behind once that one fails too.
func TestFailedFirstDialPassesOn(t *testing.T) {
	var p Pool[*fakeConn]
	defer p.Close()
	ctx := context.Background()
	first, _ := p.Get(ctx, tlsKey)
	var wg sync.WaitGroup
	dials := make(chan Lease[*fakeConn], 2)
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l, err := p.Get(ctx, tlsKey)
			if err == nil {
				dials <- l
			}
		}()
	}
	time.Sleep(10 * time.Millisecond)
	p.Failed(tlsKey, first)
	second := <-dials
	if second.How != Dial {
		t.Fatalf("after a failed first dial: %v", second.How)
	}
	select {
	case l := <-dials:
		t.Fatalf("two dials at once for a key of unknown kind: %v", l.How)
	case <-time.After(20 * time.Millisecond):
	}
	p.Failed(tlsKey, second)
	third := <-dials
	p.Failed(tlsKey, third)
	wg.Wait()
	if n := p.Keys(); n != 0 {
		t.Fatalf("%d keys left after every dial failed", n)
	}
}

// TestUnusableSharedIsRetired: a shared connection that goes away is
// retired, not handed out, and the next Get dials a new one while the
// others wait for it.
func TestUnusableSharedIsRetired(t *testing.T) {
	var p Pool[*fakeConn]
	defer p.Close()
	ctx := context.Background()
	l, _ := p.Get(ctx, tlsKey)
	old := &fakeConn{id: 1, slots: 10}
	p.Shared(tlsKey, l, old)
	old.mu.Lock()
	old.gone = true
	old.mu.Unlock()
	l, err := p.Get(ctx, tlsKey)
	if err != nil || l.How != Dial {
		t.Fatalf("after GOAWAY: %v %v, want Dial", l.How, err)
	}
	if !old.retired.Load() || old.closed.Load() {
		t.Fatalf("the old connection: retired %v closed %v, want retired only", old.retired.Load(), old.closed.Load())
	}
	waiting := make(chan Lease[*fakeConn])
	go func() {
		w, _ := p.Get(ctx, tlsKey)
		waiting <- w
	}()
	time.Sleep(10 * time.Millisecond)
	c := &fakeConn{id: 2, slots: 10}
	c.inUse = 1
	p.Shared(tlsKey, l, c)
	if w := <-waiting; w.How != Reserved || w.Conn != c {
		t.Fatalf("the waiter got %v on %v", w.How, w.Conn)
	}
}

// TestSharedIdleSweptAndClose: an idle shared connection is closed after
// IdleTimeout; Close retires one in use and closes an idle one, and wakes
// Gets waiting for a dial with ErrClosed.
func TestSharedIdleSweptAndClose(t *testing.T) {
	p := Pool[*fakeConn]{IdleTimeout: 30 * time.Millisecond}
	ctx := context.Background()
	l, _ := p.Get(ctx, tlsKey)
	idle := &fakeConn{id: 1, slots: 10, since: time.Now()}
	p.Shared(tlsKey, l, idle)
	waitFor(t, idle.closed.Load)
	if n := p.Keys(); n != 0 {
		t.Fatalf("%d keys after the sweep", n)
	}

	k2 := tlsKey
	k2.Addr = "127.0.0.1:8443"
	l, _ = p.Get(ctx, k2)
	busy := &fakeConn{id: 2, slots: 10}
	busy.inUse = 1
	p.Shared(k2, l, busy)
	k3 := tlsKey
	k3.Addr = "127.0.0.1:9443"
	pending, _ := p.Get(ctx, k3)
	errc := make(chan error)
	go func() {
		_, err := p.Get(ctx, k3)
		errc <- err
	}()
	time.Sleep(10 * time.Millisecond)
	p.Close()
	if err := <-errc; !errors.Is(err, ErrClosed) {
		t.Fatalf("a Get waiting for a dial at Close: %v", err)
	}
	if !busy.retired.Load() || busy.closed.Load() {
		t.Fatalf("the busy connection at Close: retired %v closed %v", busy.retired.Load(), busy.closed.Load())
	}
	late := &fakeConn{id: 3, slots: 10}
	p.Shared(k3, pending, late)
	if !late.retired.Load() {
		t.Fatal("a connection dialed across Close was kept")
	}
}
