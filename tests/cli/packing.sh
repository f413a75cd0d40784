#!/usr/bin/env bash
# packing.sh - `gpuplane packing` on the synthetic openb-format fixtures of
# tests/data/packing: the table's shape, the published numbers read from the
# fixture table, the outputs, determinism (the same bytes with 1 and 2
# workers), every run's result pinned, and bad input (exit 2, one line on
# stderr, no output files).
# The run on the real trace is tests/cli/packing_openb.sh.
set -uo pipefail
gp="${GPUPLANE:?}"
src="${GP_SRC:?}"
fx="$src/tests/data/packing"
. "$src/tests/cli/lib/common.sh"

base=(--data "$fx" --expected "$fx/expected" --workloads default,gpushare40
      --policies best-fit,fgd,random --seeds 1-3)

# ---- a run and the table's shape ----
"$gp" packing "${base[@]}" --jobs 2 --json "$tmp/a.json" --markdown "$tmp/a.md" \
    --report "$tmp/a.html" >"$tmp/a.txt" 2>"$tmp/a.err"
rc=$?
if [ "$rc" -ne 0 ]; then
    fail "run: exit code $rc"; cat "$tmp/a.err"
else
    echo "ok   run on the fixtures"
fi
[ -s "$tmp/a.err" ] && fail "run: unexpected stderr: $(cat "$tmp/a.err")"
grep -q '^  runs      2 workloads x 3 policies x 3 seeds (1-3) = 18 simulations, inflate 1.3$' \
    "$tmp/a.txt" || fail "table: no 'runs' line"
grep -q '^  cluster   .*openb_node_list_gpu_node.csv: 12 nodes, 49 GPUs$' "$tmp/a.txt" ||
    fail "table: no cluster line with 12 nodes, 49 GPUs"
grep -Eq '^workload +policy +ours +paper +diff$' "$tmp/a.txt" || fail "table: no column header"
# one row per workload x policy, the workload named on its first row only
rows=$(grep -Ec '^(default|gpushare40)? +(best-fit|fgd|random) +[0-9]+\.[0-9]{2} ± [0-9]+\.[0-9]{2} ' "$tmp/a.txt")
[ "$rows" -eq 6 ] || fail "table: $rows policy rows, expected 6"
[ "$(grep -Ec '^default +best-fit ' "$tmp/a.txt")" -eq 1 ] || fail "table: default's first row"
[ "$(grep -Ec '^gpushare40 +best-fit ' "$tmp/a.txt")" -eq 1 ] || fail "table: gpushare40's first row"
[ "$(grep -Ec '^ +lower bound +[0-9]+\.[0-9]{2}( [^ ]+)?$' "$tmp/a.txt")" -eq 2 ] ||
    fail "table: expected a 'lower bound' row with a number per workload"
# the bound holds seed by seed, so its mean is below every policy's mean
awk '/ ± / { v = ($1 == "best-fit" || $1 == "fgd" || $1 == "random") ? $2 : $3
             if (min == "" || v + 0 < min + 0) min = v }
     /lower bound/ { if (min == "" || $3 + 0 > min + 0.01) exit 1; min = "" }' "$tmp/a.txt" ||
    fail "table: a lower bound above a policy's mean"
# the published numbers of the fixture: best-fit 9.00 ± 1.41, fgd 4.75 ± 0.35; none for
# random and none for gpushare40 (the cpu050 row and the tune-1.2 row do not count)
grep -Eq '^default +best-fit +[0-9.]+ ± [0-9.]+ +9\.00 ± 1\.41 +[-+][0-9]+\.[0-9]{2}( \*)?$' \
    "$tmp/a.txt" || fail "table: default/best-fit does not show the fixture's 9.00 ± 1.41"
grep -Eq '^ +fgd +[0-9.]+ ± [0-9.]+ +4\.75 ± 0\.35 ' "$tmp/a.txt" ||
    fail "table: default/fgd does not show the fixture's 4.75 ± 0.35"
grep -Eq '^ +random +[0-9.]+ ± [0-9.]+ +- +-$' "$tmp/a.txt" ||
    fail "table: random should have no paper column"
grep -Eq '^gpushare40 +best-fit +[0-9.]+ ± [0-9.]+ +- +-$' "$tmp/a.txt" ||
    fail "table: gpushare40 should have no paper column"
grep -Eq '^[0-9]+ of 2 workload-policy cells are more than 1 point from the paper$' \
    "$tmp/a.txt" || fail "table: no summary line of the cells off"
grep -Eq '^ran 18 simulations in [0-9.]+ s of wall time \(2 workers\)$' "$tmp/a.txt" ||
    fail "table: no wall-time line"
