"""The requests-like synchronous API."""

import ctypes
import json as _json
import threading
import weakref

from . import _ffi
from ._core import (PROTOS, Head, Prepared, call_error, check, encoding_of, new_handle, parse_fields,
                    session_options, transport_options)
from ._errors import GuiseError, from_struct

CHUNK = 64 << 10

# SCRATCH is the size of each thread's buffer for guise_fetch: a response
# whose meta and prefetched body (64 KiB at most by default) fit comes
# back in the one call.
SCRATCH = 96 << 10

_UNSET = object()


class _Scratch(threading.local):
    """A thread's structs and buffer for guise_fetch, made once."""

    def __init__(self):
        self.head = _ffi.Head()
        self.err = _ffi.Error()
        self.head_ref = ctypes.byref(self.head)
        self.err_ref = ctypes.byref(self.err)
        self.buf = bytearray(SCRATCH)
        self.view = memoryview(self.buf)
        self.addr = ctypes.addressof((ctypes.c_char * SCRATCH).from_buffer(self.buf))
        # What send reads per request, in one lookup of the thread-local.
        self.args = (self.head, self.head_ref, self.addr, self.err, self.err_ref, self.view)


_scratch = _Scratch()


def _close_handle(h):
    l = _ffi._lib
    if l is not None:
        l.guise_close(h)


class Transport:
    """A connection pool that Sessions share (transport=...) without sharing
    cookies. Keyword arguments are guise.Transport's: browser,
    max_conns_per_host, dial_timeout, tls_handshake_timeout,
    response_header_timeout, body_idle_timeout (seconds), ... Close it with
    close() (or a with block); a Transport dropped without close is closed
    when collected."""

    def __init__(self, **kw):
        opts = transport_options(kw, {})
        if kw:
            raise TypeError("unexpected keyword arguments: %s" % ", ".join(sorted(kw)))
        self._h = new_handle(_ffi.lib().guise_transport_new, _json.dumps(opts).encode())
        self._fin = weakref.finalize(self, _close_handle, self._h)

    def close(self):
        self._fin()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Response:
    """A response: status_code, reason, headers, url, http_version, and the
    body as content, text, json() or iter_content(). A response of
    stream=True holds its connection until its body is read or close() is
    called (or a with block ends)."""

    __slots__ = ("_lib", "_h", "_owner", "_fin", "_head", "_headers", "_fields", "_content", "_encoding",
                 "status_code", "reason", "url", "http_version", "decoded", "__weakref__")

    def __init__(self, lib, h, head, owner=None):
        self._lib, self._h, self._owner = lib, h, owner
        self.status_code = head.status_code
        self.reason = head.reason
        self._headers = head.headers
        self._fields = None
        self.url = head.url
        self.http_version = head.http_version
        self.decoded = head.decoded
        self._head = head
        self._content = None
        self._encoding = _UNSET
        self._fin = weakref.finalize(self, _close_handle, h)

    @classmethod
    def _copied(cls, hd, meta, body):
        """A response guise_fetch copied out whole: no call handle behind
        it. The header fields are parsed when first asked for."""
        r = cls.__new__(cls)
        r._lib, r._h, r._owner, r._fin, r._head = None, 0, None, None, None
        i = meta.index(b"\0")
        j = meta.index(b"\0", i + 1)
        r.url = meta[:i].decode("utf-8", "replace")
        r.reason = meta[i + 1:j].decode("latin-1")
        r._fields = meta[j + 1:]
        r._headers = None
        r.status_code = hd.status
        r.http_version = PROTOS.get(hd.proto, "")
        r.decoded = bool(hd.flags & _ffi.HEAD_DECODED)
        r._content = body
        r._encoding = _UNSET
        return r

    @property
    def headers(self):
        if self._headers is None:
            self._headers = parse_fields(self._fields)
            self._fields = None
        return self._headers

    @property
    def encoding(self):
        """The body's charset from Content-Type, or None; may be set."""
        if self._encoding is _UNSET:
            self._encoding = encoding_of(self.headers)
        return self._encoding

    @encoding.setter
    def encoding(self, value):
        self._encoding = value

    @property
    def ok(self):
        return self.status_code < 400

    def raise_for_status(self):
        if self.status_code >= 400:
            raise GuiseError(20, "guise: HTTP %d %s for %s" % (self.status_code, self.reason, self.url))

    def _read(self, buf, size):
        n = self._lib.guise_body_read(self._h, buf, size, _ffi.NO_DONE, None)
        if n < 0:
            e = call_error(self._lib, self._h)
            self.close()
            raise e or GuiseError(-n, "guise: body read failed")
        return n

    def iter_content(self, chunk_size=CHUNK):
        """Yields the body in pieces of at most chunk_size bytes, as they
        arrive; the connection is released at the end."""
        if self._content is not None:
            for i in range(0, len(self._content), chunk_size):
                yield self._content[i:i + chunk_size]
            return
        buf = ctypes.create_string_buffer(chunk_size)
        try:
            while True:
                n = self._read(buf, chunk_size)
                if n == 0:
                    break
                yield ctypes.string_at(buf, n)
        finally:
            self.close()

    @property
    def content(self):
        if self._content is None:
            hd = self._head
            if hd.complete:
                n = hd.prefetched
                buf = ctypes.create_string_buffer(n)
                got = self._read(buf, n) if n else 0
                self._content = buf.raw[:got]
                self.close()
            else:
                self._content = b"".join(self.iter_content(CHUNK))
        return self._content

    @property
    def text(self):
        return self.content.decode(self.encoding or "utf-8", "replace")

    def json(self, **kw):
        return _json.loads(self.content, **kw)

    def close(self):
        """Releases the response (and ends its request if unfinished)."""
        if self._fin is not None:
            self._fin()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return "<Response [%d]>" % self.status_code


