package pool

import (
	"context"
	"testing"
	"time"
)

// TestHTTP1OnlyKeyDialsAtOnce: an https key whose connections offer only
// http/1.1 cannot turn out shared, so its Gets dial side by side up to
// MaxPerKey, without waiting for the first dial; and it is another key than
// the same origin's with h2 offered.
func TestHTTP1OnlyKeyDialsAtOnce(t *testing.T) {
	p := Pool[*fakeConn]{MaxPerKey: 3}
	defer p.Close()
	// Bounded: a Get that waited for the first dial would never return.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	h1 := tlsKey
	h1.HTTP1Only = true
	var leases []Lease[*fakeConn]
	for i := range 3 {
		l, err := p.Get(ctx, h1)
		if err != nil || l.How != Dial {
			t.Fatalf("Get %d: %v %v, want Dial at once", i, l.How, err)
		}
		leases = append(leases, l)
	}
	// The default key of the same origin is apart: its first Get dials,
	// and decides for its key alone.
	l, err := p.Get(ctx, tlsKey)
	if err != nil || l.How != Dial {
		t.Fatalf("default key: %v %v, want Dial", l.How, err)
	}
	p.Failed(tlsKey, l)
	for i, l := range leases {
		c := &fakeConn{id: i}
		p.Exclusive(h1, l)
		p.Put(h1, c)
	}
	if open, idle := p.Stats(h1); open != 3 || idle != 3 {
		t.Fatalf("HTTP1Only key: %d open, %d idle, want 3 and 3", open, idle)
	}
	if open, idle := p.Stats(tlsKey); open != 0 || idle != 0 {
		t.Fatalf("default key: %d open, %d idle, want none", open, idle)
	}
}
