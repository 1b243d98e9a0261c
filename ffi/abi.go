//go:build cgo

// Command ffi is guise's C ABI: build it with
//
//	go build -buildmode=c-shared -o libguise.so ./ffi
//
// which writes libguise.so and its header libguise.h (checked in as
// ffi/guise.h; TestHeaderUpToDate regenerates and compares it). The Node and
// Python packages under bindings/ are thin layers over this ABI.
//
// # Handles
//
// Sessions, Transports, calls (one request and its response) and request
// body streams are guise_handle numbers, never pointers. A handle is valid
// from the function that returns it until guise_close on it; it is never
// reused, so using it afterwards returns GUISE_E_BAD_HANDLE, never another
// object. Closing a Session or Transport handle closes the object.
//
// # Buffers
//
// Every buffer is the caller's. Functions copy what they are given before
// they return, except the buffers of guise_body_read and guise_stream_write,
// which the caller keeps valid (and untouched) until the call completes:
// the function returns (blocking form) or the done callback has run (async
// form). Output goes into buffers the caller passes with their capacity;
// a buffer too small returns GUISE_E_SHORT_BUFFER and stores the length
// needed. Nothing is allocated for the caller to free.
//
// # Callbacks
//
// Async forms take a guise_done_fn and a user pointer, and call it exactly
// once, from a thread of guise's (never the caller's), after the operation
// ended in success, error, cancellation or close. The callback must return
// quickly and must not call guise functions that block.
package main

