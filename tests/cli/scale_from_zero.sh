#!/usr/bin/env bash
# scale_from_zero.sh - `gpuplane sim` on a cluster whose only pool starts
# with no node: the autoscaler must request nodes, the pods must run, and
# the pool must be back to zero by the end (docs/simulator.md).
set -uo pipefail
gp="${GPUPLANE:?}"
src="${GP_SRC:?}"
. "$src/tests/cli/lib/common.sh"
cat >"$tmp/zero.yaml" <<'YAML'
apiVersion: gpuplane.io/v1
kind: Cluster
metadata: {name: zero}
spec:
  nodePools:
  - name: a100
    gpu: {model: A100-80GB, count: 8, memory: 80Gi}
    cpu: "96"
    memory: 1152Gi
    minCount: 0
    maxCount: 4
    bootTime: 4m
    pricePerHour: 27.45
YAML
cat >"$tmp/jobs.yaml" <<'YAML'
apiVersion: batch/v1
kind: Job
metadata:
  name: train
  annotations: {sim.gpuplane.io/duration: 1h, sim.gpuplane.io/repeat: "3",
                sim.gpuplane.io/interarrival: 2h}
spec:
  template:
    spec:
      containers:
      - name: c
        resources: {limits: {nvidia.com/gpu: 8, cpu: "32", memory: 256Gi}}
YAML
if ! "$gp" sim --cluster "$tmp/zero.yaml" --workload "$tmp/jobs.yaml" --quiet \
    --json "$tmp/out.json" 2>"$tmp/err"; then
    echo "FAIL: $(cat "$tmp/err")"
    exit 1
fi
# the JSON is printed one key per line (docs/FORMATS.md): read the figures
val() { grep -m1 "\"$1\":" "$tmp/out.json" | sed 's/.*: *//; s/,$//'; }
fail() {
    echo "FAIL: $*"
    exit 1
}
[ "$(grep -A3 '"jobs": {' "$tmp/out.json" | grep -m1 '"completed"' | sed 's/.*: *//; s/,$//')" = 3 ] ||
    fail "expected 3 completed jobs"
[ "$(val nodes_requested)" -ge 1 ] || fail "no node requested"
[ "$(val peak_nodes)" -ge 1 ] || fail "the pool never grew"
[ "$(val nodes_removed)" -ge 1 ] || fail "the pool never shrank"
# three 1-hour jobs 2 h apart: a node each time, paid from request to removal
nh=$(val node_hours)
awk -v h="$nh" 'BEGIN { exit !(h >= 3 && h < 6) }' || fail "node_hours $nh, expected 3 to 6"
echo "ok   scale from zero"