# the diff column is ours - paper
awk '$1 == "default" && $2 == "best-fit" {
        d = $3 - $6; if (d - $9 > 0.011 || $9 - d > 0.011) exit 1 }' "$tmp/a.txt" ||
    fail "table: diff is not ours - paper"

# ---- the outputs ----
[ "$(grep -c '"seed":' "$tmp/a.json")" -eq 18 ] || fail "json: expected 18 cells"
[ "$(grep -c '"curve":' "$tmp/a.json")" -eq 6 ] || fail "json: expected 6 summaries"
grep -q '"policy": "05-BestFit"' "$tmp/a.json" || fail "json: no published policy name"
grep -q '"available": true' "$tmp/a.json" || fail "json: no lower-bound entry"
[ "$(grep -c '"informative": true' "$tmp/a.json")" -eq 2 ] || fail "json: bounds not informative"
grep -q $'\xe2\x80\xa0' "$tmp/a.txt" && fail "table: a bound marked as saying little"
[ "$(grep -c '^| default | ' "$tmp/a.md")" -eq 4 ] || fail "markdown: expected 3+1 default rows"
grep -q '^| workload | policy | ours | paper | diff | lower bound |$' "$tmp/a.md" ||
    fail "markdown: header"
grep -q '9.00 ± 1.41' "$tmp/a.md" || fail "markdown: no published number"
grep -q '^<!DOCTYPE html>' "$tmp/a.html" || fail "html: not a page"
[ "$(grep -c '<svg' "$tmp/a.html")" -eq 2 ] || fail "html: expected one chart per workload"
grep -q 'stroke-dasharray' "$tmp/a.html" || fail "html: no dashed paper line"
grep -Eqi '<script|https?://[^ "]*\.(js|css)' "$tmp/a.html" && fail "html: not self-contained"
echo "ok   table shape and outputs"

# ---- determinism: one worker and two give the same bytes ----
"$gp" packing "${base[@]}" --jobs 1 --json "$tmp/b.json" --markdown "$tmp/b.md" \
    --report "$tmp/b.html" >"$tmp/b.txt" 2>&1 || fail "second run failed"
for f in json md html; do
    cmp -s "$tmp/a.$f" "$tmp/b.$f" || fail "determinism: $f differs between runs"
done
diff <(grep -v '^ran \|^wrote ' "$tmp/a.txt") <(grep -v '^ran \|^wrote ' "$tmp/b.txt") \
    >/dev/null || fail "determinism: the table differs between runs"
echo "ok   determinism (1 and 2 workers)"

# ---- every run of the fixtures pinned: workload policy seed unallocated-% failed ----
# (a change meant to move them updates the pins and says why in its commit)
. "$src/tests/cli/lib/packing_cells.sh"
if ! diff <(packing_cells "$tmp/a.json") - >"$tmp/pins.diff" <<'EOF'
default best-fit 1 3.3673 14
default best-fit 2 3.0612 17
default best-fit 3 3.7755 19
default fgd 1 5.4082 17
default fgd 2 1.0204 20
default fgd 3 3.7755 18
default random 1 9.4898 10
default random 2 7.1429 12
default random 3 16.0204 12
gpushare40 best-fit 1 5.6122 20
gpushare40 best-fit 2 7.551 13
gpushare40 best-fit 3 10.8163 17
gpushare40 fgd 1 5.102 19
gpushare40 fgd 2 5.0 14
gpushare40 fgd 3 8.2653 18
gpushare40 random 1 8.1633 16
gpushare40 random 2 14.6939 12
gpushare40 random 3 13.9796 16
EOF
then
    fail "pins: the runs differ from the pinned results (< got, > pinned): $(cat "$tmp/pins.diff")"
else
    echo "ok   the 18 runs give the pinned results"
fi

# ---- a bound that may say little: the fixture's nodes at 30 % of their CPU ----
# (its CPU-only pods then ask for more CPU than the bound's placement leaves)
mkdir -p "$tmp/cpu30"
cp "$fx/openb_pod_list_default.csv" "$tmp/cpu30/"
awk -F, -v OFS=, 'NR == 1 { print; next } { $2 = int($2 * 0.3); print }' \
    "$fx/openb_node_list_gpu_node.csv" >"$tmp/cpu30/openb_node_list_gpu_node.csv"
"$gp" packing --data "$tmp/cpu30" --expected "$fx/expected" --policies best-fit --seeds 1-3 \
    --json "$tmp/c.json" --markdown "$tmp/c.md" --report "$tmp/c.html" >"$tmp/c.txt" 2>&1 ||
    fail "caveat: run failed: $(cat "$tmp/c.txt")"
grep -Eq $'^ +lower bound +[0-9]+\\.[0-9]{2} \xe2\x80\xa0$' "$tmp/c.txt" ||
    fail "caveat: the bound is not marked"
