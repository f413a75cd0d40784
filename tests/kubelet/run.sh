#!/usr/bin/env bash
# run.sh - runs one kubelet stand-in test (tests/kubelet/*_test.js) with
# Node.js; skipped (77) where node or the npm modules are absent
# (scripts/deps.sh installs them with npm ci).
set -u
here=$(cd "$(dirname "$0")" && pwd)
command -v node >/dev/null || { echo "skipped: node not installed"; exit 77; }
[ -d "$here/node_modules/@grpc/grpc-js" ] || { echo "skipped: $here/node_modules absent (npm ci)"; exit 77; }
exec node "$here/$1"
