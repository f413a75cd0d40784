#!/usr/bin/env bash
# philly_orders.sh - the Philly replay under each queue order, with and
# without backfill: average JCT, queueing-delay percentiles and GPU
# utilisation, as the markdown tables of docs/philly.md. Three setups:
#   full    the revised machine list (3,205 GPUs), one queue per VC
#   capped  the same, each VC capped at its Helios size (philly_vc.csv)
#   small   64 nodes of 8 GPUs (512 GPUs), one queue per VC
# Usage: bench/philly_orders.sh [BUILD_DIR] [SETUP...]   (default: build, all)
# With PHILLY_JSON_DIR set, each run's JSON is kept there as
# SETUP-ORDER-BACKFILL.json, the temporary directory's path in it written
# TMP (to compare two builds byte for byte: run it for each into its own
# directory, then `diff -r` them).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
shift || true
setups=("$@")
[ ${#setups[@]} -gt 0 ] || setups=(full capped small)
gp="$build/gpuplane"
shared="${GP_SHARED:-$root/../shared}/data/philly" # GP_SHARED: the shared folder, as the tests name it
jobs="philly:$shared/pollux-osdi21/philly.csv"
machines="philly:$shared/machine-list/revised_machine_list.csv"
vcs="$shared/helios-artifact/philly_vc.csv"
[ -x "$gp" ] || { echo "no $gp: build first" >&2; exit 2; }
[ -f "$shared/pollux-osdi21/philly.csv" ] || { echo "no Philly data under $shared" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
keep=${PHILLY_JSON_DIR:-}
[ -z "$keep" ] || mkdir -p "$keep"
cat >"$tmp/small.yaml" <<'YAML'
apiVersion: gpuplane.io/v1
kind: Cluster
metadata:
  name: philly-small
spec:
  nodePools:
  - name: philly-8gpu
    gpu: {model: philly, count: 8}
    cpu: "32"
    memory: 256Gi
    count: 64
YAML

for setup in "${setups[@]}"; do
    case $setup in
    full) cluster=$machines extra=(--vc-queues) ;;
    capped) cluster=$machines extra=(--vc-queues --vc-sizes "$vcs") ;;
    small) cluster="$tmp/small.yaml" extra=(--vc-queues) ;;
    *) echo "unknown setup '$setup' (full, capped, small)" >&2; exit 2 ;;
    esac
    echo "### $setup"
    echo
    echo "| order | backfill | mean JCT (s) | JCT p50 | JCT p95 | JCT p99 | mean queue (s) | queue p50 | queue p95 | queue p99 | GPU util % | wall (s) |"
    echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    for order in fifo sjf fair; do
        for bf in no yes; do
            flag=()
            [ "$bf" = yes ] && flag=(--backfill)
            out="$tmp/$setup-$order-$bf.json"
            start=$(date +%s.%N)
            "$gp" sim --cluster "$cluster" --workload "$jobs" "${extra[@]}" --order "$order" \
                "${flag[@]}" --json "$out" --quiet --no-progress
            end=$(date +%s.%N)
            [ -z "$keep" ] || sed "s|$tmp/|TMP/|g" "$out" >"$keep/$(basename "$out")"
            python3 - "$out" "$order" "$bf" "$start" "$end" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
j, q, g = d["jobs"]["jct_s"], d["queue_delay_s"], d["gpu_hours"]
util = 100 * g["allocated"] / g["total"] if g["total"] else 0
wall = float(sys.argv[5]) - float(sys.argv[4])
print(f"| {sys.argv[2]} | {sys.argv[3]} | {j['mean']:.0f} | {j['p50']:.0f} | {j['p95']:.0f} | "
      f"{j['p99']:.0f} | {q['mean']:.0f} | {q['p50']:.0f} | {q['p95']:.0f} | {q['p99']:.0f} | "
      f"{util:.1f} | {wall:.1f} |")
PY
        done
    done
    echo
done
