#!/usr/bin/env bash
# bindings/python/test-installed.sh DIST tests the Python packages in
# DIST/python (bindings/package.sh) as a user gets them, not from the tree:
#
#   1. the manylinux x86_64 wheel, installed with pip install --no-index into
#      a fresh venv, runs the Python suite (bindings/python/tests, copied out)
#      from a directory outside the checkout with no Go on PATH; the suite
#      checks it imported the venv's guise and library (GUISE_TEST_INSTALLED)
#      and runs the fidelity test against DIST/cli's guise;
#   2. pip refuses the aarch64 and win_amd64 wheels here, picks the x86_64
#      one from DIST/python by itself, and the installed guise names the
#      platform of those wheels' libraries when pointed at them;
#   3. the sdist installs with Go on PATH (pip install --no-index
#      --no-build-isolation: go build from its vendored sources) and makes
#      a request, and without Go fails saying so.
#
# PYTHON names the Python to make the venvs with (/usr/bin/python3); before
# 3.11 step 3 needs tomli in it.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 DIST" >&2; exit 2; }
dist=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
python=${PYTHON:-/usr/bin/python3}
version=$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' "$here/guise/_version.py")
tmp=$(mktemp -d /tmp/guise-installed.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
step() { printf '=== %s (%ss)\n' "$*" "$SECONDS"; }
fail() { echo "test-installed.sh: $*" >&2; exit 1; }

export PIP_CONFIG_FILE=/dev/null PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1 PIP_NO_INPUT=1
unset PYTHONPATH GUISE_LIB
# PATH without the directories that hold a go command.
nogo=$(echo "$PATH" | tr : '\n' | while read -r d; do [ -n "$d" ] && [ ! -x "$d/go" ] && echo "$d"; done | paste -sd:)
! PATH=$nogo command -v go >/dev/null || fail "go is still on the stripped PATH"

whl=$(ls "$dist"/python/guise-"$version"-py3-none-manylinux_*_x86_64.whl)
sdist=$dist/python/guise-$version.tar.gz
cli=$dist/cli/guise-$version-linux-amd64.tar.gz
[ -f "$sdist" ] && [ -f "$cli" ] || fail "$dist lacks the sdist or the linux-amd64 CLI: run bindings/package.sh"

step "a fresh venv; pip install --no-index $(basename "$whl")"
"$python" -m venv "$tmp/venv"
vpy=$tmp/venv/bin/python
picked=$("$vpy" -m pip install --dry-run --no-index --find-links "$dist/python" --report - -q guise |
  "$vpy" -c 'import json, sys; print(*[i["download_info"]["url"] for i in json.load(sys.stdin)["install"]])')
[ "$picked" = "file://$whl" ] || fail "pip install --find-links DIST/python guise would install $picked"
echo "pip install --no-index --find-links DIST/python guise picks $(basename "$whl")"
"$vpy" -m pip install -q --no-index "$whl"

step "other platforms' wheels and libraries"
for w in "$dist"/python/guise-"$version"-py3-none-*.whl; do
  [ "$w" = "$whl" ] && continue
  if out=$("$vpy" -m pip install --no-index "$w" 2>&1); then fail "pip installed $(basename "$w") on $(uname -m)"; fi
  echo "$out" | grep -q "is not a supported wheel on this platform" || fail "pip on $(basename "$w"): $out"
  echo "pip refuses $(basename "$w"): $(echo "$out" | grep -o 'is not a supported wheel.*')"
  mkdir -p "$tmp/foreign"
  lib=$(unzip -Z1 "$w" | grep -E '^guise/(libguise\.so|guise\.dll|libguise\.dylib)$')
  unzip -q -o -d "$tmp/foreign/${w##*-}" "$w" "$lib"
  if out=$(cd "$tmp" && GUISE_LIB=$tmp/foreign/${w##*-}/$lib "$vpy" -c 'from guise import _ffi; _ffi.lib()' 2>&1); then
    fail "guise loaded $(basename "$w")'s library"
  fi
  echo "$out" | tail -1 | grep -q "is a library for .*, but this Python runs on linux x86_64" || fail "$out"
  echo "$out" | tail -1 | sed 's/^/  /'
done

step "the suite against the installed wheel, from $tmp/work, without Go"
cp -r "$here/tests" "$tmp/tests"
cp -r "$here/../../profile/data" "$tmp/profile-data" # test_profile_file's profile file
rm -rf "$tmp/tests/__pycache__"
tar -xzf "$cli" -C "$tmp"
mkdir "$tmp/work"
if ! (cd "$tmp/work" && PATH=$nogo GUISE_TEST_INSTALLED=1 GUISE_PROFILE_DATA=$tmp/profile-data GUISE_CLI=$tmp/guise-$version-linux-amd64/guise \
  "$vpy" -m unittest discover -v -s "$tmp/tests" -t "$tmp/tests" >"$tmp/suite.log" 2>&1); then
  cat "$tmp/suite.log"
  fail "the suite failed against the installed wheel"
fi
grep -q "test_installed .* ok$" "$tmp/suite.log" || fail "test_installed did not run"
tail -3 "$tmp/suite.log"

step "the README's Python example, as printed, with the installed wheel"
PATH=$nogo "$here/../readme-examples.sh" python "$vpy"

step "the sdist with Go: pip install --no-index --no-build-isolation $(basename "$sdist")"
"$python" -m venv "$tmp/venv-src"
spy=$tmp/venv-src/bin/python
"$spy" -m pip install -q --no-index --no-build-isolation "$sdist"
(cd "$tmp/work" && PATH=$nogo "$spy" - <<'PY'
import http.server, os, sys, threading
import guise
from guise import _ffi
prefix = os.path.realpath(sys.prefix) + os.sep
assert os.path.realpath(guise.__file__).startswith(prefix), guise.__file__
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
s.RequestHandlerClass.log_message = lambda *a: None
threading.Thread(target=s.serve_forever, daemon=True).start()
r = guise.get("http://127.0.0.1:%d/" % s.server_address[1])
assert r.status_code == 200, r.status_code
tag = [l for l in open(os.path.join(os.path.dirname(guise.__file__), "..", "guise-%s.dist-info" % guise.__version__,
                                    "WHEEL")) if l.startswith("Tag:")]
print("built from the sdist: %s, %s; GET -> %d" % (tag[0].split()[1], _ffi.lib()._name, r.status_code))
PY
)

step "the sdist without Go"
"$python" -m venv "$tmp/venv-nogo"
if out=$(PATH=$nogo "$tmp/venv-nogo/bin/python" -m pip install --no-index --no-build-isolation "$sdist" 2>&1); then
  fail "the sdist installed without Go"
fi
echo "$out" | grep -q "guise_build: building guise from source needs Go" || fail "pip without Go: $out"
echo "$out" | grep "guise_build:" | sed 's/^ */  /'
step "done"
