"""Profiles from files and weighted sets through the Python binding; with
chromium installed, a profile captured from it by guise capture and used
at once, compared on the wire with what the browser sent. Run as
test_guise.py says."""

import json
import os
import pathlib
import shutil
import socket
import subprocess
import tempfile
import threading
import unittest

import guise

from helpers import ROOT, guise_cli

REQUIRE_PEERS = os.environ.get("GUISE_REQUIRE_PEERS") == "1"


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_for(p, text):
    while True:
        line = p.stdout.readline()
        if not line:
            raise AssertionError("guise ended before printing %r" % text)
        if text in line:
            return line


class Echo:
    """guise serve on loopback; url is its /api/all."""

    def __init__(self, cli):
        port = free_port()
        self.ca = os.path.join(tempfile.mkdtemp(prefix="guise-echo-"), "ca.pem")
        self.p = subprocess.Popen([cli, "serve", "--addr", "127.0.0.1:%d" % port, "--ca-out", self.ca],
                                  stdout=subprocess.PIPE, text=True)
        wait_for(self.p, "CA certificate written")
        threading.Thread(target=self.p.stdout.read, daemon=True).start()
        self.url = "https://127.0.0.1:%d/api/all" % port

    def close(self):
        self.p.terminate()
        self.p.wait()


def hashes(ja4):
    """JA4 without its first part: a visit to an IP address has no SNI."""
    return ja4.split("_", 1)[1]


class ProfileFileTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.cli = guise_cli()
        cls.echo = Echo(cls.cli)
        # An embedded profile's file; test-installed.sh, which runs a copy of
        # the tests outside the checkout, copies it out and names its folder.
        data = os.environ.get("GUISE_PROFILE_DATA") or os.path.join(ROOT, "profile", "data")
        cls.file = os.path.join(data, "firefox153-linux.json")

    @classmethod
    def tearDownClass(cls):
        cls.echo.close()

    def test_file_path_json_and_dict(self):
        with open(self.file) as f:
            text = f.read()
        want = guise.get(self.echo.url, verify=self.echo.ca, browser="firefox153-linux").json()
        for b in (self.file, pathlib.Path(self.file), text, json.loads(text)):
            with guise.Session(browser=b, verify=self.echo.ca) as s:
                got = s.get(self.echo.url).json()
            self.assertEqual(got["tls"]["ja4"], want["tls"]["ja4"], type(b))
            self.assertEqual(got["http2"]["akamai"], want["http2"]["akamai"], type(b))
            self.assertEqual(got["header_order"], want["header_order"], type(b))
        got = guise.get(self.echo.url, verify=self.echo.ca, browser=self.file).json()
        self.assertEqual(got["header_order"], want["header_order"])

    def test_bad_file_fails_at_once(self):
        with open(self.file) as f:
            text = f.read().replace('"first_stream_id": 3', '"first_stream_id": 4')
        d = tempfile.mkdtemp(prefix="guise-bad-")
        path = os.path.join(d, "bad.json")
        with open(path, "w") as f:
            f.write(text)
        with self.assertRaises(guise.GuiseError) as cm:
            guise.Session(browser=path)
        self.assertIn("http2.first_stream_id", str(cm.exception))
        self.assertIn("bad.json", str(cm.exception))
        shutil.rmtree(d)

    def test_weighted_set_with_seed(self):
        names = []
        for _ in range(3):
            with guise.Session(browser="chrome:1,firefox:1", seed=7, verify=self.echo.ca) as s:
                names.append(s.get(self.echo.url).json()["http2"]["akamai"])
        self.assertEqual(len(set(names)), 1, names)


class CaptureChromiumTest(unittest.TestCase):
    def test_captured_profile_equals_the_browser(self):
        chromium = shutil.which("chromium") or shutil.which("chromium-browser")
        if not chromium:
            if REQUIRE_PEERS:
                self.fail("chromium is not installed; GUISE_REQUIRE_PEERS=1 makes this a failure")
            self.skipTest("chromium is not installed (apt-get install chromium)")
        cli = guise_cli()
        d = tempfile.mkdtemp(prefix="guise-capture-")
        out = os.path.join(d, "mine.json")
        port = free_port()
        cap = subprocess.Popen([cli, "capture", "--out", out, "--addr", "127.0.0.1:%d" % port, "--http1",
                                "--timeout", "150s"], stdout=subprocess.PIPE, text=True)
        try:
            wait_for(cap, "waiting up to")
            threading.Thread(target=cap.stdout.read, daemon=True).start()
            origin = "https://fp.test:%d" % port
            for extra in ([], ["--disable-http2"]):
                for page in (origin + "/", origin + "/flow/start"):
                    subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                                    "--no-first-run", "--disable-background-networking",
                                    "--disable-component-update", "--disable-sync", "--disable-default-apps",
                                    "--disable-domain-reliability", "--no-default-browser-check",
                                    "--ignore-certificate-errors", "--user-data-dir=" + tempfile.mkdtemp(dir=d),
                                    "--host-resolver-rules=MAP fp.test 127.0.0.1, MAP sub.fp.test 127.0.0.1, MAP * ~NOTFOUND",
                                    "--virtual-time-budget=5000", "--dump-dom"] + extra + [page],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60,
                                   start_new_session=True)
            self.assertEqual(cap.wait(timeout=120), 0)
        finally:
            cap.kill()
            cap.wait()
        with open(out) as f:
            ref = json.load(f)["reference"]
        echo = Echo(cli)
        try:
            got = guise.get(echo.url, verify=echo.ca, browser=out).json()
            go = json.loads(subprocess.run([cli, "get", "--profile", out, "--cacert", echo.ca, echo.url],
                                           check=True, capture_output=True).stdout)
        finally:
            echo.close()
        for seen in (got, go):
            self.assertEqual(hashes(seen["tls"]["ja4"]), hashes(ref["ja4"]))
            self.assertEqual(seen["http2"]["akamai"], ref["akamai"])
            self.assertEqual(seen["header_order"], ref["header_order"])
            self.assertEqual(seen["pseudo_header_order"], ref["pseudo_order"])
        self.assertEqual(got["headers"], go["headers"])
        shutil.rmtree(d)


if __name__ == "__main__":
    unittest.main()
