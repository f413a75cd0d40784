#!/usr/bin/env bash
# serve_week.sh - the inference serving benchmark of issue 13: a week of a
# cluster serving 50 InferenceServices (25 plain request/response models,
# 25 LLMs on the presets of data/serving-models.json; diurnal loads with
# spikes on some; HPA on half, the concurrency autoscaler with scale to
# zero on the other half) on two autoscaled GPU pools. Prints the wall
# time and the requests offered. ROLLOUTS=1 gives every service three
# rolling updates (days 1 and 3, the third 5 min after the second, over
# it). Usage: bench/serve_week.sh [BUILD_DIR]
set -euo pipefail
build="${1:-build}"
gp="$build/gpuplane"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/cluster.yaml" <<'YAML'
apiVersion: gpuplane.io/v1
kind: Cluster
metadata: {name: serve-week}
spec:
  autoscaler: {scaleDownUnneededTime: 10m}
  nodePools:
  - {name: h100, gpu: {model: H100-80GB, count: 8, memory: 80Gi}, cpu: "192", memory: 2Ti,
     minCount: 2, maxCount: 40, bootTime: 5m, pricePerHour: 55.04}
  - {name: a100, gpu: {model: A100-80GB, count: 8, memory: 80Gi}, cpu: "96", memory: 1152Gi,
     minCount: 0, maxCount: 40, bootTime: 5m, pricePerHour: 27.45}
YAML
presets=(qwen3-8b-fp8/h100 qwen3-8b-fp8/a100 llama-3.3-70b-fp8/2xh100)
for i in $(seq 0 49); do
    name="svc$i"
    gpus=1
    model="requestsPerSecond: $((20 + i * 3))"
    load="diurnal: {mean: $((40 + i * 17)), amplitude: 0.6, peak: $((10 + i % 8))h}"
    if [ $((i % 2)) = 1 ]; then
        p=${presets[$((i % 3))]}
        [ "$p" = llama-3.3-70b-fp8/2xh100 ] && gpus=2
        model="llm: {preset: $p, inputTokens: $((200 + i * 30)), outputTokens: $((100 + i * 5))}"
        load="diurnal: {mean: $((2 + i % 9)), amplitude: 0.7, peak: $((9 + i % 10))h}"
    fi
    [ $((i % 5)) = 0 ] && load="spikes: {base: $((10 + i)), height: $((60 + i * 4)), every: 3h, length: 10m}"
    # concurrency targets a replica sustains: under 1 for a one-request-
    # at-a-time model, a fraction of the batch for an LLM
    target=0.7
    [ $((i % 2)) = 1 ] && target=32
    if [ $((i % 4)) -lt 2 ]; then
        scaler="hpa: {minReplicas: 1, maxReplicas: 24, metric: utilization, target: 70}"
    else
        scaler="concurrency: {target: $target, maxScale: 24}"
    fi
    cat >>"$tmp/services.yaml" <<YAML
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: $name}
spec:
  replicas: 1
  selector: {matchLabels: {app: $name}}
  template:
    metadata: {labels: {app: $name}}
    spec:
      containers:
      - name: m
        image: m
        resources:
          limits: {nvidia.com/gpu: $gpus, cpu: "8", memory: 64Gi}
---
apiVersion: gpuplane.io/v1
kind: InferenceService
metadata: {name: $name}
spec:
  deployment: $name
  $model
  coldStart: uniform(60s,180s)
  load: {$load}
  autoscaler: {$scaler}
YAML
    if [ -n "${ROLLOUTS:-}" ]; then
        echo "  rollouts: [{at: 1d}, {at: 3d}, {at: 3d5m, maxSurge: 1, maxUnavailable: 0}]" \
            >>"$tmp/services.yaml"
    fi
done
[ -n "${DUMP:-}" ] && cp "$tmp"/*.yaml "$DUMP"/
start=$(date +%s.%N)
"$gp" sim --cluster "$tmp/cluster.yaml" --workload "$tmp/services.yaml" --horizon "${HORIZON:-7d}" --sample 10m \
    --quiet --json "$tmp/out.json"
[ -n "${KEEP:-}" ] && cp "$tmp/out.json" "$KEEP"
end=$(date +%s.%N)
python3 - "$tmp/out.json" "$start" "$end" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
s = d["services"]
req = sum(x["requests"] for x in s)
cold = sum(x["cold_starts"] for x in s)
print(f"services {len(s)}  requests {req / 1e6:.1f} M  cold starts {cold}  "
      f"worst p99 {max(x['p99_latency_s'] for x in s):.1f} s  "
      f"cost ${d['cost_usd']:.0f}  wall {float(sys.argv[3]) - float(sys.argv[2]):.2f} s")
ro = [r["status"] for x in s for r in x.get("rollouts", [])]
if ro:
    print("rollouts " + ", ".join(f"{ro.count(k)} {k}" for k in sorted(set(ro))))
PY
