#!/usr/bin/env bash
# node_discover.sh - `gpuplane node discover` against the fake NVML
# (tests/fakenvml/, GP_FAKENVML): text and JSON for an A100 in MIG mode
# beside an L4; --nvml and GPUPLANE_NVML; exit 3 with the one line when
# there is no driver; exit 1 when NVML fails; 2 for usage.
set -uo pipefail
gp="${GPUPLANE:?}"
fake="${GP_FAKENVML:-}"
[ -n "$fake" ] && [ -e "$fake" ] || {
    echo "no fake NVML built"
    exit 77
}
. "${GP_SRC:?}/tests/cli/lib/common.sh"

cat >"$tmp/nvml.conf" <<'CONF'
driver 535.104.05
cuda 12020
gpu name="NVIDIA A100-SXM4-80GB" uuid=GPU-a100 pci=00000000:07:00.0 pciid=0x20B210DE memory=81920 cc=8.0 mig=1 persistence=1
mig uuid=MIG-1 gi=1 ci=0 profile=19 start=6 size=1 memory=9728 gislices=1 cislices=1
nvlink link=0 peer=00000000:0F:00.0
gpu name="NVIDIA L4" uuid=GPU-l4 pci=00000000:0F:00.0 memory=23034 used=100 cc=8.9 util=12
nvlink link=0 peer=00000000:07:00.0
CONF
export GPUPLANE_FAKE_NVML="$tmp/nvml.conf"

"$gp" node discover --nvml "$fake" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 0 ] || failed "text: exit $rc: $(cat "$tmp/err")"
cat >"$tmp/want" <<'WANT'
driver 535.104.05, CUDA driver 12.2, 2 GPUs
GPU 0: NVIDIA A100-SXM4-80GB GPU-a100 at 00000000:07:00.0
  memory 81920 MiB (0 used), compute capability 8.0, utilisation 0 %, persistence mode on, healthy
  MIG enabled, 1 device
    1g.10gb MIG-1: GPU instance 1, compute instance 0, slices 6-6, 9728 MiB
  NVLink to GPU 1
GPU 1: NVIDIA L4 GPU-l4 at 00000000:0F:00.0
  memory 23034 MiB (100 used), compute capability 8.9, utilisation 12 %, persistence mode off, healthy
  MIG not supported
  NVLink to GPU 0
WANT
diff -u "$tmp/want" "$tmp/out" || failed "text output differs"

GPUPLANE_NVML="$fake" "$gp" node discover --json >"$tmp/json" 2>"$tmp/err"
rc=$?
[ "$rc" = 0 ] || failed "json: exit $rc: $(cat "$tmp/err")"
for want in '"driverVersion": "535.104.05"' '"cudaDriverVersion": "12.2"' '"gpuCount": 2' \
    '"profile": "1g.10gb"' '"computeCapability": "8.9"' '"persistenceMode": true' \
    '"uuid": "MIG-1"'; do
    grep -qF "$want" "$tmp/json" || failed "json: no $want"
done
if command -v python3 >/dev/null; then
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["gpus"][0]["nvlinkPeers"] == [1], d' \
        "$tmp/json" || failed "json: not JSON, or nvlinkPeers wrong"
fi

# no driver: exit 3, the one line, nothing on stdout
env -u GPUPLANE_NVML LD_LIBRARY_PATH=/nonexistent "$gp" node discover --nvml /nonexistent/libnvidia-ml.so.1 >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 3 ] || failed "no driver: exit $rc, expected 3"
[ -s "$tmp/out" ] && failed "no driver: something on stdout"
[ "$(wc -l <"$tmp/err")" = 1 ] || failed "no driver: not one line: $(cat "$tmp/err")"
grep -q "is the NVIDIA driver installed?" "$tmp/err" || failed "no driver: $(cat "$tmp/err")"
if ! [ -e /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1 ] && ! ldconfig -p 2>/dev/null | grep -q libnvidia-ml.so.1; then
    env -u GPUPLANE_NVML "$gp" node discover >"$tmp/out" 2>"$tmp/err"
    rc=$?
    [ "$rc" = 3 ] || failed "default soname: exit $rc, expected 3"
    [ "$(cat "$tmp/err")" = "gpuplane: node discover: NVML: libnvidia-ml.so.1 not found: is the NVIDIA driver installed?" ] ||
        failed "default soname: $(cat "$tmp/err")"
fi

# NVML failing: exit 1, the call named
echo "fail-call nvmlDeviceGetUUID 999" >>"$tmp/nvml.conf"
"$gp" node discover --nvml "$fake" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" = 1 ] || failed "NVML failing: exit $rc, expected 1"
[ "$(cat "$tmp/err")" = "gpuplane: node discover: NVML: nvmlDeviceGetUUID on GPU 0: Unknown Error" ] ||
    failed "NVML failing: $(cat "$tmp/err")"

# usage
"$gp" node discover --bogus >"$tmp/out" 2>"$tmp/err"
[ $? = 2 ] || failed "--bogus: not exit 2"
"$gp" node discover --help >"$tmp/out" 2>&1 || failed "--help: not exit 0"
grep -q "exit codes: 0 success, 1 NVML failed, 2 bad input or usage, 3 no NVIDIA driver" "$tmp/out" ||
    failed "--help: no exit codes"

[ "$fails" = 0 ] && echo "node discover: all checks passed"
exit $((fails > 0))
