#!/usr/bin/env bash
# sim_replay.sh - `gpuplane sim --replay FILE`, the command line around the
# replay (tests/unit/test_kube_replay.c records a live run and replays it):
# a log whose decisions the engine makes again prints its summary and
# "identical", exit 0; one decision edited gives exit 1 and the first
# difference with both sides; a torn last line is a warning; bad input
# (a wrong type, an unknown event, a missing file, another sim option
# beside --replay) gives one line on stderr naming the file, line and
# field, exit 2 and nothing on stdout.
set -uo pipefail
gp="${GPUPLANE:?}"
. "${GP_SRC:?}/tests/cli/lib/common.sh"

log() { # the lines of a small log: one node of 4 GPUs, one pod of 1
    cat <<'EOF'
{"ev":"log","format":"gpuplane-events","version":1,"scheduler":"gpuplane","identity":"t","part":0}
{"ev":"change","t":0.0,"obj":"node","type":"ADDED","key":"n1","rv":"2"}
{"ev":"reset","policy":"best-fit","seed":1}
{"ev":"queue_set","id":0,"queue":{"name":"default"}}
{"ev":"node_add","id":0,"node":{"name":"n1","gpu_model":"A100","cpu_milli":64000,"mem_mib":524288,"gpu_count":4}}
{"ev":"pod_add","id":0,"t":100.0,"pod":{"name":"default/p","cpu_milli":1000,"mem_mib":1024,"gpu_count":1,"gpu_milli":1000,"namespace":"default"}}
{"ev":"cycle","cycle":1,"t":100.0,"cap":2}
{"ev":"decision","cycle":1,"i":0,"kind":"bind","pod":0,"pod_name":"default/p","node":0,"node_name":"n1","pick":{"gpus":[0]}}
{"ev":"cycle_end","cycle":1,"decisions":1}
EOF
}

log >"$tmp/good.jsonl"
"$gp" sim --replay "$tmp/good.jsonl" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" -eq 0 ] || failed "good log: exit $rc: $(cat "$tmp/err")"
[ -s "$tmp/err" ] && failed "good log wrote to stderr: $(cat "$tmp/err")"
cat >"$tmp/want" <<EOF
replayed $tmp/good.jsonl: 9 events (1 API changes, 3 engine calls, 1 engine), 1 cycles
decisions: 1 recorded, 1 the same, 0 differ
identical
EOF
diff -u "$tmp/want" "$tmp/out" || failed "good log: summary differs"
"$gp" sim --replay "$tmp/good.jsonl" --quiet >"$tmp/out" 2>&1 || failed "--quiet: exit $?"
[ -s "$tmp/out" ] && failed "--quiet printed: $(cat "$tmp/out")"
echo "ok   identical"

log | sed 's/"gpus":\[0\]/"gpus":[2]/' >"$tmp/edited.jsonl"
"$gp" sim --replay "$tmp/edited.jsonl" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" -eq 1 ] || failed "edited log: exit $rc, expected 1"
grep -qx "first difference: cycle 1, decision 0 ($tmp/edited.jsonl:8)" "$tmp/out" ||
    failed "edited log: no first difference line: $(cat "$tmp/out")"
grep -q '^  recorded: .*"gpus":\[2\]' "$tmp/out" || failed "edited log: recorded side"
grep -q '^  replayed: .*"gpus":\[0\]' "$tmp/out" || failed "edited log: replayed side"
"$gp" sim --replay "$tmp/edited.jsonl" --quiet >"$tmp/out" 2>&1
[ $? -eq 1 ] || failed "edited log with --quiet: exit code"
echo "ok   a difference"

{
    log
    printf '{"ev":"cycle","cycle":2,"t":1'
} >"$tmp/torn.jsonl"
"$gp" sim --replay "$tmp/torn.jsonl" >"$tmp/out" 2>"$tmp/err" || failed "torn log: exit $?"
grep -qx "warning: $tmp/torn.jsonl:10: a torn line (the end of a run that stopped while writing it) ignored" "$tmp/err" ||
    failed "torn log: warning: $(cat "$tmp/err")"
grep -qx identical "$tmp/out" || failed "torn log: not identical"
echo "ok   a torn last line"

# expect NAME LINE ARGS...: exit 2, exactly LINE on stderr, nothing on stdout
expect() {
    local name="$1" want="$2"
    shift 2
    "$gp" sim "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    [ "$rc" -eq 2 ] || failed "$name: exit $rc, expected 2"
    [ "$(cat "$tmp/err")" = "$want" ] || failed "$name: stderr '$(cat "$tmp/err")', expected '$want'"
    [ -s "$tmp/out" ] && failed "$name: wrote to stdout"
    echo "ok   $name"
}
log | sed '6s/"cpu_milli":1000/"cpu_milli":"1000"/' >"$tmp/type.jsonl"
expect "a wrong type" "gpuplane: $tmp/type.jsonl:6: pod.cpu_milli: expected an integer" \
    --replay "$tmp/type.jsonl"
{
    log | head -3
    echo '{"ev":"frobnicate"}'
} >"$tmp/kind.jsonl"
expect "an unknown event" "gpuplane: $tmp/kind.jsonl:4: ev: unknown event kind \"frobnicate\"" \
    --replay "$tmp/kind.jsonl"
expect "a missing file" "gpuplane: --replay: $tmp/none.jsonl: No such file or directory" \
    --replay "$tmp/none.jsonl"
expect "another option" "gpuplane: sim: --replay does not go with --seed (the log holds the engine's every input; only --quiet goes with it)" \
    --replay "$tmp/good.jsonl" --seed 3
# a node whose GPUs have their own MIG layouts: one layout for each GPU
log | sed '5s/"gpu_count":4}/"gpu_count":4,"sharing":{"mode":"mig","mig_model":"H100-80GB","mig_layout":[[0,0]],"mig_gpu_layouts":[[[0,0]],[[0,1]]]}}/' >"$tmp/layouts.jsonl"
expect "GPU layouts that are not one a GPU" \
    "gpuplane: $tmp/layouts.jsonl:5: node.sharing.mig_gpu_layouts: expected 4 layouts (one a GPU) of a MIG model, not dynamic" \
    --replay "$tmp/layouts.jsonl"
log | sed '5s/"gpu_count":4}/"gpu_count":2,"sharing":{"mode":"mig","mig_model":"H100-80GB","mig_layout":[[0,0]],"mig_gpu_layouts":[[[0,0]],[[0,0],[0,0]]]}}/' >"$tmp/layout1.jsonl"
expect "a GPU's layout that is not one" \
    "gpuplane: $tmp/layout1.jsonl:5: node.sharing.mig_gpu_layouts[1]: 1g.10gb at slice 0 overlaps 1g.10gb at slice 0" \
    --replay "$tmp/layout1.jsonl"
: >"$tmp/empty.jsonl"
expect "an empty log" "gpuplane: $tmp/empty.jsonl: no events (an empty log)" --replay "$tmp/empty.jsonl"

[ "$fails" -eq 0 ] || exit 1
