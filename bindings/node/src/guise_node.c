// guise_node.c: the N-API shim between Node and libguise (ffi/guise.h).
//
// Every call that waits (a request's head, a body read, a body write) goes
// to libguise's async form; its completion arrives on a Go thread, which
// pushes it on a lock-free list and, when the list was empty, wakes the
// JS thread with a uv_async_t; the JS thread takes the whole list at once
// and settles each operation's promise. So completions that come close
// together cost one wakeup, and a Go thread never waits for the JS thread
// (napi's thread-safe functions hold a mutex while they wake the loop, and
// the JS thread, woken, blocked on it: three context switches for one
// completion on a busy core). The JS thread never blocks: the synchronous
// functions here only copy what libguise already holds.
//
// Buffers: a JS Buffer given to read or write is referenced (napi_ref)
// until its completion has run, so V8 keeps its memory while Go uses it.

#define _POSIX_C_SOURCE 200809L
#define NAPI_VERSION 8
#include <node_api.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

#include "guise.h"

#define CHECK(call)                                                            \
	do {                                                                       \
		if ((call) != napi_ok) {                                               \
			napi_throw_error(env, NULL, "guise: N-API call failed: " #call);   \
			return NULL;                                                       \
		}                                                                      \
	} while (0)

// INTO_CAP is the size of a request's buffer for guise_start_into: a
// response whose meta and body fit comes back whole in the completion.
// Larger ones are read as before (head, then body reads).
#define INTO_CAP (16 << 10)
#define SPARE_MAX 64

typedef struct op op_t;

// Per-environment state. It lives until the environment is torn down and
// every operation begun in it has completed (refs), as a Go thread may
// still complete one after teardown.
typedef struct {
	napi_env env;
	uv_async_t wake;            // sent when done goes from empty to not
	napi_async_context actx;    // for the callback scope completions run in
	napi_async_cleanup_hook_handle cleanup;
	_Atomic(op_t *) done;       // completed operations, newest first
	atomic_int draining;        // the JS thread is in on_wake and will look at done again
	uv_mutex_t mu;              // guards closing against wake's close
	int closing;                // the environment is going: drop completions
	atomic_int_fast64_t refs;   // operations not yet freed, + 1 while the environment lives
	int64_t pending; // operations in flight: wake keeps the loop alive while > 0 (JS thread)
	// Buffers of finished requests, for the next ones (JS thread only).
	uint8_t *spare[SPARE_MAX];
	int nspare;
} addon_t;

enum { OP_START, OP_READ, OP_WRITE };

// op_t is one operation in flight.
struct op {
	addon_t *addon;
	op_t *next; // in addon.done
	napi_deferred deferred;
	napi_ref keep; // the Buffer Go reads or writes, or NULL
	int kind;
	guise_handle h;
	int64_t result;
	guise_head head; // OP_START: filled by guise_start_into
	uint8_t *into;   // OP_START: INTO_CAP bytes
};

static void addon_unref(addon_t *a) {
	if (atomic_fetch_sub(&a->refs, 1) == 1) {
		while (a->nspare > 0) free(a->spare[--a->nspare]);
		uv_mutex_destroy(&a->mu);
		free(a);
	}
}

static op_t *op_new(addon_t *a) {
	op_t *op = calloc(1, sizeof *op);
	if (op == NULL) return NULL;
	op->addon = a;
	atomic_fetch_add(&a->refs, 1);
	return op;
}

static void op_free(op_t *op) {
	addon_t *a = op->addon;
	free(op);
	addon_unref(a);
}

static uint8_t *into_get(addon_t *a) {
	return a->nspare > 0 ? a->spare[--a->nspare] : malloc(INTO_CAP);
}

static void into_put(addon_t *a, uint8_t *p) {
	if (p == NULL) return;
	if (a->nspare < SPARE_MAX) a->spare[a->nspare++] = p;
	else free(p);
}

static napi_value make_head(napi_env env, const guise_head *hd, const char *meta, napi_value body);

static void op_begin(napi_env env, addon_t *a) {
	(void)env;
	if (a->pending++ == 0) uv_ref((uv_handle_t *)&a->wake);
}

static void op_end(napi_env env, addon_t *a) {
	(void)env;
	if (--a->pending == 0) uv_unref((uv_handle_t *)&a->wake);
}

// on_done runs on a Go thread: it queues the completion for the JS thread.
static void on_done(void *user, guise_handle h, int64_t result) {
	op_t *op = user;
	addon_t *a = op->addon;
	op->h = h;
	op->result = result;
	op_t *old = atomic_load_explicit(&a->done, memory_order_relaxed);
	do {
		op->next = old;
	} while (!atomic_compare_exchange_weak(&a->done, &old, op));
	// The JS thread is woken already (old), or is in on_wake and will
	// find this one: on_wake clears draining and then looks at done once
	// more, and both sides' accesses are sequentially consistent, so one
	// of the two sees the other.
	if (old != NULL || atomic_load(&a->draining)) return;
	uv_mutex_lock(&a->mu);
	if (!a->closing) {
		uv_async_send(&a->wake);
	} else {
		// No JS thread to settle them: drop what is queued (this one
		// and any pushed since the list was last emptied).
		op_t *list = atomic_exchange(&a->done, NULL);
		while (list != NULL) {
			op_t *next = list->next;
			free(list->into);
			op_free(list);
			list = next;
		}
	}
	uv_mutex_unlock(&a->mu);
}

// complete settles one operation on the JS thread.
static void complete(napi_env env, op_t *op) {
	napi_value v = NULL;
	if (op->kind == OP_START && op->result == 0 && (op->head.flags & GUISE_HEAD_COPIED)) {
		// The whole response is in op->into: the head array, with the
		// body copied out of it.
		napi_value buf;
		void *p;
		size_t n = (size_t)op->head.prefetched;
		if (napi_create_buffer_copy(env, n, op->into + op->head.meta_len, &p, &buf) == napi_ok) {
			v = make_head(env, &op->head, (const char *)op->into, buf);
		}
	}
	if (v == NULL) napi_create_int64(env, op->result, &v);
	napi_resolve_deferred(env, op->deferred, v);
	if (op->keep != NULL) napi_delete_reference(env, op->keep);
	into_put(op->addon, op->into);
	op_end(env, op->addon);
	op_free(op);
}

// on_wake runs on the JS thread: it settles every completion queued, in
// the order they came, inside one callback scope (so the promises'
// reactions run when it closes, as after any native callback).
//
// Completions that arrive while it runs (the promise reactions take a
// while) are taken in the same call, and their Go threads skip the wakeup
// (see on_done): no eventfd write, read and poll for them. It takes at
// most WAKE_ROUNDS lists, then wakes itself for the rest, so a stream of
// completions (a body read from guise's buffer completes at once) cannot
// keep the loop from its other work.
#define WAKE_ROUNDS 4

static void on_wake(uv_async_t *w) {
	addon_t *a = w->data;
	for (int round = 0;; round++) {
		atomic_store(&a->draining, 1);
		op_t *list = round < WAKE_ROUNDS ? atomic_exchange(&a->done, NULL) : NULL;
		if (list == NULL) {
			atomic_store(&a->draining, 0);
			if (atomic_load(&a->done) == NULL) return;
			if (round >= WAKE_ROUNDS) {
				uv_async_send(&a->wake); // the rest on the loop's next turn
				return;
			}
			continue;
		}
		op_t *fifo = NULL;
		while (list != NULL) {
			op_t *next = list->next;
			list->next = fifo;
			fifo = list;
			list = next;
		}
		napi_env env = a->env;
		napi_handle_scope hs;
		napi_callback_scope cs;
		napi_value resource;
		napi_open_handle_scope(env, &hs);
		napi_create_object(env, &resource);
		napi_open_callback_scope(env, resource, a->actx, &cs);
		while (fifo != NULL) {
			op_t *next = fifo->next;
			complete(env, fifo);
			fifo = next;
		}
		napi_close_callback_scope(env, cs);
		napi_close_handle_scope(env, hs);
	}
}

static void on_wake_closed(uv_handle_t *w) {
	addon_t *a = w->data;
	napi_remove_async_cleanup_hook(a->cleanup);
	addon_unref(a);
}

// on_cleanup runs as the environment is torn down: completions from now
// on are dropped (their promises are gone with the environment), and the
// addon is freed once the last of them has come.
static void on_cleanup(napi_async_cleanup_hook_handle handle, void *data) {
	(void)handle;
	addon_t *a = data;
	uv_mutex_lock(&a->mu);
	a->closing = 1;
	op_t *list = atomic_exchange(&a->done, NULL);
	while (list != NULL) {
		op_t *next = list->next;
		free(list->into);
		op_free(list);
		list = next;
	}
	uv_mutex_unlock(&a->mu);
	napi_async_destroy(a->env, a->actx);
	uv_close((uv_handle_t *)&a->wake, on_wake_closed);
}

// A string argument, copied to a NUL-terminated buffer: the small ones on
// the stack.
typedef struct {
	char *p;
	size_t n;
	char small[512];
} str_t;

static napi_status get_str(napi_env env, napi_value v, str_t *s) {
	napi_valuetype t;
	s->p = s->small;
	s->n = 0;
	s->small[0] = 0;
	napi_status st = napi_typeof(env, v, &t);
	if (st != napi_ok) return st;
	if (t != napi_string) return napi_ok; // undefined or null: ""
	size_t n;
	st = napi_get_value_string_utf8(env, v, NULL, 0, &n);
	if (st != napi_ok) return st;
	if (n + 1 > sizeof(s->small)) {
		s->p = malloc(n + 1);
		if (s->p == NULL) return napi_generic_failure;
	}
	return napi_get_value_string_utf8(env, v, s->p, n + 1, &s->n);
}

static void free_str(str_t *s) {
	if (s->p != s->small) free(s->p);
}

static int64_t get_i64(napi_env env, napi_value v) {
	int64_t n = 0;
	if (napi_get_value_int64(env, v, &n) != napi_ok) return 0;
	return n;
}

// get_bytes finds the memory of a Buffer, TypedArray or ArrayBuffer.
static int get_bytes(napi_env env, napi_value v, void **p, size_t *n) {
	bool is;
	*p = NULL;
	*n = 0;
	if (napi_is_typedarray(env, v, &is) == napi_ok && is) {
		napi_typedarray_type t;
		size_t len, off;
		napi_value ab;
		void *data;
		if (napi_get_typedarray_info(env, v, &t, &len, &data, &ab, &off) != napi_ok) return 0;
		size_t el = 1;
		switch (t) {
		case napi_int16_array: case napi_uint16_array: el = 2; break;
		case napi_int32_array: case napi_uint32_array: case napi_float32_array: el = 4; break;
		case napi_float64_array: case napi_bigint64_array: case napi_biguint64_array: el = 8; break;
		default: break;
		}
		*p = data;
		*n = len * el;
		return 1;
	}
	if (napi_is_arraybuffer(env, v, &is) == napi_ok && is) {
		return napi_get_arraybuffer_info(env, v, p, n) == napi_ok;
	}
	return 0;
}

static napi_value make_error(napi_env env, const guise_error *e) {
	napi_value obj, v;
	napi_create_object(env, &obj);
	napi_create_int32(env, e->kind, &v);
	napi_set_named_property(env, obj, "kind", v);
	napi_create_int32(env, e->phase, &v);
	napi_set_named_property(env, obj, "phase", v);
	napi_create_int32(env, e->status, &v);
	napi_set_named_property(env, obj, "status", v);
	napi_create_int32(env, e->code, &v);
	napi_set_named_property(env, obj, "code", v);
	napi_create_string_utf8(env, e->message, NAPI_AUTO_LENGTH, &v);
	napi_set_named_property(env, obj, "message", v);
	return obj;
}

static napi_value num(napi_env env, int64_t n) {
	napi_value v;
	napi_create_int64(env, n, &v);
	return v;
}

// new(kind, json) -> handle; throws an object with the error's fields.
static napi_value js_new(napi_env env, napi_callback_info info) {
	size_t argc = 2;
	napi_value argv[2];
	CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
	int32_t which = 0;
	napi_get_value_int32(env, argv[0], &which);
	str_t s;
	CHECK(get_str(env, argv[1], &s));
	guise_error e;
	guise_handle h = which == 1 ? guise_transport_new(s.p, s.n, &e) : guise_session_new(s.p, s.n, &e);
	free_str(&s);
	if (h == 0) {
		napi_throw(env, make_error(env, &e));
		return NULL;
	}
	return num(env, (int64_t)h);
}

static napi_value js_close(napi_env env, napi_callback_info info) {
	size_t argc = 1;
	napi_value argv[1];
	CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
	return num(env, guise_close((guise_handle)get_i64(env, argv[0])));
}

static napi_value js_cancel(napi_env env, napi_callback_info info) {
	size_t argc = 1;
	napi_value argv[1];
	CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
	return num(env, guise_cancel((guise_handle)get_i64(env, argv[0])));
}

// start(client, method, url, header, body, stream, contentLength, timeoutMs,
//       profile, proxy, referrer, caPem, kind, redirect, protocol, flags,
//       prefetch) -> [call, Promise<head or result>]: the promise resolves to
// the head array of js_head, body included, when the whole response came
// back in the completion (and the call is over), else to the result: 0
// when the head is in (read it with head(call)), or -kind.
static napi_value js_start(napi_env env, napi_callback_info info) {
	enum { N = 17 };
	size_t argc = N;
	napi_value argv[N];
	addon_t *a;
	CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, (void **)&a));
	if (argc < N) {
		napi_throw_type_error(env, NULL, "guise: start takes 17 arguments");
		return NULL;
	}
	str_t method, url, header, profile, proxy, referrer, ca;
	str_t *strs[] = {&method, &url, &header, &profile, &proxy, &referrer, &ca};
	int argi[] = {1, 2, 3, 8, 9, 10, 11};
	for (int i = 0; i < 7; i++) {
		if (get_str(env, argv[argi[i]], strs[i]) != napi_ok) {
			for (int j = 0; j < i; j++) free_str(strs[j]);
			napi_throw_error(env, NULL, "guise: bad string argument");
			return NULL;
		}
	}
	guise_request r;
	memset(&r, 0, sizeof r);
	r.method = method.p, r.method_len = method.n;
	r.url = url.p, r.url_len = url.n;
	r.header = header.p, r.header_len = header.n;
	void *body;
	size_t body_len;
	if (get_bytes(env, argv[4], &body, &body_len)) r.body = body, r.body_len = body_len;
	r.body_stream = (guise_handle)get_i64(env, argv[5]);
	r.content_length = get_i64(env, argv[6]);
	r.timeout_ms = get_i64(env, argv[7]);
	r.profile = profile.p, r.profile_len = profile.n;
	r.proxy = proxy.p, r.proxy_len = proxy.n;
	r.referrer = referrer.p, r.referrer_len = referrer.n;
	r.ca_pem = ca.p, r.ca_pem_len = ca.n;
	r.kind = (int32_t)get_i64(env, argv[12]);
	r.redirect = (int32_t)get_i64(env, argv[13]);
	r.protocol = (int32_t)get_i64(env, argv[14]);
	r.flags = (uint32_t)get_i64(env, argv[15]);
	r.prefetch = get_i64(env, argv[16]);

	op_t *op = op_new(a);
	napi_value promise;
	if (op == NULL || napi_create_promise(env, &op->deferred, &promise) != napi_ok) {
		if (op != NULL) op_free(op);
		for (int j = 0; j < 7; j++) free_str(strs[j]);
		napi_throw_error(env, NULL, "guise: out of memory");
		return NULL;
	}
	op->kind = OP_START;
	op->into = into_get(a);
	op_begin(env, a);
	guise_handle h = op->into != NULL
		? guise_start_into((guise_handle)get_i64(env, argv[0]), &r, &op->head, op->into, INTO_CAP, on_done, op)
		: guise_start((guise_handle)get_i64(env, argv[0]), &r, on_done, op);
	for (int j = 0; j < 7; j++) free_str(strs[j]);
	// The call handle is known now (for cancel) and again at completion.
	napi_value out, hv;
	napi_create_array_with_length(env, 2, &out);
	napi_create_int64(env, (int64_t)h, &hv);
	napi_set_element(env, out, 0, hv);
	napi_set_element(env, out, 1, promise);
	return out;
}

