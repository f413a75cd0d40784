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
. "$src/tests/cli/lib/common.sh"
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

bad latency-limit "InferenceService/conv.spec.latencyLimit: expected a duration" \
    's|^  coldStart: uniform(60s,120s)|  latencyLimit: fast\n  coldStart: uniform(60s,120s)|'
bad rollouts-order "InferenceService/conv.spec.rollouts[1].at: 1800s is not after rollouts[0].at" \
    's|^  coldStart: uniform(60s,120s)|  rollouts: [{at: 1h}, {at: 30m}]\n  coldStart: uniform(60s,120s)|'
bad rollouts-type "InferenceService/conv.spec.rollouts[0].maxSurge: expected a count or a percent" \
    's|^  coldStart: uniform(60s,120s)|  rollouts: [{at: 1h, maxSurge: [1]}]\n  coldStart: uniform(60s,120s)|'

# dense packing (docs/serve.md, "Dense packing"), worked by hand: five
# quarter-GPU models of 100 rps alone, 50 rps offered, p99 within 100 ms.
# One replica each (M/M/1: p99 ln(100)/50 = 92 ms), one per GPU: 5 GPUs.
# Time-slicing: four share a GPU (demand 1000); a fifth would slow five to
# 0.8 (p99 154 ms): 2 GPUs, first reached with x4. MPS: x2 holds 2 per
# GPU (3 GPUs); x3 gives each client 333 milli, more than 250: no
# slowdown, 3 per GPU, 2 GPUs.
{
    for i in 1 2 3 4 5; do
        cat <<EOF
apiVersion: apps/v1
kind: Deployment
metadata: {name: m$i}
spec:
  replicas: 1
  template:
    metadata:
      annotations: {gpuplane.io/gpu-milli: "250", gpuplane.io/gpu-memory: 10Gi}
    spec:
      containers:
      - {name: m, image: m, resources: {requests: {cpu: "1", memory: 4Gi}}}
---
apiVersion: gpuplane.io/v1
kind: InferenceService
metadata: {name: m$i}
spec: {deployment: m$i, requestsPerSecond: 100, load: {constant: 50}, latencyLimit: 100ms}
---
EOF
    done
} >"$tmp/dense.yaml"
cat >"$tmp/dense-cluster.yaml" <<'EOF'
apiVersion: gpuplane.io/v1
kind: Cluster
metadata: {name: dense}
spec:
  nodePools:
  - {name: h100, gpu: {model: H100-80GB, count: 8, memory: 80Gi}, cpu: "192", memory: 2Ti, count: 1, pricePerHour: 55.04}
EOF
if "$gp" sim --compare-sharing --cluster "$tmp/dense-cluster.yaml" --workload "$tmp/dense.yaml" \
    --json "$tmp/dense.json" --report "$tmp/dense.html" >"$tmp/dense.txt" 2>"$tmp/err" &&
    grep -q '<td class="num">2 (x4, -60 %)</td>' "$tmp/dense.html" &&
    grep -qE '^h100 +5 +2 \(x4, -60 %\) +2 \(x3, -60 %\)$' "$tmp/dense.txt" &&
    grep -q '"timeslice_gpus": 2' "$tmp/dense.json" && grep -q '"one_per_gpu_gpus": 5' "$tmp/dense.json"; then
    echo "ok   dense packing"
else
    echo "FAIL dense packing:"
    cat "$tmp/dense.txt" "$tmp/err"
    fails=$((fails + 1))
fi

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
