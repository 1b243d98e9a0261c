#!/usr/bin/env bash
# bindings/readme-examples.sh python PYTHON | node NODEDIR runs the README's
# Python example with the interpreter PYTHON, or its Node example in NODEDIR
# (a project in which require('guise') is the installed package), as printed
# but with https://example.com/ replaced by a loopback HTTP server. It fails
# when the example fails or prints other than what the server sent.
set -euo pipefail
case ${1:-} in
  python) langs=Python:python py=$2 ;;
  node) langs=Node:js nodedir=$2 ;;
  *) echo "usage: readme-examples.sh python PYTHON | node NODEDIR" >&2; exit 2 ;;
esac
readme="$(cd "$(dirname "$0")/.." && pwd)/README.md"
work=$(mktemp -d)
trap 'kill "$srv" 2>/dev/null || true; rm -rf "$work"' EXIT

# example LANG FENCE: the fenced block after the line "LANG:".
example() {
  awk -v head="$1:" -v fence="\`\`\`$2" '
    $0 == head { want = 1; next }
    want && $0 == fence { inside = 1; next }
    inside && $0 == "```" { exit }
    inside { print }' "$readme"
}

/usr/bin/python3 - "$work/port" <<'PY' &
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        b = b"<title>readme</title>" + b"x" * 100
        self.send_response(200)
        self.send_header("content-type", "text/html")
        self.send_header("content-length", str(len(b)))
        self.end_headers()
        self.wfile.write(b)
    def log_message(self, *a):
        pass
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
open(sys.argv[1], "w").write(str(s.server_port))
s.serve_forever()
PY
srv=$!
for _ in $(seq 50); do [ -s "$work/port" ] && break; sleep 0.1; done
url="http://127.0.0.1:$(cat "$work/port")/"

for lang in $langs; do
  src=$(example "${lang%%:*}" "${lang#*:}")
  [ -n "$src" ] || { echo "readme-examples.sh: README.md has no ${lang%%:*} example" >&2; exit 1; }
  grep -q 'https://example.com/' <<<"$src" || { echo "readme-examples.sh: the ${lang%%:*} example visits no https://example.com/" >&2; exit 1; }
  src=${src//https:\/\/example.com\//$url}
  if [ "${lang%%:*}" = Python ]; then
    out=$(cd "$work" && "$py" -c "$src")
  else
    printf '%s\n' "$src" >"$nodedir/readme-example.js"
    out=$(cd "$nodedir" && node readme-example.js)
  fi
  want=$'200 text/html 121\n200 <title>readme</title>xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx'
  if [ "$out" != "$want" ]; then
    echo "readme-examples.sh: the ${lang%%:*} example printed:" >&2; echo "$out" >&2
    echo "want:" >&2; echo "$want" >&2; exit 1
  fi
  echo "README's ${lang%%:*} example: ok"
done
