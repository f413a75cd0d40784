#!/usr/bin/env bash
# node_labels.sh - `gpuplane node labels` on the fake NVML: the labels of
# two time-sliced H100s printed, then --apply against the API server double
# (tests/apidouble): one merge patch sets them, removes an owned label that
# no longer applies, keeps the others; a second apply changes nothing.
# Skipped (77) without the fake NVML or the double.
set -uo pipefail
gp="${GPUPLANE:?}"
fake="${GP_FAKENVML:-}"
double="$(dirname "$gp")/tests/apidouble/apidouble"
if [ -z "$fake" ] || [ ! -f "$fake" ] || [ ! -x "$double" ] || ! command -v python3 >/dev/null; then
    echo "SKIP: needs the fake NVML (GP_FAKENVML), $double and python3"
    exit 77
fi
. "${GP_SRC:?}/tests/cli/lib/common.sh"
dpid=
trap '[ -n "$dpid" ] && kill "$dpid" 2>/dev/null; rm -rf "$tmp"' EXIT
cat >"$tmp/fake.conf" <<'CONF'
driver 550.54.15
cuda 12040
gpu name="NVIDIA H100 80GB HBM3" uuid=GPU-0 pci=00000000:07:00.0 memory=81559 cc=9.0 persistence=1 mig=0
gpu name="NVIDIA H100 80GB HBM3" uuid=GPU-1 pci=00000000:0F:00.0 memory=81559 cc=9.0 persistence=1 mig=0
CONF
export GPUPLANE_NVML="$fake" GPUPLANE_FAKE_NVML="$tmp/fake.conf"
mkdir -p "$tmp/root/sys/class/dmi/id"
echo "PowerEdge XE9680" >"$tmp/root/sys/class/dmi/id/product_name"
"$gp" node labels --root "$tmp/root" --no-timestamp --sharing time-slicing --replicas 4 >"$tmp/labels" ||
    failed "node labels exited $?"
for want in nvidia.com/gpu.product=NVIDIA-H100-80GB-HBM3-SHARED nvidia.com/gpu.count=2 \
    nvidia.com/gpu.replicas=4 nvidia.com/gpu.sharing-strategy=time-slicing \
    nvidia.com/gpu.machine=PowerEdge-XE9680 nvidia.com/cuda.driver-version.full=550.54.15; do
    grep -qx "$want" "$tmp/labels" || failed "labels: no $want"
done
grep -q gfd.timestamp "$tmp/labels" && failed "labels: a timestamp with --no-timestamp"

"$double" --port 0 >"$tmp/port" &
dpid=$!
# its port line, waited for at most 60 s (a sanitizer build on a loaded
# machine starts slowly)
deadline=$((SECONDS + 60))
while [ ! -s "$tmp/port" ] && [ "$SECONDS" -lt "$deadline" ] && kill -0 "$dpid" 2>/dev/null; do sleep 0.1; done
port=$(sed -n 's/^port \([0-9]*\).*/\1/p' "$tmp/port")
[ -n "$port" ] || { echo "FAIL the double did not start"; exit 1; }
kubeconfig_for "$port" "$tmp/kubeconfig"
api() { # api METHOD PATH [BODY]: the answer's body
    python3 - "$port" "$@" <<'PY'
import sys, urllib.request
port, method, path = sys.argv[1:4]
body = sys.argv[4].encode() if len(sys.argv) > 4 else None
req = urllib.request.Request("http://127.0.0.1:%s%s" % (port, path), data=body, method=method,
                             headers={"Content-Type": "application/json"})
print(urllib.request.urlopen(req).read().decode())
PY
}
api POST /api/v1/nodes '{"apiVersion":"v1","kind":"Node","metadata":{"name":"g1","labels":{"team":"a","nvidia.com/mig-1g.5gb.count":"7","nvidia.com/gpu.deploy.driver":"true"}}}' >/dev/null ||
    failed "POST the Node"
"$gp" node labels --apply --node g1 --kubeconfig "$tmp/kubeconfig" --no-timestamp \
    --sharing time-slicing --replicas 4 >"$tmp/out" 2>&1 || failed "apply exited $?: $(cat "$tmp/out")"
n=$(wc -l <"$tmp/labels")
grep -qx "gpuplane node labels: Node g1: $((n + 1)) labels set or removed" "$tmp/out" ||
    failed "apply said: $(cat "$tmp/out") (expected $((n + 1)) changes)"
api GET /api/v1/nodes/g1 >"$tmp/node.json"
python3 - "$tmp/node.json" <<'PY' || failed "the Node's labels after apply"
import json, sys
l = json.load(open(sys.argv[1]))["metadata"]["labels"]
assert l["nvidia.com/gpu.product"] == "NVIDIA-H100-80GB-HBM3-SHARED", l
assert l["team"] == "a" and l["nvidia.com/gpu.deploy.driver"] == "true", l
assert "nvidia.com/mig-1g.5gb.count" not in l, l
PY
"$gp" node labels --apply --node g1 --kubeconfig "$tmp/kubeconfig" --no-timestamp \
    --sharing time-slicing --replicas 4 >"$tmp/out" 2>&1
grep -qx "gpuplane node labels: Node g1: 0 labels set or removed" "$tmp/out" ||
    failed "second apply: $(cat "$tmp/out")"
"$gp" node labels --apply --node nope --kubeconfig "$tmp/kubeconfig" >"$tmp/out" 2>&1
[ $? -ne 0 ] || failed "apply to a missing Node succeeded"
NODE_NAME= "$gp" node labels --apply >"$tmp/out" 2>&1
[ $? -eq 2 ] || failed "--apply without --node: not exit 2"
"$gp" node labels --node g1 >"$tmp/out" 2>&1
[ $? -eq 2 ] || failed "--node without --apply: not exit 2"
[ "$fails" -eq 0 ] || exit 1
echo "node labels: all ok"
