#!/usr/bin/env bash
# packing_openb.sh - `gpuplane packing` on the real openb trace and the FGD
# authors' published results (../shared/data): workloads default,
# gpushare40 and multigpu50, best-fit and fgd, seeds 42-43. Every mean must
# be within 1.5 points of the paper's; every run's result (unallocated GPU
# % at 100 % arrived, to the 4 decimals of the JSON, and its failed pods)
# and each workload's lower bound must be the pinned ones, so that a change
# to either policy, the measure, the arrivals, the engine's filters or the
# bound shows here. A change meant to move them updates the pins and says
# why in its commit. Skips (exit 77) when the shared data is absent.
set -uo pipefail
gp="${GPUPLANE:?}"
shared="${GP_SHARED:-${GP_SRC:?}/../shared}"
data="$shared/data/openb"
expected="$shared/data/fgd-expected-results"
if [ ! -r "$data/openb_node_list_gpu_node.csv" ] || [ ! -r "$expected/analysis_allo_discrete.csv" ]; then
    echo "skipped: no openb trace or FGD results under $shared/data"
    exit 77
fi
. "${GP_SRC:?}/tests/cli/lib/common.sh"

if ! "$gp" packing --data "$data" --expected "$expected" \
    --workloads default,gpushare40,multigpu50 --policies best-fit,fgd --seeds 42-43 \
    --json "$tmp/r.json" >"$tmp/out.txt" 2>&1; then
    echo "FAIL: gpuplane packing failed:"; cat "$tmp/out.txt"
    exit 1
fi
cat "$tmp/out.txt"
# the summaries' "diff" (ours - paper, points), one per policy
diffs=$(grep -E '^      "diff": ' "$tmp/r.json" | sed -E 's/.*"diff": ([^,]*),?/\1/')
n=$(echo "$diffs" | grep -c .)
if [ "$n" -ne 6 ]; then
    echo "FAIL: expected 6 summaries with a paper column, got $n"
    exit 1
fi
if ! echo "$diffs" | awk '{ if ($1 == "null" || $1 > 1.5 || $1 < -1.5) bad = 1 } END { exit bad }'; then
    echo "FAIL: a mean is more than 1.5 points from the paper's: $(echo $diffs)"
    exit 1
fi
echo "ok   best-fit and fgd are within 1.5 points of the paper ($(echo $diffs))"

# every run pinned: workload policy seed unallocated-% failed-pods
. "$GP_SRC/tests/cli/lib/packing_cells.sh"
if ! diff <(packing_cells "$tmp/r.json") - >"$tmp/pins.diff" <<'EOF'
default best-fit 42 6.8665 2676
default best-fit 43 6.7498 2598
default fgd 42 4.7985 2523
default fgd 43 4.7143 2463
gpushare40 best-fit 42 8.2178 2844
gpushare40 best-fit 43 8.5256 2913
gpushare40 fgd 42 5.9243 2684
gpushare40 fgd 43 5.9863 2724
multigpu50 best-fit 42 4.4147 1433
multigpu50 best-fit 43 4.2655 1422
multigpu50 fgd 42 2.9092 1358
multigpu50 fgd 43 2.7247 1377
EOF
then
    echo "FAIL: the runs differ from the pinned results (< got, > pinned):"
    cat "$tmp/pins.diff"
    exit 1
fi
echo "ok   the 12 runs give the pinned results"

# the lower bound of each workload pinned too: workload unallocated-% informative
if ! diff <(packing_bounds "$tmp/r.json") - >"$tmp/bounds.diff" <<'EOF'
default 3.1049 true
gpushare40 4.3563 true
multigpu50 1.6528 true
EOF
then
    echo "FAIL: the lower bounds differ from the pinned ones (< got, > pinned):"
    cat "$tmp/bounds.diff"
    exit 1
fi
echo "ok   the 3 lower bounds are the pinned ones"