// head(call) -> [status, proto, contentLength, flags, url, reason, fields, body?]
// (see make_head); body is a Buffer when the whole body was prefetched, and
// then the call is closed.
static napi_value js_head(napi_env env, napi_callback_info info) {
	size_t argc = 1;
	napi_value argv[1];
	CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
	guise_handle h = (guise_handle)get_i64(env, argv[0]);
	guise_head hd;
	int32_t rc = guise_response_head(h, &hd);
	if (rc != 0) {
		napi_value v;
		napi_create_int32(env, -rc, &v);
		return v;
	}
	char small[4096];
	char *meta = hd.meta_len <= sizeof small ? small : malloc(hd.meta_len);
	if (meta == NULL) {
		napi_throw_error(env, NULL, "guise: out of memory");
		return NULL;
	}
	guise_response_meta(h, (uint8_t *)meta, hd.meta_len);
	napi_value sub = NULL;
	if (hd.flags & GUISE_HEAD_COMPLETE) {
		void *data;
		napi_value buf;
		if (napi_create_buffer(env, (size_t)hd.prefetched, &data, &buf) != napi_ok) {
			if (meta != small) free(meta);
			napi_throw_error(env, NULL, "guise: out of memory");
			return NULL;
		}
		int64_t n = hd.prefetched > 0 ? guise_body_read(h, data, (size_t)hd.prefetched, NULL, NULL) : 0;
		guise_close(h);
		if (n < 0) n = 0;
		sub = buf;
		if (n != hd.prefetched) napi_create_buffer_copy(env, (size_t)n, data, NULL, &sub);
	}
	napi_value out = make_head(env, &hd, meta, sub);
	if (meta != small) free(meta);
	return out;
}

