"""What the sync and asyncio APIs share: options, requests, heads."""

import ctypes
import json as _json
import os
import urllib.parse

from . import _ffi
from ._errors import GuiseError, InvalidRequest, from_struct

KINDS = {None: 0, "navigate": 1, "fetch": 2, "subresource": 3, "image": 4}
PROTOCOLS = {None: 0, "any": 0, "http1": 1, "http2": 2, "http3": 3}
PROTOS = {1: "HTTP/1.0", 2: "HTTP/1.1", 3: "HTTP/2"}


def check(kind, err=None):
    if kind:
        if err is not None and err.kind:
            raise from_struct(err)
        raise GuiseError(kind, "guise: error kind %d" % kind)


def ms(seconds):
    if seconds is None:
        return 0
    return max(1, int(seconds * 1000))


def read_pem(verify):
    """The PEM of a verify= path, or None."""
    if isinstance(verify, str):
        with open(verify, "rb") as f:
            return f.read()
    return None


_TRANSPORT_KEYS = {
    "max_conns_per_host": "maxConnsPerHost",
    "max_idle_conns_per_host": "maxIdleConnsPerHost",
    "max_response_header_bytes": "maxResponseHeaderBytes",
    "drain_limit": "drainLimit",
}
_TRANSPORT_TIMEOUTS = {
    "idle_conn_timeout": "idleConnTimeoutMs",
    "dial_timeout": "dialTimeoutMs",
    "tls_handshake_timeout": "tlsHandshakeTimeoutMs",
    "response_header_timeout": "responseHeaderTimeoutMs",
    "body_idle_timeout": "bodyIdleTimeoutMs",
}


def profile_option(browser):
    """The profile option of browser: a name ("chrome"), a profile file's
    path (str or os.PathLike), its JSON (str, or the decoded dict), or a
    weighted set ("chrome:3,firefox:1,mine.json:2")."""
    if isinstance(browser, dict):
        return _json.dumps(browser)
    if isinstance(browser, os.PathLike):
        return os.fspath(browser)
    return browser


def transport_options(kw, out):
    """Moves a Transport's keyword arguments from kw into the JSON dict out."""
    if "browser" in kw and kw["browser"] is not None:
        out["profile"] = profile_option(kw.pop("browser"))
    if kw.get("seed") is not None:
        out["seed"] = kw.pop("seed")
    for k, j in _TRANSPORT_KEYS.items():
        v = kw.pop(k, None)
        if v is not None:
            out[j] = v
    for k, j in _TRANSPORT_TIMEOUTS.items():
        v = kw.pop(k, None)
        if v is not None:
            out[j] = ms(v)
    return out


def session_options(browser=None, proxy=None, timeout=None, verify=True, trust_store=None,
                    allow_redirects=True, max_redirects=None, raw_body=False, max_body_size=None,
                    protocol=None, http1_only=False, transport=None, cookies=None,
                    proxy_from_environment=False, seed=None, **kw):
    o = {}
    if browser:
        o["profile"] = profile_option(browser)
    if seed is not None:
        o["seed"] = seed
    if proxy:
        o["proxy"] = proxy
    if proxy_from_environment:
        o["proxyFromEnvironment"] = True
    if timeout is not None:
        o["timeoutMs"] = ms(timeout)
    if verify is False:
        o["insecure"] = True
    pem = read_pem(verify)
    if pem:
        o["caPem"] = pem.decode()
    if trust_store:
        o["trustStore"] = trust_store
    if not allow_redirects:
        o["redirect"] = "manual"
    if max_redirects:
        o["maxRedirects"] = max_redirects
    if raw_body:
        o["rawBody"] = True
    if max_body_size:
        o["maxBodySize"] = max_body_size
    if protocol:
        o["protocol"] = protocol
    if http1_only:
        o["http1Only"] = True
    if transport is not None:
        o["transport"] = transport._h
    if cookies is not None:
        o["cookies"] = cookies if isinstance(cookies, str) else _json.dumps(cookies)
    transport_options(kw, o)
    if kw:
        raise TypeError("unexpected keyword arguments: %s" % ", ".join(sorted(kw)))
    return _json.dumps(o).encode()


def new_handle(fn, opts):
    err = _ffi.Error()
    h = fn(opts, len(opts), ctypes.byref(err))
    if not h:
        raise from_struct(err)
    return h


def header_block(headers):
    if not headers:
        return b""
    items = headers.items() if hasattr(headers, "items") else headers
    parts = []
    for k, v in items:
        k, v = str(k), str(v)
        if "\0" in k or "\0" in v:
            raise InvalidRequest(1, "guise: NUL in a header field")
        parts.append(k)
        parts.append(v)
    parts.append("")
    return "\0".join(parts).encode("utf-8")


def _has(headers, name):
    if not headers:
        return False
    items = headers.items() if hasattr(headers, "items") else headers
    return any(str(k).lower() == name for k, _ in items)


