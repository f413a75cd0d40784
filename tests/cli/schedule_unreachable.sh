#!/usr/bin/env bash
# schedule_unreachable.sh - `gpuplane schedule` when the API server cannot
# be reached or refuses it (the review's A7): each informer says its first
# failure (the request, the status, the server's message) and then at most
# one line per 10 s while it keeps failing; the failures are counted in
# gpuplane_scheduler_informer_errors_total{resource}; --max-s running out
# before the informers synced is exit 1 with one line naming the informer
# and its last failure. Against nothing listening, and against the API
# server double answering 403 to the nodes' list. Skipped (77) without the
# double or python3.
set -uo pipefail
gp="${GPUPLANE:?}"
double="$(dirname "$gp")/tests/apidouble/apidouble"
if [ ! -x "$double" ] || ! command -v python3 >/dev/null; then
    echo "SKIP: needs $double and python3"
    exit 77
fi
. "${GP_SRC:?}/tests/cli/lib/common.sh"
dpid=
trap '[ -n "$dpid" ] && kill "$dpid" 2>/dev/null; rm -rf "$tmp"' EXIT

# 1. nothing listening (port 1)
kubeconfig_for 1 "$tmp/kc-down"
"$gp" schedule --kubeconfig "$tmp/kc-down" --leader-elect false --no-config --max-s 12 \
    >/dev/null 2>"$tmp/err"
rc=$?
[ "$rc" = 1 ] || failed "unreachable: exit $rc, want 1: $(cat "$tmp/err")"
grep -q '^gpuplane schedule: the priorityclasses informer failed to list: .*/apis/scheduling.k8s.io/v1/priorityclasses' "$tmp/err" ||
    failed "unreachable: no line for the failed list: $(cat "$tmp/err")"
# (the client's own retries take seconds: the second failure comes < 10 s after)
n=$(grep -c 'the priorityclasses informer failed' "$tmp/err")
[ "$n" -ge 1 ] && [ "$n" -le 2 ] || failed "unreachable: $n lines for one informer in 12 s, want 1 or 2 (one per 10 s): $(cat "$tmp/err")"
tail -n 1 "$tmp/err" | grep -q '^gpuplane: schedule: the informers did not sync within --max-s 12 s (the podgroups.scheduling.x-k8s.io informer: GET .*/apis/scheduling.x-k8s.io/v1alpha1/podgroups.*connect' ||
    failed "unreachable: the last line: $(tail -n 1 "$tmp/err")"
echo "ok   unreachable: exit 1, $(grep -c informer "$tmp/err") lines: $(head -n 1 "$tmp/err")"

# 2. the double refuses the nodes' list (403, as a ClusterRole without it)
"$double" --port 0 >"$tmp/port" 2>"$tmp/double.err" &
dpid=$!
for _ in $(seq 600); do grep -qE '^port [0-9]+' "$tmp/port" 2>/dev/null && break; sleep 0.1; done
port=$(sed -n 's/^port \([0-9]*\).*/\1/p' "$tmp/port")
[ -n "$port" ] || { echo "FAIL the double did not start: $(cat "$tmp/double.err")"; exit 1; }
kubeconfig_for "$port" "$tmp/kubeconfig"
python3 - "$port" <<'PY' || failed "setting the fault"
import sys, urllib.request
req = urllib.request.Request("http://127.0.0.1:%s/_control/fault" % sys.argv[1], method="POST",
    data=b'{"status":403,"count":100000,"match":"/api/v1/nodes"}',
    headers={"Content-Type": "application/json"})
urllib.request.urlopen(req, timeout=30).read()
PY
"$gp" schedule --kubeconfig "$tmp/kubeconfig" --leader-elect false --no-config --max-s 4 \
    --metrics-addr 127.0.0.1:0 >/dev/null 2>"$tmp/err" &
spid=$!
mport=
for _ in $(seq 100); do
    mport=$(sed -n 's/.*on port \([0-9]*\)$/\1/p' "$tmp/err")
    [ -n "$mport" ] && break
    sleep 0.05
done
sleep 2
python3 - "$mport" >"$tmp/metrics" <<'PY' || failed "reading /metrics"
import sys, urllib.request
print(urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1], timeout=10).read().decode())
PY
wait "$spid"
rc=$?
[ "$rc" = 1 ] || failed "403: exit $rc, want 1: $(cat "$tmp/err")"
grep -q '^gpuplane schedule: the nodes informer failed to list: .*/api/v1/nodes.*403' "$tmp/err" ||
    failed "403: no line naming the request and the status: $(cat "$tmp/err")"
grep -q 'the pods informer failed' "$tmp/err" && failed "403: the pods informer failed too: $(cat "$tmp/err")"
v=$(sed -n 's/^gpuplane_scheduler_informer_errors_total{resource="nodes"} \([0-9]*\)$/\1/p' "$tmp/metrics")
[ -n "$v" ] && [ "$v" -ge 2 ] || failed "403: informer_errors_total{resource=\"nodes\"} = '$v', want >= 2"
grep -q '^gpuplane_scheduler_informer_errors_total{resource="pods"} 0$' "$tmp/metrics" ||
    failed "403: the pods' errors: $(grep informer_errors "$tmp/metrics")"
echo "ok   403: exit 1, $(grep 'nodes informer' "$tmp/err" | head -n 1); nodes errors $v"
exit $((fails > 0))