def _feed(lib, stream, chunks, box):
    """Writes an iterable body into a stream (a thread of its own)."""
    try:
        for c in chunks:
            if isinstance(c, str):
                c = c.encode()
            if not c:
                continue
            c = bytes(c)
            n = lib.guise_stream_write(stream, c, len(c), _ffi.NO_DONE, None)
            if n < 0:
                return
        lib.guise_stream_end(stream)
    except BaseException as e:  # the request fails with the stream aborted
        box.append(e)
        lib.guise_close(stream)


def send(client, method, url, stream=False, **kw):
    lib = _ffi._lib or _ffi.lib()
    if kw:
        p = Prepared(method, url, **kw)
        req = p.req
    else:
        # A plain request (the usual case): only the method and URL.
        p = None
        req = _ffi.Request()
        if method != "GET":
            req.method = m = method.encode()
            req.method_len = len(m)
        req.url = u = url.encode() if isinstance(url, str) else url
        req.url_len = len(u)
    if not stream and (p is None or p.chunks is None):
        # One call on this thread: a small response comes back whole in
        # the thread's buffer, with no call handle to read or close. (The
        # Request's fields hold their own references to the bytes.)
        hd, head_ref, addr, err, err_ref, view = _scratch.args
        h = lib.guise_fetch(client, ctypes.byref(req), head_ref, addr, SCRATCH, err_ref)
        if not h:
            if err.kind:
                raise from_struct(err)
            m = hd.meta_len
            return Response._copied(hd, view[:m].tobytes(), view[m:m + hd.prefetched].tobytes())
        r = Response(lib, h, Head(lib, h))
        r.content
        return r
    if p is None:
        p = Prepared(method, url)
    feeder = None
    sh = 0
    if p.chunks is not None:
        sh = lib.guise_stream_new()
        p.req.body_stream = sh
        box = []
        feeder = threading.Thread(target=_feed, args=(lib, sh, p.chunks, box), daemon=True)
        feeder.start()
    h = lib.guise_send(client, ctypes.byref(p.req))
    e = call_error(lib, h)
    if feeder is not None:
        if e is not None:
            lib.guise_close(sh)  # fails the pending write: the feeder returns
        feeder.join(timeout=None if e is not None else 5)
        lib.guise_close(sh)
        if box:
            e = box[0]
    if e is not None:
        lib.guise_close(h)
        raise e
    r = Response(lib, h, Head(lib, h))
    if not stream:
        r.content
    return r


