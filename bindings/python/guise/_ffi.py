"""ctypes declarations of guise's C ABI (ffi/guise.h), and the library."""

import ctypes
import os
import platform
import struct
import sys
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


# LIBNAME is libguise's file name on this platform. A wheel carries it in
# the package, next to this module.
if sys.platform == "win32":
    LIBNAME = "guise.dll"
elif sys.platform == "darwin":
    LIBNAME = "libguise.dylib"
else:
    LIBNAME = "libguise.so"


def _path():
    """The library to load: $GUISE_LIB, else the one installed in this
    package, else bindings/lib's when this package is a checkout's
    (bindings/build.sh puts it there)."""
    env = os.environ.get("GUISE_LIB")
    if env:
        if not os.path.isfile(env):
            raise OSError(f"guise: GUISE_LIB is {env!r}, which is not a file; unset it to use the library "
                          f"installed with guise, or point it at a {LIBNAME} built by bindings/build.sh")
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    p = os.path.join(here, LIBNAME)
    if os.path.isfile(p):
        return p
    root = os.path.join(here, "..", "..", "..")
    p = os.path.join(root, "bindings", "lib", LIBNAME)
    if os.path.isfile(os.path.join(root, "ffi", "guise.h")) and os.path.isfile(p):
        return os.path.normpath(p)
    raise OSError(f"guise: {LIBNAME} is not in {here}, so this installation of guise {__version__} has no "
                  f"library for {running()}: install the wheel built for it, or the source distribution "
                  f"with Go and a C compiler on PATH (in a checkout: bindings/build.sh, or set GUISE_LIB)")


def running():
    """The OS and machine this Python runs on, as "linux x86_64"."""
    if sys.platform == "win32":
        system = "windows"
    elif sys.platform == "darwin":
        system = "macos"
    else:
        system = sys.platform.rstrip("0123456789")
    machine = _machines.get(platform.machine().lower(), platform.machine().lower())
    if struct.calcsize("P") == 4 and machine in ("x86_64", "aarch64"):
        machine = {"x86_64": "i386", "aarch64": "arm"}[machine]  # a 32-bit Python on a 64-bit OS
    return f"{system} {machine}"


_machines = {"amd64": "x86_64", "x64": "x86_64", "arm64": "aarch64", "i686": "i386", "x86": "i386"}
_elf_machines = {3: "i386", 40: "arm", 62: "x86_64", 183: "aarch64", 243: "riscv64"}
_pe_machines = {0x14C: "i386", 0x8664: "x86_64", 0xAA64: "aarch64"}
_macho_machines = {0x01000007: "x86_64", 0x0100000C: "aarch64"}


def built_for(path):
    """The OS and machine the library at path was built for, as running()
    names them, from its ELF, PE or Mach-O header; None if the file is none
    of those or too short to say."""
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return None
    if head[:4] == b"\x7fELF" and len(head) >= 20:
        order = "<" if head[5] == 1 else ">"
        m = struct.unpack_from(order + "H", head, 18)[0]
        return "linux " + _elf_machines.get(m, f"machine {m}")
    if head[:2] == b"MZ" and len(head) >= 64:
        at = struct.unpack_from("<I", head, 0x3C)[0]
        if head[at:at + 4] == b"PE\0\0" and len(head) >= at + 6:
            m = struct.unpack_from("<H", head, at + 4)[0]
            return "windows " + _pe_machines.get(m, f"machine {m:#x}")
    if head[:4] in (b"\xcf\xfa\xed\xfe", b"\xce\xfa\xed\xfe") and len(head) >= 8:
        m = struct.unpack_from("<I", head, 4)[0]
        return "macos " + _macho_machines.get(m, f"machine {m:#x}")
    if head[:4] == b"\xca\xfe\xba\xbe":
        return "macos (universal)"
    return None


def _cut_short(path):
    """What is missing if path is an ELF file shorter than its headers say
    (a truncated copy, which dlopen may crash on rather than refuse), else
    None."""
    try:
        with open(path, "rb") as f:
            head = f.read(64)
            size = os.fstat(f.fileno()).st_size
            if head[:4] != b"\x7fELF" or len(head) < 52:
                return None
            order = "<" if head[5] == 1 else ">"
            if head[4] == 2 and len(head) == 64:
                phoff, shoff = struct.unpack_from(order + "QQ", head, 0x20)
                phsize, phnum, shsize, shnum = struct.unpack_from(order + "HHHH", head, 0x36)
                fmt, fields = order + "IIQQQQQQ", (2, 5)  # p_offset, p_filesz
            else:
                phoff, shoff = struct.unpack_from(order + "II", head, 0x1C)
                phsize, phnum, shsize, shnum = struct.unpack_from(order + "HHHH", head, 0x2A)
                fmt, fields = order + "IIIIIIII", (1, 4)
            end = max(shoff + shnum * shsize, phoff + phnum * phsize)
            if end <= size:
                f.seek(phoff)
                ph = f.read(phnum * phsize)
                for i in range(phnum):
                    h = struct.unpack_from(fmt, ph, i * phsize)
                    end = max(end, h[fields[0]] + h[fields[1]])
    except (OSError, struct.error):
        return None
    if end > size:
        return f"{size} bytes, where its headers describe {end}"
    return None


def _open(path):
    """ctypes.CDLL(path), with an error that says what is wrong and what to
    do when the library cannot be loaded."""
    short = _cut_short(path)
    if short:
        raise OSError(f"guise: cannot load {path} ({short}): it is damaged; reinstall guise "
                      f"(pip install --force-reinstall), or rebuild it with bindings/build.sh if it is a "
                      f"checkout's")
    try:
        return ctypes.CDLL(path)
    except OSError as e:
        want, got = running(), built_for(path)
        if got is not None and got != want and not (got == "macos (universal)" and want.startswith("macos")):
            raise OSError(f"guise: {path} is a library for {got}, but this Python runs on {want}: install "
                          f"the guise wheel built for {want}, or unset GUISE_LIB if it points there") from None
        raise OSError(f"guise: cannot load {path} ({e}): it is damaged, or it is not a libguise this "
                      f"{want} can load; reinstall guise (pip install --force-reinstall), or rebuild it "
                      f"with bindings/build.sh if it is a checkout's") from None


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
        l = _open(path)
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
