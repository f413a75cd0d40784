#!/usr/bin/env bash
# gpu-smoke.sh - the node agent against this machine's NVIDIA driver: what
# it discovers (gpuplane node discover), what it would advertise (the GFD
# labels it would patch onto the Node, the device plugin's resources as
# `gpuplane node resources` builds them, the CDI spec's devices) and the
# node doctor's verdict. Exits 77 with one line where no NVIDIA driver is
# present (NVML cannot be loaded), 1 when discovery fails, else 0 whatever
# the doctor says (its verdict is printed).
#
#   scripts/gpu-smoke.sh [--sharing time-slicing --replicas 4] [--mig-strategy mixed]
#
# GPUPLANE names the binary (default build/gpuplane); GPUPLANE_NVML a
# library to load in place of libnvidia-ml.so.1 (tests: the fake NVML).
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
gp="${GPUPLANE:-$here/build/gpuplane}"
if [ ! -x "$gp" ]; then
    echo "gpu-smoke: $gp is not built (cmake -S . -B build && cmake --build build)" >&2
    exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$gp" node labels --no-timestamp "$@" >"$tmp/labels" 2>"$tmp/err"
rc=$?
if [ "$rc" -eq 3 ]; then
    echo "gpu-smoke: no NVIDIA driver on this machine ($(cat "$tmp/err")): skipped"
    exit 77
fi
if [ "$rc" -ne 0 ]; then
    echo "gpu-smoke: node labels failed (exit $rc): $(cat "$tmp/err")" >&2
    exit 1
fi

echo "== discovered"
if "$gp" node --help | grep -q '^  discover '; then
    "$gp" node discover || echo "gpu-smoke: node discover exited $?"
else
    grep -E 'gpu\.(product|count|memory)|cuda\.driver-version\.full|mig\.capable' "$tmp/labels"
fi

echo "== node labels (GPU Feature Discovery's names)"
cat "$tmp/labels"

echo "== resources it would advertise (gpuplane node resources)"
"$gp" node resources "$@" || echo "gpu-smoke: node resources exited $?"

echo "== CDI devices (gpuplane node cdi)"
if "$gp" node cdi >"$tmp/cdi" 2>"$tmp/err"; then
    python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); print(s["kind"], " ".join(d["name"] for d in s["devices"]))' "$tmp/cdi" 2>/dev/null ||
        head -5 "$tmp/cdi"
else
    echo "gpu-smoke: node cdi: $(cat "$tmp/err")"
fi

echo "== node doctor"
"$gp" node doctor
echo "gpu-smoke: node doctor exited $?"
exit 0
