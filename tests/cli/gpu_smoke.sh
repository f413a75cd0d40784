#!/usr/bin/env bash
# gpu_smoke.sh - scripts/gpu-smoke.sh where no NVIDIA driver can be loaded
# exits 77 with one clear line; with the fake NVML (tests/fakenvml, when
# built: GP_FAKENVML) it prints what it discovered, the labels, resources,
# CDI devices and the doctor's verdict, and exits 0.
set -uo pipefail
gp="${GPUPLANE:?}"
src="${GP_SRC:?}"
. "$src/tests/cli/lib/common.sh"
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
    cat >"$tmp/fake.conf" <<'CONF'
driver 550.54.15
cuda 12040
gpu name="NVIDIA H100 80GB HBM3" uuid=GPU-0 pci=00000000:07:00.0 memory=81559 cc=9.0 persistence=1 mig=0
gpu name="NVIDIA H100 80GB HBM3" uuid=GPU-1 pci=00000000:0F:00.0 memory=81559 cc=9.0 persistence=1 mig=0
CONF
    GPUPLANE="$gp" GPUPLANE_NVML="$fake" GPUPLANE_FAKE_NVML="$tmp/fake.conf" \
        bash "$src/scripts/gpu-smoke.sh" --sharing time-slicing --replicas 4 >"$tmp/out" 2>&1
    rc=$?
    for want in '^== discovered' 'GPU-1' '^nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3-SHARED$' \
        '^nvidia.com/gpu.count=2$' '^nvidia.com/gpu (or nvidia.com/gpu.shared .*): 8 (2 GPUs x 4 replicas)$' \
        '^nvidia.com/gpu 0 GPU-0 1 GPU-1 all$' '^gpuplane node doctor: '; do
        grep -q -- "$want" "$tmp/out" || { echo "FAIL fake NVML: no line '$want'"; fails=1; }
    done
    [ "$rc" -eq 0 ] || { echo "FAIL fake NVML: exit $rc"; fails=1; }
    [ "$fails" -eq 0 ] && echo "ok   fake NVML"
else
    echo "(no fake NVML built: only the no-driver case ran)"
fi
exit "$fails"
