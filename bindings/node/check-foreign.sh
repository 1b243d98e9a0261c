#!/usr/bin/env bash
# bindings/node/check-foreign.sh DIST runs the packages this machine cannot
# run natively, as far as it can: linux-arm64 under qemu-user, win32-x64
# under Wine. There is no Node for either here, so test/addon-host.c stands
# in for it: it loads the package's guise.node as Node would (on Linux
# dlopen with RTLD_NOW, libguise found through RUNPATH $ORIGIN; on Windows,
# built as node.exe exporting the N-API and libuv functions the addon
# imports from node.exe, LoadLibraryExW with LOAD_WITH_ALTERED_SEARCH_PATH,
# guise.dll found beside the addon), runs its napi_register_module_v1
# against stub N-API and libuv functions (the ABI check, then its
# properties), and makes one request with libguise's guise_fetch to a local
# HTTP server.
#
# Needs: qemu-aarch64 (Debian qemu-user) and aarch64-linux-gnu-gcc (whose
# /usr/aarch64-linux-gnu is the arm64 sysroot); wine64 (Debian wine64) and
# x86_64-w64-mingw32-gcc. A platform whose tools are missing is skipped,
# with a line saying so.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

die() { echo "check-foreign.sh: $*" >&2; exit 1; }
# skip says why a platform was not run; with GUISE_REQUIRE_PEERS=1 (CI) a
# missing tool fails instead.
skip() {
  [ "${GUISE_REQUIRE_PEERS:-}" = 1 ] && die "$* (GUISE_REQUIRE_PEERS=1: install qemu-user and wine64)"
  echo "check-foreign.sh: $*"
}

[ $# -eq 1 ] || die "usage: bindings/node/check-foreign.sh DIST"
dist=$(cd "$1" && pwd)
version=$(node -p "require('$here/version.js').version")

work=$(mktemp -d)
server=
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

port=$(node -e 'const s = require("node:net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })')
node -e 'require("node:http").createServer((q, r) => r.end("hello from the host")).listen(Number(process.argv[1]), "127.0.0.1")' "$port" &
server=$!
for _ in $(seq 50); do
  node -e 'require("node:net").connect(Number(process.argv[1]), "127.0.0.1").on("connect", () => process.exit(0)).on("error", () => process.exit(1))' "$port" && break
  sleep 0.1
done
url=http://127.0.0.1:$port/

# The N-API functions addon-host.c defines itself, to print their arguments.
own=" napi_create_int32 napi_create_string_utf8 napi_define_properties napi_throw_error "

# stubs PREFIX: a C function returning napi_ok (0) for each name on stdin
# but addon-host.c's own, each declared with PREFIX.
stubs() {
  while read -r f; do
    case $own in *" $f "*) continue ;; esac
    echo "$1 int $f(void) { return 0; }"
  done
}

# expect PLATFORM OUTPUT checks addon-host's output.
expect() {
  echo "$2" | sed 's/^/  /'
  echo "$2" | grep -q "^libguise: guise_abi_version 1$" || die "$1: libguise's ABI is not 1"
  echo "$2" | grep -q "^addon: napi_register_module_v1 returned its exports$" || die "$1: the addon's init did not finish"
  echo "$2" | grep -q "status 200, proto 2, 19 body bytes$" || die "$1: the request did not come back as sent"
}

check_arm64() {
  local cc=${CC_LINUX_ARM64:-aarch64-linux-gnu-gcc} sysroot=${QEMU_LD_PREFIX:-/usr/aarch64-linux-gnu}
  local tgz=$dist/node/guise-http-guise-linux-arm64-$version.tgz dir=$work/linux-arm64
  for tool in qemu-aarch64 "$cc" "${cc%-gcc}-nm"; do
    command -v "$tool" >/dev/null || { skip "linux-arm64 skipped: no $tool"; return; }
  done
  [ -f "$tgz" ] || { skip "linux-arm64 skipped: no $tgz"; return; }
  mkdir -p "$dir"
  tar -xzf "$tgz" -C "$dir"
  "${cc%-gcc}-nm" -D --undefined-only "$dir/package/guise.node" | awk '{print $NF}' | grep -E '^(napi|uv)_' |
    stubs "" >"$dir/stubs.c"
  $cc -O1 -rdynamic -I"$root/ffi" -o "$dir/addon-host" "$here/test/addon-host.c" "$dir/stubs.c" -ldl
  local out
  out=$(qemu-aarch64 -L "$sysroot" "$dir/addon-host" "$dir/package/guise.node" "$url" 2>&1) ||
    die "linux-arm64: addon-host failed under qemu: $out"
  expect linux-arm64 "$out"
  echo "check-foreign.sh: $tgz: under qemu-aarch64 the addon loads (libguise through \$ORIGIN), initialises, and its library makes a request"
}

