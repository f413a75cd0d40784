#!/usr/bin/env bash
# valgrind.sh - memcheck on a few examples: `gpuplane sim` on the gangs
# example under fgd and fgd-pack (the FGD cache keys once compared struct
# padding with memcmp: uninitialised reads), the sharing example (MIG,
# time-slicing, MPS) and the queues example (preemption, reclaim), each
# writing JSON, CSV and the HTML report. Any memcheck error or a definite
# leak fails. Skips (exit 77) without valgrind, or on a sanitizer build
# (valgrind cannot run an ASan binary; the ASan suite checks memory there).
set -uo pipefail
gp="${GPUPLANE:?}"
src="${GP_SRC:?}"
if ! command -v valgrind >/dev/null 2>&1; then
    echo "skipped: valgrind is not installed (scripts/deps.sh installs it)"
    exit 77
fi
if [ "${GP_SANITIZE:-0}" = 1 ]; then
    echo "skipped: a sanitizer build (valgrind cannot run it)"
    exit 77
fi
cd "$src"
. "$src/tests/cli/lib/common.sh"

# check NAME ARGS... : gpuplane sim ARGS under memcheck
check() {
    local name="$1"
    shift
    valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
        --log-file="$tmp/$name.vg" "$gp" sim "$@" --quiet --json "$tmp/$name.json" \
        --csv "$tmp/$name.csv" --report "$tmp/$name.html" >"$tmp/$name.out" 2>&1
    local rc=$?
    if [ "$rc" -eq 99 ]; then
        echo "FAIL $name: memcheck errors:"
        head -60 "$tmp/$name.vg"
        fails=$((fails + 1))
    elif [ "$rc" -ne 0 ]; then
        echo "FAIL $name: exit code $rc:"
        cat "$tmp/$name.out" "$tmp/$name.vg"
        fails=$((fails + 1))
    else
        echo "ok   $name: no memcheck error, no definite leak"
    fi
}

gangs=(--cluster examples/cluster-racks.yaml --workload examples/training-gangs.yaml)
check gangs-fgd "${gangs[@]}" --policy fgd
check gangs-fgd-pack "${gangs[@]}" --policy fgd-pack
check sharing --cluster examples/cluster-sharing.yaml --workload examples/workload-sharing.yaml
check queues --cluster examples/cluster-racks.yaml --workload examples/queues.yaml

if [ "$fails" -ne 0 ]; then
    echo "$fails valgrind check(s) failed"
    exit 1
fi
echo "all valgrind checks passed"
