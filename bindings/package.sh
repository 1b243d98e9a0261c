#!/usr/bin/env bash
# bindings/package.sh writes into dist/ everything a release uploads:
#
#   dist/lib/PLATFORM/     libguise for each platform (the C ABI, ffi/), with guise.h
#   dist/cli/              the guise CLI for six platforms (.tar.gz, .zip for
#                          windows) and SHA256SUMS
#   dist/python/           the wheels and the sdist (bindings/python/package.sh)
#   dist/node/             the npm tarballs (bindings/node/package.sh)
#
# PLATFORM is Node's name for it: linux-x64, linux-arm64, win32-x64,
# darwin-x64, darwin-arm64. On Linux it builds linux-x64, linux-arm64
# (with gcc-aarch64-linux-gnu) and win32-x64 (with gcc-mingw-w64-x86-64);
# on a Mac, darwin-x64 and darwin-arm64 with the Xcode toolchain (not
# tested: no machine of this project's is a Mac). GUISE_PLATFORMS narrows
# the list ("linux-x64 win32-x64"). Every build is -trimpath and stripped,
# and carries the commit it was made from (guise version prints it).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

step() { printf '=== %s (%ss)\n' "$*" "$SECONDS"; }
die() { echo "package.sh: $*" >&2; exit 1; }

version=$(sed -n 's/^const Version = "\(.*\)"$/\1/p' internal/version/version.go)
[ -n "$version" ] || die "no Version in internal/version/version.go"
commit=$(git rev-parse HEAD 2>/dev/null || true)
# The Go module's tag is "v" + Version: a release tag on this commit that
# says otherwise is a mistake caught here, before anything is built.
for tag in $(git tag --points-at HEAD 'v[0-9]*' 2>/dev/null); do
  [ "$tag" = "v$version" ] || die "HEAD is tagged $tag, but internal/version says $version"
done
ldflags="-s -w"
[ -n "$commit" ] && ldflags="$ldflags -X github.com/guise-http/guise/internal/version.commit=$commit"
# Archives get the commit's time, so two runs on one commit write the same bytes.
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}

if [ -n "${GUISE_PLATFORMS:-}" ]; then
  platforms=$GUISE_PLATFORMS
elif [ "$(uname -s)" = Darwin ]; then
  platforms="darwin-x64 darwin-arm64"
else
  platforms="linux-x64 linux-arm64 win32-x64"
fi

# goenv PLATFORM prints GOOS GOARCH CC LIBNAME for a platform's libguise.
goenv() {
  case $1 in
    linux-x64) echo "linux amd64 ${CC_LINUX_X64:-gcc} libguise.so" ;;
    linux-arm64) echo "linux arm64 ${CC_LINUX_ARM64:-aarch64-linux-gnu-gcc} libguise.so" ;;
    win32-x64) echo "windows amd64 ${CC_WIN32_X64:-x86_64-w64-mingw32-gcc} guise.dll" ;;
    darwin-x64) echo "darwin amd64 ${CC_DARWIN_X64:-clang -arch x86_64} libguise.dylib" ;;
    darwin-arm64) echo "darwin arm64 ${CC_DARWIN_ARM64:-clang -arch arm64} libguise.dylib" ;;
    *) die "unknown platform $1" ;;
  esac
}

rm -rf dist
mkdir -p dist/lib dist/cli

step "guise $version${commit:+ ($commit)}: libguise for $platforms"
for p in $platforms; do
  read -r goos goarch cc lib <<<"$(goenv "$p")"
  command -v "${cc%% *}" >/dev/null || die "$p needs the C compiler ${cc%% *} (Debian: gcc-aarch64-linux-gnu, gcc-mingw-w64-x86-64)"
  mkdir -p "dist/lib/$p"
  extldflags=""
  # A Mach-O library finds itself by @rpath, so the Node addon's rpath
  # ($ORIGIN's equivalent, @loader_path) can find it.
  [ "$goos" = darwin ] && extldflags="-extldflags=-Wl,-install_name,@rpath/libguise.dylib"
  CGO_ENABLED=1 GOOS=$goos GOARCH=$goarch CC=$cc \
    go build -trimpath -buildmode=c-shared -ldflags "$ldflags $extldflags" -o "dist/lib/$p/$lib" ./ffi
  base=${lib%.*}
  [ "$base" = guise ] || mv "dist/lib/$p/$base.h" "dist/lib/$p/guise.h"
  cmp -s "dist/lib/$p/guise.h" ffi/guise.h || die "$p: the header cgo wrote differs from ffi/guise.h"
done

step "check the libraries: machine type and exported ABI"
bindings/check-lib.sh $(find dist/lib -name libguise.so -o -name guise.dll -o -name libguise.dylib | sort)

step "the CLI for six platforms"
(
  cd dist/cli
  for target in linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 windows/amd64 windows/arm64; do
    goos=${target%/*} goarch=${target#*/}
    name=guise-$version-$goos-$goarch
    exe=guise
    [ "$goos" = windows ] && exe=guise.exe
    mkdir -p "$name"
    (cd "$root" && CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch \
      go build -trimpath -ldflags "$ldflags" -o "dist/cli/$name/$exe" ./cmd/guise)
    cp "$root/README.md" "$name/"
    touch -d "@$SOURCE_DATE_EPOCH" "$name" "$name"/*
    if [ "$goos" = windows ]; then
      rm -f "$name.zip"
      zip -qX -r "$name.zip" "$name"
    else
      tar --sort=name --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 --numeric-owner \
        -czf "$name.tar.gz" "$name"
    fi
    rm -rf "$name"
  done
  sha256sum -- *.tar.gz *.zip >SHA256SUMS
)

for sub in python node; do
  if [ -x "bindings/$sub/package.sh" ]; then
    step "$sub packages"
    "bindings/$sub/package.sh" "$root/dist" "$version"
  fi
done

step "done: dist/"
(cd dist && find . -type f ! -path './lib/*' -printf '%s\t%p\n' | sort -k2 | awk -F'\t' '{printf "%10.1f KiB  %s\n", $1/1024, $2}')
