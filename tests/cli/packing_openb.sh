#!/usr/bin/env bash
# packing_openb.sh - `gpuplane packing` on the real openb trace and the FGD
# authors' published results (../shared/data): default workload, best-fit
# and fgd, seeds 42-43; our mean must be within 1.5 points of the paper's.
# Skips (exit 77) when the shared data is absent.
set -uo pipefail
gp="${GPUPLANE:?}"
shared="${GP_SHARED:-${GP_SRC:?}/../shared}"
data="$shared/data/openb"
expected="$shared/data/fgd-expected-results"
if [ ! -r "$data/openb_node_list_gpu_node.csv" ] || [ ! -r "$expected/analysis_allo_discrete.csv" ]; then
    echo "skipped: no openb trace or FGD results under $shared/data"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if ! "$gp" packing --data "$data" --expected "$expected" --workloads default \
    --policies best-fit,fgd --seeds 42-43 --json "$tmp/r.json" >"$tmp/out.txt" 2>&1; then
    echo "FAIL: gpuplane packing failed:"; cat "$tmp/out.txt"
    exit 1
fi
cat "$tmp/out.txt"
# the summaries' "diff" (ours - paper, points), one per policy
diffs=$(grep -E '^      "diff": ' "$tmp/r.json" | sed -E 's/.*"diff": ([^,]*),?/\1/')
n=$(echo "$diffs" | grep -c .)
if [ "$n" -ne 2 ]; then
    echo "FAIL: expected 2 summaries with a paper column, got $n"
    exit 1
fi
if ! echo "$diffs" | awk '{ if ($1 == "null" || $1 > 1.5 || $1 < -1.5) bad = 1 } END { exit bad }'; then
    echo "FAIL: a mean is more than 1.5 points from the paper's: $(echo $diffs)"
    exit 1
fi
echo "ok   best-fit and fgd on default are within 1.5 points of the paper ($(echo $diffs))"
