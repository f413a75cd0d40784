#!/usr/bin/env bash
# manifest_load.sh - the cost of reading a large manifest: writes N Pods
# (default 10,000) with the fields real ones carry (labels, annotations,
# node selector, tolerations, a container with image, command, env, ports,
# resources and volume mounts, a volume), all arriving after the horizon
# so the simulation does nothing, and times `gpuplane sim` over it (best
# user time of 5 runs) and, when valgrind is installed, counts its
# instructions (callgrind), with the share of the strict check
# (gp_k8s_validate). Usage: bench/manifest_load.sh BUILD_DIR [N]
set -euo pipefail
build="${1:?usage: bench/manifest_load.sh BUILD_DIR [N]}"
n="${2:-10000}"
src="$(cd "$(dirname "$0")/.." && pwd)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
awk -v n="$n" 'BEGIN {
    for (i = 0; i < n; i++) {
        printf "apiVersion: v1\nkind: Pod\nmetadata:\n  name: infer-%d\n  namespace: team-%d\n", i, i % 7
        printf "  labels: {app: infer, gpuplane.io/queue: default, app.kubernetes.io/name: infer-%d}\n", i % 50
        printf "  annotations:\n    sim.gpuplane.io/arrival: 1000h\n    sim.gpuplane.io/duration: 30m\n"
        printf "    example.com/owner: team-%d\nspec:\n  restartPolicy: Never\n", i % 7
        printf "  nodeSelector: {gpuplane.io/pool: l4}\n  tolerations:\n"
        printf "  - {key: nvidia.com/gpu, operator: Exists, effect: NoSchedule}\n"
        printf "  containers:\n  - name: server\n    image: ghcr.io/example/infer:1.%d\n", i % 9
        printf "    command: [python, -m, serve]\n    args: [--port, \"8080\"]\n    env:\n"
        printf "    - {name: MODEL, value: m%d}\n    - {name: BATCH, value: \"8\"}\n", i % 13
        printf "    ports: [{containerPort: 8080, name: http}]\n    resources:\n"
        printf "      requests: {cpu: \"4\", memory: 16Gi}\n      limits: {nvidia.com/gpu: 1, memory: 16Gi}\n"
        printf "    volumeMounts: [{name: cache, mountPath: /cache}]\n"
        printf "  volumes:\n  - name: cache\n    emptyDir: {}\n---\n"
    }
}' >"$tmp/pods.yaml"
run=("$build/gpuplane" sim --cluster "$src/examples/cluster-mixed.yaml" --workload "$tmp/pods.yaml"
     --horizon 1s --quiet)
best=
for _ in 1 2 3 4 5; do
    /usr/bin/time -o "$tmp/time" -f "%U" "${run[@]}" 2>/dev/null
    t=$(tail -1 "$tmp/time")
    if [ -z "$best" ] || awk -v a="$t" -v b="$best" 'BEGIN { exit !(a < b) }'; then best=$t; fi
done
echo "$n pods, $(wc -c <"$tmp/pods.yaml") bytes: best user time $best s"
if command -v valgrind >/dev/null 2>&1; then
    valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" "${run[@]}" 2>"$tmp/vg" >/dev/null
    echo "instructions: $(grep -o 'Collected : [0-9]*' "$tmp/vg" | awk '{print $3}')"
    callgrind_annotate --inclusive=yes "$tmp/cg" 2>/dev/null | grep -E 'gp_k8s_validate ' | head -1 || true
fi