// make_head builds head's array from a head and its meta: [status, proto,
// contentLength, flags, url, reason, fields, body?]. fields is one string,
// name NUL value NUL ..., split by the JS side when first asked; body is
// set when not NULL.
static napi_value make_head(napi_env env, const guise_head *hd, const char *meta, napi_value body) {
	napi_value out, v;
	napi_create_array_with_length(env, 8, &out);
	napi_set_element(env, out, 0, num(env, hd->status));
	napi_set_element(env, out, 1, num(env, hd->proto));
	napi_set_element(env, out, 2, num(env, hd->content_length));
	napi_set_element(env, out, 3, num(env, hd->flags));
	size_t off = 0;
	for (int part = 0; part < 2; part++) {
		size_t len = off < hd->meta_len ? strnlen(meta + off, hd->meta_len - off) : 0;
		napi_create_string_utf8(env, meta + off, len, &v);
		napi_set_element(env, out, 4 + part, v);
		off += len + 1;
	}
	if (off > hd->meta_len) off = hd->meta_len;
	napi_create_string_latin1(env, meta + off, hd->meta_len - off, &v);
	napi_set_element(env, out, 6, v);
	if (body != NULL) napi_set_element(env, out, 7, body);
	return out;
}

// error(call) -> null or {kind, phase, status, code, message}
static napi_value js_error(napi_env env, napi_callback_info info) {
	size_t argc = 1;
	napi_value argv[1];
	CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
	guise_error e;
	if (guise_call_error((guise_handle)get_i64(env, argv[0]), &e) == 0) {
		napi_value v;
		napi_get_null(env, &v);
		return v;
	}
	return make_error(env, &e);
}

