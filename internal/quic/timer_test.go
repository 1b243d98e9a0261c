//go:build unix

package quic

import (
	"context"
	"io"
	"runtime"
	"testing"
	"time"
)

// TestNoTimerSpin is RELIABILITY Q-64: a timer that fires while what it
// wants sent is still to be sent (the ACK delay's ACK, a PTO's probes)
// leaves no read deadline in the past. With one P, a deadline left in
// the past had run time out again and again, allocating an error each
// time, until the scheduler preempted it (10 ms), as the sender never
// ran: hundreds of timeouts per idle connection.
func TestNoTimerSpin(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	srv := newEchoServer(t, nil)
	c, err := dial(t, "chrome156-linux", srv.addr(), srv.cert, nil)
	if err != nil {
		t.Fatal(err)
	}
	open := func(ctx context.Context) (io.ReadWriteCloser, error) { return c.OpenStream(ctx) }
	for i := range 4 {
		data := randomBytes(100+i, uint64(i))
		data[0] = 'E'
		if err := echoOn(open, data, make([]byte, len(data))); err != nil {
			t.Fatal(err)
		}
		c.mu.Lock()
		t0 := c.timeouts
		c.mu.Unlock()
		time.Sleep(80 * time.Millisecond) // past the 25 ms ACK delay
		c.mu.Lock()
		n := c.timeouts - t0
		c.mu.Unlock()
		if n > 10 {
			t.Fatalf("echo %d: %d read timeouts in 80 ms of idle", i, n)
		}
	}
}
