#!/usr/bin/env bash
# golden_sim.sh - small simulations whose JSON and CSV must match the
# committed golden files byte for byte, and the same run twice gives the
# same bytes. GP_UPDATE_GOLDEN=1 rewrites the golden files (review the diff).
set -uo pipefail
gp="${GPUPLANE:?}"
src="${GP_SRC:?}"
golden="$src/tests/golden"
# relative paths: the input names are part of the JSON, the same in every clone
cd "$src"
data="tests/data/sim"
. "$src/tests/cli/lib/common.sh"

# case NAME ARGS... : runs gpuplane sim ARGS --json --csv and compares
case_() {
    local name="$1"
    shift
    if ! "$gp" sim "$@" --quiet --json "$tmp/$name.json" --csv "$tmp/$name.csv" 2>"$tmp/err"; then
        echo "FAIL $name: gpuplane sim failed: $(cat "$tmp/err")"
        fails=$((fails + 1))
        return
    fi
    "$gp" sim "$@" --quiet --json "$tmp/$name.again.json" --csv "$tmp/$name.again.csv"
    if ! cmp -s "$tmp/$name.json" "$tmp/$name.again.json" ||
        ! cmp -s "$tmp/$name.csv" "$tmp/$name.again.csv"; then
        echo "FAIL $name: two runs with the same inputs and seed differ"
        fails=$((fails + 1))
    fi
    for ext in json csv; do
        local want="$golden/sim-$name.$ext"
        if [ "${GP_UPDATE_GOLDEN:-0}" = 1 ]; then
            cp "$tmp/$name.$ext" "$want"
            echo "updated $want"
        elif ! diff -u "$want" "$tmp/$name.$ext" >"$tmp/diff"; then
            echo "FAIL $name: $ext differs from $want:"
            head -40 "$tmp/diff"
            fails=$((fails + 1))
        fi
    done
    echo "ok   $name"
}

case_ demo
case_ static-best-fit --mode static --cluster "openb:$data/nodes.csv" \
    --workload "openb:$data/pods.csv" --policy best-fit --seed 42
case_ static-random --mode static --cluster "openb:$data/nodes.csv" \
    --workload "openb:$data/pods.csv" --policy random --seed 42
case_ timed-trace --cluster "openb:$data/nodes.csv" --workload "openb:$data/pods.csv" \
    --policy gpu-packing --seed 3 --sample 1h
case_ timed-gangs --cluster examples/cluster-racks.yaml --workload examples/training-gangs.yaml \
    --policy fgd --seed 2
case_ timed-mixed --cluster examples/cluster-mixed.yaml \
    --workload examples/workload-mixed.yaml --policy spread --seed 5 --horizon 12h
case_ timed-queues --cluster examples/cluster-racks.yaml --workload examples/queues.yaml \
    --policy best-fit --seed 7
case_ timed-sharing --cluster examples/cluster-sharing.yaml \
    --workload examples/workload-sharing.yaml --horizon 12h --seed 3
case_ timed-affinity --cluster examples/cluster-zones.yaml \
    --workload examples/workload-affinity.yaml --horizon 8h --seed 4

# a different seed must change a static run (the shuffle depends on it)
"$gp" sim --mode static --cluster "openb:$data/nodes.csv" --workload "openb:$data/pods.csv" \
    --seed 43 --quiet --json "$tmp/other.json"
if cmp -s "$tmp/other.json" "$tmp/static-best-fit.json"; then
    echo "FAIL seed: seeds 42 and 43 gave identical static runs"
    fails=$((fails + 1))
fi

if [ "$fails" -ne 0 ]; then
    echo "$fails golden simulation check(s) failed"
    exit 1
fi
echo "all golden simulations match"