// read(call, buffer) -> Promise<n>: n > 0 bytes, 0 at the end, -kind.
// write(stream, buffer) -> Promise<n>: n the length written, or -kind.
static napi_value async_io(napi_env env, napi_callback_info info, int kind) {
	size_t argc = 2;
	napi_value argv[2];
	addon_t *a;
	CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, (void **)&a));
	void *p;
	size_t n;
	if (argc < 2 || !get_bytes(env, argv[1], &p, &n)) {
		napi_throw_type_error(env, NULL, "guise: a buffer is needed");
		return NULL;
	}
	op_t *op = op_new(a);
	napi_value promise;
	if (op == NULL || napi_create_promise(env, &op->deferred, &promise) != napi_ok) {
		if (op != NULL) op_free(op);
		napi_throw_error(env, NULL, "guise: out of memory");
		return NULL;
	}
	op->kind = kind;
	napi_create_reference(env, argv[1], 1, &op->keep);
	guise_handle h = (guise_handle)get_i64(env, argv[0]);
	op_begin(env, a);
	int64_t rc = kind == OP_READ ? guise_body_read(h, p, n, on_done, op) : guise_stream_write(h, p, n, on_done, op);
	if (rc < 0) { // did not start: settle now
		napi_resolve_deferred(env, op->deferred, num(env, rc));
		napi_delete_reference(env, op->keep);
		op_end(env, a);
		op_free(op);
	}
	return promise;
}