class Session:
    """A browser: its connections, TLS tickets and cookie jar. Keyword
    arguments: browser (a profile name, "chrome", "firefox153-macos"; a
    profile file from guise capture, as a path, its JSON or the decoded
    dict; or a weighted set, "chrome:3,firefox:1", drawn from once per
    Session, reproducibly with seed=N), proxy,
    timeout (seconds, whole request), verify (False, or a CA bundle path),
    trust_store ("mozilla", "system", "both"), allow_redirects,
    max_redirects, raw_body, max_body_size, protocol ("http1", "http2",
    "http3") or http1_only, transport (a Transport to share), cookies (a
    cookie JSON document), and a Transport's own options when it has none.
    Safe to use from several threads. close() ends it; a Session dropped
    without close is closed when collected."""

    def __init__(self, **kw):
        self._h = new_handle(_ffi.lib().guise_session_new, session_options(**kw))
        self._transport = kw.get("transport")  # kept alive while the Session is
        self._fin = weakref.finalize(self, _close_handle, self._h)

    def request(self, method, url, **kw):
        if not self._fin.alive:
            raise from_struct(_closed())
        return send(self._h, method.upper(), url, **kw)

    def get(self, url, **kw):
        if not self._fin.alive:
            raise from_struct(_closed())
        return send(self._h, "GET", url, **kw)

    def head(self, url, **kw):
        return self.request("HEAD", url, **kw)

    def post(self, url, data=None, json=None, **kw):
        return self.request("POST", url, data=data, json=json, **kw)

    def put(self, url, data=None, **kw):
        return self.request("PUT", url, data=data, **kw)

    def patch(self, url, data=None, **kw):
        return self.request("PATCH", url, data=data, **kw)

    def delete(self, url, **kw):
        return self.request("DELETE", url, **kw)

    def export_cookies(self):
        """The jar as a JSON document (str)."""
        lib = _ffi.lib()
        n = ctypes.c_size_t(0)
        rc = lib.guise_cookies_export(self._h, None, 0, ctypes.byref(n))
        while rc == _ffi.E_SHORT_BUFFER:
            buf = ctypes.create_string_buffer(n.value)
            rc = lib.guise_cookies_export(self._h, buf, n.value, ctypes.byref(n))
            if rc == 0:
                return buf.raw[:n.value].decode()
        check(rc)
        return ""

    @property
    def cookies(self):
        """The jar's cookies as a list of dicts (package cookie's JSON)."""
        return _json.loads(self.export_cookies()).get("cookies") or []

    def import_cookies(self, doc):
        """Adds the cookies of a JSON document (str, list or dict)."""
        if not isinstance(doc, (str, bytes)):
            doc = _json.dumps(doc)
        if isinstance(doc, str):
            doc = doc.encode()
        err = _ffi.Error()
        check(_ffi.lib().guise_cookies_import(self._h, doc, len(doc), ctypes.byref(err)), err)

    def close(self):
        self._fin()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _closed():
    e = _ffi.Error()
    e.kind = 2
    e.message = b"guise: closed"
    return e


def request(method, url, **kw):
    """An isolated visit: a connection of its own, no cookies kept."""
    return send(0, method.upper(), url, **kw)


def get(url, **kw):
    return request("GET", url, **kw)


def post(url, data=None, json=None, **kw):
    return request("POST", url, data=data, json=json, **kw)


def stats():
    """Counts for leak tests: handles, calls, goroutines, heap_bytes, heap_sys."""
    s = _ffi.Stats()
    _ffi.lib().guise_stats_read(ctypes.byref(s))
    return {k: getattr(s, k) for k, _ in _ffi.Stats._fields_}


def collect():
    """Runs Go's collector (for leak tests)."""
    _ffi.lib().guise_collect()
