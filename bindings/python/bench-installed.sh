#!/usr/bin/env bash
# bindings/python/bench-installed.sh DIST [ROUNDS] [N] measures the Python
# binding's overhead over the Go API (bench.py: N sequential keep-alive GETs
# of /small over HTTP/1.1 on one Session, as bindings/node/bench/bench.js
# -pyonly does) for the tree build (PYTHONPATH=bindings/python with
# bindings/lib/libguise.so, which bindings/build.sh makes) and for DIST's
# manylinux x86_64 wheel installed in a fresh venv, run from outside the
# checkout: the Go API and the two taking turns ROUNDS times against one
# bench/cmd/bindserver. Prints each run's µs CPU/req, the medians, the
# overheads (medians and minima) and each column's spread (max - min).
set -euo pipefail
dist=$(cd "$1" && pwd) rounds=${2:-7} n=${3:-10000}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
python=${PYTHON:-/usr/bin/python3}
[ -f "$root/bindings/lib/libguise.so" ] || { echo "bench-installed.sh: no bindings/lib/libguise.so: run bindings/build.sh" >&2; exit 1; }
tmp=$(mktemp -d /tmp/guise-bench.XXXXXX)
trap 'exec 3>&-; rm -rf "$tmp"' EXIT

(cd "$root/bench" && go build -o bin/bindserver ./cmd/bindserver)
mkfifo "$tmp/in"
"$root/bench/bin/bindserver" <"$tmp/in" >"$tmp/urls" &
exec 3>"$tmp/in"
until grep -q '^h1 ' "$tmp/urls"; do sleep 0.1; done
url=$(sed -n 's/^h1 //p' "$tmp/urls")/small

export PIP_CONFIG_FILE=/dev/null PIP_DISABLE_PIP_VERSION_CHECK=1
"$python" -m venv "$tmp/venv"
"$tmp/venv/bin/python" -m pip install -q --no-index "$dist"/python/guise-*-manylinux_*_x86_64.whl
cp "$here/bench.py" "$tmp/bench.py"

cpu() { sed -n 's/.*: \([0-9.]*\) us CPU\/req.*/\1/p'; }
go=() tree=() inst=()
for ((i = 0; i < rounds; i++)); do
  go+=("$("$root/bench/bin/bindserver" -go "$url" -n "$n" | cpu)")
  tree+=("$(env -u GUISE_LIB PYTHONPATH="$here" "$python" "$here/bench.py" "$url" "$n" | cpu)")
  inst+=("$(cd "$tmp" && env -u GUISE_LIB -u PYTHONPATH "$tmp/venv/bin/python" bench.py "$url" "$n" | cpu)")
done
"$python" - "$n" "$rounds" "${go[*]}" "${tree[*]}" "${inst[*]}" <<'PY'
import statistics, sys
n, rounds = sys.argv[1], sys.argv[2]
cols = {name: [float(x) for x in v.split()] for name, v in zip(("go", "tree", "installed"), sys.argv[3:])}
print(f"{n} sequential keep-alive GETs of /small over HTTP/1.1, {rounds} alternating runs each, us CPU/req:")
for name, v in cols.items():
    print(f"  {name:9} {', '.join(f'{x:.1f}' for x in v)}; median {statistics.median(v):.1f}, "
          f"spread {max(v) - min(v):.1f}")
g = cols["go"]
for name in ("tree", "installed"):
    v = cols[name]
    print(f"  Python overhead, {name:9}: {statistics.median(v) - statistics.median(g):.1f} us CPU/req (medians), "
          f"{min(v) - min(g):.1f} (minima)")
PY
