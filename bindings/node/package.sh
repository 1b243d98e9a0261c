#!/usr/bin/env bash
# bindings/node/package.sh DIST VERSION writes the npm tarballs into DIST/node/
# from the libraries bindings/package.sh built into DIST/lib/PLATFORM/:
#
#   guise-VERSION.tgz                          the package `guise`: index.js,
#                                              index.d.ts, version.js, with an
#                                              optionalDependency on each of
#   guise-http-guise-PLATFORM-VERSION.tgz      @guise-http/guise-PLATFORM: that
#                                              platform's guise.node and libguise,
#                                              with "os" and "cpu" (and "libc")
#                                              so that npm installs only the one
#                                              that fits
#
# the pattern of esbuild and swc. It runs alone against an existing DIST/lib.
#
# The addon finds its library beside it: on Linux by its RUNPATH $ORIGIN;
# on Windows because Node loads addons with LoadLibraryExW(path, NULL,
# LOAD_WITH_ALTERED_SEARCH_PATH) (libuv's uv_dlopen, src/win/dl.c, which
# process.dlopen calls on Windows), so the loader looks for the addon's own
# imports, guise.dll among them, in the addon's directory first; on macOS by
# libguise.dylib's install name @rpath and the addon's rpath @loader_path.
#
# The Windows addon is cross-linked with mingw. Its N-API and libuv
# functions live in node.exe (Node's common.gypi builds it with
# BUILDING_UV_SHARED, so libuv's functions are exported too): an import
# library for node.exe is made with dlltool from a .def listing exactly the
# napi_* and uv_* functions the compiled addon imports. A host that is not
# named node.exe (Electron) would need node-gyp's delay-load hook, which
# this build does not have.
#
# Compilers: CC_LINUX_X64 (gcc), CC_LINUX_ARM64 (aarch64-linux-gnu-gcc),
# CC_WIN32_X64 (x86_64-w64-mingw32-gcc), CC_DARWIN_X64/ARM64 (clang -arch ...;
# not tested: no machine of this project's is a Mac). NODE_INCLUDE is the
# directory of node_api.h, whose headers are the same for every platform.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

die() { echo "node/package.sh: $*" >&2; exit 1; }

[ $# -eq 2 ] || die "usage: bindings/node/package.sh DIST VERSION"
dist=$(cd "$1" && pwd)
version=$2
[ -d "$dist/lib" ] || die "no $dist/lib: run bindings/package.sh first"
command -v npm >/dev/null || die "npm is needed to pack the tarballs"

pkgversion=$(node -p "require('$here/package.json').version")
[ "$pkgversion" = "$version" ] || die "bindings/node/package.json is at $pkgversion, the release at $version: run go generate ."
grep -q "version: '$version'" "$here/version.js" || die "bindings/node/version.js is not at $version: run go generate ."

nodeinc=${NODE_INCLUDE:-}
if [ -z "$nodeinc" ]; then
  for d in /usr/include/node /usr/local/include/node "$(dirname "$(dirname "$(command -v node)")")/include/node"; do
    if [ -f "$d/node_api.h" ]; then nodeinc=$d; break; fi
  done
fi
[ -n "$nodeinc" ] && [ -f "$nodeinc/node_api.h" ] || die "node_api.h not found (install libnode-dev, or set NODE_INCLUDE)"

out=$dist/node
rm -rf "$out"
mkdir -p "$out"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

cflags=(-O2 -Wall -Wextra -Wno-unused-parameter -std=c11 -DNODE_GYP_MODULE_NAME=guise -I"$nodeinc")

# addon PLATFORM DIR builds DIR/guise.node against DIR's libguise and
# prints the package.json fields "os", "cpu" (and "libc") for PLATFORM.
addon() {
  local plat=$1 dir=$2 cc
  case $plat in
    linux-x64 | linux-arm64)
      if [ "$plat" = linux-x64 ]; then cc=${CC_LINUX_X64:-gcc}; else cc=${CC_LINUX_ARM64:-aarch64-linux-gnu-gcc}; fi
      $cc -shared -fPIC -s "${cflags[@]}" -I"$dir" -o "$dir/guise.node" "$here/src/guise_node.c" \
        -L"$dir" -lguise -Wl,-rpath,'$ORIGIN' -Wl,--as-needed
      echo "\"os\": [\"linux\"], \"cpu\": [\"${plat#linux-}\"], \"libc\": [\"glibc\"]"
      ;;
    win32-x64)
      cc=${CC_WIN32_X64:-x86_64-w64-mingw32-gcc}
      local nm=${cc%-gcc}-nm dlltool=${cc%-gcc}-dlltool
      $cc -c "${cflags[@]}" -DNAPI_EXTERN='__declspec(dllimport)' -DUSING_UV_SHARED=1 -I"$dir" \
        -o "$stage/guise_node.o" "$here/src/guise_node.c"
      {
        echo "LIBRARY node.exe"
        echo "EXPORTS"
        $nm -u "$stage/guise_node.o" | sed -n 's/^ *U __imp_\(\(napi\|uv\)_[a-z_0-9]*\)$/\1/p'
      } >"$stage/node.def"
      $dlltool -d "$stage/node.def" -l "$stage/libnode.a" -D node.exe
      $cc -shared -s -static-libgcc -o "$dir/guise.node" "$stage/guise_node.o" -L"$stage" -lnode "$dir/guise.dll"
      echo '"os": ["win32"], "cpu": ["x64"]'
      ;;
    darwin-x64 | darwin-arm64)
      if [ "$plat" = darwin-x64 ]; then cc=${CC_DARWIN_X64:-clang -arch x86_64}; else cc=${CC_DARWIN_ARM64:-clang -arch arm64}; fi
      $cc -shared "${cflags[@]}" -I"$dir" -o "$dir/guise.node" "$here/src/guise_node.c" \
        -L"$dir" -lguise -Wl,-undefined,dynamic_lookup -Wl,-rpath,@loader_path
      echo "\"os\": [\"darwin\"], \"cpu\": [\"${plat#darwin-}\"]"
      ;;
    *) die "no addon build for $plat" ;;
  esac
}