/*
#include <stdint.h>
#include <stddef.h>

// GUISE_ABI_VERSION is the version of this ABI, which guise_abi_version
// returns: a binding compiled against one value refuses a library that
// returns another.
#define GUISE_ABI_VERSION 1

// guise_handle names a Session, Transport, call or body stream. 0 is none.
typedef uint64_t guise_handle;

// guise_done_fn is an async completion: user is the pointer given to the
// call that started the operation, call the handle it concerns, result its
// outcome (see each function).
typedef void (*guise_done_fn)(void *user, guise_handle call, int64_t result);

// Error kinds (guise_error.kind, and negative results are -kind).
#define GUISE_OK 0
#define GUISE_E_INVALID 1       // bad argument, option or request; nothing was sent
#define GUISE_E_CLOSED 2        // the Session or Transport was closed
#define GUISE_E_CANCELED 3      // guise_cancel, or the call was closed
#define GUISE_E_TIMEOUT 4       // phase says which timeout
#define GUISE_E_REFUSED 5       // connection refused
#define GUISE_E_DNS 6           // name resolution failed
#define GUISE_E_NETWORK 7       // another network error (reset, unreachable, ...)
#define GUISE_E_TLS 8           // TLS handshake or alert (code: the alert, if any)
#define GUISE_E_CERTIFICATE 9   // the server's certificate failed verification
#define GUISE_E_PROXY 10        // the proxy failed or refused (status: its HTTP status; code: SOCKS reply)
#define GUISE_E_HTTP2 11        // stream reset, GOAWAY or HTTP/2 protocol error (code: the HTTP/2 error code)
#define GUISE_E_PROTOCOL 12     // malformed or oversized response
#define GUISE_E_REDIRECT 13     // too many redirects, refused by policy, bad Location
#define GUISE_E_DECODE 14       // corrupt encoded body, or over max_body_size
#define GUISE_E_TRUNCATED 15    // the connection ended before the body did
#define GUISE_E_BAD_HANDLE 16   // unknown, closed or wrong kind of handle
#define GUISE_E_SHORT_BUFFER 17 // the output buffer is too small
#define GUISE_E_BUSY 18         // a read or write is already in flight on this handle
#define GUISE_E_NOT_READY 19    // the call's response head has not arrived
#define GUISE_E_OTHER 20

// Timeout phases (guise_error.phase), as guise.Phase.
#define GUISE_PHASE_DIAL 1
#define GUISE_PHASE_PROXY 2
#define GUISE_PHASE_TLS 3
#define GUISE_PHASE_HEAD 4
#define GUISE_PHASE_BODY_IDLE 5
#define GUISE_PHASE_TOTAL 6

// guise_error is filled by the functions that report an error. message is
// NUL-terminated and truncated to fit.
typedef struct {
	int32_t kind;
	int32_t phase;
	int32_t status;
	int32_t code;
	char message[1024];
} guise_error;

// Request flags.
#define GUISE_REQ_INSECURE 1 // do not verify the server's certificate
#define GUISE_REQ_SCRIPTED 2 // a navigation a script started (no Sec-Fetch-User)

// Protocols (guise_request.protocol, and "protocol" in the options JSON).
#define GUISE_PROTO_ANY 0
#define GUISE_PROTO_HTTP1 1
#define GUISE_PROTO_HTTP2 2
#define GUISE_PROTO_HTTP3 3

// guise_request is one request. Strings are pointer and length (no NUL
// needed); a NULL pointer or 0 length is the empty string. Everything is
// copied by guise_send and guise_start before they return.
typedef struct {
	const char *method; size_t method_len;  // "" means GET
	const char *url; size_t url_len;
	// header: fields as name NUL value NUL name NUL value NUL ...
	const char *header; size_t header_len;
	const uint8_t *body; size_t body_len;   // a body sent from memory; may be resent on a redirect or retry
	guise_handle body_stream;               // or a stream from guise_stream_new (then body must be empty)
	int64_t content_length;                 // of body_stream; 0 means unknown (chunked)
	int64_t timeout_ms;                     // whole request; 0: as the Session says
	const char *profile; size_t profile_len;   // "" : as the Session says
	const char *proxy; size_t proxy_len;       // "" : as the Session says
	const char *referrer; size_t referrer_len; // the page the request comes from
	const char *ca_pem; size_t ca_pem_len;     // roots for this request (PEM), instead of the Session's
	int32_t kind;      // 0 or 1 navigation, 2 fetch(), 3 sub-resource
	int32_t redirect;  // 0 as the Session says, 1 follow, 2 manual, 3 error
	int32_t protocol;  // GUISE_PROTO_*
	uint32_t flags;    // GUISE_REQ_*
	int64_t prefetch;  // read a body of known length up to this many bytes before the head completes; 0: 64 KiB; <0: never
} guise_request;

// guise_head describes a response head (guise_response_head).
typedef struct {
	int32_t status;
	int32_t proto;           // 1 HTTP/1.0, 2 HTTP/1.1, 3 HTTP/2
	int64_t content_length;  // -1 unknown
	int64_t prefetched;      // body bytes already read into guise's buffer
	uint32_t flags;          // GUISE_HEAD_*
	uint32_t meta_len;       // bytes guise_response_meta writes
} guise_head;

#define GUISE_HEAD_DECODED 1  // guise undid the Content-Encoding
#define GUISE_HEAD_COMPLETE 2 // the whole body is in the prefetch buffer
#define GUISE_HEAD_COPIED 4   // guise_fetch: meta and body are in the caller's buffer; no call

// guise_stats is a snapshot for leak tests (guise_stats_read).
typedef struct {
	int64_t handles;      // live handles of every kind
	int64_t calls;        // calls not yet closed
	int64_t sessions;     // Sessions not yet closed
	int64_t goroutines;
	int64_t heap_bytes;   // Go heap in live objects
	int64_t heap_sys;     // Go heap obtained from the system, less released
} guise_stats;

// guise_send sends req through client (a Session handle, or 0 for an
// isolated visit) and blocks until the response head has arrived (with any
// prefetched body) or the request failed. It copies everything req points
// to before it returns. It always returns a call handle: ask it with
// guise_call_error and guise_response_head, read with guise_body_read, and
// release it with guise_close. (guise_start is its async form.)
guise_handle guise_send(guise_handle client, guise_request *req);

// guise_fetch is guise_send for a host waiting on its own thread, with the
// small response's reads folded in. It runs the request on the calling
// thread (no handoff to another) until the head has arrived, with the body
// prefetched as guise_send does, and fills *head. When the whole body is
// in and guise_head.meta_len plus the body fit in cap bytes, it writes the
// meta (as guise_response_meta) and then the body into buf, sets
// GUISE_HEAD_COPIED, ends the call itself and returns 0. Otherwise it
// returns a call handle, as guise_send, to read from and close. On failure
// it returns 0 with *err filled (err->kind is 0 on success; the rest of
// *err is then left as it was). buf is written only during the call.
guise_handle guise_fetch(guise_handle client, guise_request *req, guise_head *head, uint8_t *buf, size_t cap, guise_error *err);

// guise_start_into is guise_start with guise_fetch's copy: when done runs
// with result 0, *head is filled, and when head->flags has
// GUISE_HEAD_COPIED the meta (as guise_response_meta) and then the whole
// body are in buf, and the call is over: its handle is already released,
// and guise_close or guise_cancel on it returns GUISE_E_BAD_HANDLE.
// Otherwise the call is guise_start's. head and buf must stay valid and
// untouched until done has run. done must not be NULL (else it returns 0).
// So an event-loop host gets a small response in one completion, without
// a call back into guise for its head, meta, body and close.
guise_handle guise_start_into(guise_handle client, guise_request *req, guise_head *head, uint8_t *buf, size_t cap, guise_done_fn done, void *user);

// guise_body_read reads up to cap body bytes into buf. With done NULL it
// blocks and returns the count: > 0 bytes, 0 at the end of the body, or
// -kind on error (details from guise_call_error). With done, it returns 0
// at once (or -kind if it cannot start) and calls done(user, call, n) with
// that result later; buf must stay valid and untouched until then. Bytes
// guise already holds (guise_head.prefetched) are copied without waiting,
// and then done runs before guise_body_read returns. One read runs at a
// time per call (GUISE_E_BUSY).
int64_t guise_body_read(guise_handle call, uint8_t *buf, size_t cap, guise_done_fn done, void *user);

// guise_stream_write queues len bytes of buf as the next piece of a body
// stream. guise reads them straight from buf, which must stay valid and
// untouched until the write completes. With done NULL it blocks until then
// and returns len, or -kind if the request failed or the stream was
// aborted. With done, it returns 0 at once and calls done(user, stream,
// result) later. Writes may be queued before the request starts.
int64_t guise_stream_write(guise_handle stream, uint8_t *buf, size_t len, guise_done_fn done, void *user);

// Functions (each documented on its Go definition in ffi/abi.go):
//
// guise_transport_new, guise_session_new: a Transport or Session from JSON
//   options; 0 and *err filled on failure.
// guise_close: releases any handle (closing a Session, Transport, call or
//   stream); GUISE_E_BAD_HANDLE if it was already released.
// guise_send: a request, blocking until its head; guise_start: the same,
//   async. Both return a call handle to close. guise_fetch: guise_send on
//   the calling thread, a small response copied out in the same call;
//   guise_start_into: guise_start, a small response copied out before its
//   completion.
// guise_call_error, guise_response_head, guise_response_meta: a call's
//   outcome and head.
// guise_body_read: body bytes into the caller's buffer, blocking or async
//   (guise_read_start is its async half).
// guise_cancel: ends a call's request and body.
// guise_stream_new, guise_stream_write (guise_write_start its async half),
//   guise_stream_end: a request body written while the request runs.
// guise_cookies_export, guise_cookies_import: a Session's jar as JSON.
// guise_stats_read, guise_collect: for leak tests.
// guise_abi_version, guise_version: the ABI's and guise's versions, for a
//   binding to check at load time.
*/
import "C"

