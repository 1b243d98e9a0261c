"""guise_build is the PEP 517 build backend of the guise Python package
(pyproject.toml names it, with backend-path "."). It needs nothing but the
standard library (and tomli before Python 3.11), so pip can use it with
--no-index and --no-build-isolation.

A wheel is the pure-Python package plus libguise, the C ABI of guise's Go
engine, inside the package (guise/libguise.so, guise/guise.dll or
guise/libguise.dylib), tagged py3-none-PLATFORM: ctypes loads it, so the
wheel fits every CPython 3 of that platform. The library comes from one of
two places:

  - config_settings {"lib": PATH}: a library already built (what
    bindings/python/package.sh does with bindings/package.sh's dist/lib).
    The wheel's platform is read from the library: its machine type, and on
    Linux the manylinux tag of the newest glibc symbol version it needs.
  - otherwise go build -buildmode=c-shared ./ffi, from the Go sources in the
    sdist (go/, with its dependencies vendored) or, in a checkout, from the
    repository. That needs Go and a C compiler (cgo); without them the build
    stops with a message saying which is missing. The wheel is tagged for
    this machine alone (linux_x86_64, not manylinux).

An sdist built in a checkout collects the Go files ./ffi needs on every
platform (go list) and vendors their modules (go mod vendor, offline), so
it builds with no network. Archives are dated SOURCE_DATE_EPOCH (else
1980), so two builds of one tree write the same bytes.
"""

import base64
import csv
import gzip
import hashlib
import io
import os
import re
import shutil
import struct
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import time
import zipfile

try:
    import tomllib
except ImportError:  # Python < 3.11: get_requires_for_build_* asks for tomli
    tomllib = None

GO_MODULE = "github.com/guise-http/guise"
LIBNAMES = {"linux": "libguise.so", "windows": "guise.dll", "macos": "libguise.dylib"}

# The libraries a manylinux wheel may need, from PEP 600: the ones every
# glibc system has (auditwheel's policy lists the same for the C runtime).
MANYLINUX_LIBS = {"libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2", "librt.so.1", "libresolv.so.2",
                  "libutil.so.1", "ld-linux-x86-64.so.2", "ld-linux-aarch64.so.1"}


def _fail(msg):
    # SystemExit carries the message to stderr without a traceback, and
    # pip shows it under "error: subprocess-exited-with-error".
    raise SystemExit("guise_build: " + msg)


# --- the PEP 517 hooks -----------------------------------------------------


def get_requires_for_build_wheel(config_settings=None):
    return [] if tomllib else ["tomli>=1.1"]


def get_requires_for_build_sdist(config_settings=None):
    return [] if tomllib else ["tomli>=1.1"]


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    meta = Metadata(".")
    d = os.path.join(metadata_directory, meta.dist_info)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "METADATA"), "w", encoding="utf-8") as f:
        f.write(meta.text())
    return meta.dist_info


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    meta = Metadata(".")
    lib = (config_settings or {}).get("lib")
    if lib:
        return write_wheel(wheel_directory, meta, lib, platform_tag(lib, release=True))
    with tempfile.TemporaryDirectory(prefix="guise-build-") as tmp:
        lib = go_build(os.path.abspath("."), tmp)
        return write_wheel(wheel_directory, meta, lib, platform_tag(lib, release=False))


def build_sdist(sdist_directory, config_settings=None):
    return write_sdist(sdist_directory, Metadata("."))


# --- metadata --------------------------------------------------------------


