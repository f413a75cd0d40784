#!/usr/bin/env bash
# gpu_smoke.sh - scripts/gpu-smoke.sh where no NVIDIA driver can be loaded
# exits 77 with one clear line; with the fake NVML (tests/fakenvml, when
# built: GP_FAKENVML) it prints what it discovered, the labels, resources,
# CDI devices and the doctor's verdict, and exits 0.
set -uo pipefail
gp="${GPUPLANE:?}"
src="${GP_SRC:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
GPUPLANE="$gp" GPUPLANE_NVML="$tmp/none/libnvidia-ml.so.1" bash "$src/scripts/gpu-smoke.sh" \
    >"$tmp/out" 2>&1
rc=$?
if [ "$rc" -ne 77 ] || [ "$(wc -l <"$tmp/out")" -ne 1 ] ||
    ! grep -q '^gpu-smoke: no NVIDIA driver on this machine (.*): skipped$' "$tmp/out"; then
    echo "FAIL no driver: exit $rc, expected 77 and one line:"
    cat "$tmp/out"
    fails=1
else
    echo "ok   no driver: $(cat "$tmp/out")"
fi
fake="${GP_FAKENVML:-}"
if [ -n "$fake" ] && [ -f "$fake" ]; then
    GPUPLANE="$gp" GPUPLANE_NVML="$fake" bash "$src/scripts/gpu-smoke.sh" >"$tmp/out" 2>&1
    rc=$?
    for want in '^== discovered' '^nvidia.com/gpu.product=' '^== resources' '^nvidia.com/gpu' \
        '^nvidia.com/gpu ' '^gpuplane node doctor: '; do
        grep -q -- "$want" "$tmp/out" || { echo "FAIL fake NVML: no line '$want'"; fails=1; }
    done
    [ "$rc" -eq 0 ] || { echo "FAIL fake NVML: exit $rc"; fails=1; }
    [ "$fails" -eq 0 ] && echo "ok   fake NVML"
else
    echo "(no fake NVML built: only the no-driver case ran)"
fi
exit "$fails"
