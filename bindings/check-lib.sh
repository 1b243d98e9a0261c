#!/usr/bin/env bash
# bindings/check-lib.sh LIB...: checks each built libguise (dist/lib/PLATFORM/…)
# as far as this machine can without running it: the machine type its
# headers state is PLATFORM's, and the functions it exports are exactly
# those ffi/guise.h declares. Exits 1 on the first that is not.
set -euo pipefail
cd "$(dirname "$0")/.."

fail() { echo "check-lib.sh: $*" >&2; exit 1; }

# The functions guise.h declares: cgo's "extern T name(" lines and the
# blocking forms declared in the preamble.
want=$(sed -nE 's/^(extern )?[a-z_0-9]+ \*?(guise_[a-z_0-9]+)\(.*/\2/p' ffi/guise.h | sort -u)
[ "$(echo "$want" | wc -l)" -ge 20 ] || fail "found only $(echo "$want" | wc -l) functions in ffi/guise.h"

for lib in "$@"; do
  plat=$(basename "$(dirname "$lib")")
  case $plat in
    linux-x64) machine="Advanced Micro Devices X86-64" ;;
    linux-arm64) machine="AArch64" ;;
    win32-x64) machine="pei-x86-64" ;;
    darwin-*) machine="" ;;
    *) fail "$lib: no platform in its path" ;;
  esac
  case $plat in
    linux-*)
      got=$(readelf -h "$lib" | sed -n 's/^ *Machine: *//p')
      [ "$got" = "$machine" ] || fail "$lib: machine $got, want $machine"
      [ "$(readelf -h "$lib" | sed -n 's/^ *Type: *\([A-Z]*\).*/\1/p')" = DYN ] || fail "$lib: not a shared object"
      have=$(readelf --dyn-syms -W "$lib" | awk '$5 == "GLOBAL" && $7 != "UND" {print $8}' | sed 's/@.*//' | grep '^guise_' | sort -u)
      ;;
    win32-*)
      objdump=${OBJDUMP_WIN32:-x86_64-w64-mingw32-objdump}
      got=$($objdump -f "$lib" | sed -n 's/.*file format //p')
      [ "$got" = "$machine" ] || fail "$lib: format $got, want $machine"
      $objdump -p "$lib" | sed -n '/^Characteristics/,/^$/p' | grep -qx $'\t*DLL' || fail "$lib: not a DLL"
      have=$($objdump -p "$lib" | sed -n '/\[Ordinal\/Name Pointer\] Table/,/^$/p' | grep -oE '\bguise_[a-z_0-9]+$' | sort -u)
      ;;
    darwin-*)
      have=$(nm -gU "$lib" | awk '{print $3}' | sed 's/^_//' | grep '^guise_' | sort -u)
      ;;
  esac
  if [ "$have" != "$want" ]; then
    diff <(echo "$want") <(echo "$have") | sed 's/^</  declared, not exported:/; s/^>/  exported, not declared:/' >&2 || true
    fail "$lib: its exports differ from ffi/guise.h"
  fi
  echo "$lib: $plat, $(echo "$have" | wc -l) functions as ffi/guise.h declares"
done
