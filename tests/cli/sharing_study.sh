#!/usr/bin/env bash
# sharing_study.sh - `gpuplane sim --compare-sharing` on the renter's
# question example: its table and JSON must match the golden files byte for
# byte, the HTML page must be whole, and missing inputs give one line and
# exit 2 with no file written. GP_UPDATE_GOLDEN=1 rewrites the golden files.
set -uo pipefail
gp="${GPUPLANE:?}"
src="${GP_SRC:?}"
golden="$src/tests/golden"
cd "$src" # relative paths: the workload's name is part of the output
. "$src/tests/cli/lib/common.sh"

ex=examples/renters-question
if ! "$gp" sim --compare-sharing --cluster "$ex/cluster.yaml" --workload "$ex/models.yaml" \
    --json "$tmp/study.json" --report "$tmp/study.html" >"$tmp/study.txt" 2>"$tmp/err"; then
    fail "study: $(cat "$tmp/err")"
fi
for f in study.txt study.json; do
    want="$golden/sharing-$f"
    if [ "${GP_UPDATE_GOLDEN:-0}" = 1 ]; then
        cp "$tmp/$f" "$want"
        echo "updated $want"
    elif ! diff -u "$want" "$tmp/$f" >"$tmp/diff"; then
        fail "$f differs from $want:"
        head -40 "$tmp/diff"
    fi
done
grep -q '^<!DOCTYPE html>' "$tmp/study.html" && tail -1 "$tmp/study.html" | grep -q '</html>' ||
    fail "study.html is not a whole page"
[ "$(grep -c '<svg' "$tmp/study.html")" = 3 ] || fail "study.html: expected 3 charts"
# the simulation report's style, and the recommendations the table prints
for want in '.cards{display:grid' '<h2>Recommendations</h2>' 'class="card"' \
    'cheapest for the work: a100 timeslice x4'; do
    grep -qF "$want" "$tmp/study.html" || fail "study.html: no '$want'"
done
grep -q '^cheapest for the work: a100 timeslice x4' "$tmp/study.txt" ||
    fail "study.txt: no recommendation line"

# an ordinary manifest (nvidia.com/gpu: 1, no gpuplane annotation): the
# device plugin advertises time-sliced and MPS replicas as nvidia.com/gpu,
# so both serve it; MIG's mixed strategy does not (docs/sharing.md)
cat >"$tmp/ordinary.yaml" <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata: {name: svc}
spec:
  replicas: 10
  template:
    spec:
      containers:
      - name: s
        resources:
          requests: {cpu: "2", memory: 8Gi}
          limits: {nvidia.com/gpu: 1}
EOF
if "$gp" sim --compare-sharing --cluster "$ex/cluster.yaml" --workload "$tmp/ordinary.yaml" \
    >"$tmp/ordinary.txt" 2>"$tmp/err"; then
    for m in timeslice mps; do
        grep -q "^a100 $m x[0-9]* *[0-9]" "$tmp/ordinary.txt" ||
            fail "ordinary manifest: a100 $m is not possible: $(grep "a100 $m" "$tmp/ordinary.txt")"
    done
    grep -q "^a100 mig .*not possible: pod svc fits no empty a100 node: it asks for nvidia.com/gpu" \
        "$tmp/ordinary.txt" || fail "ordinary manifest: a100 mig: $(grep 'a100 mig' "$tmp/ordinary.txt")"
else
    fail "ordinary manifest: $(cat "$tmp/err")"
fi