class Metadata:
    """The core metadata of the package in source directory src, from
    pyproject.toml's [project] table and guise/_version.py (the version is
    dynamic: go generate stamps it from internal/version)."""

    # The [project] keys this backend writes into METADATA; it refuses
    # others rather than dropping them.
    KEYS = {"name", "description", "readme", "requires-python", "classifiers", "keywords", "urls", "dynamic"}

    def __init__(self, src):
        with open(os.path.join(src, "pyproject.toml"), "rb") as f:
            project = (tomllib.load(f) if tomllib else _tomli().load(f))["project"]
        extra = set(project) - self.KEYS
        if extra:
            _fail(f"pyproject.toml: [project] has {sorted(extra)}, which guise_build does not write")
        if project.get("dynamic") != ["version"]:
            _fail('pyproject.toml: [project] must say dynamic = ["version"] (guise/_version.py has it)')
        self.project = project
        self.src = src
        self.name = project["name"]
        with open(os.path.join(src, "guise", "_version.py"), encoding="utf-8") as f:
            m = re.search(r'^__version__ = "([^"]+)"$', f.read(), re.M)
        if not m:
            _fail("guise/_version.py has no __version__ (run go generate . at the repository root)")
        self.version = m.group(1)
        self.dist_info = f"{self.name}-{self.version}.dist-info"

    def text(self):
        p = self.project
        lines = ["Metadata-Version: 2.1", f"Name: {self.name}", f"Version: {self.version}"]
        if "description" in p:
            lines.append(f"Summary: {p['description']}")
        if p.get("keywords"):
            lines.append("Keywords: " + ",".join(p["keywords"]))
        for label, url in p.get("urls", {}).items():
            lines.append(f"Project-URL: {label}, {url}")
        if "requires-python" in p:
            lines.append(f"Requires-Python: {p['requires-python']}")
        lines += [f"Classifier: {c}" for c in p.get("classifiers", [])]
        body = ""
        if "readme" in p:
            lines.append("Description-Content-Type: text/markdown")
            with open(os.path.join(self.src, p["readme"]), encoding="utf-8") as f:
                body = "\n" + f.read()
        return "\n".join(lines) + "\n" + body


def _tomli():
    try:
        import tomli
    except ImportError:
        _fail("reading pyproject.toml before Python 3.11 needs tomli (pip install tomli)")
    return tomli


# --- the wheel's platform, read from the library ---------------------------


def read_elf(path):
    """The ELF shared object at path: its machine name, the libraries it
    needs (DT_NEEDED) and the symbol versions it needs from each
    (.gnu.version_r, what readelf --version-info lists under "Version
    needs"), as (machine, [lib], {lib: [version]})."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF":
        _fail(f"{path} is not an ELF file")
    bits, order = {1: 32, 2: 64}[data[4]], {1: "<", 2: ">"}[data[5]]
    machine = struct.unpack_from(order + "H", data, 18)[0]
    if bits == 64:
        shoff, = struct.unpack_from(order + "Q", data, 0x28)
        shentsize, shnum = struct.unpack_from(order + "HH", data, 0x3A)
        shfmt = order + "IIQQQQIIQQ"
    else:
        shoff, = struct.unpack_from(order + "I", data, 0x20)
        shentsize, shnum = struct.unpack_from(order + "HH", data, 0x2E)
        shfmt = order + "IIIIIIIIII"
    # (type, offset, size, link, info) of each section
    sections = []
    for i in range(shnum):
        f = struct.unpack_from(shfmt, data, shoff + i * shentsize)
        sections.append((f[1], f[4], f[5], f[6], f[7]))

    def string(strtab, at):
        start = sections[strtab][1] + at
        return data[start:data.index(b"\0", start)].decode()

    needed, versions = [], {}
    for typ, off, size, link, info in sections:
        if typ == 6:  # SHT_DYNAMIC: DT_NEEDED entries
            fmt = order + ("qQ" if bits == 64 else "iI")
            step = struct.calcsize(fmt)
            for at in range(off, off + size, step):
                tag, val = struct.unpack_from(fmt, data, at)
                if tag == 0:
                    break
                if tag == 1:
                    needed.append(string(link, val))
        elif typ == 0x6FFFFFFE:  # SHT_GNU_verneed: Elf_Verneed, each with its Elf_Vernaux
            at = off
            for _ in range(info):
                _, cnt, file, aux, nxt = struct.unpack_from(order + "HHIII", data, at)
                names, a = [], at + aux
                for _ in range(cnt):
                    _, _, _, name, anext = struct.unpack_from(order + "IHHII", data, a)
                    names.append(string(link, name))
                    a += anext
                versions[string(link, file)] = names
                if nxt == 0:
                    break
                at += nxt
    return machine, needed, versions


def glibc_floor(path):
    """The oldest glibc that can load the library at path, as (2, 34): the
    newest GLIBC_x.y symbol version it needs. It refuses libraries outside
    the manylinux set and versions of anything but glibc."""
    _, needed, versions = read_elf(path)
    extra = set(needed) - MANYLINUX_LIBS
    if extra:
        _fail(f"{path} needs {sorted(extra)}, which a manylinux wheel may not assume")
    floor = (2, 0)
    for lib, names in versions.items():
        for name in names:
            m = re.fullmatch(r"GLIBC_(\d+)\.(\d+)(?:\.\d+)?", name)
            if not m:
                _fail(f"{path} needs symbol version {name} of {lib}, which is not a glibc version")
            floor = max(floor, (int(m.group(1)), int(m.group(2))))
    return floor


def macos_floor(path):
    """The oldest macOS the Mach-O library at path runs on (its
    LC_BUILD_VERSION or LC_VERSION_MIN_MACOSX), as (11, 0). Not tested on
    a Mac: no machine of this project's is one."""
    with open(path, "rb") as f:
        data = f.read(65536)
    ncmds, = struct.unpack_from("<I", data, 16)
    at = 32  # mach_header_64
    for _ in range(ncmds):
        cmd, size = struct.unpack_from("<II", data, at)
        if cmd in (0x32, 0x24):  # LC_BUILD_VERSION (platform, minos), LC_VERSION_MIN_MACOSX (version)
            v, = struct.unpack_from("<I", data, at + (12 if cmd == 0x32 else 8))
            major, minor = v >> 16, (v >> 8) & 0xFF
            # From macOS 11 on, pip accepts only macosx_N_0 tags: a floor
            # of 11.3 is stated as 12.0, never as the too-low 11.0.
            if major >= 11 and minor > 0:
                major, minor = major + 1, 0
            return major, minor
        at += size
    _fail(f"{path} states no minimum macOS version")


