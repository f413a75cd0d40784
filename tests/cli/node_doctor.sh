#!/usr/bin/env bash
# node_doctor.sh - `gpuplane node doctor` on fake roots (--root): no driver
# exits 3, each failing check (driver without NVML, toolkit, runtime,
# device-plugin directory) is named with its fix and exits 1, --json is
# JSON with the same exit, and bad usage exits 2 with one line on stderr.
# The text on a fake node is byte for byte tests/golden/node-doctor.txt
# (GP_UPDATE_GOLDEN=1 rewrites it). NVML is pointed at a missing library,
# so the run is the same on a machine with a driver.
set -uo pipefail
gp="${GPUPLANE:?}"
src="${GP_SRC:?}"
. "$src/tests/cli/lib/common.sh"
export GPUPLANE_NVML="$tmp/no-such/libnvidia-ml.so.1"
export PATH="/usr/local/bin:/usr/bin:/bin"

# doctor NAME RC ARGS...: the doctor exits RC; its output in $tmp/NAME
doctor() {
    local name="$1" want="$2"
    shift 2
    "$gp" node doctor "$@" >"$tmp/$name" 2>"$tmp/$name.err"
    local rc=$?
    if [ "$rc" -ne "$want" ]; then
        failed "$name: exit $rc, expected $want"
        cat "$tmp/$name" "$tmp/$name.err"
    else
        echo "ok   $name (exit $rc)"
    fi
}
has() { # has NAME REGEX: the output of NAME has a line matching REGEX
    grep -Eq -- "$2" "$tmp/$1" || failed "$1: no line matching '$2':$(printf '\n')$(cat "$tmp/$1")"
}

r="$tmp/root"
mkdir -p "$r"
doctor empty 3 --root "$r"
has empty '^  fail  driver +no NVIDIA kernel module: /proc/driver/nvidia/version is absent'
has empty '^ +fix: install the NVIDIA data-centre driver'
has empty '^  fail  toolkit +NVIDIA Container Toolkit not found'
has empty '^  fail  runtime +no containerd'
has empty '^  fail  device-plugins +/var/lib/kubelet/device-plugins is absent'
has empty '^ +fix: nvidia-ctk runtime configure --runtime=containerd --cdi.enabled'
if [ "${GP_UPDATE_GOLDEN:-0}" = 1 ]; then
    cp "$tmp/empty" "$src/tests/golden/node-doctor.txt"
fi
diff -u "$src/tests/golden/node-doctor.txt" "$tmp/empty" || failed "empty differs from the golden"

# the node set up, the driver loaded but NVML absent
mkdir -p "$r/proc/driver/nvidia" "$r/usr/bin" "$r/etc/containerd" "$r/var/lib/kubelet/device-plugins"
echo "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 22:23:56 UTC 2024" \
    >"$r/proc/driver/nvidia/version"
printf '#!/bin/sh\n' >"$r/usr/bin/nvidia-ctk"
chmod 755 "$r/usr/bin/nvidia-ctk"
printf 'version = 2\n[plugins."io.containerd.grpc.v1.cri"]\n  enable_cdi = true\n' \
    >"$r/etc/containerd/config.toml"
: >"$r/var/lib/kubelet/device-plugins/kubelet.sock"
doctor nonvml 1 --root "$r" --cuda 12.4
has nonvml '^  fail  driver +kernel module 550.54.15 loaded, but NVML cannot be used'
has nonvml '^  pass  cuda +CUDA 12.4 on driver 550.54.15'
has nonvml '^  pass  toolkit +NVIDIA Container Toolkit: /usr/bin/nvidia-ctk'
has nonvml '^  pass  runtime +containerd: CDI enabled'
has nonvml '^  pass  device-plugins'
has nonvml '^  skip  mig'
doctor json 1 --root "$r" --json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["exit"] == 1 and not d["no_driver"] and len(d["checks"]) == 8, d' "$tmp/json" ||
    failed "json: not the doctor's JSON"

