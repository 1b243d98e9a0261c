"""guise's error kinds as exception classes."""

KIND_NAMES = {
    1: "invalid", 2: "closed", 3: "canceled", 4: "timeout", 5: "refused", 6: "dns",
    7: "network", 8: "tls", 9: "certificate", 10: "proxy", 11: "http2", 12: "protocol",
    13: "redirect", 14: "decode", 15: "truncated", 16: "bad_handle", 17: "short_buffer",
    18: "busy", 19: "not_ready", 20: "other",
}
PHASE_NAMES = {1: "dial", 2: "proxy", 3: "tls", 4: "head", 5: "body_idle", 6: "total"}


class GuiseError(Exception):
    """A failed request. kind names guise's error kind ("timeout", "refused",
    "tls", ...); phase the timeout's phase ("dial", "tls", "head", "body_idle",
    "total") or None; status a proxy's HTTP status, code the TLS alert, HTTP/2
    error code or SOCKS reply, when there is one."""

    def __init__(self, kind, message, phase=0, status=0, code=0):
        super().__init__(message)
        self.kind = KIND_NAMES.get(kind, "other")
        self.phase = PHASE_NAMES.get(phase)
        self.status = status or None
        self.code = code or None


class InvalidRequest(GuiseError, ValueError):
    """Bad arguments or options; nothing was sent."""


class Closed(GuiseError):
    """The Session or Transport was closed."""


class Canceled(GuiseError):
    """The request was cancelled."""


class Timeout(GuiseError, TimeoutError):
    """A timeout; phase says which."""


class ConnectionRefused(GuiseError, ConnectionRefusedError):
    """The server refused the connection."""


class NetworkError(GuiseError, ConnectionError):
    """Name resolution, a reset, or another network failure."""


class TLSError(GuiseError):
    """The TLS handshake failed, or the server sent an alert."""


class CertificateError(TLSError):
    """The server's certificate failed verification."""


class ProxyError(GuiseError):
    """The proxy failed or refused."""


class HTTP2Error(GuiseError):
    """An HTTP/2 stream reset, GOAWAY or protocol error."""


class ProtocolError(GuiseError):
    """A malformed or oversized response."""


class RedirectError(GuiseError):
    """Too many redirects, a redirect refused by policy, or a bad Location."""


class DecodeError(GuiseError):
    """A corrupt encoded body, or one over max_body_size."""


class BodyTruncated(GuiseError):
    """The connection ended before the body did."""


_CLASSES = {
    1: InvalidRequest, 2: Closed, 3: Canceled, 4: Timeout, 5: ConnectionRefused, 6: NetworkError,
    7: NetworkError, 8: TLSError, 9: CertificateError, 10: ProxyError, 11: HTTP2Error,
    12: ProtocolError, 13: RedirectError, 14: DecodeError, 15: BodyTruncated,
}


def from_struct(e):
    cls = _CLASSES.get(e.kind, GuiseError)
    return cls(e.kind, e.message.decode("utf-8", "replace"), e.phase, e.status, e.code)
