#!/usr/bin/env bash
# gpu_smoke.sh - scripts/gpu-smoke.sh where no NVIDIA driver can be loaded
# exits 77 with one clear line; with the fake NVML (tests/fakenvml, when
# built: GP_FAKENVML) it prints what it discovered, the labels, the
# resources (gpuplane node resources: MIG mixed, renamed replicas, a sharing
# refused), CDI devices and the doctor's verdict, and exits 0.
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
        '^nvidia.com/gpu.count=2$' '^nvidia.com/gpu: 8 (2 GPUs x 4 replicas, socket nvidia-gpu.sock)$' \
        '^  GPU-0::0 GPU-0::1 GPU-0::2 GPU-0::3 GPU-1::0 GPU-1::1 GPU-1::2 GPU-1::3$' \
        '^nvidia.com/gpu 0 GPU-0 1 GPU-1 all$' '^gpuplane node doctor: '; do
        grep -q -- "$want" "$tmp/out" || { echo "FAIL fake NVML: no line '$want'"; fails=1; }
    done
    [ "$rc" -eq 0 ] || { echo "FAIL fake NVML: exit $rc"; fails=1; }
    # MIG mixed: the resources are the plugin's (node resources), not a
    # product of GFD's labels: gpu.count counts the MIG-enabled GPU too, but
    # only the whole GPU is nvidia.com/gpu; renamed, the replicas of the
    # whole GPU are nvidia.com/gpu.shared and the MIG devices stay as they are
    cat >"$tmp/mig.conf" <<'CONF'
driver 550.54.15
cuda 12040
gpu name="NVIDIA A100-SXM4-80GB" uuid=GPU-0 pci=00000000:07:00.0 memory=81920 cc=8.0 persistence=1 mig=1
mig uuid=MIG-0 gi=1 ci=0 profile=19 start=0 size=1 memory=9728 sms=14 gislices=1 cislices=1 copy=1 dec=0 enc=0 jpeg=0 ofa=0
mig uuid=MIG-1 gi=2 ci=0 profile=19 start=1 size=1 memory=9728 sms=14 gislices=1 cislices=1 copy=1 dec=0 enc=0 jpeg=0 ofa=0
gpu name="NVIDIA A100-SXM4-80GB" uuid=GPU-1 pci=00000000:0F:00.0 memory=81920 cc=8.0 persistence=1 mig=0
CONF
    GPUPLANE="$gp" GPUPLANE_NVML="$fake" GPUPLANE_FAKE_NVML="$tmp/mig.conf" \
        bash "$src/scripts/gpu-smoke.sh" --mig-strategy mixed >"$tmp/out" 2>&1
    rc=$?
    for want in '^nvidia.com/gpu.count=2$' '^nvidia.com/gpu: 1 (1 GPU, socket nvidia-gpu.sock)$' '^  GPU-1$' \
        '^nvidia.com/mig-1g.10gb: 2 (2 MIG devices, socket nvidia-mig-1g.10gb.sock)$' '^  MIG-0 MIG-1$'; do
        grep -q -- "$want" "$tmp/out" || { echo "FAIL fake NVML, MIG mixed: no line '$want'"; fails=1; }
    done
    [ "$rc" -eq 0 ] || { echo "FAIL fake NVML, MIG mixed: exit $rc"; fails=1; }
    GPUPLANE_NVML="$fake" GPUPLANE_FAKE_NVML="$tmp/mig.conf" "$gp" node resources --mig-strategy mixed \
        --sharing time-slicing --replicas 2 --rename-by-default >"$tmp/res" 2>&1
    rc=$?
    if [ "$rc" -ne 0 ] || ! grep -q '^nvidia.com/gpu.shared: 2 (1 GPU x 2 replicas, socket nvidia-gpu.shared.sock)$' "$tmp/res" ||
        ! grep -q '^nvidia.com/mig-1g.10gb: 2 (2 MIG devices, socket' "$tmp/res" || grep -q '^nvidia.com/gpu:' "$tmp/res"; then
        echo "FAIL node resources, renamed time-slicing on MIG mixed: exit $rc"
        cat "$tmp/res"
        fails=1
    fi
    # a sharing NVIDIA's plugin refuses: one line, exit 2
    GPUPLANE_NVML="$fake" GPUPLANE_FAKE_NVML="$tmp/mig.conf" "$gp" node resources --mig-strategy mixed \
        --sharing mps --replicas 2 >"$tmp/res" 2>&1
    rc=$?
    if [ "$rc" -ne 2 ] || [ "$(wc -l <"$tmp/res")" -ne 1 ] || ! grep -q 'MPS is not supported with MIG' "$tmp/res"; then
        echo "FAIL node resources, MPS with MIG: exit $rc, expected 2 and one line:"
        cat "$tmp/res"
        fails=1
    fi
    [ "$fails" -eq 0 ] && echo "ok   fake NVML"
else
    echo "(no fake NVML built: only the no-driver case ran)"
fi
exit "$fails"
