"""Tests of how guise finds and loads libguise, and what it says when it
cannot: each loads the library in a child Python (the parent's stays
loaded), with GUISE_LIB pointing at a bad one.

GUISE_TEST_INSTALLED=1 (bindings/python/test-installed.sh) also checks that
guise and its library are the ones installed in this Python's prefix (a
venv), not a checkout's."""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import guise
from guise import _ffi


def load(env=None, path=None):
    """Loads the library in a child Python; returns its exit status and
    stderr's last line."""
    e = dict(os.environ)
    e.pop("GUISE_LIB", None)
    e.update(env or {})
    # The child runs elsewhere (a relative PYTHONPATH would not reach), and
    # imports the guise this process did unless path says otherwise.
    e["PYTHONPATH"] = path or os.path.dirname(os.path.dirname(os.path.abspath(guise.__file__)))
    r = subprocess.run([sys.executable, "-c", "from guise import _ffi; _ffi.lib()"], env=e,
                       cwd=tempfile.gettempdir(), capture_output=True, text=True)
    return r.returncode, (r.stderr.strip().splitlines() or [""])[-1]


class LoadTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="guise-load-")
        self.addCleanup(shutil.rmtree, self.tmp)

    def stub(self, source):
        if not shutil.which("gcc"):
            self.skipTest("no gcc")
        c, so = os.path.join(self.tmp, "stub.c"), os.path.join(self.tmp, "libstub.so")
        with open(c, "w") as f:
            f.write(source)
        subprocess.run(["gcc", "-shared", "-fPIC", "-o", so, c], check=True)
        return so

    def test_abi_mismatch(self):
        so = self.stub("int guise_abi_version(void) { return 999; }\n")
        code, msg = load({"GUISE_LIB": so})
        self.assertNotEqual(code, 0)
        self.assertIn(f"OSError: guise: {so} speaks C ABI 999, this package (guise {guise.__version__}) "
                      f"was written for {_ffi.ABI_VERSION}; reinstall guise", msg)

    def test_no_abi_version(self):
        so = self.stub("int guise_version(void) { return 0; }\n")
        code, msg = load({"GUISE_LIB": so})
        self.assertNotEqual(code, 0)
        self.assertIn(f"{so} has no guise_abi_version: it is older than this package", msg)

    def test_corrupt(self):
        bad = os.path.join(self.tmp, "libguise.so")
        with open(_ffi._path(), "rb") as f:
            head = f.read(8192)  # a truncated copy: a valid header, then nothing
        for data in (b"not a library\n", head):
            with open(bad, "wb") as f:
                f.write(data)
            code, msg = load({"GUISE_LIB": bad})
            self.assertNotEqual(code, 0)
            self.assertIn(f"OSError: guise: cannot load {bad} (", msg)
            self.assertIn("it is damaged", msg)

    def test_wrong_platform(self):
        if not sys.platform.startswith("linux"):
            self.skipTest("the foreign libraries below are made for Linux")
        with open(_ffi._path(), "rb") as f:
            elf = bytearray(f.read())
        machine = "aarch64" if _ffi.running().endswith("x86_64") else "x86_64"
        elf[18:20] = (183 if machine == "aarch64" else 62).to_bytes(2, "little")
        pe = bytearray(512)  # the headers of an amd64 DLL, up to its machine field
        pe[0:2], pe[0x3C:0x40], pe[0x80:0x86] = b"MZ", (0x80).to_bytes(4, "little"), b"PE\0\0\x64\x86"
        for name, data, want in (("libguise.so", elf, "linux " + machine), ("guise.dll", pe, "windows x86_64")):
            p = os.path.join(self.tmp, name)
            with open(p, "wb") as f:
                f.write(data)
            code, msg = load({"GUISE_LIB": p})
            self.assertNotEqual(code, 0)
            self.assertIn(f"OSError: guise: {p} is a library for {want}, but this Python runs on "
                          f"{_ffi.running()}: install the guise wheel built for {_ffi.running()}", msg)

    def test_guise_lib_not_a_file(self):
        p = os.path.join(self.tmp, "nothing.so")
        code, msg = load({"GUISE_LIB": p})
        self.assertNotEqual(code, 0)
        self.assertIn(f"OSError: guise: GUISE_LIB is {p!r}, which is not a file", msg)

    def test_package_without_library(self):
        # The package's modules alone, as a wheel for another platform
        # that was unpacked by hand would leave them.
        pkg = os.path.join(self.tmp, "guise")
        os.mkdir(pkg)
        here = os.path.dirname(guise.__file__)
        for name in os.listdir(here):
            if name.endswith(".py"):
                shutil.copy(os.path.join(here, name), pkg)
        code, msg = load(path=self.tmp)
        self.assertNotEqual(code, 0)
        self.assertIn(f"OSError: guise: {_ffi.LIBNAME} is not in {pkg}, so this installation of guise "
                      f"{guise.__version__} has no library for {_ffi.running()}: install the wheel", msg)

    @unittest.skipUnless(os.environ.get("GUISE_TEST_INSTALLED"), "GUISE_TEST_INSTALLED is not set")
    def test_installed(self):
        prefix = os.path.realpath(sys.prefix) + os.sep
        self.assertNotEqual(sys.prefix, sys.base_prefix, "not in a venv")
        self.assertTrue(os.path.realpath(guise.__file__).startswith(prefix), guise.__file__)
        lib = _ffi.lib()._name
        self.assertTrue(os.path.realpath(lib).startswith(prefix), lib)
        self.assertEqual(os.path.dirname(lib), os.path.dirname(guise.__file__))


if __name__ == "__main__":
    unittest.main()