static napi_value js_read(napi_env env, napi_callback_info info) { return async_io(env, info, OP_READ); }
static napi_value js_write(napi_env env, napi_callback_info info) { return async_io(env, info, OP_WRITE); }

static napi_value js_stream_new(napi_env env, napi_callback_info info) {
	(void)info;
	return num(env, (int64_t)guise_stream_new());
}

static napi_value js_stream_end(napi_env env, napi_callback_info info) {
	size_t argc = 1;
	napi_value argv[1];
	CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
	return num(env, guise_stream_end((guise_handle)get_i64(env, argv[0])));
}

// cookies(session) -> JSON string; setCookies(session, json) -> null or error
static napi_value js_cookies(napi_env env, napi_callback_info info) {
	size_t argc = 1;
	napi_value argv[1];
	CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
	guise_handle h = (guise_handle)get_i64(env, argv[0]);
	size_t n = 0;
	int32_t rc = guise_cookies_export(h, NULL, 0, &n);
	uint8_t *buf = NULL;
	while (rc == GUISE_E_SHORT_BUFFER) {
		free(buf);
		buf = malloc(n);
		if (buf == NULL) break;
		rc = guise_cookies_export(h, buf, n, &n);
	}
	if (rc != 0) {
		free(buf);
		guise_error e = {.kind = rc};
		strcpy(e.message, "guise: cannot export cookies");
		napi_throw(env, make_error(env, &e));
		return NULL;
	}
	napi_value v;
	napi_create_string_utf8(env, (const char *)buf, n, &v);
	free(buf);
	return v;
}

