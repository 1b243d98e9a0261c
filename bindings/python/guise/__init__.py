"""guise for Python: HTTP requests that look like a real browser's on the
wire (TLS ClientHello, HTTP/2 frames, header order), over guise's Go engine
through its C ABI (ctypes, no dependencies).

    import guise
    r = guise.get("https://example.com/", browser="firefox")
    print(r.status_code, r.text[:80])

Session keeps cookies and connections; Transport is a pool Sessions share;
guise.aio has the same API for asyncio.
"""

from ._errors import (BodyTruncated, Canceled, CertificateError, Closed, ConnectionRefused, DecodeError,
                      GuiseError, HTTP2Error, InvalidRequest, NetworkError, ProtocolError, ProxyError,
                      RedirectError, Timeout, TLSError)
from ._core import Headers
from ._sync import Response, Session, Transport, collect, get, post, request, stats
from . import aio
from ._version import __version__

__all__ = [
    "__version__", "Session", "Transport", "Response", "Headers", "request", "get", "post", "stats", "collect",
    "GuiseError", "InvalidRequest", "Closed", "Canceled", "Timeout", "ConnectionRefused", "NetworkError",
    "TLSError", "CertificateError", "ProxyError", "HTTP2Error", "ProtocolError", "RedirectError",
    "DecodeError", "BodyTruncated",
]
