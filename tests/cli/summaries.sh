#!/usr/bin/env bash
# summaries.sh - what `gpuplane sim` says about a run hides nothing: on a
# one-node cluster with a control-plane fee, the summary says "1 node";
# the bill is one number (JSON cost_usd = cost.total_usd, the HTML cost
# card = the cost section's total, control plane included); a run in
# which no pod is bound prints its delays as n/a (JSON null), never 0 s;
# a pod that can never fit, and a gang that can never start, are in the
# summary, the JSON and the report with the reason in numbers.
set -uo pipefail
gp="${GPUPLANE:?}"
. "${GP_SRC:?}/tests/cli/lib/common.sh"
fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}
cat >"$tmp/one.yaml" <<'YAML'
apiVersion: gpuplane.io/v1
kind: Cluster
metadata: {name: one}
spec:
  controlPlane: {pricePerHour: 0.10}
  nodePools:
  - name: a100
    gpu: {model: A100-80GB, count: 8, memory: 80Gi}
    cpu: "96"
    memory: 1152Gi
    count: 1
    pricePerHour: 27.45
YAML
cat >"$tmp/fits.yaml" <<'YAML'
apiVersion: v1
kind: Pod
metadata:
  name: train
  annotations: {sim.gpuplane.io/duration: 1h}
spec:
  containers:
  - name: c
    resources: {limits: {nvidia.com/gpu: 8, cpu: "32", memory: 256Gi}}
YAML
cat >"$tmp/huge.yaml" <<'YAML'
apiVersion: v1
kind: Pod
metadata:
  name: huge
  annotations: {sim.gpuplane.io/duration: 1h}
spec:
  containers:
  - name: c
    resources: {limits: {nvidia.com/gpu: 9}}
YAML
cat >"$tmp/gang.yaml" <<'YAML'
apiVersion: scheduling.x-k8s.io/v1alpha1
kind: PodGroup
metadata: {name: trio}
spec: {minMember: 3}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: trio
  annotations: {sim.gpuplane.io/duration: 1h}
spec:
  parallelism: 2
  completions: 2
  template:
    metadata:
      labels: {scheduling.x-k8s.io/pod-group: trio}
    spec:
      containers:
      - name: c
        resources: {limits: {nvidia.com/gpu: 1}}
YAML

# run NAME WORKLOAD: the summary, JSON and HTML of one run
run() {
    if ! "$gp" sim --cluster "$tmp/one.yaml" --workload "$2" --horizon 2h --no-progress \
        --json "$tmp/$1.json" --report "$tmp/$1.html" >"$tmp/$1.txt" 2>"$tmp/err"; then
        fail "$1: gpuplane sim failed: $(cat "$tmp/err")"
        return 1
    fi
}
# the JSON is printed one key per line (docs/FORMATS.md)
val() { grep -m1 "\"$2\":" "$tmp/$1.json" | sed 's/.*: *//; s/,$//'; }
after() { grep -A8 "\"$2\": {" "$tmp/$1.json" | grep -m1 "\"$3\":" | sed 's/.*: *//; s/,$//'; }

if run fits "$tmp/fits.yaml"; then
    grep -q "one.yaml: 1 node, 8 GPUs" "$tmp/fits.txt" || fail "summary: no \"1 node, 8 GPUs\""
    grep -q "1 node, 8 GPUs" "$tmp/fits.html" || fail "report: no \"1 node, 8 GPUs\""
    ! grep -Eq "(^|[^0-9.,])1 (nodes|GPUs|pods|retries|binds)\b" "$tmp/fits.txt" "$tmp/fits.html" ||
        fail "a count of 1 with a plural noun"
    # 2 h of a $27.45 node and a $0.10 control plane: $55.10
    cost=$(val fits cost_usd)
    total=$(after fits cost total_usd)
    [ "$cost" = "$total" ] || fail "cost_usd $cost differs from cost.total_usd $total"
    [ "$total" = 55.1 ] || fail "cost.total_usd $total, expected 55.1"
    grep -q '<div class="k">Cost</div><div class="v">\$55.10</div>' "$tmp/fits.html" ||
        fail "report: the cost card is not the whole bill \$55.10"
    grep -q 'Total \$55.10, of which control plane \$0.20' "$tmp/fits.html" ||
        fail "report: the cost section's total is not \$55.10"
    grep -q 'cost            \$55.10' "$tmp/fits.txt" || fail "summary: the cost is not \$55.10"
    # one 8-GPU pod for the first hour of two: the peak is 100 % at 0
    [ "$(after fits gpu_alloc peak_pct)" = 100.0 ] || fail "gpu_alloc.peak_pct is not 100"
fi

if run none "$tmp/huge.yaml"; then
    grep -q "n/a         n/a         n/a         n/a         n/a" "$tmp/none.txt" ||
        fail "summary: the delays of a run without a bind are not n/a"
    grep -Eq "  0 s( |$)" "$tmp/none.txt" && fail "summary: a delay of 0 s without a bind"
    [ "$(after none queue_delay_s mean)" = null ] || fail "JSON: queue_delay_s.mean is not null"
    [ "$(after none queue_delay_s max)" = null ] || fail "JSON: queue_delay_s.max is not null"
    grep -q '<div class="k">Queueing delay p50</div><div class="v">n/a</div>' "$tmp/none.html" ||
        fail "report: the delay card is not n/a"
fi

# a 9-GPU pod on an 8-GPU node, and a gang of 2 pods with minMember 3
if "$gp" sim --cluster "$tmp/one.yaml" --workload "$tmp/huge.yaml" --workload "$tmp/gang.yaml" \
    --horizon 2h --no-progress --json "$tmp/nofit.json" --report "$tmp/nofit.html" \
    >"$tmp/nofit.txt" 2>"$tmp/err"; then
    # a line each, most pods first, under the label "never fit"
    grep -q "^  never fit       1 gang (2 pods) can never start: gang trio: minMember 3 > 2 members that can exist$" \
        "$tmp/nofit.txt" || fail "summary: no never-start line for the gang"
    grep -q "^                  1 pod can never fit: they need 9 GPUs, the largest node has 8$" \
        "$tmp/nofit.txt" || fail "summary: no never-fit line for the 9-GPU pod"
    grep -q '"reason": "they need 9 GPUs, the largest node has 8"' "$tmp/nofit.json" ||
        fail "JSON: no never-fit reason"
    [ "$(after nofit never_fit pods)" = 3 ] || fail "JSON: never_fit.pods is not 3"
    grep -q '<td class="num">1 pod</td><td>they need 9 GPUs, the largest node has 8</td>' \
        "$tmp/nofit.html" || fail "report: no never-fit row"
    grep -q 'gang trio: minMember 3 &gt; 2 members that can exist' "$tmp/nofit.html" ||
        fail "report: no never-start row"
else
    fail "nofit: gpuplane sim failed: $(cat "$tmp/err")"
fi

if [ "$fails" -ne 0 ]; then
    echo "$fails summary check(s) failed"
    exit 1
fi
echo "all summary checks passed"
