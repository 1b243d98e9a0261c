#!/usr/bin/env bash
# bindings/node/check-arm64.sh DIST runs the linux-arm64 package's addon and
# library under qemu-user, where this machine has no arm64 CPU and no arm64
# Node: test/addon-host.c, a stand-in for Node built with
# aarch64-linux-gnu-gcc, dlopens the package's guise.node (RTLD_NOW: every
# import must resolve, libguise's through RUNPATH $ORIGIN), runs its
# napi_register_module_v1 with stub N-API and libuv functions, and makes one
# request with libguise's guise_fetch to a local HTTP server. It needs
# qemu-aarch64 (Debian: qemu-user) and gcc-aarch64-linux-gnu, whose
# /usr/aarch64-linux-gnu is the arm64 sysroot; without them it says so and
# exits 0.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

die() { echo "check-arm64.sh: $*" >&2; exit 1; }

[ $# -eq 1 ] || die "usage: bindings/node/check-arm64.sh DIST"
dist=$(cd "$1" && pwd)
cc=${CC_LINUX_ARM64:-aarch64-linux-gnu-gcc}
sysroot=${QEMU_LD_PREFIX:-/usr/aarch64-linux-gnu}
for tool in qemu-aarch64 "$cc" "${cc%-gcc}-nm"; do
  command -v "$tool" >/dev/null || { echo "check-arm64.sh: skipped: no $tool"; exit 0; }
done
version=$(node -p "require('$here/version.js').version")
tgz=$dist/node/guise-http-guise-linux-arm64-$version.tgz
[ -f "$tgz" ] || die "no $tgz"

work=$(mktemp -d)
server=
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
tar -xzf "$tgz" -C "$work"
addon=$work/package/guise.node

# A stub returning napi_ok for each N-API and libuv function the addon
# imports, but the ones addon-host.c defines to print their arguments.
own="napi_create_int32 napi_create_string_utf8 napi_define_properties napi_throw_error"
"${cc%-gcc}-nm" -D --undefined-only "$addon" | awk '{print $NF}' | grep -E '^(napi|uv)_' | while read -r f; do
  case " $own " in *" $f "*) continue ;; esac
  echo "int $f(void) { return 0; }"
done >"$work/stubs.c"
$cc -O1 -rdynamic -I"$root/ffi" -o "$work/addon-host" "$here/test/addon-host.c" "$work/stubs.c" -ldl

port=$(node -e 'const s = require("node:net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })')
node -e 'require("node:http").createServer((q, r) => r.end("hello from the host")).listen(Number(process.argv[1]), "127.0.0.1")' "$port" &
server=$!
for _ in $(seq 50); do
  node -e 'require("node:net").connect(Number(process.argv[1]), "127.0.0.1").on("connect", () => process.exit(0)).on("error", () => process.exit(1))' "$port" && break
  sleep 0.1
done

out=$(qemu-aarch64 -L "$sysroot" "$work/addon-host" "$addon" "http://127.0.0.1:$port/") || die "the arm64 addon failed under qemu: $out"
echo "$out" | sed 's/^/  /'
echo "$out" | grep -q "^libguise: guise_abi_version 1$" || die "libguise's ABI is not 1"
echo "$out" | grep -q "^addon: napi_register_module_v1 returned its exports$" || die "the addon's init did not finish"
echo "$out" | grep -q "status 200, proto 2, 19 body bytes$" || die "the request did not come back as sent"
echo "check-arm64.sh: $tgz: the addon loads, initialises and its library makes a request, under qemu-aarch64"
