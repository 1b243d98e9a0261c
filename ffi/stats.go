//go:build cgo

package main

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
)

// stats is guise_stats in Go.
type stats struct {
	handles, calls, sessions, goroutines, heapBytes, heapSys int64
}

func readStats() stats {
	s := []metrics.Sample{
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"},
		{Name: "/memory/classes/heap/free:bytes"},
	}
	metrics.Read(s)
	objects := int64(s[0].Value.Uint64())
	return stats{
		handles:    handles.live.Load(),
		calls:      liveCalls.Load(),
		sessions:   liveSessions.Load(),
		goroutines: int64(runtime.NumGoroutine()),
		heapBytes:  objects,
		heapSys:    objects + int64(s[1].Value.Uint64()+s[2].Value.Uint64()),
	}
}

func collect() {
	runtime.GC()
	debug.FreeOSMemory()
}