def platform_tag(lib, release):
    """The wheel platform tag for the library at lib, from its own headers.
    A release wheel of a Linux library is manylinux_X_Y_ARCH, X.Y its glibc
    floor; a wheel built here for here is linux_ARCH."""
    with open(lib, "rb") as f:
        head = f.read(4096)
    if head[:4] == b"\x7fELF":
        machine = read_elf(lib)[0]
        arch = {62: "x86_64", 183: "aarch64"}.get(machine)
        if arch is None:
            _fail(f"{lib}: ELF machine {machine} is not one guise builds for")
        if not release:
            return f"linux_{arch}"
        major, minor = glibc_floor(lib)
        return f"manylinux_{major}_{minor}_{arch}"
    if head[:2] == b"MZ":
        at, = struct.unpack_from("<I", head, 0x3C)
        machine, = struct.unpack_from("<H", head, at + 4)
        arch = {0x8664: "amd64", 0xAA64: "arm64"}.get(machine)
        if head[at:at + 4] != b"PE\0\0" or arch is None:
            _fail(f"{lib}: not a PE library for amd64 or arm64")
        return f"win_{arch}"
    if head[:4] == b"\xcf\xfa\xed\xfe":
        cpu, = struct.unpack_from("<I", head, 4)
        arch = {0x01000007: "x86_64", 0x0100000C: "arm64"}.get(cpu)
        if arch is None:
            _fail(f"{lib}: Mach-O CPU type {cpu:#x} is not one guise builds for")
        major, minor = macos_floor(lib)
        return f"macosx_{major}_{minor}_{arch}"
    _fail(f"{lib} is not an ELF, PE or Mach-O library")


def _libname(tag):
    if tag.startswith("win"):
        return LIBNAMES["windows"]
    if tag.startswith("macosx"):
        return LIBNAMES["macos"]
    return LIBNAMES["linux"]


# --- archives --------------------------------------------------------------


def _epoch():
    # Zip cannot date a file before 1980.
    return max(int(os.environ.get("SOURCE_DATE_EPOCH") or 0), 315532800)


def write_wheel(wheel_directory, meta, lib, tag):
    """Writes NAME-VERSION-py3-none-TAG.whl into wheel_directory: the
    package's modules, lib as guise/LIBNAME, and the .dist-info (METADATA,
    WHEEL, RECORD with every file's sha256). Returns its file name."""
    files = []  # (archive name, bytes, executable)
    pkg = os.path.join(meta.src, "guise")
    for name in sorted(os.listdir(pkg)):
        if name.endswith(".py"):
            with open(os.path.join(pkg, name), "rb") as f:
                files.append((f"guise/{name}", f.read(), False))
    with open(lib, "rb") as f:
        files.append((f"guise/{_libname(tag)}", f.read(), True))
    wheel = (f"Wheel-Version: 1.0\nGenerator: guise_build\nRoot-Is-Purelib: false\n"
             f"Tag: py3-none-{tag}\n")
    files.append((f"{meta.dist_info}/METADATA", meta.text().encode(), False))
    files.append((f"{meta.dist_info}/WHEEL", wheel.encode(), False))
    record = io.StringIO()
    w = csv.writer(record, lineterminator="\n")
    for name, data, _ in files:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        w.writerow([name, f"sha256={digest}", len(data)])
    w.writerow([f"{meta.dist_info}/RECORD", "", ""])
    files.append((f"{meta.dist_info}/RECORD", record.getvalue().encode(), False))

    filename = f"{meta.name}-{meta.version}-py3-none-{tag}.whl"
    date = _zipdate(_epoch())
    os.makedirs(wheel_directory, exist_ok=True)
    with zipfile.ZipFile(os.path.join(wheel_directory, filename), "w") as z:
        for name, data, executable in files:
            info = zipfile.ZipInfo(name, date)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = (0o100755 if executable else 0o100644) << 16
            z.writestr(info, data, compresslevel=9)
    return filename


