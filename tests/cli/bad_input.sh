#!/usr/bin/env bash
# bad_input.sh - every class of bad input gives one clear line on stderr
# naming the file and line (or the flag or field), exit code 2, and leaves no
# output file behind.
set -uo pipefail
gp="${GPUPLANE:?}"
src="${GP_SRC:?}"
bad="$src/tests/data/bad"
good_cluster="$src/examples/cluster-mixed.yaml"
good_workload="$src/examples/workload-mixed.yaml"
. "$src/tests/cli/lib/common.sh"

# expect NAME PATTERN ARGS... : exit 2, one stderr line matching PATTERN, no outputs
expect() {
    local name="$1" pattern="$2"
    shift 2
    rm -f "$tmp"/out.*
    "$gp" sim "$@" --json "$tmp/out.json" --csv "$tmp/out.csv" --report "$tmp/out.html" \
        >"$tmp/stdout" 2>"$tmp/stderr"
    local rc=$?
    local lines
    lines=$(wc -l <"$tmp/stderr")
    if [ "$rc" -ne 2 ]; then
        echo "FAIL $name: exit code $rc, expected 2"; fails=$((fails + 1))
    elif [ "$lines" -ne 1 ]; then
        echo "FAIL $name: expected one line on stderr, got $lines:"; cat "$tmp/stderr"
        fails=$((fails + 1))
    elif ! grep -Eq -- "$pattern" "$tmp/stderr"; then
        echo "FAIL $name: stderr does not match '$pattern':"; cat "$tmp/stderr"
        fails=$((fails + 1))
    elif ls "$tmp"/out.* >/dev/null 2>&1; then
        echo "FAIL $name: output files were left behind"; fails=$((fails + 1))
    else
        echo "ok   $name: $(cat "$tmp/stderr")"
    fi
}

expect "missing cluster file" "nope\.yaml.*(No such file|cannot open)" \
    --cluster "$tmp/nope.yaml" --workload "$good_workload"
expect "missing workload file" "nope\.yaml.*(No such file|cannot open)" \
    --cluster "$good_cluster" --workload "$tmp/nope.yaml"
expect "yaml syntax error" "syntax\.yaml:[0-9]+" \
    --cluster "$bad/syntax.yaml" --workload "$good_workload"
expect "unknown field" "unknown-field\.yaml:[0-9]+.*gpus" \
    --cluster "$bad/unknown-field.yaml" --workload "$good_workload"
expect "wrong units" "wrong-units\.yaml:[0-9]+.*cpu" \
    --cluster "$bad/wrong-units.yaml" --workload "$good_workload"
expect "negative count" "negative-count\.yaml:[0-9]+.*count" \
    --cluster "$bad/negative-count.yaml" --workload "$good_workload"
expect "bad manifest quantity" "bad-quantity\.yaml:[0-9]+.*memory" \
    --cluster "$good_cluster" --workload "$bad/bad-quantity.yaml"
expect "unknown annotation" "bad-annotation\.yaml:[0-9]+.*sim\.gpuplane\.io/durration" \
    --cluster "$good_cluster" --workload "$bad/bad-annotation.yaml"
expect "broken openb csv row" "broken\.csv:3" \
    --cluster "openb:$bad/broken.csv" --workload "$good_workload"
expect "unknown policy" "--policy.*unknown policy 'tetris'" \
    --cluster "$good_cluster" --workload "$good_workload" --policy tetris
expect "bad seed" "--seed" --cluster "$good_cluster" --workload "$good_workload" --seed -1
expect "unknown option" "unknown option '--colour'" --colour
expect "workload without cluster" "--cluster" --workload "$good_workload"
expect "unknown order" "--order: expected 'fair', 'fifo' or 'sjf', got 'lifo'" \
    --cluster "$good_cluster" --workload "$good_workload" --order lifo
expect "backfill takes no value" "--backfill' takes no value" \
    --cluster "$good_cluster" --workload "$good_workload" --backfill=yes
