"""guise for asyncio: the same calls as the synchronous API, awaited.

    async with guise.aio.Session(browser="chrome") as s:
        r = await s.get("https://example.com/")
        print(r.status_code, await r.text())

Requests and body reads run on guise's threads and complete on the event
loop (loop.call_soon_threadsafe), so the loop never blocks. Cancelling the
task cancels the Go request.
"""

import asyncio
import ctypes
import itertools
import json as _json
import threading
import weakref

from . import _ffi
from ._core import Head, Prepared, call_error, encoding_of, new_handle, session_options
from ._errors import GuiseError
from ._sync import CHUNK, Transport, _close_handle

# Operations in flight: key -> (loop, future, buffers kept alive). The one
# C callback below finds them by key.
_pending = {}
_keys = itertools.count(1)
_plock = threading.Lock()


def _resolve(fut, value):
    if not fut.done():
        fut.set_result(value)


@_ffi.done_fn
def _on_done(user, h, result):
    with _plock:
        op = _pending.pop(user, None)
    if op is None:
        return
    loop, fut, _keep = op
    try:
        loop.call_soon_threadsafe(_resolve, fut, result)
    except RuntimeError:  # the loop is closed
        pass


def _register(keep):
    loop = asyncio.get_running_loop()
    fut = loop.create_future()
    key = next(_keys)
    with _plock:
        _pending[key] = (loop, fut, keep)
    return key, fut


def _unregister(key):
    with _plock:
        _pending.pop(key, None)


class Response:
    """An asyncio response: status_code, reason, headers, url, http_version,
    and the body through await read()/text()/json() or async for over
    aiter_content(). close() releases it."""

    def __init__(self, lib, h, head):
        self._lib, self._h = lib, h
        self.status_code = head.status_code
        self.reason = head.reason
        self.headers = head.headers
        self.url = head.url
        self.http_version = head.http_version
        self._head = head
        self._content = None
        self.encoding = encoding_of(head.headers)
        self._fin = weakref.finalize(self, _close_handle, h)

    async def _read(self, buf, size):
        if not self._fin.alive:
            raise GuiseError(3, "guise: response closed")
        key, fut = _register(buf)
        rc = self._lib.guise_body_read(self._h, buf, size, _on_done, key)
        if rc < 0:
            _unregister(key)
            n = rc
        else:
            try:
                n = await fut
            except asyncio.CancelledError:
                self.close()  # cancels the read; its done still runs
                raise
        if n < 0:
            e = call_error(self._lib, self._h)
            self.close()
            raise e or GuiseError(-n, "guise: body read failed")
        return n

    async def aiter_content(self, chunk_size=CHUNK):
        if self._content is not None:
            for i in range(0, len(self._content), chunk_size):
                yield self._content[i:i + chunk_size]
            return
        buf = ctypes.create_string_buffer(chunk_size)
        try:
            while True:
                n = await self._read(buf, chunk_size)
                if n == 0:
                    break
                yield ctypes.string_at(buf, n)
        finally:
            self.close()

    async def read(self):
        if self._content is None:
            if self._head.complete:
                n = self._head.prefetched
                buf = ctypes.create_string_buffer(n)
                got = self._lib.guise_body_read(self._h, buf, n, _ffi.NO_DONE, None) if n else 0
                self._content = buf.raw[:max(got, 0)]
                self.close()
            else:
                self._content = b"".join([c async for c in self.aiter_content()])
        return self._content

    async def text(self):
        return (await self.read()).decode(self.encoding or "utf-8", "replace")

    async def json(self, **kw):
        return _json.loads(await self.read(), **kw)

    def close(self):
        self._fin()


async def _send(client, method, url, stream=False, **kw):
    lib = _ffi.lib()
    p = Prepared(method, url, **kw)
    sh = 0
    writer = None
    if p.chunks is not None:
        sh = lib.guise_stream_new()
        p.req.body_stream = sh
    key, fut = _register(p)
    h = lib.guise_start(client, ctypes.byref(p.req), _on_done, key)
    if sh:
        writer = asyncio.ensure_future(_write_all(lib, sh, p.chunks))
    try:
        result = await fut
    except asyncio.CancelledError:
        lib.guise_cancel(h)
        lib.guise_close(h)
        if sh:
            lib.guise_close(sh)
        raise
    if sh:
        if result < 0:
            lib.guise_close(sh)
        await asyncio.gather(writer, return_exceptions=True)
        lib.guise_close(sh)
    if result < 0:
        e = call_error(lib, h)
        lib.guise_close(h)
        raise e or GuiseError(-result, "guise: request failed")
    r = Response(lib, h, Head(lib, h))
    if not stream:
        await r.read()
    return r


async def _write_all(lib, sh, chunks):
    for c in chunks:
        if isinstance(c, str):
            c = c.encode()
        if not c:
            continue
        c = bytes(c)
        key, fut = _register(c)
        rc = lib.guise_stream_write(sh, c, len(c), _on_done, key)
        if rc < 0:
            _unregister(key)
            return
        if await fut < 0:
            return
    lib.guise_stream_end(sh)


class Session:
    """An asyncio Session: the keyword arguments of guise.Session."""

    def __init__(self, **kw):
        self._h = new_handle(_ffi.lib().guise_session_new, session_options(**kw))
        self._transport = kw.get("transport")
        self._fin = weakref.finalize(self, _close_handle, self._h)

    async def request(self, method, url, **kw):
        if not self._fin.alive:
            raise GuiseError(2, "guise: session closed")
        return await _send(self._h, method.upper(), url, **kw)

    async def get(self, url, **kw):
        return await self.request("GET", url, **kw)

    async def post(self, url, data=None, json=None, **kw):
        return await self.request("POST", url, data=data, json=json, **kw)

    def close(self):
        self._fin()

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        self.close()


async def request(method, url, **kw):
    """An isolated visit, awaited."""
    return await _send(0, method.upper(), url, **kw)


async def get(url, **kw):
    return await request("GET", url, **kw)


async def post(url, data=None, json=None, **kw):
    return await request("POST", url, data=data, json=json, **kw)


__all__ = ["Session", "Transport", "Response", "request", "get", "post"]