import (
	"bytes"
	"errors"
	"strings"
	"unsafe"

	"github.com/guise-http/guise/internal/version"
)

func main() {}

// fillError writes err into e (when e is not NULL) and returns its kind.
func fillError(e *C.guise_error, err error) C.int32_t {
	if err == nil {
		if e != nil {
			*e = C.guise_error{}
		}
		return 0
	}
	info := classify(err)
	if e != nil {
		e.kind, e.phase, e.status, e.code = C.int32_t(info.kind), C.int32_t(info.phase), C.int32_t(info.status), C.int32_t(info.code)
		msg := unsafe.Slice((*byte)(unsafe.Pointer(&e.message[0])), len(e.message))
		n := copy(msg[:len(msg)-1], info.msg)
		msg[n] = 0
	}
	return C.int32_t(info.kind)
}

func goString(p *C.char, n C.size_t) string {
	if p == nil || n == 0 {
		return ""
	}
	return C.GoStringN(p, C.int(n))
}

func goBytes(p unsafe.Pointer, n C.size_t) []byte {
	if p == nil || n == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(p), int(n))
}

func doneOf(fn C.guise_done_fn, user unsafe.Pointer) completion {
	return completion{fn: uintptr(unsafe.Pointer(fn)), user: uintptr(user)}
}