grep -q $'^\xe2\x80\xa0 may say little: the bound leaves out the pods without a GPU request' \
    "$tmp/c.txt" || fail "caveat: no explanation under the table"
grep -Eq '^  default: they ask for [0-9.]+ % of the CPU and [0-9.]+ % of the memory; the bound.s placement leaves [0-9.]+ % and [0-9.]+ % free$' \
    "$tmp/c.txt" || fail "caveat: no figures"
grep -q '"informative": false' "$tmp/c.json" || fail "caveat: json says informative"
grep -q '"caveat": "may say little' "$tmp/c.json" || fail "caveat: json has no caveat"
grep -q '^\* default: they ask for' "$tmp/c.md" || fail "caveat: markdown has no figures"
grep -q '<li>default: they ask for' "$tmp/c.html" || fail "caveat: html has no figures"
echo "ok   a bound that may say little is marked and explained"

# --quiet: nothing on stdout; no --expected and no default folder: no paper column
(cd "$tmp" && "$gp" packing --data "$fx" --policies fgd --seeds 5 --quiet) >"$tmp/q.txt" 2>&1 ||
    fail "quiet run failed"
[ -s "$tmp/q.txt" ] && fail "--quiet printed: $(head -1 "$tmp/q.txt")"
(cd "$tmp" && "$gp" packing --data "$fx" --policies fgd --seeds 5) >"$tmp/n.txt" 2>&1
grep -q '^  paper     none' "$tmp/n.txt" || fail "no published results: no 'paper none' line"
grep -Eq '^default +fgd +[0-9.]+ ± [0-9.]+ +- +-$' "$tmp/n.txt" ||
    fail "no published results: the paper column should be empty"
"$gp" packing --help | grep -q '^usage: gpuplane packing' || fail "--help"
echo "ok   --quiet, no published results, --help"

# ---- cluster variants: less CPU, a random sample of the nodes, no bound ----
"$gp" packing "${base[@]}" --policies fgd --cpu-scale 0.5 --json "$tmp/c.json" >"$tmp/c.txt" 2>&1 ||
    fail "--cpu-scale run failed: $(head -1 "$tmp/c.txt")"
grep -q "^  cluster   .*: 12 nodes, 49 GPUs, every node's CPU x 0.5$" "$tmp/c.txt" ||
    fail "--cpu-scale: no cluster line naming the scale"
grep -q '^  paper     none (the published runs are on the whole cluster at its full CPU)$' \
    "$tmp/c.txt" || fail "--cpu-scale: the paper column should be off"
grep -q '"cpu_scale": 0.5' "$tmp/c.json" || fail "--cpu-scale: not in the JSON"
# half the CPU leaves more GPUs idle than the full CPU on the fixture
full=$(awk '$1 == "default" { w = 1 } w && $1 == "fgd" { print $2; exit }' "$tmp/a.txt")
half=$(awk '$1 == "default" && $2 == "fgd" { print $3 }' "$tmp/c.txt")
awk -v f="$full" -v h="$half" 'BEGIN { exit !(f != "" && h + 0 > f + 0) }' ||
    fail "--cpu-scale 0.5: $half % unallocated, not above the full CPU's $full %"
"$gp" packing "${base[@]}" --policies fgd --node-sample 0.5 --no-bound --jobs 2 \
    --json "$tmp/s2.json" >"$tmp/s.txt" 2>&1 || fail "--node-sample run failed: $(head -1 "$tmp/s.txt")"
grep -q '^  cluster   .*: 12 nodes, 49 GPUs, each seed on a random 6 of the nodes$' "$tmp/s.txt" ||
    fail "--node-sample: no cluster line naming the sample"
grep -Eq '^ +lower bound +not computed \(--no-bound\)$' "$tmp/s.txt" ||
    fail "--no-bound: the bound row should say it was not computed"
grep -q '"sample_nodes": 6' "$tmp/s2.json" || fail "--node-sample: not in the JSON"
"$gp" packing "${base[@]}" --policies fgd --node-sample 0.5 --no-bound --jobs 1 \
    --json "$tmp/s1.json" >/dev/null 2>&1 || fail "--node-sample run with one worker failed"
cmp -s "$tmp/s1.json" "$tmp/s2.json" || fail "--node-sample: 1 and 2 workers differ"
# each seed draws its own half of the 49 GPUs (1-3: 17, 28 and 24)
[ "$(grep -o '"gpus": [0-9]*' "$tmp/s2.json" | sed -n 2,4p | tr '\n' ' ')" = \
    '"gpus": 17 "gpus": 28 "gpus": 24 ' ] ||
    fail "--node-sample: expected seeds 1-3 on 17, 28 and 24 GPUs, got $(grep -o '"gpus": [0-9]*' "$tmp/s2.json" | tr '\n' ' ')"
