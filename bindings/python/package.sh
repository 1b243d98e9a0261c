#!/usr/bin/env bash
# bindings/python/package.sh DIST VERSION writes DIST/python/: a wheel for
# each library in DIST/lib/PLATFORM/ (bindings/package.sh builds them) and
# the sdist, then checks the wheels (check-wheels.sh). It runs alone against
# an existing DIST/lib too.
#
# The wheels are py3-none-TAG (ctypes, no CPython ABI), with the library in
# the package: guise/libguise.so, guise/guise.dll, guise/libguise.dylib.
# guise_build.py reads TAG from the library itself. For Linux it is
# manylinux_X_Y_ARCH with X.Y the newest GLIBC_X.Y symbol version the
# library needs (its .gnu.version_r section, what readelf --version-info
# lists under "Version needs"): the oldest glibc that can load it. This
# script reads the same floor again with readelf and stops if the two differ.
# Mac wheels are made when bindings/package.sh ran on a Mac (not tested:
# no machine of this project's is one).
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 DIST VERSION" >&2; exit 2; }
dist=$(cd "$1" && pwd) version=$2
cd "$(dirname "$0")"
die() { echo "python/package.sh: $*" >&2; exit 1; }
python=${PYTHON:-python3}

have=$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' guise/_version.py)
[ "$have" = "$version" ] || die "guise/_version.py says $have, not $version: run go generate . at the repository root"

out=$dist/python
rm -rf "$out"
mkdir -p "$out"
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}

libs=$(find "$dist/lib" -name libguise.so -o -name guise.dll -o -name libguise.dylib | sort)
[ -n "$libs" ] || die "no library in $dist/lib (bindings/package.sh builds them)"
for lib in $libs; do
  whl=$("$python" -c 'import sys, guise_build; print(guise_build.build_wheel(sys.argv[1], {"lib": sys.argv[2]}))' "$out" "$lib")
  case $lib in
    *.so)
      floor=$(readelf --version-info -W "$lib" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/^GLIBC_//' | sort -uV | tail -1)
      floor=$(echo "$floor" | awk -F. '{print $1 "_" $2}')
      case $whl in *"-manylinux_${floor}_"*) ;; *) die "$whl: readelf says the glibc floor of $lib is ${floor/_/.}" ;; esac
      ;;
  esac
  echo "$whl  (from ${lib#"$dist"/})"
done
"$python" -c 'import sys, guise_build; print(guise_build.build_sdist(sys.argv[1]))' "$out"
./check-wheels.sh "$dist"
