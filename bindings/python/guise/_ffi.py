"""ctypes declarations of guise's C ABI (ffi/guise.h), and the library."""

import ctypes
import os
import threading

from ._version import ABI_VERSION, __version__

handle = ctypes.c_uint64
done_fn = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_int64)

OK = 0
E_INVALID = 1
E_CLOSED = 2
E_CANCELED = 3
E_TIMEOUT = 4
E_SHORT_BUFFER = 17

HEAD_DECODED = 1
HEAD_COMPLETE = 2
HEAD_COPIED = 4

REQ_INSECURE = 1
REQ_SCRIPTED = 2


class Error(ctypes.Structure):
    _fields_ = [
        ("kind", ctypes.c_int32),
        ("phase", ctypes.c_int32),
        ("status", ctypes.c_int32),
        ("code", ctypes.c_int32),
        ("message", ctypes.c_char * 1024),
    ]


class Request(ctypes.Structure):
    _fields_ = [
        ("method", ctypes.c_char_p), ("method_len", ctypes.c_size_t),
        ("url", ctypes.c_char_p), ("url_len", ctypes.c_size_t),
        ("header", ctypes.c_char_p), ("header_len", ctypes.c_size_t),
        ("body", ctypes.c_char_p), ("body_len", ctypes.c_size_t),
        ("body_stream", handle),
        ("content_length", ctypes.c_int64),
        ("timeout_ms", ctypes.c_int64),
        ("profile", ctypes.c_char_p), ("profile_len", ctypes.c_size_t),
        ("proxy", ctypes.c_char_p), ("proxy_len", ctypes.c_size_t),
        ("referrer", ctypes.c_char_p), ("referrer_len", ctypes.c_size_t),
        ("ca_pem", ctypes.c_char_p), ("ca_pem_len", ctypes.c_size_t),
        ("kind", ctypes.c_int32),
        ("redirect", ctypes.c_int32),
        ("protocol", ctypes.c_int32),
        ("flags", ctypes.c_uint32),
        ("prefetch", ctypes.c_int64),
    ]


class Head(ctypes.Structure):
    _fields_ = [
        ("status", ctypes.c_int32),
        ("proto", ctypes.c_int32),
        ("content_length", ctypes.c_int64),
        ("prefetched", ctypes.c_int64),
        ("flags", ctypes.c_uint32),
        ("meta_len", ctypes.c_uint32),
    ]


class Stats(ctypes.Structure):
    _fields_ = [
        ("handles", ctypes.c_int64),
        ("calls", ctypes.c_int64),
        ("sessions", ctypes.c_int64),
        ("goroutines", ctypes.c_int64),
        ("heap_bytes", ctypes.c_int64),
        ("heap_sys", ctypes.c_int64),
    ]


def _path():
    env = os.environ.get("GUISE_LIB")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    for p in (os.path.join(here, "libguise.so"),
              os.path.join(here, "..", "..", "lib", "libguise.so")):
        if os.path.exists(p):
            return p
    raise OSError("guise: libguise.so not found; build it with bindings/build.sh or set GUISE_LIB")


_lib = None
_lock = threading.Lock()


def _check_abi(l, path):
    """Refuses a library that does not speak this package's C ABI."""
    try:
        f = l.guise_abi_version
    except AttributeError:
        raise OSError(f"guise: {path} has no guise_abi_version: it is older than this package "
                      f"(guise {__version__}, C ABI {ABI_VERSION}); reinstall guise") from None
    f.restype, f.argtypes = ctypes.c_int32, []
    got = f()
    if got != ABI_VERSION:
        raise OSError(f"guise: {path} speaks C ABI {got}, this package (guise {__version__}) "
                      f"was written for {ABI_VERSION}; reinstall guise")


def lib():
    """The loaded library, with its functions' signatures declared."""
    global _lib
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is not None:
            return _lib
        path = _path()
        l = ctypes.CDLL(path)
        _check_abi(l, path)
        P = ctypes.POINTER
        sig = {
            "guise_transport_new": (handle, [ctypes.c_char_p, ctypes.c_size_t, P(Error)]),
            "guise_session_new": (handle, [ctypes.c_char_p, ctypes.c_size_t, P(Error)]),
            "guise_close": (ctypes.c_int32, [handle]),
            "guise_send": (handle, [handle, P(Request)]),
            "guise_start": (handle, [handle, P(Request), done_fn, ctypes.c_void_p]),
            "guise_fetch": (handle, [handle, P(Request), P(Head), ctypes.c_void_p, ctypes.c_size_t, P(Error)]),
            "guise_call_error": (ctypes.c_int32, [handle, P(Error)]),
            "guise_response_head": (ctypes.c_int32, [handle, P(Head)]),
            "guise_response_meta": (ctypes.c_int32, [handle, ctypes.c_void_p, ctypes.c_size_t]),
            "guise_body_read": (ctypes.c_int64, [handle, ctypes.c_void_p, ctypes.c_size_t, done_fn, ctypes.c_void_p]),
            "guise_cancel": (ctypes.c_int32, [handle]),
            "guise_stream_new": (handle, []),
            "guise_stream_write": (ctypes.c_int64, [handle, ctypes.c_void_p, ctypes.c_size_t, done_fn, ctypes.c_void_p]),
            "guise_stream_end": (ctypes.c_int32, [handle]),
            "guise_cookies_export": (ctypes.c_int32, [handle, ctypes.c_void_p, ctypes.c_size_t, P(ctypes.c_size_t)]),
            "guise_cookies_import": (ctypes.c_int32, [handle, ctypes.c_char_p, ctypes.c_size_t, P(Error)]),
            "guise_stats_read": (None, [P(Stats)]),
            "guise_collect": (None, []),
            "guise_version": (ctypes.c_int64, [ctypes.c_void_p, ctypes.c_size_t]),
        }
        for name, (res, args) in sig.items():
            f = getattr(l, name)
            f.restype, f.argtypes = res, args
        _lib = l
        return l


NO_DONE = done_fn()  # a NULL callback: the blocking form