# one breach at a time
chmod 644 "$r/usr/bin/nvidia-ctk"
doctor notoolkit 1 --root "$r"
has notoolkit '^  fail  toolkit'
chmod 755 "$r/usr/bin/nvidia-ctk"
printf 'version = 2\n# enable_cdi = true\n' >"$r/etc/containerd/config.toml"
doctor noruntime 1 --root "$r"
has noruntime '^  fail  runtime +containerd has neither the nvidia runtime nor CDI'
rm "$r/var/lib/kubelet/device-plugins/kubelet.sock"
doctor nokubelet 1 --root "$r"
has nokubelet '^  warn  device-plugins +/var/lib/kubelet/device-plugins exists but has no kubelet.sock'
doctor cudaold 1 --root "$r" --cuda 13.0
has cudaold '^  (warn|fail)  cuda +CUDA 13.0 on driver 550.54.15'

# with the fake NVML (when built): every check passes, then a MIG layout
# that is not the GPUs' and persistence off
fake="${GP_FAKENVML:-}"
if [ -n "$fake" ] && [ -f "$fake" ]; then
    printf 'version = 2\n[plugins."io.containerd.grpc.v1.cri"]\n  enable_cdi = true\n' \
        >"$r/etc/containerd/config.toml"
    : >"$r/var/lib/kubelet/device-plugins/kubelet.sock"
    conf="$tmp/fake.conf"
    gpu='gpu name="NVIDIA H100 80GB HBM3" uuid=GPU-0 pci=00000000:07:00.0 memory=81559 cc=9.0'
    printf 'driver 550.54.15\ncuda 12040\n%s persistence=1 mig=0\n' "$gpu" >"$conf"
    GPUPLANE_NVML="$fake" GPUPLANE_FAKE_NVML="$conf" doctor allpass 0 --root "$r" --cuda 12.4 --mig none
    has allpass '^gpuplane node doctor: 7 passed, 0 warnings, 0 failed, 1 skipped$'
    has allpass '^  pass  driver +NVIDIA driver 550.54.15 loaded, 1 GPU, CUDA driver API 12.4$'
    GPUPLANE_NVML="$fake" GPUPLANE_FAKE_NVML="$conf" doctor migwrong 1 --root "$r" --mig 3g.40gb=2
    has migwrong '^  fail  mig +the pool.s layout is 3g.40gb=2: GPU 0 has MIG mode off$'
    printf 'driver 550.54.15\ncuda 12040\n%s persistence=0 mig=0\n' "$gpu" >"$conf"
    GPUPLANE_NVML="$fake" GPUPLANE_FAKE_NVML="$conf" doctor nopersist 0 --root "$r"
    has nopersist '^  warn  persistence +persistence mode off on 1 GPU'
    printf 'driver 550.90.07\ncuda 12040\n%s persistence=1 mig=0\n' "$gpu" >"$conf"
    GPUPLANE_NVML="$fake" GPUPLANE_FAKE_NVML="$conf" doctor mismatch 1 --root "$r"
    has mismatch '^  fail  driver +kernel module 550.54.15 but user-space driver \(NVML\) 550.90.07'
else
    echo "(no fake NVML built: the checks that need GPUs ran in tests/unit/test_node_doctor.c only)"
fi

# bad usage: exit 2, one line on stderr, nothing on stdout
for args in "--mig 3g.40gb" "--cuda twelve" "--cuda 12.4 --image nvidia/cuda:12.4.1-base-ubuntu22.04" \
    "--rot /" "--root"; do
    # shellcheck disable=SC2086
    "$gp" node doctor $args >"$tmp/out" 2>"$tmp/err"
    rc=$?
    if [ "$rc" -ne 2 ] || [ -s "$tmp/out" ] || [ "$(wc -l <"$tmp/err")" -ne 1 ]; then
        failed "node doctor $args: exit $rc (expected 2, one line on stderr): $(cat "$tmp/err")"
    else
        echo "ok   node doctor $args: $(cat "$tmp/err")"
    fi
done
"$gp" node doctor --help | grep -q -- '--root DIR' || failed "--help names --root"
[ "$fails" -eq 0 ] || exit 1
echo "node doctor: all ok"