// guise_transport_new returns a Transport (a connection pool Sessions may
// share) configured by the JSON object opts (see transportOptions in
// ffi/options.go), or 0 with *err filled. Close it with guise_close.
//
//export guise_transport_new
func guise_transport_new(opts *C.char, n C.size_t, e *C.guise_error) C.guise_handle {
	t, err := newTransport(goBytes(unsafe.Pointer(opts), n))
	if err != nil {
		fillError(e, invalidError{err})
		return 0
	}
	fillError(e, nil)
	return C.guise_handle(newHandle(t))
}

// guise_session_new returns a Session (a browser: its connections, TLS
// tickets and cookie jar) configured by the JSON object opts (see
// sessionOptions in ffi/options.go), or 0 with *err filled. Close it with
// guise_close, which closes the Session.
//
//export guise_session_new
func guise_session_new(opts *C.char, n C.size_t, e *C.guise_error) C.guise_handle {
	ss, err := newSession(goBytes(unsafe.Pointer(opts), n))
	if err != nil {
		if !errors.Is(err, errBadHandle) {
			err = invalidError{err}
		}
		fillError(e, err)
		return 0
	}
	fillError(e, nil)
	return C.guise_handle(newHandle(ss))
}

// guise_close releases h and closes what it names: a Session (its own
// connections), a Transport, a call (cancelling its request and releasing
// its response; a read in flight still completes, with an error) or a
// stream (failing writes not yet consumed). It returns 0, or
// GUISE_E_BAD_HANDLE when h is unknown or already released.
//
//export guise_close
func guise_close(h C.guise_handle) C.int32_t {
	switch v := release(uint64(h)).(type) {
	case nil:
		return C.int32_t(kindBadHandle)
	case *session:
		v.close()
	case *guiseTransport:
		v.Close()
	case *call:
		v.close()
	case *stream:
		v.abort(errCanceled)
	}
	return 0
}

// goRequest copies a guise_request into Go memory.
func goRequest(r *C.guise_request) (*request, error) {
	if r == nil {
		return nil, invalidError{errors.New("guise ffi: NULL request")}
	}
	q := &request{
		stream:   uint64(r.body_stream),
		caPEM:    goString(r.ca_pem, r.ca_pem_len),
		protocol: int32(r.protocol),
		prefetch: int64(r.prefetch),
	}
	q.req.Method = goString(r.method, r.method_len)
	q.req.URL = goString(r.url, r.url_len)
	h, err := parseHeader(goBytes(unsafe.Pointer(r.header), r.header_len))
	if err != nil {
		return nil, err
	}
	q.req.Header = h
	if r.body_len > 0 {
		if q.stream != 0 {
			return nil, invalidError{errors.New("guise ffi: a request with both body and body_stream")}
		}
		q.req.Body = bytes.NewBuffer(C.GoBytes(unsafe.Pointer(r.body), C.int(r.body_len)))
	}
	if q.stream != 0 {
		q.req.ContentLength = int64(r.content_length)
	}
	q.req.Timeout = timeout(int64(r.timeout_ms))
	q.req.Profile = goString(r.profile, r.profile_len)
	q.req.Proxy = goString(r.proxy, r.proxy_len)
	q.req.Referrer = goString(r.referrer, r.referrer_len)
	if r.kind < 0 || r.kind > 4 {
		return nil, invalidError{errors.New("guise ffi: request kind out of range")}
	}
	q.req.Kind = requestKind(int32(r.kind))
	if r.redirect < 0 || r.redirect > 3 {
		return nil, invalidError{errors.New("guise ffi: redirect policy out of range")}
	}
	q.req.Redirect = redirectOf(int32(r.redirect))
	q.req.InsecureSkipVerify = r.flags&C.GUISE_REQ_INSECURE != 0
	q.req.Scripted = r.flags&C.GUISE_REQ_SCRIPTED != 0
	return q, nil
}

