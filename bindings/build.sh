#!/usr/bin/env bash
# Builds libguise.so (the C ABI, ffi/) into bindings/lib and the Node addon
# (bindings/node/build/guise.node, linked to it with an $ORIGIN rpath).
# The Python package loads bindings/lib/libguise.so (or $GUISE_LIB).
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p bindings/lib bindings/node/build
go build -trimpath -buildmode=c-shared -o bindings/lib/libguise.so ./ffi
mv bindings/lib/libguise.h bindings/lib/guise.h # compared with ffi/guise.h by .ci/run
nodeinc=${NODE_INCLUDE:-}
if [ -z "$nodeinc" ]; then
  for d in /usr/include/node /usr/local/include/node "$(dirname "$(dirname "$(command -v node)")")/include/node"; do
    if [ -f "$d/node_api.h" ]; then nodeinc=$d; break; fi
  done
fi
if [ -z "$nodeinc" ]; then
  echo "build.sh: node_api.h not found (install libnode-dev, or set NODE_INCLUDE)" >&2
  exit 1
fi
cc -shared -fPIC -O2 -Wall -Wextra -Wno-unused-parameter -std=c11 -DNODE_GYP_MODULE_NAME=guise \
  -I"$nodeinc" -Ibindings/lib -o bindings/node/build/guise.node bindings/node/src/guise_node.c \
  -Lbindings/lib -lguise -Wl,-rpath,'$ORIGIN/../../lib'
echo "built bindings/lib/libguise.so and bindings/node/build/guise.node"
