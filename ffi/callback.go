//go:build cgo

package main

/*
#include <stdint.h>

typedef void (*ffi_done_fn)(void *user, uint64_t call, int64_t result);

// ffi_invoke calls a host's completion. The function and user pointers
// travel through Go as integers, never as Go pointers.
static inline void ffi_invoke(uintptr_t fn, uintptr_t user, uint64_t call, int64_t result) {
	((ffi_done_fn)fn)((void *)user, call, result);
}
*/
import "C"

// completion is a host's done callback and its user pointer.
type completion struct {
	fn, user uintptr
}

// run calls the host's callback (from the calling goroutine's thread).
func (c completion) run(h uint64, result int64) {
	C.ffi_invoke(C.uintptr_t(c.fn), C.uintptr_t(c.user), C.uint64_t(h), C.int64_t(result))
}