static napi_value js_set_cookies(napi_env env, napi_callback_info info) {
	size_t argc = 2;
	napi_value argv[2];
	CHECK(napi_get_cb_info(env, info, &argc, argv, NULL, NULL));
	str_t s;
	CHECK(get_str(env, argv[1], &s));
	guise_error e;
	int32_t rc = guise_cookies_import((guise_handle)get_i64(env, argv[0]), s.p, s.n, &e);
	free_str(&s);
	if (rc != 0) return make_error(env, &e);
	napi_value v;
	napi_get_null(env, &v);
	return v;
}

static napi_value js_stats(napi_env env, napi_callback_info info) {
	(void)info;
	guise_stats s;
	guise_stats_read(&s);
	napi_value obj;
	napi_create_object(env, &obj);
	napi_set_named_property(env, obj, "handles", num(env, s.handles));
	napi_set_named_property(env, obj, "calls", num(env, s.calls));
	napi_set_named_property(env, obj, "sessions", num(env, s.sessions));
	napi_set_named_property(env, obj, "goroutines", num(env, s.goroutines));
	napi_set_named_property(env, obj, "heapBytes", num(env, s.heap_bytes));
	napi_set_named_property(env, obj, "heapSys", num(env, s.heap_sys));
	return obj;
}

static napi_value js_collect(napi_env env, napi_callback_info info) {
	(void)info;
	guise_collect();
	napi_value v;
	napi_get_undefined(env, &v);
	return v;
}

