#!/usr/bin/env bash
# bindings/node/check-addon.sh ADDON...: checks each built guise.node
# (in a directory named for its PLATFORM, as bindings/node/package.sh
# stages them) as far as this machine can without running it:
#
#   - its machine type is PLATFORM's and it is a shared object (DLL);
#   - it exports napi_register_module_v1, which Node looks for;
#   - it needs only libguise (found beside it) and the system's C library:
#     on Linux DT_NEEDED libguise.so and libc.so.6 and RUNPATH $ORIGIN;
#     on Windows imports from guise.dll, node.exe (napi_* and uv_* only),
#     KERNEL32.dll and msvcrt.dll, no mingw runtime DLL;
#   - the guise_* functions it imports are all declared by ffi/guise.h.
#
# On Linux it prints the newest glibc symbol version the addon needs.
set -euo pipefail
cd "$(dirname "$0")/../.."

fail() { echo "check-addon.sh: $*" >&2; exit 1; }

declared=$(sed -nE 's/^(extern )?[a-z_0-9]+ \*?(guise_[a-z_0-9]+)\(.*/\2/p' ffi/guise.h | sort -u)

for addon in "$@"; do
  plat=$(basename "$(dirname "$addon")")
  case $plat in
    linux-*)
      case $plat in
        linux-x64) machine="Advanced Micro Devices X86-64" ;;
        linux-arm64) machine="AArch64" ;;
        *) fail "$addon: unknown platform $plat" ;;
      esac
      got=$(readelf -h "$addon" | sed -n 's/^ *Machine: *//p')
      [ "$got" = "$machine" ] || fail "$addon: machine $got, want $machine"
      [ "$(readelf -h "$addon" | sed -n 's/^ *Type: *\([A-Z]*\).*/\1/p')" = DYN ] || fail "$addon: not a shared object"
      needed=$(readelf -d "$addon" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
      [ "$needed" = "libc.so.6 libguise.so " ] || fail "$addon: needs $needed, want libc.so.6 libguise.so"
      runpath=$(readelf -d "$addon" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
      [ "$runpath" = '$ORIGIN' ] || fail "$addon: RUNPATH '$runpath', want \$ORIGIN"
      syms=$(readelf --dyn-syms -W "$addon")
      echo "$syms" | awk '$7 != "UND" {print $8}' | grep -qx napi_register_module_v1 || fail "$addon: does not export napi_register_module_v1"
      imports=$(echo "$syms" | awk '$7 == "UND" {print $8}' | sed 's/@.*//' | grep '^guise_' | sort -u)
      glibc=$(echo "$syms" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)
      detail="needs $needed(RUNPATH \$ORIGIN), glibc symbols up to $glibc"
      ;;
    win32-x64)
      objdump=${OBJDUMP_WIN32:-x86_64-w64-mingw32-objdump}
      got=$($objdump -f "$addon" | sed -n 's/.*file format //p')
      [ "$got" = pei-x86-64 ] || fail "$addon: format $got, want pei-x86-64"
      p=$($objdump -p "$addon")
      echo "$p" | sed -n '/^Characteristics/,/^$/p' | grep -qx $'\t*DLL' || fail "$addon: not a DLL"
      echo "$p" | sed -n '/\[Ordinal\/Name Pointer\] Table/,/^$/p' | grep -q '\bnapi_register_module_v1$' ||
        fail "$addon: does not export napi_register_module_v1"
      dlls=$(echo "$p" | sed -n 's/^\tDLL Name: //p' | sort -f | tr '\n' ' ')
      [ "$dlls" = "guise.dll KERNEL32.dll msvcrt.dll node.exe " ] ||
        fail "$addon: imports from $dlls, want guise.dll KERNEL32.dll msvcrt.dll node.exe"
      # The import table, DLL by DLL: "DLL Name: X" then one line per function.
      fromnode=$(echo "$p" | awk '/^\tDLL Name: /{dll=$3; next} /^\t[0-9a-f]+\t +[0-9]+ +[A-Za-z_]/{print dll, $NF}')
      odd=$(echo "$fromnode" | awk '$1 == "node.exe" && $2 !~ /^(napi|uv)_/ {print $2}')
      [ -z "$odd" ] || fail "$addon: imports from node.exe what is not N-API or libuv: $odd"
      imports=$(echo "$fromnode" | awk '$1 == "guise.dll" {print $2}' | sort -u)
      detail="imports from $dlls($(echo "$fromnode" | awk '$1 == "node.exe"' | wc -l) N-API and libuv functions from node.exe)"
      ;;
    darwin-*)
      imports=$(nm -u "$addon" | sed 's/^_//' | grep '^guise_' | sort -u)
      detail="$(otool -L "$addon" | tail -n +2 | awk '{print $1}' | tr '\n' ' ')"
      ;;
    *) fail "$addon: no platform in its path" ;;
  esac
  [ -n "$imports" ] || fail "$addon: imports no guise_ function"
  extra=$(comm -23 <(echo "$imports") <(echo "$declared"))
  [ -z "$extra" ] || fail "$addon: imports guise functions ffi/guise.h does not declare: $extra"
  echo "$addon: $plat, $detail, $(echo "$imports" | wc -l) guise functions"
done
