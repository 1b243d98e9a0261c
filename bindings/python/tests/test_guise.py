"""Tests of the Python binding against loopback servers (http.server with
ssl) and guise's echo server. Run from the repository root:

    PYTHONPATH=bindings/python /usr/bin/python3 -m unittest discover -s bindings/python/tests -v

GUISE_FULL=1 runs the leak test at 100,000 requests instead of 5,000.
bindings/python/test-installed.sh DIST runs the same tests against the installed
wheel, outside the checkout, with GUISE_CLI set to DIST/cli's guise (no Go).
"""

import asyncio
import gc
import json
import os
import subprocess
import sys
import threading
import time
import unittest

import guise

from helpers import ConnectProxy, Server, cert, guise_cli, read_body, reply

CA = cert()[1]
HERE = os.path.dirname(os.path.abspath(__file__))


def hello(h):
    reply(h, "hello %s %s" % (h.command, h.path), headers=[("Content-Type", "text/plain; charset=utf-8")])


class SyncTest(unittest.TestCase):
    def setUp(self):
        self.servers = []

    def tearDown(self):
        for s in self.servers:
            s.close()

    def serve(self, handle, tls=True):
        s = Server(handle, tls)
        self.servers.append(s)
        return s

    def test_get_text_json_content_headers(self):
        def handle(h):
            if h.path == "/json":
                return reply(h, json.dumps({"ok": True}), headers=[("Content-Type", "application/json")])
            hello(h)
        srv = self.serve(handle)
        r = guise.get(srv.url + "/a?b=1", verify=CA)
        self.assertEqual(r.status_code, 200)
        self.assertEqual(r.http_version, "HTTP/1.1")
        self.assertEqual(r.reason, "OK")
        self.assertEqual(r.headers["content-type"], "text/plain; charset=utf-8")
        self.assertEqual(r.text, "hello GET /a?b=1")
        self.assertEqual(r.content, b"hello GET /a?b=1")
        self.assertEqual(guise.get(srv.url + "/json", verify=CA).json(), {"ok": True})

    def test_whole_responses_in_one_call(self):
        # A response whose head and body fit the thread's buffer comes back
        # from one guise_fetch with no call handle left; one that does not
        # (a 64 KiB body under 32 KiB of fields) goes through a call handle;
        # both give the same fields and body, and neither leaves a call.
        big_fields = [("X-Pad-%02d" % i, "p" * 1700) for i in range(20)]

        def handle(h):
            n = int(h.path.split("/")[2])
            fields = [("Content-Type", "text/plain; charset=latin-1"), ("Set-Cookie", "a=1"), ("Set-Cookie", "b=2")]
            if h.path.startswith("/pad/"):
                fields += big_fields
            reply(h, b"\xe9" * n, status=201, headers=fields)
        srv = self.serve(handle)
        with guise.Session(verify=CA) as s:
            s.get(srv.url + "/small/1")
            base = guise.stats()
            for path, n in (("/small/0", 0), ("/small/13", 13), ("/small/65536", 65536),
                            ("/small/65537", 65537), ("/pad/65536", 65536)):
                r = s.get(srv.url + path)
                self.assertEqual((r.status_code, r.reason, r.url), (201, "Created", srv.url + path))
                self.assertEqual(r.content, b"\xe9" * n, path)
                self.assertEqual(r.encoding, "latin-1")
                self.assertEqual(r.text, "\xe9" * n)
                self.assertEqual(r.headers.get_list("set-cookie"), ["a=1", "b=2"])
                self.assertEqual(r.headers["Content-Length"], str(n))
                if path.startswith("/pad/"):
                    self.assertEqual(r.headers["x-pad-19"], "p" * 1700)
                r.encoding = "utf-8"
                self.assertEqual(r.text, (b"\xe9" * n).decode("utf-8", "replace"))
                r.close()
                after = guise.stats()
                self.assertEqual((after["calls"], after["handles"]), (base["calls"], base["handles"]), path)

        # A body cut short while it is read into the buffer: the bytes read
        # so far are copied out of it, and the read fails with a typed error.
        def short(h):
            h.send_response(200)
            h.send_header("Content-Length", "100")
            h.end_headers()
            h.wfile.write(b"0123456789")
            h.wfile.flush()
            h.close_connection = True
        srv = self.serve(short)
        with guise.Session(verify=CA) as s:
            with self.assertRaises(guise.GuiseError):
                s.get(srv.url + "/short")
            self.assertEqual(guise.stats()["calls"], 0)

    def test_iter_content_streams(self):
        total = 4 << 20

        def handle(h):
            h.send_response(200)
            h.send_header("Content-Length", str(total))
            h.end_headers()
            chunk = b"z" * (64 << 10)
            for _ in range(total // len(chunk)):
                h.wfile.write(chunk)
        srv = self.serve(handle)
        with guise.Session(verify=CA) as s:
            r = s.get(srv.url + "/big", stream=True)
            sizes = [len(c) for c in r.iter_content(16 << 10)]
            self.assertEqual(sum(sizes), total)
            self.assertTrue(max(sizes) <= 16 << 10)

    def test_post_bodies(self):
        def handle(h):
            body = read_body(h)
            reply(h, json.dumps({"len": len(body), "ct": h.headers.get("Content-Type"), "head": body[:8].decode()}))
        srv = self.serve(handle)
        s = guise.Session(verify=CA)
        self.assertEqual(s.post(srv.url, data=b"abc", kind="fetch").json()["len"], 3)
        self.assertEqual(s.post(srv.url, data={"q": "x y"}).json(), {"len": 5, "ct": "application/x-www-form-urlencoded", "head": "q=x+y"})
        self.assertEqual(s.post(srv.url, json={"a": 1}).json()["ct"], "application/json")

        def gen():
            for i in range(32):
                yield bytes([65 + i % 26]) * (32 << 10)
        self.assertEqual(s.post(srv.url, data=gen(), kind="fetch").json()["len"], 32 << 15)
        s.close()

    def test_cookies_session_export_import_isolated(self):
        def handle(h):
            if h.path == "/set":
                return reply(h, "", headers=[("Set-Cookie", "sid=abc; Path=/; Secure")])
            reply(h, h.headers.get("Cookie") or "")
        srv = self.serve(handle)
        s = guise.Session(verify=CA)
        s.get(srv.url + "/set")
        self.assertEqual(s.get(srv.url + "/").text, "sid=abc")
        self.assertEqual([c["name"] for c in s.cookies], ["sid"])
        s2 = guise.Session(verify=CA, cookies=s.export_cookies())
        self.assertEqual(s2.get(srv.url + "/").text, "sid=abc")
        s3 = guise.Session(verify=CA)
        s3.import_cookies(s.export_cookies())
        self.assertEqual(s3.get(srv.url + "/").text, "sid=abc")
        guise.get(srv.url + "/set", verify=CA)
        self.assertEqual(guise.get(srv.url + "/", verify=CA).text, "")
        for x in (s, s2, s3):
            x.close()
        with self.assertRaises(guise.Closed):
            s.get(srv.url + "/")

    def test_transport_shares_connections_not_cookies(self):
        def handle(h):
            if h.path == "/set":
                return reply(h, "", headers=[("Set-Cookie", "a=1; Path=/")])
            reply(h, h.headers.get("Cookie") or "-")
        srv = self.serve(handle)
        t = guise.Transport(max_conns_per_host=1)
        a, b = guise.Session(verify=CA, transport=t), guise.Session(verify=CA, transport=t)
        a.get(srv.url + "/set")
        self.assertEqual(a.get(srv.url + "/").text, "a=1")
        self.assertEqual(b.get(srv.url + "/").text, "-")
        self.assertEqual(srv.accepted, 1)
        a.close(), b.close(), t.close()

    def test_redirects(self):
        def handle(h):
            if h.path == "/from":
                return reply(h, "", status=302, headers=[("Location", "/to")])
            reply(h, "at " + h.path)
        srv = self.serve(handle)
        r = guise.get(srv.url + "/from", verify=CA)
        self.assertEqual((r.text, r.url), ("at /to", srv.url + "/to"))
        r = guise.get(srv.url + "/from", verify=CA, allow_redirects=False)
        self.assertEqual((r.status_code, r.headers["location"]), (302, "/to"))

    def test_errors(self):
        dead = Server(hello, tls=False)
        url = dead.url
        dead.close()
        with self.assertRaises(guise.ConnectionRefused) as cm:
            guise.get(url)
        self.assertEqual(cm.exception.kind, "refused")
        self.assertIsInstance(cm.exception, ConnectionRefusedError)

        def handle(h):
            if h.path == "/hang":
                time.sleep(3)
            hello(h)
        srv = self.serve(handle)
        with self.assertRaises(guise.CertificateError):
            guise.get(srv.url + "/")
        self.assertEqual(guise.get(srv.url + "/", verify=False).status_code, 200)
        with self.assertRaises(guise.Timeout) as cm:
            guise.get(srv.url + "/hang", verify=CA, timeout=0.2)
        self.assertEqual(cm.exception.phase, "total")
        self.assertIsInstance(cm.exception, TimeoutError)
        with guise.Session(verify=CA, response_header_timeout=0.2) as s:
            with self.assertRaises(guise.Timeout) as cm:
                s.get(srv.url + "/hang")
            self.assertEqual(cm.exception.phase, "head")
        with self.assertRaises(guise.InvalidRequest):
            guise.get("ftp://127.0.0.1/")
        with self.assertRaises(guise.InvalidRequest):
            guise.Session(trust_store="nope")

    def test_proxy(self):
        srv = self.serve(hello)
        p = ConnectProxy()
        try:
            self.assertEqual(guise.get(srv.url + "/via", verify=CA, proxy=p.url).text, "hello GET /via")
            with guise.Session(verify=CA, proxy=p.url) as s:
                self.assertEqual(s.get(srv.url + "/s").text, "hello GET /s")
            self.assertEqual(p.tunnels, 2)
        finally:
            p.close()

    def test_protocol_option(self):
        srv = self.serve(hello)
        r = guise.get(srv.url + "/", verify=CA, protocol="http1")
        self.assertEqual((r.status_code, r.http_version), (200, "HTTP/1.1"))
        s = guise.Session(verify=CA, http1_only=True)
        self.assertEqual(s.get(srv.url + "/").http_version, "HTTP/1.1")
        s.close()
        # HTTP/3 goes to QUIC alone, never falling back: this server is on
        # TCP only, so its UDP port refuses the dial at once.
        with self.assertRaises(guise.ConnectionRefused):
            guise.get(srv.url + "/", verify=CA, protocol="http3")

    def test_dropped_session_is_closed(self):
        srv = self.serve(hello)
        base = guise.stats()["sessions"]
        s = guise.Session(verify=CA)
        s.get(srv.url + "/")
        self.assertEqual(guise.stats()["sessions"], base + 1)
        del s
        gc.collect()
        self.assertEqual(guise.stats()["sessions"], base)
        for _ in range(100):
            if srv.closed >= 1:
                break
            time.sleep(0.02)
        self.assertEqual(srv.closed, 1, "the session's connection was closed")

    def test_close_midstream_ends_the_request(self):
        def handle(h):
            h.send_response(200)
            h.send_header("Content-Length", str(1 << 30))
            h.end_headers()
            try:
                while True:
                    h.wfile.write(b"x" * 65536)
            except OSError:
                pass
        srv = self.serve(handle)
        r = guise.get(srv.url + "/", verify=CA, stream=True)
        next(r.iter_content(1024))
        r.close()
        for _ in range(100):
            if srv.closed >= 1:
                break
            time.sleep(0.02)
        self.assertEqual(srv.closed, 1)
        self.assertEqual(guise.stats()["calls"], 0)


class AsyncTest(unittest.TestCase):
    def test_async_get_gather_and_stream(self):
        def handle(h):
            if h.path.startswith("/big"):
                body = b"q" * (1 << 20)
                return reply(h, body)
            hello(h)
        srv = Server(handle)
        try:
            async def main():
                r = await guise.aio.get(srv.url + "/x", verify=CA)
                self.assertEqual((r.status_code, await r.text()), (200, "hello GET /x"))
                async with guise.aio.Session(verify=CA) as s:
                    rs = await asyncio.gather(*[s.get(srv.url + "/n%d" % i) for i in range(16)])
                    self.assertEqual([await x.text() for x in rs], ["hello GET /n%d" % i for i in range(16)])
                    r = await s.get(srv.url + "/big", stream=True)
                    n = 0
                    async for c in r.aiter_content(1 << 16):
                        n += len(c)
                    self.assertEqual(n, 1 << 20)

                    async def gen_body():
                        pass
                    r = await s.post(srv.url + "/p", data=[b"a" * 1000, b"b" * 1000], kind="fetch")
                    self.assertEqual(r.status_code, 200)
            asyncio.run(main())
        finally:
            srv.close()

    def test_cancel_ends_the_go_request(self):
        gone = threading.Event()

        def handle(h):
            # Never answers; watches for the client closing the connection.
            import select
            deadline = time.time() + 5
            while time.time() < deadline:
                r, _, _ = select.select([h.connection], [], [], 0.05)
                if r:
                    try:
                        if h.connection.recv(1) == b"":
                            gone.set()
                            return
                    except OSError:
                        gone.set()
                        return
        srv = Server(handle)
        try:
            async def main():
                t = asyncio.ensure_future(guise.aio.get(srv.url + "/hang", verify=CA))
                await asyncio.sleep(0.2)
                t.cancel()
                with self.assertRaises(asyncio.CancelledError):
                    await t
            asyncio.run(main())
            self.assertTrue(gone.wait(3), "the connection was closed before the server answered")
            self.assertEqual(guise.stats()["calls"], 0)
        finally:
            srv.close()


def child(*args):
    out = subprocess.run([sys.executable, os.path.join(HERE, "memory_child.py")] + list(args),
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


class MemoryTest(unittest.TestCase):
    def test_256mib_download_keeps_rss_under_64mib(self):
        total = 256 << 20

        def handle(h):
            h.send_response(200)
            h.send_header("Content-Length", str(total))
            h.end_headers()
            chunk = b"m" * (256 << 10)
            for _ in range(total // len(chunk)):
                h.wfile.write(chunk)
        srv = Server(handle)
        try:
            r = child("download", srv.url + "/big", CA)
            self.assertEqual(r["bytes"], total)
            self.assertLess(r["peak"], 64, r)
        finally:
            srv.close()

    def test_many_requests_no_growth(self):
        n = 100000 if os.environ.get("GUISE_FULL") else 5000
        srv = Server(lambda h: reply(h, "ok"))
        try:
            r = child("many", srv.url + "/", CA, str(n))
            self.assertLess(r["rss1"] - r["rss0"], 4, r)
            self.assertLess(r["heap1"] - r["heap0"], 256 << 10, r)
            self.assertEqual(r["calls"], 0)
            self.assertEqual(r["handles"], 1)
        finally:
            srv.close()


class FidelityTest(unittest.TestCase):
    def test_fingerprints_equal_the_go_api(self):
        cli = guise_cli()
        import socket
        import tempfile
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        ca = os.path.join(tempfile.mkdtemp(prefix="guise-echo-"), "ca.pem")
        p = subprocess.Popen([cli, "serve", "--addr", "127.0.0.1:%d" % port, "--ca-out", ca],
                             stdout=subprocess.PIPE, text=True)
        try:
            # The banner comes before the CA file is written: wait for the
            # line that says it was (EOF means serve failed).
            while True:
                line = p.stdout.readline()
                if not line:
                    self.fail("guise serve ended before writing its CA")
                if "CA certificate written" in line:
                    break
            threading.Thread(target=p.stdout.read, daemon=True).start()
            url = "https://127.0.0.1:%d/api/all" % port
            for browser in ("chrome", "firefox"):
                go = json.loads(subprocess.run([cli, "get", "--profile", browser, "--cacert", ca, url],
                                               check=True, capture_output=True).stdout)
                py = guise.get(url, verify=ca, browser=browser).json()
                self.assertEqual(py["tls"]["ja4"], go["tls"]["ja4"], browser)
                self.assertEqual(py["http2"]["akamai"], go["http2"]["akamai"], browser)
                self.assertEqual(py["header_order"], go["header_order"], browser)
                self.assertEqual(py["pseudo_header_order"], go["pseudo_header_order"], browser)
                self.assertEqual(py["headers"], go["headers"], browser)
        finally:
            p.terminate()
            p.wait()


if __name__ == "__main__":
    unittest.main()