static napi_value init(napi_env env, napi_value exports) {
	// The library this addon loaded must speak the ABI its header did.
	int32_t abi = guise_abi_version();
	if (abi != GUISE_ABI_VERSION) {
		char msg[160];
		snprintf(msg, sizeof msg, "guise: libguise speaks C ABI %d, this addon was built for %d: reinstall guise",
			(int)abi, GUISE_ABI_VERSION);
		napi_throw_error(env, "GUISE_ABI", msg);
		return NULL;
	}
	addon_t *a = calloc(1, sizeof *a);
	if (a == NULL) return NULL;
	uv_loop_t *loop;
	napi_value name;
	napi_create_string_utf8(env, "guise", NAPI_AUTO_LENGTH, &name);
	if (napi_get_uv_event_loop(env, &loop) != napi_ok || napi_async_init(env, NULL, name, &a->actx) != napi_ok) {
		free(a);
		napi_throw_error(env, NULL, "guise: cannot set up completions");
		return NULL;
	}
	a->env = env;
	a->refs = 1;
	if (uv_mutex_init(&a->mu) != 0) {
		napi_async_destroy(env, a->actx);
		free(a);
		napi_throw_error(env, NULL, "guise: cannot set up completions");
		return NULL;
	}
	uv_async_init(loop, &a->wake, on_wake);
	a->wake.data = a;
	uv_unref((uv_handle_t *)&a->wake);
	napi_add_async_cleanup_hook(env, on_cleanup, a, &a->cleanup);
	napi_property_descriptor props[] = {
		{"create", NULL, js_new, NULL, NULL, NULL, napi_default, a},
		{"close", NULL, js_close, NULL, NULL, NULL, napi_default, a},
		{"cancel", NULL, js_cancel, NULL, NULL, NULL, napi_default, a},
		{"start", NULL, js_start, NULL, NULL, NULL, napi_default, a},
		{"head", NULL, js_head, NULL, NULL, NULL, napi_default, a},
		{"error", NULL, js_error, NULL, NULL, NULL, napi_default, a},
		{"read", NULL, js_read, NULL, NULL, NULL, napi_default, a},
		{"write", NULL, js_write, NULL, NULL, NULL, napi_default, a},
		{"streamNew", NULL, js_stream_new, NULL, NULL, NULL, napi_default, a},
		{"streamEnd", NULL, js_stream_end, NULL, NULL, NULL, napi_default, a},
		{"cookies", NULL, js_cookies, NULL, NULL, NULL, napi_default, a},
		{"setCookies", NULL, js_set_cookies, NULL, NULL, NULL, napi_default, a},
		{"stats", NULL, js_stats, NULL, NULL, NULL, napi_default, a},
		{"collect", NULL, js_collect, NULL, NULL, NULL, napi_default, a},
	};
	napi_define_properties(env, exports, sizeof props / sizeof props[0], props);
	napi_value v;
	napi_create_int32(env, abi, &v);
	napi_set_named_property(env, exports, "abi", v);
	uint8_t ver[64];
	int64_t n = guise_version(ver, sizeof ver);
	napi_create_string_utf8(env, n > 0 ? (const char *)ver : "", n > 0 ? (size_t)n : 0, &v);
	napi_set_named_property(env, exports, "version", v);
	return exports;
}

NAPI_MODULE(NODE_GYP_MODULE_NAME, init)