def _zipdate(epoch):
    return time.gmtime(epoch)[:6]


def write_sdist(sdist_directory, meta):
    """Writes NAME-VERSION.tar.gz into sdist_directory: pyproject.toml,
    this backend, README.md, the package, its tests, PKG-INFO and go/ (the
    Go sources ./ffi needs, vendored). Returns its file name."""
    base = f"{meta.name}-{meta.version}"
    with tempfile.TemporaryDirectory(prefix="guise-sdist-") as tmp:
        go = os.path.join(meta.src, "go")
        if not os.path.isdir(go):  # a checkout: collect the Go sources
            go = os.path.join(tmp, "go")
            go_sources(_checkout(meta.src), go)
        members = []  # (archive name, path on disk)
        for name in ("pyproject.toml", "guise_build.py", meta.project["readme"]):
            members.append((name, os.path.join(meta.src, name)))
        for top in ("guise", "tests"):
            for dirpath, dirnames, filenames in os.walk(os.path.join(meta.src, top)):
                dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
                for fn in sorted(filenames):
                    if fn.endswith(".py"):
                        p = os.path.join(dirpath, fn)
                        members.append((os.path.relpath(p, meta.src).replace(os.sep, "/"), p))
        for dirpath, dirnames, filenames in os.walk(go):
            dirnames.sort()
            for fn in sorted(filenames):
                p = os.path.join(dirpath, fn)
                members.append(("go/" + os.path.relpath(p, go).replace(os.sep, "/"), p))

        filename = base + ".tar.gz"
        epoch = _epoch()
        os.makedirs(sdist_directory, exist_ok=True)
        with open(os.path.join(sdist_directory, filename), "wb") as out:
            with gzip.GzipFile(fileobj=out, mode="wb", mtime=epoch, filename="") as gz:
                with tarfile.open(fileobj=gz, mode="w", format=tarfile.PAX_FORMAT) as tar:
                    def add(name, data):
                        info = tarfile.TarInfo(f"{base}/{name}")
                        info.size, info.mtime, info.mode = len(data), epoch, 0o644
                        tar.addfile(info, io.BytesIO(data))
                    add("PKG-INFO", meta.text().encode())
                    for name, p in sorted(members):
                        with open(p, "rb") as f:
                            add(name, f.read())
    return filename


# --- Go --------------------------------------------------------------------


def _go():
    """The go command (GO, else go on PATH), or a message saying what to
    install."""
    go = os.environ.get("GO") or shutil.which("go")
    if not go:
        _fail("building guise from source needs Go (https://go.dev/dl/, the version go/go.mod names or "
              "later) on PATH or in GO, and a C compiler for cgo (gcc or clang); neither pip nor this "
              "package can fetch them. Or install a prebuilt wheel instead: "
              "pip install guise-VERSION-py3-none-PLATFORM.whl")
    return go


def _checkout(src):
    """The repository root of a checkout whose bindings/python is src."""
    root = os.path.abspath(os.path.join(src, "..", ".."))
    try:
        with open(os.path.join(root, "go.mod"), encoding="utf-8") as f:
            ok = f.readline().split() == ["module", GO_MODULE]
    except OSError:
        ok = False
    if not ok:
        _fail(f"{src} has no go/ (an sdist's Go sources) and is not bindings/python of a {GO_MODULE} checkout")
    return root


def _run(cmd, cwd, env=None, quiet=False):
    # quiet: stdout is returned and stderr shown only on failure (go list
    # may warn on stderr; that must not mix into what is parsed).
    pipe = subprocess.PIPE if quiet else None
    r = subprocess.run(cmd, cwd=cwd, env=env, stdout=pipe, stderr=pipe, text=True)
    if r.returncode != 0:
        if quiet:
            sys.stderr.write(r.stdout + r.stderr)
        _fail(f"{' '.join(cmd)} (in {cwd}) failed with exit status {r.returncode}; its output is above")
    return r.stdout


