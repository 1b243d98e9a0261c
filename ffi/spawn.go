//go:build cgo

package main

import "time"

// spawn runs f on a goroutine of its own: one an earlier spawn left idle
// when there is one, else a new one. A request runs deep (the Session, TLS,
// HTTP/2 or HTTP/1.1 engine), so a new goroutine's stack is copied to a
// bigger one two or three times before the head is in: runtime.copystack
// and its stack-map lookups were about 4% of the Node binding's CPU on
// keep-alive GETs at c16 (perf, 2026-12-02). A reused goroutine keeps its
// grown stack. The wakeup is the same either way: the runtime readies the
// receiver as it would a new goroutine.
func spawn(f func()) {
	select {
	case work <- f:
	default:
		go worker(f)
	}
}

// work hands a function to an idle worker.
var work = make(chan func())

// workerIdle is how long a worker waits for more work before it exits, so
// a quiet host keeps no goroutines.
const workerIdle = time.Second

func worker(f func()) {
	t := time.NewTimer(workerIdle)
	defer t.Stop()
	for f != nil {
		f()
		t.Reset(workerIdle)
		f = idle(t)
	}
}

// idle waits for the next function, or nil once t fires. (Tests ignore
// goroutines waiting here: they exit by themselves within workerIdle.)
func idle(t *time.Timer) func() {
	select {
	case f := <-work:
		return f
	case <-t.C:
		return nil
	}
}