// guise_start is guise_send's async form: it copies req, returns the call
// handle at once, and calls done(user, call, result) when the head has
// arrived (result 0) or the request failed (result -kind; details from
// guise_call_error). done runs exactly once, also after guise_cancel or
// guise_close.
//
//export guise_start
func guise_start(client C.guise_handle, req *C.guise_request, done C.guise_done_fn, user unsafe.Pointer) C.guise_handle {
	c, r, err := prepare(req)
	h := newHandle(c)
	cb := doneOf(done, user)
	if err != nil {
		c.err = err
		c.state.Store(stateReady)
		if done != nil {
			spawn(func() { cb.run(h, -int64(classify(err).kind)) })
		}
		return C.guise_handle(h)
	}
	spawn(func() {
		c.run(uint64(client), r)
		var res int64
		if err := c.headErr(); err != nil {
			res = -int64(classify(err).kind)
		}
		if done != nil {
			cb.run(h, res)
		}
	})
	return C.guise_handle(h)
}

// guise_fetch is documented in the header above (it has a C prototype
// there because cgo writes none for it before its first use).
//
//export guise_fetch
func guise_fetch(client C.guise_handle, req *C.guise_request, head *C.guise_head, buf *C.uint8_t, capacity C.size_t, e *C.guise_error) C.guise_handle {
	c, r, err := prepare(req)
	if err == nil {
		// The caller's buffer, for the meta and a prefetched body: valid
		// until this function returns, and not kept past it (see send).
		c.into = goBytes(unsafe.Pointer(buf), capacity)
		c.host = true
		c.run(uint64(client), r)
		c.into = nil
		err = c.headErr()
	}
	if err != nil {
		c.close()
		fillError(e, err)
		return 0
	}
	fillHead(c, head)
	if e != nil {
		e.kind = 0
	}
	if c.copied {
		head.flags |= C.GUISE_HEAD_COPIED
		c.close()
		return 0
	}
	return C.guise_handle(newHandle(c))
}

// guise_start_into is documented in the header above.
//
//export guise_start_into
func guise_start_into(client C.guise_handle, req *C.guise_request, head *C.guise_head, buf *C.uint8_t, capacity C.size_t, done C.guise_done_fn, user unsafe.Pointer) C.guise_handle {
	if done == nil {
		return 0
	}
	c, r, err := prepare(req)
	h := newHandle(c)
	cb := doneOf(done, user)
	if err != nil {
		c.err = err
		c.state.Store(stateReady)
		spawn(func() { cb.run(h, -int64(classify(err).kind)) })
		return C.guise_handle(h)
	}
	into := goBytes(unsafe.Pointer(buf), capacity)
	spawn(func() {
		c.into = into
		c.run(uint64(client), r)
		c.into = nil
		var res int64
		if err := c.headErr(); err != nil {
			res = -int64(classify(err).kind)
		} else {
			fillHead(c, head)
			if c.copied {
				head.flags |= C.GUISE_HEAD_COPIED
				// The call is over: its handle goes now, so the host
				// has nothing to close. A concurrent guise_close got
				// it first and closed it.
				if release(h) != nil {
					c.close()
				}
			}
		}
		cb.run(h, res)
	})
	return C.guise_handle(h)
}

func prepare(req *C.guise_request) (*call, *request, error) {
	r, err := goRequest(req)
	if err != nil {
		return newCall(nil), nil, err
	}
	return newCall(r), r, nil
}

// guise_call_error fills *err with the call's error, the request's or, after
// a failed read, the body's, and returns its kind; 0 when there is none (or
// the head has not arrived).
//
//export guise_call_error
func guise_call_error(h C.guise_handle, e *C.guise_error) C.int32_t {
	c, ok := lookup[*call](uint64(h))
	if !ok {
		return fillError(e, errBadHandle)
	}
	return fillError(e, c.lastErr())
}

