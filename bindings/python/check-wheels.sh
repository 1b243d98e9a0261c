#!/usr/bin/env bash
# bindings/python/check-wheels.sh DIST checks each wheel in DIST/python as
# far as this machine can without installing it: every file matches its
# RECORD line (sha256 and size) and RECORD lists every file; the tag's
# platform is the library's (bindings/check-lib.sh on the library taken out
# of the wheel: machine type, and exports exactly ffi/guise.h's); and the
# library is the one in DIST/lib it was made from, byte for byte.
set -euo pipefail
dist=$(cd "$1" && pwd)
cd "$(dirname "$0")"
python=${PYTHON:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
for whl in "$dist"/python/*.whl; do
  name=$(basename "$whl")
  case $name in
    *manylinux*_x86_64.whl) plat=linux-x64 lib=libguise.so ;;
    *manylinux*_aarch64.whl) plat=linux-arm64 lib=libguise.so ;;
    *-win_amd64.whl) plat=win32-x64 lib=guise.dll ;;
    *-macosx_*_x86_64.whl) plat=darwin-x64 lib=libguise.dylib ;;
    *-macosx_*_arm64.whl) plat=darwin-arm64 lib=libguise.dylib ;;
    *) echo "check-wheels.sh: $name: no platform known for its tag" >&2; exit 1 ;;
  esac
  "$python" - "$whl" <<'PY'
import base64, csv, hashlib, io, sys, zipfile
whl = sys.argv[1]
with zipfile.ZipFile(whl) as z:
    names = z.namelist()
    record = [n for n in names if n.endswith(".dist-info/RECORD")]
    assert len(record) == 1, f"{whl}: {len(record)} RECORD files"
    rows = list(csv.reader(io.TextIOWrapper(z.open(record[0]), "utf-8")))
    listed = {r[0] for r in rows}
    missing = set(names) - listed
    assert not missing, f"{whl}: not in RECORD: {sorted(missing)}"
    for path, digest, size in rows:
        if path == record[0]:
            continue
        data = z.read(path)
        algo, _, want = digest.partition("=")
        got = base64.urlsafe_b64encode(hashlib.new(algo, data).digest()).rstrip(b"=").decode()
        assert got == want and int(size) == len(data), f"{whl}: {path} does not match its RECORD line"
    wheel = z.read(record[0].replace("RECORD", "WHEEL")).decode()
    tag = whl.rsplit("/", 1)[-1][:-4].split("-", 2)[2]
    assert f"Tag: {tag}\n" in wheel, f"{whl}: WHEEL says {wheel!r}, the file name {tag}"
print(f"{whl.rsplit('/', 1)[-1]}: {len(rows)} files match RECORD")
PY
  mkdir -p "$tmp/$plat"
  unzip -q -o -d "$tmp/unzip" "$whl" "guise/$lib"
  mv "$tmp/unzip/guise/$lib" "$tmp/$plat/$lib"
  ../check-lib.sh "$tmp/$plat/$lib" | sed "s#^$tmp/#$name: #"
  if [ -f "$dist/lib/$plat/$lib" ]; then
    cmp -s "$tmp/$plat/$lib" "$dist/lib/$plat/$lib" || { echo "check-wheels.sh: $name: guise/$lib differs from $dist/lib/$plat/$lib" >&2; exit 1; }
  fi
  n=$((n + 1))
done
[ "$n" -gt 0 ] || { echo "check-wheels.sh: no wheel in $dist/python" >&2; exit 1; }
