// The blocking forms of guise_send, guise_body_read and guise_stream_write:
// the async form, and a wait on a semaphore in C, so that the host's thread
// never runs a Go goroutine that blocks (a goroutine entered from a C
// thread is locked to it, and each of its wakeups is a handoff between
// threads). guise_fetch (ffi/abi.go) does run its request on the host's
// thread: measured from C against a keep-alive server, the handoffs of a
// locked goroutine cost less than starting a goroutine and waking the
// host, 46-60 us against 65-70 us of CPU per request (2 cores, shared).

#include <errno.h>
#include <semaphore.h>

#include "_cgo_export.h"

typedef struct {
	sem_t sem;
	int64_t result;
} waiter;

static void wake(void *user, guise_handle h, int64_t result) {
	waiter *w = user;
	(void)h;
	w->result = result;
	sem_post(&w->sem);
}

static int64_t wait_for(waiter *w) {
	while (sem_wait(&w->sem) != 0 && errno == EINTR) {
	}
	sem_destroy(&w->sem);
	return w->result;
}

guise_handle guise_send(guise_handle client, guise_request *req) {
	waiter w;
	sem_init(&w.sem, 0, 0);
	guise_handle h = guise_start(client, req, wake, &w);
	wait_for(&w);
	return h;
}

int64_t guise_body_read(guise_handle call, uint8_t *buf, size_t cap, guise_done_fn done, void *user) {
	if (done != NULL) return guise_read_start(call, buf, cap, done, user);
	waiter w;
	sem_init(&w.sem, 0, 0);
	int64_t rc = guise_read_start(call, buf, cap, wake, &w);
	if (rc < 0) {
		sem_destroy(&w.sem);
		return rc;
	}
	return wait_for(&w);
}

int64_t guise_stream_write(guise_handle stream, uint8_t *buf, size_t len, guise_done_fn done, void *user) {
	if (done != NULL) return guise_write_start(stream, buf, len, done, user);
	waiter w;
	sem_init(&w.sem, 0, 0);
	int64_t rc = guise_write_start(stream, buf, len, wake, &w);
	if (rc < 0) {
		sem_destroy(&w.sem);
		return rc;
	}
	return wait_for(&w);
}