// guise_response_head fills *head once the call's head has arrived; it
// returns 0, GUISE_E_NOT_READY before, or the request's error kind.
//
//export guise_response_head
func guise_response_head(h C.guise_handle, head *C.guise_head) C.int32_t {
	c, ok := lookup[*call](uint64(h))
	if !ok {
		return C.int32_t(kindBadHandle)
	}
	if err := c.headErr(); err != nil {
		return C.int32_t(classify(err).kind)
	}
	fillHead(c, head)
	return 0
}

// fillHead describes the head of c, a call whose head is in.
func fillHead(c *call, head *C.guise_head) {
	r := c.resp
	head.status = C.int32_t(r.StatusCode)
	head.proto = C.int32_t(protoNumber(r.Proto))
	head.content_length = C.int64_t(r.ContentLength)
	head.prefetched = C.int64_t(c.plen)
	head.flags = 0
	if c.dec {
		head.flags |= C.GUISE_HEAD_DECODED
	}
	if c.plen == r.ContentLength && c.plen >= 0 && c.bodyErr == nil && c.eof {
		head.flags |= C.GUISE_HEAD_COMPLETE
	}
	head.meta_len = C.uint32_t(len(c.meta))
}

// guise_response_meta copies the head's strings into buf: the final URL
// NUL, the reason phrase NUL (empty over HTTP/2), then every field as
// name NUL value NUL in the order and case received. cap must be at least
// guise_head.meta_len, else GUISE_E_SHORT_BUFFER.
//
//export guise_response_meta
func guise_response_meta(h C.guise_handle, buf *C.uint8_t, capacity C.size_t) C.int32_t {
	c, ok := lookup[*call](uint64(h))
	if !ok {
		return C.int32_t(kindBadHandle)
	}
	if err := c.headErr(); err != nil {
		return C.int32_t(classify(err).kind)
	}
	if int(capacity) < len(c.meta) {
		return C.int32_t(kindShortBuffer)
	}
	copy(goBytes(unsafe.Pointer(buf), capacity), c.meta)
	return 0
}

// guise_read_start is guise_body_read's async form (which see); done
// must not be NULL. When the bytes are already buffered, done runs on the
// calling thread before guise_read_start returns.
//
//export guise_read_start
func guise_read_start(h C.guise_handle, buf *C.uint8_t, capacity C.size_t, done C.guise_done_fn, user unsafe.Pointer) C.int64_t {
	c, ok := lookup[*call](uint64(h))
	if !ok {
		return -C.int64_t(kindBadHandle)
	}
	if done == nil {
		return -C.int64_t(kindInvalid)
	}
	if err := c.headErr(); err != nil {
		return -C.int64_t(classify(err).kind)
	}
	p := goBytes(unsafe.Pointer(buf), capacity)
	cb := doneOf(done, user)
	if c.buffered() {
		cb.run(uint64(h), readResult(c.read(p)))
		return 0
	}
	if c.reading.CompareAndSwap(false, true) {
		c.readBuf, c.readDone, c.readH = p, cb, uint64(h)
		if c.readFn == nil {
			c.readFn = c.runRead
		}
		spawn(c.readFn)
		return 0
	}
	spawn(func() {
		cb.run(uint64(h), readResult(c.read(p)))
	})
	return 0
}

func readResult(n int, err error) int64 {
	if err != nil {
		return -int64(classify(err).kind)
	}
	return int64(n)
}

// guise_cancel ends the call's request: a pending head fails with
// GUISE_E_CANCELED, a body read in flight ends, the connection is closed,
// and a body stream's pending writes fail. The call stays until
// guise_close.
//
//export guise_cancel
func guise_cancel(h C.guise_handle) C.int32_t {
	c, ok := lookup[*call](uint64(h))
	if !ok {
		return C.int32_t(kindBadHandle)
	}
	c.abort()
	return 0
}

// guise_stream_new returns a request body stream for guise_request's
// body_stream: write it with guise_stream_write, end it with
// guise_stream_end, release it with guise_close.
//
//export guise_stream_new
func guise_stream_new() C.guise_handle { return C.guise_handle(newHandle(newStream())) }