# bad use: one line, exit 2, nothing written
"$gp" sim --compare-sharing --workload "$ex/models.yaml" --json "$tmp/none.json" 2>"$tmp/err"
rc=$?
[ "$rc" = 2 ] || fail "no --cluster: exit $rc, expected 2"
[ "$(wc -l <"$tmp/err")" = 1 ] || fail "no --cluster: expected one line, got: $(cat "$tmp/err")"
[ ! -e "$tmp/none.json" ] || fail "no --cluster: wrote a file"
# flags the study would ignore are refused, naming the flag, before anything
# is written; --seed and --horizon are the study's own
for flag in "--csv $tmp/x.csv" "--policy spread" "--mode static" "--inflate 2" \
    "--order fifo" --backfill --vc-queues "--vc-sizes $tmp/vc.csv" "--sample 5m" \
    "--policy=spread"; do
    # shellcheck disable=SC2086
    "$gp" sim --compare-sharing --cluster "$ex/cluster.yaml" --workload "$ex/models.yaml" \
        --json "$tmp/x.json" $flag 2>"$tmp/err"
    rc=$?
    name=${flag%% *}
    name=${name%%=*}
    [ "$rc" = 2 ] && [ ! -e "$tmp/x.json" ] && [ ! -e "$tmp/x.csv" ] &&
        [ "$(wc -l <"$tmp/err")" = 1 ] && grep -q -- "does not use $name " "$tmp/err" ||
        fail "$flag: exit $rc, $(cat "$tmp/err")"
done
"$gp" sim --compare-sharing --cluster "$ex/cluster.yaml" --workload "$ex/models.yaml" \
    --seed 3 --horizon 2h --quiet --no-progress 2>"$tmp/err" ||
    fail "--seed, --horizon, --quiet, --no-progress: $(cat "$tmp/err")"

# a stream of Jobs is sized by what runs at once, and a pod that only one
# pool may take is sized there for the options of the others
cat >"$tmp/stream.yaml" <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata: {name: svc}
spec:
  replicas: 4
  template:
    spec:
      containers:
      - name: s
        resources:
          requests: {cpu: "2", memory: 8Gi}
          limits: {nvidia.com/gpu: 1}
---
apiVersion: batch/v1
kind: Job
metadata:
  name: train
  annotations:
    sim.gpuplane.io/repeat: "20"
    sim.gpuplane.io/interarrival: 30m
    sim.gpuplane.io/duration: 1h
spec:
  template:
    spec:
      nodeSelector: {gpuplane.io/pool: h100}
      containers:
      - name: t
        resources:
          requests: {cpu: "8", memory: 32Gi}
          limits: {nvidia.com/gpu: 4}
EOF
if "$gp" sim --compare-sharing --cluster "$ex/cluster.yaml" --workload "$tmp/stream.yaml" \
    >"$tmp/stream.txt" 2>"$tmp/err"; then
    grep -q ', 6 pods at the peak (at 30 min)$' "$tmp/stream.txt" ||
        fail "stream: $(head -1 "$tmp/stream.txt")"
    grep -q '^  train: up to 2 at once, only on h100 (a100: node(s) didn.t match node selector)$' \
        "$tmp/stream.txt" || fail "stream: no constraint line for train"
    grep -q '^  + h100 (exclusive, as configured): 1 node, 8 GPUs, \$55.04/hour for up to 2 pods' \
        "$tmp/stream.txt" || fail "stream: a100's options do not rent h100 for train"
else
    fail "stream: $(cat "$tmp/err")"
fi
# services with a latencyLimit decide (docs/sharing.md, "Services with a
# latency limit"): five quarter-GPU models of 10 GiB, 100 rps alone, 50
# offered, p99 within 100 ms, on one-H100 nodes. Time-slicing x6 holds all
# five on one GPU (demand 1250: each at 0.8, p99 ln(100)/30 = 0.154 s): it
# misses, and x4 (four a GPU at full speed, 0.092 s) on 2 nodes is
# recommended
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
} >"$tmp/limits.yaml"
printf 'apiVersion: gpuplane.io/v1\nkind: Cluster\nmetadata: {name: c}\nspec:\n  nodePools:\n  - {name: h100, gpu: {model: H100-80GB, count: 1, memory: 80Gi}, cpu: "32", memory: 256Gi, count: 1, pricePerHour: 7}\n' >"$tmp/one.yaml"
if "$gp" sim --compare-sharing --cluster "$tmp/one.yaml" --workload "$tmp/limits.yaml" \
    --json "$tmp/limits.json" --report "$tmp/limits.html" >"$tmp/limits.txt" 2>"$tmp/err"; then
    grep -qE '^h100 timeslice x6 +1 +1 +1 +7\.00 +5110 +8\.75 +1\.25x +1\.54 miss$' "$tmp/limits.txt" ||
        fail "limits: no missing x6 row: $(grep 'timeslice' "$tmp/limits.txt")"
    grep -qF '  misses a latency limit: m1: p99 0.154 s, over its 0.100 s limit (1 replica at 0.80x)' \
        "$tmp/limits.txt" || fail "limits: no line for the service missed"
    grep -q '^cheapest for the work: h100 timeslice x4, 2 GPUs on 2 nodes' "$tmp/limits.txt" ||
        fail "limits: $(grep '^cheapest for the work' "$tmp/limits.txt")"
    grep -qF 'h100 timeslice x6 costs less for the work ($8.75/hour) but misses m1' \
        "$tmp/limits.txt" || fail "limits: no advice naming the cheaper option that misses"
    grep -q '"meets_latency_limits": false' "$tmp/limits.json" &&
        grep -q '"cheapest_fit": 2' "$tmp/limits.json" ||
        fail "limits: JSON lacks the latency verdicts"
    grep -qF '<b>missed</b>: m1: p99 0.154 s' "$tmp/limits.html" || fail "limits: HTML lacks the miss"