platforms=()
for libdir in "$dist"/lib/*/; do
  plat=$(basename "$libdir")
  name=@guise-http/guise-$plat
  dir=$stage/$plat
  mkdir -p "$dir"
  lib=
  for f in libguise.so guise.dll libguise.dylib; do [ -f "$libdir/$f" ] && lib=$f; done
  [ -n "$lib" ] || die "$libdir has no libguise"
  cp "$libdir/$lib" "$libdir/guise.h" "$dir/"
  fields=$(addon "$plat" "$dir")
  rm "$dir/guise.h"
  cat >"$dir/package.json" <<EOF
{
  "name": "$name",
  "version": "$version",
  "description": "The $plat native addon and library of guise (npm install guise installs it)",
  "license": "MIT",
  "repository": { "type": "git", "url": "https://github.com/guise-http/guise" },
  $fields,
  "files": ["guise.node", "$lib"],
  "preferUnplugged": true
}
EOF
  cat >"$dir/README.md" <<EOF
# $name

guise's native addon (guise.node) and library ($lib) for $plat. Install
\`guise\`, which depends on it: \`npm install guise\`.
EOF
  "$here/check-addon.sh" "$dir/guise.node"
  "$root/bindings/check-lib.sh" "$dir/$lib"
  platforms+=("$plat")
done
[ ${#platforms[@]} -gt 0 ] || die "no platforms in $dist/lib"

main=$stage/guise
mkdir -p "$main"
cp "$here/index.js" "$here/index.d.ts" "$here/version.js" "$here/README.md" "$main/"
node - "$here/package.json" "$main/package.json" "$version" "${platforms[@]}" <<'EOF'
const fs = require('node:fs');
const [from, to, version, ...platforms] = process.argv.slice(2);
const pkg = JSON.parse(fs.readFileSync(from, 'utf8'));
pkg.version = version;
pkg.files = ['index.js', 'index.d.ts', 'version.js'];
pkg.repository = { type: 'git', url: 'https://github.com/guise-http/guise' };
delete pkg.scripts;
delete pkg.private; // the tree's package.json is private: the package to publish is this one
pkg.optionalDependencies = Object.fromEntries(platforms.map((p) => [`@guise-http/guise-${p}`, version]));
fs.writeFileSync(to, JSON.stringify(pkg, null, 2) + '\n');
EOF

for dir in "$main" "${platforms[@]/#/$stage/}"; do
  (cd "$dir" && npm pack --ignore-scripts --silent --pack-destination "$out" >/dev/null)
done
(cd "$out" && for f in *.tgz; do
  printf '%s\t%s\t%s\n' "$(stat -c %s "$f")" "$f" "$(tar -tzf "$f" | wc -l)"
done | awk -F'\t' '{printf "%10.1f KiB  node/%s (%d files)\n", $1/1024, $2, $3}')

# The arm64 and Windows packages run under qemu-user and Wine where they
# are installed (else check-foreign.sh says which it skipped).
"$here/check-foreign.sh" "$dist"
