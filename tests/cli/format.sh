#!/usr/bin/env bash
# format.sh - every C source and header follows the committed .clang-format.
set -euo pipefail
cd "${GP_SRC:?}"
if ! command -v clang-format >/dev/null 2>&1; then
    echo "SKIP: clang-format is not installed"
    exit 77
fi
# a few clang-format processes for all the files, not one each (hundreds of
# starts took minutes on a loaded machine): each file that differs is named
# in its diagnostics ("FILE:LINE:COL: error: code should be clang-formatted")
rc=0
out=$(find src tests fuzz bench -name '*.[ch]' -print0 2>/dev/null |
      xargs -0 clang-format --dry-run -Werror 2>&1 >/dev/null) || rc=$?
bad=$(sed -n 's/^\(.*\.[ch]\):[0-9]*:[0-9]*: error: code should be clang-formatted.*/\1/p' <<<"$out" | sort -u)
if [ "$rc" -ne 0 ] && [ -z "$bad" ]; then # clang-format itself failed
    echo "clang-format failed (exit $rc):"
    head -20 <<<"$out"
    exit 1
fi
if [ -n "$bad" ]; then
    echo "not formatted with clang-format (run clang-format -i on them):"
    echo "$bad"
    exit 1
fi
echo "all sources formatted"
