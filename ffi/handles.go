//go:build cgo

package main

import (
	"sync"
	"sync/atomic"
)

// handles maps the numbers C holds to the Go objects they stand for. C never
// holds a Go pointer: only these numbers, which are never reused, so a stale
// or doubly closed handle is found missing instead of naming another object.
//
// runtime/cgo.Handle does the same job but panics in Value and Delete on a
// handle it does not know; a finalizer racing an explicit close in the host
// would then abort the host process, so the table here reports
// GUISE_E_BAD_HANDLE instead.
var handles struct {
	next atomic.Uint64
	m    sync.Map // uint64 -> any
	live atomic.Int64
}

// newHandle stores v and returns its handle, never 0.
func newHandle(v any) uint64 {
	h := handles.next.Add(1)
	handles.m.Store(h, v)
	handles.live.Add(1)
	return h
}

// lookup returns the object of h as a T, or false when h is unknown or of
// another kind.
func lookup[T any](h uint64) (T, bool) {
	v, ok := handles.m.Load(h)
	if !ok {
		var zero T
		return zero, false
	}
	t, ok := v.(T)
	return t, ok
}

// release forgets h and returns the object it stood for, or nil when h was
// already released. Exactly one of concurrent releases of h gets the object.
func release(h uint64) any {
	v, ok := handles.m.LoadAndDelete(h)
	if !ok {
		return nil
	}
	handles.live.Add(-1)
	return v
}