else
    fail "limits: $(cat "$tmp/err")"
fi
# an LLM (ITL 10 ms, TTFT 0.1 + 0.01 N s; 30 GiB, no compute share) at 10
# rps within a TTFT p99 of 200 ms: alone N = 20/9, TTFT 0.122 s; MPS x2
# holds its 30 GiB in a 40 GiB client but runs it at half the SMs: N = 5,
# TTFT (0.1 + 0.05) / 0.5 = 0.300 s, missed; MIG's 3g.40gb (3/7): 0.375 s
cat >"$tmp/llm.yaml" <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata: {name: chat}
spec:
  replicas: 1
  template:
    metadata:
      annotations: {gpuplane.io/gpu-memory: 30Gi}
    spec:
      containers:
      - {name: m, image: m, resources: {requests: {cpu: "1", memory: 4Gi}}}
---
apiVersion: gpuplane.io/v1
kind: InferenceService
metadata: {name: chat}
spec:
  deployment: chat
  llm: {itlBaseSeconds: 0.01, itlPerBatchSeconds: 0, ttftBaseSeconds: 0.1, ttftPerTokenSeconds: 0.0001, maxBatch: 64, inputTokens: 100, outputTokens: 10}
  load: {constant: 10}
  latencyLimit: 200ms
EOF
if "$gp" sim --compare-sharing --cluster "$tmp/one.yaml" --workload "$tmp/llm.yaml" \
    >"$tmp/llm.txt" 2>"$tmp/err"; then
    grep -qE '^h100 mps x2 .* 2\.00x +1\.50 miss$' "$tmp/llm.txt" &&
        grep -qF '  misses a latency limit: chat: TTFT p99 0.300 s, over its 0.200 s limit (1 replica at 0.50x, ITL 20.0 ms, KV cache 50 %)' "$tmp/llm.txt" &&
        grep -qF 'chat: TTFT p99 0.375 s, over its 0.200 s limit' "$tmp/llm.txt" &&
        grep -q '^cheapest for the work: h100 exclusive' "$tmp/llm.txt" ||
        fail "llm: $(cat "$tmp/llm.txt")"
else
    fail "llm: $(cat "$tmp/err")"
fi
printf 'apiVersion: gpuplane.io/v1\nkind: Cluster\nmetadata: {name: c}\nspec:\n  nodePools:\n  - {name: cpu, cpu: "8", memory: 8Gi, count: 1}\n' >"$tmp/cpu.yaml"
"$gp" sim --compare-sharing --cluster "$tmp/cpu.yaml" --workload "$ex/models.yaml" \
    --json "$tmp/cpu.json" 2>"$tmp/err"
[ $? = 2 ] && [ ! -e "$tmp/cpu.json" ] && grep -q "no node pool with GPUs" "$tmp/err" ||
    fail "CPU-only cluster: $(cat "$tmp/err")"

[ "$fails" = 0 ] || exit 1
echo "ok   sharing study"