def _set(r, keep, field, value):
    """Points r's string field at value (str or bytes), kept alive by keep."""
    if value:
        b = value.encode() if isinstance(value, str) else value
        keep.append(b)
        setattr(r, field, b)
        setattr(r, field + "_len", len(b))


class Prepared:
    """A guise_request and the Python objects its pointers point into."""

    __slots__ = ("req", "keep", "chunks")

    def __init__(self, method, url, headers=None, data=None, json=None, timeout=None,
                 allow_redirects=None, browser=None, proxy=None, referrer=None, kind=None,
                 verify=None, protocol=None, scripted=False, prefetch=0):
        r = _ffi.Request()
        keep = []
        self.chunks = None
        s = _set

        if method != "GET":
            s(r, keep, "method", method)
        s(r, keep, "url", url)
        if json is not None:
            data = _json.dumps(json).encode()
            if not _has(headers, "content-type"):
                headers = list(headers.items() if hasattr(headers, "items") else headers or [])
                headers.append(("Content-Type", "application/json"))
        elif isinstance(data, dict):
            data = urllib.parse.urlencode(data).encode()
        if isinstance(data, str):
            data = data.encode()
        if isinstance(data, (bytes, bytearray, memoryview)):
            s(r, keep, "body", bytes(data))
        elif data is not None:
            self.chunks = iter(data.read, b"") if hasattr(data, "read") else iter(data)
        if headers:
            s(r, keep, "header", header_block(headers))
        if timeout is not None:
            r.timeout_ms = ms(timeout)
        if browser:
            s(r, keep, "profile", profile_option(browser))
        if proxy:
            s(r, keep, "proxy", proxy)
        if referrer:
            s(r, keep, "referrer", referrer)
        if isinstance(verify, str):
            s(r, keep, "ca_pem", read_pem(verify))
        if verify is False:
            r.flags |= _ffi.REQ_INSECURE
        if scripted:
            r.flags |= _ffi.REQ_SCRIPTED
        if kind is not None or protocol is not None:
            try:
                r.kind = KINDS[kind]
                r.protocol = PROTOCOLS[protocol]
            except KeyError as e:
                raise InvalidRequest(1, "guise: unknown kind or protocol %s" % e) from None
        if allow_redirects is not None:
            r.redirect = 1 if allow_redirects else 2
        if prefetch:
            r.prefetch = prefetch
        self.req, self.keep = r, keep


class Headers:
    """Response header fields in the order and case received; lookups
    ignore case. Iterating gives the names; items() the (name, value) pairs."""

    __slots__ = ("_pairs",)

    def __init__(self, pairs):
        self._pairs = pairs

    def get(self, name, default=None):
        n = name.lower()
        vals = [v for k, v in self._pairs if k.lower() == n]
        return ", ".join(vals) if vals else default

    def get_list(self, name):
        n = name.lower()
        return [v for k, v in self._pairs if k.lower() == n]

    def __getitem__(self, name):
        v = self.get(name)
        if v is None:
            raise KeyError(name)
        return v

    def __contains__(self, name):
        return self.get(name) is not None

    def items(self):
        return list(self._pairs)

    def keys(self):
        return [k for k, _ in self._pairs]

    def __iter__(self):
        return iter(self.keys())

    def __len__(self):
        return len(self._pairs)

    def __repr__(self):
        return "Headers(%r)" % (self._pairs,)


def parse_fields(fields):
    """Headers from the meta's fields: name NUL value NUL ..."""
    parts = fields.split(b"\0")
    it = iter(parts[:-1])
    return Headers([(k.decode("latin-1"), v.decode("latin-1")) for k, v in zip(it, it)])


class Head:
    """A response head read from a call handle."""

    __slots__ = ("status_code", "http_version", "content_length", "prefetched", "complete",
                 "decoded", "url", "reason", "headers")

    def __init__(self, lib, h):
        hd = _ffi.Head()
        check(lib.guise_response_head(h, ctypes.byref(hd)))
        buf = ctypes.create_string_buffer(hd.meta_len)
        check(lib.guise_response_meta(h, buf, hd.meta_len))
        parts = buf.raw.split(b"\0")
        self.url = parts[0].decode("utf-8", "replace")
        self.reason = parts[1].decode("latin-1")
        it = iter(parts[2:-1])
        self.headers = Headers([(k.decode("latin-1"), v.decode("latin-1")) for k, v in zip(it, it)])
        self.status_code = hd.status
        self.http_version = PROTOS.get(hd.proto, "")
        self.content_length = hd.content_length
        self.prefetched = hd.prefetched
        self.complete = bool(hd.flags & _ffi.HEAD_COMPLETE)
        self.decoded = bool(hd.flags & _ffi.HEAD_DECODED)


def call_error(lib, h):
    err = _ffi.Error()
    kind = lib.guise_call_error(h, ctypes.byref(err))
    if kind:
        return from_struct(err)
    return None


def encoding_of(headers):
    ct = headers.get("content-type") or ""
    for part in ct.split(";")[1:]:
        k, _, v = part.strip().partition("=")
        if k.lower() == "charset" and v:
            return v.strip('"')
    return None