// guise_write_start is guise_stream_write's async form (which see); done
// must not be NULL.
//
//export guise_write_start
func guise_write_start(h C.guise_handle, buf *C.uint8_t, n C.size_t, done C.guise_done_fn, user unsafe.Pointer) C.int64_t {
	s, ok := lookup[*stream](uint64(h))
	if !ok {
		return -C.int64_t(kindBadHandle)
	}
	if done == nil {
		return -C.int64_t(kindInvalid)
	}
	cb := doneOf(done, user)
	s.write(goBytes(unsafe.Pointer(buf), n), func(r int64) { go cb.run(uint64(h), r) })
	return 0
}

// guise_stream_end marks the end of the body: the request reads what was
// queued, then the end.
//
//export guise_stream_end
func guise_stream_end(h C.guise_handle) C.int32_t {
	s, ok := lookup[*stream](uint64(h))
	if !ok {
		return C.int32_t(kindBadHandle)
	}
	s.end()
	return 0
}

// guise_cookies_export writes the Session's cookies as the JSON document of
// package cookie ({"version":1,"cookies":[...]}) into buf and stores its
// length in *n. When cap is too small it returns GUISE_E_SHORT_BUFFER, with
// *n the length needed.
//
//export guise_cookies_export
func guise_cookies_export(h C.guise_handle, buf *C.uint8_t, capacity C.size_t, n *C.size_t) C.int32_t {
	ss, ok := lookup[*session](uint64(h))
	if !ok {
		return C.int32_t(kindBadHandle)
	}
	var b bytes.Buffer
	if err := ss.s.Cookies().WriteJSON(&b); err != nil {
		return C.int32_t(classify(err).kind)
	}
	*n = C.size_t(b.Len())
	if int(capacity) < b.Len() {
		return C.int32_t(kindShortBuffer)
	}
	copy(goBytes(unsafe.Pointer(buf), capacity), b.Bytes())
	return 0
}

// guise_cookies_import adds the cookies of a JSON document (the export's
// format, or a bare array as browser extensions write it) to the Session's
// jar. Invalid cookies are skipped and reported in *err after the valid
// ones were added.
//
//export guise_cookies_import
func guise_cookies_import(h C.guise_handle, data *C.char, n C.size_t, e *C.guise_error) C.int32_t {
	ss, ok := lookup[*session](uint64(h))
	if !ok {
		return fillError(e, errBadHandle)
	}
	if err := ss.s.Cookies().ReadJSON(strings.NewReader(goString(data, n))); err != nil {
		return fillError(e, invalidError{err})
	}
	return fillError(e, nil)
}

// guise_stats_read fills *out with counts for leak tests.
//
//export guise_stats_read
func guise_stats_read(out *C.guise_stats) {
	s := readStats()
	out.handles, out.calls, out.goroutines = C.int64_t(s.handles), C.int64_t(s.calls), C.int64_t(s.goroutines)
	out.sessions = C.int64_t(s.sessions)
	out.heap_bytes, out.heap_sys = C.int64_t(s.heapBytes), C.int64_t(s.heapSys)
}

// guise_collect runs Go's garbage collector and returns its memory to the
// system, for leak tests.
//
//export guise_collect
func guise_collect() { collect() }

// guise_abi_version returns GUISE_ABI_VERSION as the library was built
// with it. A binding calls it first, before any other function, and
// refuses a library whose ABI is not the one it was written for.
//
//export guise_abi_version
func guise_abi_version() C.int32_t { return C.int32_t(version.ABI) }

// guise_version writes guise's release version ("0.1.0", no NUL) into buf
// and returns its length, or GUISE_E_SHORT_BUFFER, negated, when cap is
// smaller.
//
//export guise_version
func guise_version(buf *C.uint8_t, capacity C.size_t) C.int64_t {
	return C.int64_t(versionInto(goBytes(unsafe.Pointer(buf), capacity)))
}

// versionInto is guise_version on a Go slice.
func versionInto(b []byte) int64 {
	if len(b) < len(version.Version) {
		return -int64(kindShortBuffer)
	}
	return int64(copy(b, version.Version))
}