check_win32() {
  local cc=${CC_WIN32_X64:-x86_64-w64-mingw32-gcc} wine
  local tgz=$dist/node/guise-http-guise-win32-x64-$version.tgz dir=$work/win32-x64
  wine=$(command -v wine64 || command -v /usr/lib/wine/wine64 || true)
  [ -n "$wine" ] || { skip "win32-x64 skipped: no wine64"; return; }
  for tool in "$cc" "${cc%-gcc}-objdump"; do
    command -v "$tool" >/dev/null || { skip "win32-x64 skipped: no $tool"; return; }
  done
  [ -f "$tgz" ] || { skip "win32-x64 skipped: no $tgz"; return; }
  mkdir -p "$dir/host"
  tar -xzf "$tgz" -C "$dir"
  # What the addon imports from node.exe: the import table's node.exe part.
  "${cc%-gcc}-objdump" -p "$dir/package/guise.node" |
    awk '/^\tDLL Name: /{dll=$3; next} /^\t[0-9a-f]+\t +[0-9]+ +[A-Za-z_]/{if (dll == "node.exe") print $NF}' |
    stubs "__declspec(dllexport)" >"$dir/stubs.c"
  # node.exe in a directory of its own: guise.dll is only beside the addon.
  $cc -O1 -I"$root/ffi" -o "$dir/host/node.exe" "$here/test/addon-host.c" "$dir/stubs.c"
  local out addon
  export WINEDEBUG=-all WINEPREFIX=${WINEPREFIX:-$HOME/.cache/guise-wine}
  # Go's runtime (1.21 on) takes its randomness from ProcessPrng in
  # bcryptprimitives.dll, which it loads from system32 and which Windows 10
  # has and Wine 8 has not: the prefix gets one that forwards to
  # RtlGenRandom (advapi32's SystemFunction036).
  "$wine" cmd /c exit 0 >/dev/null 2>&1 || true # makes the prefix
  local sys32=$WINEPREFIX/drive_c/windows/system32
  if ! grep -q ProcessPrng "$sys32/bcryptprimitives.dll" 2>/dev/null; then
    cat >"$dir/prng.c" <<'EOF'
#include <windows.h>
BOOLEAN WINAPI SystemFunction036(PVOID buf, ULONG n);
__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE buf, SIZE_T n) {
	while (n > 0) {
		ULONG k = n > 0x10000000 ? 0x10000000 : (ULONG)n;
		if (!SystemFunction036(buf, k)) return FALSE;
		buf += k;
		n -= k;
	}
	return TRUE;
}
EOF
    $cc -shared -O1 -o "$sys32/bcryptprimitives.dll" "$dir/prng.c" -ladvapi32
  fi
  addon="Z:${dir//\//\\}\\package\\guise.node" # Wine's drive Z: is /
  out=$("$wine" "$dir/host/node.exe" "$addon" "$url" 2>&1 | tr -d '\r') || die "win32-x64: addon-host failed under Wine: $out"
  expect win32-x64 "$out"
  echo "$out" | grep -qi "^libguise: loaded from .*package.guise.dll$" || die "win32-x64: guise.dll was not the one beside the addon"
  # The control: without LOAD_WITH_ALTERED_SEARCH_PATH guise.dll is not found.
  if out=$(ADDON_HOST_PLAIN=1 "$wine" "$dir/host/node.exe" "$addon" "$url" 2>&1 | tr -d '\r'); then
    die "win32-x64: the addon loaded without LOAD_WITH_ALTERED_SEARCH_PATH too, so the check proves nothing: $out"
  fi
  echo "  without LOAD_WITH_ALTERED_SEARCH_PATH: $out"
  echo "check-foreign.sh: $tgz: under Wine the addon loads (guise.dll beside it, by LOAD_WITH_ALTERED_SEARCH_PATH), initialises, and its library makes a request"
}

check_arm64
check_win32
