//go:build cgo

package main

import (
	"bytes"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// goid is the calling goroutine's id, from its stack trace's first line.
func goid() uint64 {
	b := make([]byte, 64)
	b = b[:runtime.Stack(b, false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	id, _ := strconv.ParseUint(string(b[:bytes.IndexByte(b, ' ')]), 10, 64)
	return id
}

// TestSpawnReusesIdleWorkers runs functions one after another through
// spawn: each finds the worker the previous one left, so they run on one
// or two goroutines, not 200; and the workers exit once idle.
func TestSpawnReusesIdleWorkers(t *testing.T) {
	base := runtime.NumGoroutine()
	ids := map[uint64]bool{}
	ran := make(chan uint64)
	for range 200 {
		spawn(func() { ran <- goid() })
		ids[<-ran] = true
		time.Sleep(100 * time.Microsecond) // for the worker to wait in idle again
	}
	if len(ids) > 2 {
		t.Errorf("200 sequential spawns ran on %d goroutines: idle workers are not reused", len(ids))
	}
	done := make(chan int)
	// Several at once each get a goroutine.
	release := make(chan struct{})
	for range 8 {
		spawn(func() { <-release; done <- 0 })
	}
	close(release)
	for range 8 {
		<-done
	}
	deadline := time.Now().Add(workerIdle + 2*time.Second)
	for runtime.NumGoroutine() > base && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > base {
		t.Errorf("%d goroutines %v after the last spawn, %d before: idle workers did not exit", n, workerIdle+2*time.Second, base)
	}
}