# The platforms an sdist's Go sources must build for (GOOS, GOARCH).
SDIST_PLATFORMS = [(goos, goarch) for goos in ("linux", "windows", "darwin") for goarch in ("amd64", "arm64")]


def go_sources(root, out):
    """Copies into out the Go module at root cut to what ./ffi builds from
    on SDIST_PLATFORMS (go list: Go, cgo, C, assembly and embedded files of
    the module's own packages; no tests), with go.mod, go.sum, the commit
    and vendor/ (go mod vendor from the module cache, offline). Checks that
    go list finds every package in it for each platform."""
    go = _go()
    env = dict(os.environ, CGO_ENABLED="1", GOWORK="off", GOFLAGS="")
    fmt = ("{{if .Module}}{{if .Module.Main}}{{.Dir}}|{{join .GoFiles \",\"}},{{join .CgoFiles \",\"}},"
           "{{join .CFiles \",\"}},{{join .HFiles \",\"}},{{join .SFiles \",\"}},{{join .EmbedFiles \",\"}}"
           "{{end}}{{end}}")
    files = {"go.mod", "go.sum"}
    for goos, goarch in SDIST_PLATFORMS:
        listed = _run([go, "list", "-deps", "-f", fmt, "./ffi"], root,
                      dict(env, GOOS=goos, GOARCH=goarch), quiet=True)
        for line in listed.splitlines():
            if not line:
                continue
            d, names = line.split("|", 1)
            rel = os.path.relpath(d, root)
            files.update(os.path.normpath(os.path.join(rel, n)) for n in names.split(",") if n)
    for rel in sorted(files):
        os.makedirs(os.path.join(out, os.path.dirname(rel)), exist_ok=True)
        shutil.copy2(os.path.join(root, rel), os.path.join(out, rel))
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True)
    if commit.returncode == 0:
        with open(os.path.join(out, "COMMIT"), "w") as f:
            f.write(commit.stdout)
    _run([go, "mod", "vendor"], out, dict(env, GOPROXY="off"), quiet=True)
    for goos, goarch in SDIST_PLATFORMS:
        _run([go, "list", "-mod=vendor", "-deps", "./ffi"], out,
             dict(env, GOOS=goos, GOARCH=goarch, GOFLAGS="-mod=vendor"), quiet=True)


# GOARCH for the machine this Python's platform names (sysconfig), so that
# a 32-bit or emulated Python gets a library it can load.
GOARCHES = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64",
            "universal2": None}


def go_build(src, out):
    """Builds libguise for this Python's platform into out with go build
    -buildmode=c-shared, from src/go (an sdist) or the checkout src is in.
    Returns the library's path."""
    go = _go()
    module = os.path.join(src, "go")
    vendored = os.path.isdir(module)
    if not vendored:
        module = _checkout(src)
    env = dict(os.environ, CGO_ENABLED="1", GOWORK="off")
    cc = subprocess.run([go, "env", "CC"], cwd=module, env=env, capture_output=True, text=True).stdout.split()
    if not cc or not shutil.which(cc[0]):
        _fail(f"building guise from source needs a C compiler for cgo: go env CC says {' '.join(cc) or 'nothing'}, "
              "which is not on PATH (install gcc or clang, or set CC)")
    plat = sysconfig.get_platform()  # linux-x86_64, win-amd64, macosx-11.0-arm64
    arch = plat.rsplit("-", 1)[-1]
    if arch not in GOARCHES:
        _fail(f"this Python's platform is {plat}, for which guise_build knows no GOARCH")
    if GOARCHES[arch]:
        env["GOARCH"] = GOARCHES[arch]
    if vendored:
        flags = [f for f in env.get("GOFLAGS", "").split() if not f.startswith("-mod=")]
        env["GOFLAGS"] = " ".join(flags + ["-mod=vendor"])
    system = "windows" if plat.startswith("win") else "macos" if plat.startswith("macosx") else "linux"
    lib = os.path.join(out, LIBNAMES[system])
    ldflags = "-s -w"
    try:
        with open(os.path.join(module, "COMMIT")) as f:
            ldflags += f" -X {GO_MODULE}/internal/version.commit={f.read().strip()}"
    except OSError:
        pass
    sys.stderr.write(f"guise_build: go build -buildmode=c-shared ./ffi for {plat} in {module}\n")
    _run([go, "build", "-trimpath", "-buildmode=c-shared", "-ldflags", ldflags, "-o", lib, "./ffi"], module, env)
    return lib
