#!/usr/bin/env bash
# format.sh - every C source and header follows the committed .clang-format.
set -euo pipefail
cd "${GP_SRC:?}"
if ! command -v clang-format >/dev/null 2>&1; then
    echo "SKIP: clang-format is not installed"
    exit 77
fi
bad=$(find src tests fuzz bench -name '*.[ch]' -print0 2>/dev/null |
      xargs -0 -n1 sh -c 'clang-format --dry-run -Werror "$0" >/dev/null 2>&1 || echo "$0"')
if [ -n "$bad" ]; then
    echo "not formatted with clang-format (run clang-format -i on them):"
    echo "$bad"
    exit 1
fi
echo "all sources formatted"
