#!/usr/bin/env bash
# bindings/node/test-installed.sh DIST runs the Node suite against the npm
# tarballs bindings/package.sh wrote into DIST/node/, installed as a user
# installs them: into a fresh npm project in a temp dir outside the
# checkout, from the local .tgz files (guise and this platform's
# @guise-http/guise-PLATFORM; no registry), with no Go on PATH. The suite
# (test/*.test.js, copied into the project) requires 'guise' from the
# project's node_modules (GUISE_PACKAGE=guise); its fidelity test runs the
# CLI from DIST/cli's archive for this platform. Nothing is compiled but
# load.test.js's stub library of another ABI, when a C compiler is on
# PATH; guise.test.js runs with node and openssl alone on PATH.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

die() { echo "test-installed.sh: $*" >&2; exit 1; }

[ $# -eq 1 ] || die "usage: bindings/node/test-installed.sh DIST"
dist=$(cd "$1" && pwd)

# No Go: drop every PATH entry that holds a go binary.
path=
IFS=: read -ra dirs <<<"$PATH"
for d in "${dirs[@]}"; do
  [ -x "$d/go" ] || path=${path:+$path:}$d
done
export PATH=$path
! command -v go >/dev/null || die "go is still on PATH: $(command -v go)"

plat=$(node -p 'process.platform + "-" + process.arch')
version=$(node -p "require('$here/version.js').version")
main=$dist/node/guise-$version.tgz
native=$dist/node/guise-http-guise-$plat-$version.tgz
[ -f "$main" ] || die "no $main: run bindings/package.sh (or bindings/node/package.sh DIST $version)"
[ -f "$native" ] || die "no $native: this platform's package was not built"

case $plat in
  linux-x64) cli=linux-amd64 ;;
  linux-arm64) cli=linux-arm64 ;;
  darwin-x64) cli=darwin-amd64 ;;
  darwin-arm64) cli=darwin-arm64 ;;
  *) die "no CLI archive for $plat" ;;
esac
cliarchive=$dist/cli/guise-$version-$cli.tar.gz
[ -f "$cliarchive" ] || die "no $cliarchive, which the fidelity test runs"

proj=$(mktemp -d "${TMPDIR:-/tmp}/guise-npm-XXXXXX")
trap 'rm -rf "$proj"' EXIT
case $proj/ in "$root"/*) die "$proj is inside the checkout $root" ;; esac

cd "$proj"
tar -xzf "$cliarchive"
export GUISE_CLI=$proj/guise-$version-$cli/guise
mkdir test
cp "$here"/test/*.js test/
npm init -y >/dev/null
# --offline: the other platforms' optional packages are not fetched (npm
# skips an optional dependency it cannot get).
npm install --offline --no-audit --no-fund --loglevel=error "$native" "$main"

resolved=$(node -p 'require.resolve("guise")')
case $resolved in "$proj"/node_modules/guise/*) ;; *) die "require.resolve('guise') is $resolved, not in $proj/node_modules" ;; esac
addon=$(node -p "require.resolve('@guise-http/guise-$plat/guise.node', { paths: [require('node:path').dirname(require.resolve('guise'))] })")
echo "guise resolves to $resolved, its addon to $addon"
# The suite needs neither Go nor a compiler: it runs with a PATH of a
# directory holding node and openssl (the tests' certificates) alone.
mkdir bin
ln -s "$(command -v node)" bin/node
ln -s "$(command -v openssl)" bin/openssl
PATH=$proj/bin node -e 'const g = require("guise"); console.log(`require("guise") with PATH=${process.env.PATH} (node, openssl): guise ${g.version}`)'

# load.test.js's ABI test compiles a stub libguise when a compiler is on
# PATH (it is skipped when none is), so it runs with this PATH, without Go.
GUISE_PACKAGE=guise node --test test/load.test.js
GUISE_PACKAGE=guise PATH=$proj/bin node --expose-gc --test test/guise.test.js
cp -r "$root/profile/data" "$proj/profile-data"
GUISE_PACKAGE=guise GUISE_PROFILE_DATA=$proj/profile-data PATH=$proj/bin node --test test/profile-file.test.js
# The README's Node example, as printed, against the installed package.
"$root/bindings/readme-examples.sh" node "$proj"
