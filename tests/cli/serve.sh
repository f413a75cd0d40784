#!/usr/bin/env bash
# serve.sh - inference services on the command line (docs/serve.md): a bad
# InferenceService is one line naming file:line and the field, exit 2; and
# a golden run on the Azure LLM inference trace 2023 as published
# (../shared/data/azure-llm-2023, CC BY 4.0) whose JSON and CSV must match
# tests/golden/sim-serve-azure.* byte for byte, twice the same. Skips (77)
# the golden part without ../shared. GP_UPDATE_GOLDEN=1 rewrites it.
set -uo pipefail
gp="${GPUPLANE:?}"
src="${GP_SRC:?}"
cd "$src"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
data=tests/data/serve

# bad NAME EXPECTED SED: the Azure manifest edited by SED must fail with
# exit 2 and one line containing EXPECTED
bad() {
    local name="$1" want="$2" edit="$3"
    sed -e "$edit" -e 's|load: {trace: [^}]*}|load: {constant: 1}|' "$data/azure.yaml" >"$tmp/$name.yaml"
    "$gp" sim --cluster "$data/cluster.yaml" --workload "$tmp/$name.yaml" --horizon 1h --quiet \
        >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    if [ "$rc" != 2 ] || [ "$(wc -l <"$tmp/err")" != 1 ] || ! grep -qF -- "$want" "$tmp/err"; then
        echo "FAIL $name: rc $rc, stderr:"
        cat "$tmp/err"
        fails=$((fails + 1))
    else
        echo "ok   $name"
    fi
}
bad unknown-field "$tmp/unknown-field.yaml:26:3: InferenceService/conv.spec.colour: unknown field" \
    's|^  coldStart: uniform(60s,120s)|  colour: red\n  coldStart: uniform(60s,120s)|'
bad preset "InferenceService/conv.spec.llm.preset: expected one of the presets" \
    '0,/preset: qwen3-8b-fp8\/h100/s//preset: qwen9/'
bad no-deployment "no Deployment named \"conf\"" 's|deployment: conv|deployment: conf|'
bad policy "selectPolicy: expected Max, Min or Disabled" \
    's|metric: utilization, target: 60}|metric: utilization, behavior: {scaleUp: {selectPolicy: Most}}}|'
bad window "stableWindow: expected a duration from 6s to 3600s" \
    's|maxScale: 8,|maxScale: 8, stableWindow: 2h,|'

trace=../shared/data/azure-llm-2023/AzureLLMInferenceTrace_conv.csv
if [ ! -f "$trace" ]; then
    [ "$fails" = 0 ] || exit 1
    echo "skip golden: $trace is absent"
    exit 77
fi
args=(--cluster "$data/cluster.yaml" --workload "$data/azure.yaml" --horizon 90m --sample 5m --quiet)
"$gp" sim "${args[@]}" --json "$tmp/a.json" --csv "$tmp/a.csv" || fails=$((fails + 1))
"$gp" sim "${args[@]}" --json "$tmp/b.json" --csv "$tmp/b.csv" || fails=$((fails + 1))
if ! cmp -s "$tmp/a.json" "$tmp/b.json" || ! cmp -s "$tmp/a.csv" "$tmp/b.csv"; then
    echo "FAIL azure: two runs differ"
    fails=$((fails + 1))
fi
for ext in json csv; do
    want=tests/golden/sim-serve-azure.$ext
    if [ "${GP_UPDATE_GOLDEN:-0}" = 1 ]; then
        cp "$tmp/a.$ext" "$want"
        echo "updated $want"
    elif ! diff -u "$want" "$tmp/a.$ext" >"$tmp/diff"; then
        echo "FAIL azure: $ext differs from $want:"
        head -40 "$tmp/diff"
        fails=$((fails + 1))
    fi
done
# the trace as published: every request of the hour is offered
if ! grep -q '"requests": 77464.0' "$tmp/a.json"; then
    echo "FAIL azure: the conversation trace's 19366 requests (x 4) are not all offered"
    fails=$((fails + 1))
fi
[ "$fails" = 0 ] || exit 1
echo "ok   azure golden"