echo "ok   --cpu-scale, --node-sample, --no-bound"

# ---- bad input: exit 2, one line on stderr, no outputs ----
# expect NAME PATTERN [DIR] -- ARGS... (run in DIR when given)
expect() {
    local name="$1" pattern="$2" dir="$3"
    shift 4
    rm -f "$tmp"/out.*
    # the outputs first, so that a case may override one
    (cd "$dir" && "$gp" packing --json "$tmp/out.json" --markdown "$tmp/out.md" \
        --report "$tmp/out.html" "$@") >"$tmp/stdout" 2>"$tmp/stderr"
    local rc=$?
    local lines
    lines=$(wc -l <"$tmp/stderr")
    if [ "$rc" -ne 2 ]; then
        fail "$name: exit code $rc, expected 2"; cat "$tmp/stderr"
    elif [ "$lines" -ne 1 ]; then
        fail "$name: expected one line on stderr, got $lines:"; cat "$tmp/stderr"
    elif ! grep -Eq -- "$pattern" "$tmp/stderr"; then
        fail "$name: stderr does not match '$pattern':"; cat "$tmp/stderr"
    elif ls "$tmp"/out.* >/dev/null 2>&1; then
        fail "$name: output files were left behind"
    else
        echo "ok   $name: $(cat "$tmp/stderr")"
    fi
}

mkdir -p "$tmp/empty" "$tmp/nocluster" "$tmp/badexp"
cp "$fx/openb_pod_list_default.csv" "$tmp/nocluster/"
# the fixture's header and first row, with the seed replaced by "x"
head -2 "$fx/expected/analysis_allo_discrete.csv" | sed '2s/,42,/,x,/' \
    >"$tmp/badexp/analysis_allo_discrete.csv"

expect "missing data dir" "--data: '.*/nope' is not a folder.*cluster-trace-gpu-v2023" "$tmp" -- \
    --data "$tmp/nope"
expect "no default data dir" "packing: --data DIR is required; .*cluster-trace-gpu-v2023/csv.*git clone --depth 1 https://github.com/alibaba/clusterdata" \
    "$tmp/empty" --
expect "no cluster file" "no openb_node_list_gpu_node\.csv in" "$tmp" -- --data "$tmp/nocluster"
expect "unknown workload" "--workloads: unknown workload 'cpu999'" "$tmp" -- \
    --data "$fx" --workloads default,cpu999
expect "workload with a path" "--workloads: '\.\./x' is not a workload name" "$tmp" -- \
    --data "$fx" --workloads ../x
expect "workload twice" "--workloads: 'default' is listed twice" "$tmp" -- \
    --data "$fx" --workloads default,default
expect "empty workload name" "--workloads: empty name" "$tmp" -- --data "$fx" --workloads default,
expect "unknown policy" "--policies: unknown policy 'tetris'.*best-fit" "$tmp" -- \
    --data "$fx" --policies fgd,tetris
expect "reversed seed range" "--seeds: the range '51-42' ends before it starts" "$tmp" -- \
    --data "$fx" --seeds 51-42
expect "bad seeds" "--seeds: expected a range A-B" "$tmp" -- --data "$fx" --seeds 42-x
expect "negative seed" "--seeds: expected a range A-B" "$tmp" -- --data "$fx" --seeds -3
expect "seed twice" "--seeds: seed 43 is listed twice" "$tmp" -- --data "$fx" --seeds 42-44,43
expect "bad inflate" "--inflate: expected a number" "$tmp" -- --data "$fx" --inflate 0
expect "bad jobs" "--jobs: expected an integer" "$tmp" -- --data "$fx" --jobs 0
expect "bad cpu scale" "--cpu-scale: expected a number greater than 0" "$tmp" -- \
    --data "$fx" --cpu-scale -1
expect "bad node sample" "--node-sample: expected a number greater than 0 and at most 1" "$tmp" -- \
    --data "$fx" --node-sample 1.5
expect "missing expected dir" "--expected: '.*/nope' is neither a folder nor a file" "$tmp" -- \
    --data "$fx" --expected "$tmp/nope"
expect "expected dir without the table" "--expected: no .*analysis_allo_discrete\.csv" "$tmp" -- \
    --data "$fx" --expected "$tmp/empty"
expect "broken published table" "analysis_allo_discrete\.csv:2: column 'seed'" "$tmp" -- \
    --data "$fx" --expected "$tmp/badexp"
expect "unknown option" "unknown option '--colour'" "$tmp" -- --data "$fx" --colour
expect "same output twice" "--markdown .*out.json: the same file as --json" "$tmp" -- --data "$fx" \
    --markdown "$tmp/out.json"

if [ "$fails" -ne 0 ]; then
    echo "$fails packing check(s) failed"
    exit 1
fi
echo "all packing checks passed"