expect "vc sizes without vc queues" "--vc-sizes needs --vc-queues" \
    --cluster "$good_cluster" --workload "$good_workload" --vc-sizes "$tmp/vcs.csv"
printf 'vc,node num\n6214e9,64\n7f04ca,lots\n' >"$tmp/vcs.csv"
expect "bad vc sizes row" "vcs\.csv:3.*node num" \
    --cluster "$good_cluster" --workload "$good_workload" --vc-queues --vc-sizes "$tmp/vcs.csv"
expect "vc queues with declared queues" "--vc-queues: the workload declares its own queues" \
    --cluster "$good_cluster" --workload "$src/examples/queues.yaml" --vc-queues
expect "offer of another GPU model" \
    "offer-model\.yaml:12:12: spec\.nodePools\[0\]\.offer: eks/p5\.48xlarge has H100 SXM 80GB GPUs, not the pool's gpu\.model A100-80GB" \
    --cluster "$bad/offer-model.yaml" --workload "$good_workload"
expect "offer that cannot be a Kubernetes node" \
    "offer-no-kube\.yaml:12:13: spec\.nodePools\[0\]\.offer: runpod's machines cannot be Kubernetes nodes" \
    --cluster "$bad/offer-no-kube.yaml" --workload "$good_workload"
expect "ambiguous offer" \
    "offer-ambiguous\.yaml:12:12: spec\.nodePools\[0\]\.offer: akamai_lke/GPU Linode names 2 offers.*gpu one of: RTX PRO 6000 Blackwell Server Edition, RTX 4000 Ada" \
    --cluster "$bad/offer-ambiguous.yaml" --workload "$good_workload"
expect "oversize input file" "/dev/zero: gives more than the input limit of 1 MiB; --max-input-mib" \
    --cluster "$good_cluster" --workload /dev/zero --max-input-mib 1
expect "expansion over the pod budget" \
    "over-budget\.yaml:3: Job/stream: up to 30000000 pods \(10000000 submissions of 3\), more than the pod budget of 20000000; --max-pods raises it" \
    --cluster "$good_cluster" --workload "$bad/over-budget.yaml"
expect "horizon past ten years" "--horizon: expected a positive duration of at most 3650d" \
    --cluster "$good_cluster" --workload "$good_workload" --horizon 999999999999d

# A doubtful but valid input runs (exit 0) with one warning line naming the
# file, line and field.
# expect_warning NAME FILE REGEX: the cluster FILE runs (exit 0) with exactly
# one warning line, matching REGEX.
expect_warning() {
    local name=$1 file=$2 regex=$3 rc
    "$gp" sim --cluster "$file" --workload "$good_workload" --json "$tmp/out.json" \
        >"$tmp/stdout" 2>"$tmp/stderr"
    rc=$?
    if [ "$rc" -ne 0 ]; then
        echo "FAIL $name: exit code $rc, expected 0"
        cat "$tmp/stderr"; fails=$((fails + 1))
    elif [ "$(grep -c '^warning: ' "$tmp/stderr")" -ne 1 ] ||
        ! grep -Eq "^warning: .*$regex" "$tmp/stderr"; then
        echo "FAIL $name: expected one warning line, got:"
        cat "$tmp/stderr"; fails=$((fails + 1))
    else
        echo "ok   $name: $(grep '^warning: ' "$tmp/stderr")"
    fi
}
expect_warning "byo offer beside a managed control plane" \
    "$src/tests/data/warn/offer-byo.yaml" \
    "offer-byo\.yaml:14:12: spec\.nodePools\[0\]\.offer: lambda is bring-your-own Kubernetes.*not eks's managed control plane"
expect_warning "another managed provider's offer beside a managed control plane" \
    "$src/tests/data/warn/offer-other-managed.yaml" \
    "offer-other-managed\.yaml:14:12: spec\.nodePools\[0\]\.offer: gke's nodes join gke's own managed clusters.*not eks's control plane"

if [ "$fails" -ne 0 ]; then
    echo "$fails bad-input case(s) failed"
    exit 1
fi
echo "all bad-input cases give one line, exit 2 and no output"
