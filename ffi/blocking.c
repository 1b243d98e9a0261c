// The blocking forms of guise_send, guise_body_read and guise_stream_write:
// the async form, and a wait on a semaphore in C, so that the host's thread
// never runs a Go goroutine that blocks (a goroutine entered from a C
// thread is locked to it, and each of its wakeups is a handoff between
// threads). guise_fetch (ffi/abi.go) does run its request on the host's
// thread: measured from C against a keep-alive server, the handoffs of a
// locked goroutine cost less than starting a goroutine and waking the
// host, 46-60 us against 65-70 us of CPU per request (2 cores, shared).

#include "_cgo_export.h"

// sem is a one-shot semaphore: POSIX's, or a Windows semaphore object in
// the DLL (so it needs no winpthreads DLL beside it).
#ifdef _WIN32
#include <windows.h>
typedef HANDLE sem;
static void sem_start(sem *s) { *s = CreateSemaphoreA(NULL, 0, 1, NULL); }
static void sem_signal(sem *s) { ReleaseSemaphore(*s, 1, NULL); }
static void sem_await(sem *s) { WaitForSingleObject(*s, INFINITE); }
static void sem_end(sem *s) { CloseHandle(*s); }
#else
#include <errno.h>
#include <semaphore.h>
typedef sem_t sem;
static void sem_start(sem *s) { sem_init(s, 0, 0); }
static void sem_signal(sem *s) { sem_post(s); }
static void sem_await(sem *s) {
	while (sem_wait(s) != 0 && errno == EINTR) {
	}
}
static void sem_end(sem *s) { sem_destroy(s); }
#endif

// EXPORT marks the functions defined here for the DLL's export table: a
// Windows DLL exports only what is marked once anything is (cgo marks the
// Go functions), and without it these three were missing from guise.dll
// (bindings/check-lib.sh found it).
#ifdef _WIN32
#define EXPORT __declspec(dllexport)
#else
#define EXPORT
#endif

typedef struct {
	sem sem;
	int64_t result;
} waiter;

static void wake(void *user, guise_handle h, int64_t result) {
	waiter *w = user;
	(void)h;
	w->result = result;
	sem_signal(&w->sem);
}

static int64_t wait_for(waiter *w) {
	sem_await(&w->sem);
	sem_end(&w->sem);
	return w->result;
}

EXPORT guise_handle guise_send(guise_handle client, guise_request *req) {
	waiter w;
	sem_start(&w.sem);
	guise_handle h = guise_start(client, req, wake, &w);
	wait_for(&w);
	return h;
}

EXPORT int64_t guise_body_read(guise_handle call, uint8_t *buf, size_t cap, guise_done_fn done, void *user) {
	if (done != NULL) return guise_read_start(call, buf, cap, done, user);
	waiter w;
	sem_start(&w.sem);
	int64_t rc = guise_read_start(call, buf, cap, wake, &w);
	if (rc < 0) {
		sem_end(&w.sem);
		return rc;
	}
	return wait_for(&w);
}

EXPORT int64_t guise_stream_write(guise_handle stream, uint8_t *buf, size_t len, guise_done_fn done, void *user) {
	if (done != NULL) return guise_write_start(stream, buf, len, done, user);
	waiter w;
	sem_start(&w.sem);
	int64_t rc = guise_write_start(stream, buf, len, wake, &w);
	if (rc < 0) {
		sem_end(&w.sem);
		return rc;
	}
	return wait_for(&w);
}
