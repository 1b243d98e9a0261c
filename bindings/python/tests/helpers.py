"""Loopback servers for the Python binding's tests."""

import http.server
import os
import select
import socket
import socketserver
import ssl
import subprocess
import tempfile
import threading

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))

_cert = None


def cert():
    """A self-signed certificate for 127.0.0.1 (paths of key and cert)."""
    global _cert
    if _cert is None:
        d = tempfile.mkdtemp(prefix="guise-py-")
        key, crt = os.path.join(d, "key.pem"), os.path.join(d, "cert.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                        "-nodes", "-keyout", key, "-out", crt, "-days", "2", "-subj", "/CN=localhost",
                        "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _cert = (key, crt)
    return _cert


class Server:
    """A threading HTTP/1.1 server (TLS unless plain) whose handler is
    handle(request_handler). accepted counts TCP connections; closed counts
    connections that ended."""

    def __init__(self, handle, tls=True):
        outer = self
        self.accepted = 0
        self.closed = 0

        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def setup(self):
                outer.accepted += 1
                # The head and body go out in two writes: without this,
                # Nagle and delayed ACKs hold each response 40 ms.
                self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                super().setup()

            def finish(self):
                try:
                    super().finish()
                finally:
                    outer.closed += 1

            def do_GET(self):
                handle(self)

            do_POST = do_PUT = do_HEAD = do_GET

        class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True

            def handle_error(self, request, client_address):
                pass  # clients that close early are part of the tests

        self.httpd = S(("127.0.0.1", 0), H)
        if tls:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(cert()[1], cert()[0])
            self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True)
        scheme = "https" if tls else "http"
        self.url = "%s://127.0.0.1:%d" % (scheme, self.httpd.server_address[1])
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def reply(h, body=b"", status=200, headers=()):
    if isinstance(body, str):
        body = body.encode()
    h.send_response(status)
    for k, v in headers:
        h.send_header(k, v)
    h.send_header("Content-Length", str(len(body)))
    h.end_headers()
    h.wfile.write(body)


def read_body(h):
    if h.headers.get("Transfer-Encoding", "").lower() == "chunked":
        out = b""
        while True:
            line = h.rfile.readline()
            n = int(line.strip().split(b";")[0], 16)
            if n == 0:
                h.rfile.readline()
                return out
            out += h.rfile.read(n)
            h.rfile.readline()
    n = int(h.headers.get("Content-Length") or 0)
    return h.rfile.read(n)


class ConnectProxy:
    """An HTTP CONNECT proxy that counts its tunnels."""

    def __init__(self):
        self.tunnels = 0
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.url = "http://127.0.0.1:%d" % self.sock.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._tunnel, args=(c,), daemon=True).start()

    def _tunnel(self, c):
        head = b""
        while b"\r\n\r\n" not in head:
            b = c.recv(4096)
            if not b:
                return c.close()
            head += b
        target = head.split(b" ")[1].decode()
        host, port = target.rsplit(":", 1)
        self.tunnels += 1
        up = socket.create_connection((host, int(port)))
        c.sendall(b"HTTP/1.1 200 Connection Established\r\n\r\n")
        socks = [c, up]
        try:
            while True:
                r, _, _ = select.select(socks, [], [], 10)
                if not r:
                    break
                for s in r:
                    data = s.recv(65536)
                    if not data:
                        return
                    (up if s is c else c).sendall(data)
        finally:
            c.close()
            up.close()

    def close(self):
        self.sock.close()


def guise_cli():
    if os.environ.get("GUISE_CLI"):
        return os.environ["GUISE_CLI"]
    out = os.path.join(tempfile.mkdtemp(prefix="guise-cli-"), "guise")
    subprocess.run(["go", "build", "-o", out, "./cmd/guise"], cwd=ROOT, check=True)
    return out
